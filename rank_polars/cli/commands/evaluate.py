"""``rank-polars evaluate``: metrics over a run, per group."""

from __future__ import annotations

import click

from rank_polars.errors import RankPolarsError
from rank_polars.cli.loading import hint_by, load
from rank_polars.cli.options import engine_option, judge_option, metric_input_options, metric_option, missing_option, order_option, output_options, progress_option, schema, tables
from rank_polars.cli.output import check_output, emit
from rank_polars.cli.progress import choose


@click.command(name="evaluate")
@metric_input_options
@metric_option("Metric, e.g. ndcg@10, map, mrr, p@5, 'ap(denom=min)@5'; repeat -m, or give a comma list (-m ndcg@10,map).")
@click.option("--by", multiple=True, help="Grouping column, e.g. model; repeat for more.")
@engine_option()
@click.option("--per-query", is_flag=True, help="One row per (group, query) instead of means.")
@missing_option
@click.option("--duplicates", type=click.Choice(["error", "first"]), default="error", show_default=True, help="A repeated (query, item) in a ranking is an error, or keep its first occurrence.")
@click.option("--labels", type=click.Choice(["qrels", "run"]), default="qrels", show_default=True, help="With --qrels: grades of the shown rows from the qrels (joined), or from the run's relevance column (checked against the qrels; no join of the whole log).")
@click.option("--checks", type=click.Choice(["full", "strict", "fast"]), default="full", show_default=True, help="full: check item ids and repeated rows where they can change a value; strict: on every row (as trec_eval); fast: no duplicate counts.")
@click.option("--ci", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=None,
              help="Add <metric>_low and <metric>_high: a confidence interval at this level (e.g. 0.95) on each group's aggregate.")
@click.option("--ci-method", type=click.Choice(["t", "bootstrap", "bca"]), default="t", show_default=True,
              help="With --ci: the t interval from each group's mean and sd, or a seeded bootstrap over queries (percentile, or BCa).")
@judge_option
@click.option("--by-judge", is_flag=True, help="With --qrels holding several judges' labels: every version under every judge, the tables stacked under a judge column.")
@click.option("--bounds", is_flag=True, help="With --qrels: add <metric>_low (unjudged shown items not relevant: the metric) and <metric>_high (relevant at the judgments' top grade).")
@order_option()
@output_options
@progress_option
def command(run: str, qrels: str | None, format_in: str | None, qrels_format: str | None,
            metrics: tuple[str, ...], by: tuple[str, ...], engine: str,
            per_query: bool, missing: str, duplicates: str, labels: str, checks: str, fmt: str | None,
            output: str | None, force: bool, order: str, progress: bool | None, ci: float | None, ci_method: str,
            history: str | None, catalog: str | None, features: str | None, subtopics: str | None,
            judge: str | None = None, by_judge: bool = False, bounds: bool = False) -> None:
    """Evaluate metrics over RUN, per --by group.

    \b
    Examples:
      rank-polars evaluate log/ -m ndcg@10 -m mrr --by model
      rank-polars evaluate log/ -m ndcg@10 --by model --ci 0.95
      rank-polars evaluate run.trec --qrels judgments.qrels -m map -m P_10
      rank-polars evaluate log/ --qrels judgments.parquet --judge people -m ndcg@10 --by model --bounds
      rank-polars evaluate log/ --qrels judgments.parquet --by-judge -m ndcg@10 --by model
      rank-polars evaluate log/ -m novelty@10 -m ils@10 --history train.parquet --features items.parquet --by model
    """
    from rank_polars.evaluate import evaluate

    fmt = check_output(output, fmt, force)
    loaded = load(run, qrels, format_in, qrels_format, schema(), by, order,
                  metrics, tables(history, catalog, features, subtopics))
    display = choose(progress)
    with display.phase(loaded.what("evaluating")):
        try:
            table = evaluate(
                loaded.run, loaded.metrics, qrels=loaded.qrels, by=list(by) or None, per_query=per_query,
                missing=missing, engine=engine, duplicates=duplicates, labels=labels, checks=checks, order=order, progress=display,
                ci=ci, ci_method=ci_method,  # type: ignore[arg-type]
                schema=loaded.mapping, judge=judge, by_judge=by_judge, bounds=bounds,
            )
        except RankPolarsError as e:
            raise hint_by(e, loaded) from e
    emit(table, fmt, output, force=force)
