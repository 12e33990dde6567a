"""``rank-polars pool``: the depth-k pool of the versions, or the queue of what to judge next."""

from __future__ import annotations

import click

from rank_polars.cli.loading import load
from rank_polars.cli.options import input_options, judge_option, order_option, output_options, schema
from rank_polars.cli.output import check_output, emit


@click.command(name="pool")
@input_options
@click.option("--depth", type=click.IntRange(min=1), default=10, show_default=True, help="Each version's top DEPTH items of each query enter the pool.")
@click.option("--by", default="model", show_default=True, help="The column telling the versions apart.")
@judge_option
@click.option("--strategy", type=click.Choice(["depth", "impact"]), default="depth", show_default=True, help="With --qrels, the queue's order: depth (the items shown highest first) or impact (the items whose grade could move the versions' DCG most first).")
@click.option("--budget", type=click.IntRange(min=0), help="With --qrels: how many items to queue (default: all).")
@order_option()
@output_options
def command(run: str, qrels: str | None, format_in: str | None, qrels_format: str | None, depth: int, by: str,
            judge: str | None, strategy: str, budget: int | None, order: str, fmt: str | None, output: str | None,
            force: bool) -> None:
    """The pool of RUN's versions (TREC depth-k pooling), or with --qrels the judging queue: the
    pool minus what is judged, in the --strategy's order, cut at --budget.

    \b
    Examples:
      rank-polars pool log/ --depth 10 --by model -o pool.csv
      rank-polars pool log/ --qrels judgments.parquet --judge people --strategy impact --budget 50
    """
    from rank_polars.judges.pool import pool

    fmt = check_output(output, fmt, force)
    if qrels is None and (judge is not None or budget is not None):
        raise click.UsageError("--judge and --budget choose the judging queue: give --qrels")
    loaded = load(run, qrels, format_in, qrels_format, schema(), [by], order)
    table = pool(loaded.run, depth=depth, by=by, judgments=loaded.qrels, judge=judge, strategy=strategy,  # type: ignore[arg-type]
                 budget=budget, order=order, schema=loaded.mapping)  # type: ignore[arg-type]
    emit(table, fmt, output, force=force)
