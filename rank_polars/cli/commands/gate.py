"""``rank-polars gate``: may the candidate ship?  Exit 0 when it passes, 1 when it does not.

Exit statuses (a CI job reads them, :mod:`rank_polars.cli.errors`): ``OK`` (0) the candidate
passes; ``FAILED`` (1) it regresses, with the summary on stdout; ``USAGE`` (2) the command line
itself is wrong; ``BAD_INPUT`` (3) the data or an argument is wrong, with one ``error: ...`` line
on stderr and nothing on stdout (no summary, no ``--json`` file): never read as a regression.
"""

from __future__ import annotations

import json
from typing import Any

import click

from rank_polars.cli.commands.compare import as_column_type
from rank_polars.cli.errors import FAILED, OK, bad_input_exits_3
from rank_polars.cli.loading import check_column, load
from rank_polars.cli.options import engine_option, judge_option, metric_input_options, metric_option, missing_option, order_option, progress_option, schema, tables
from rank_polars.cli.output import check_file, write_file
from rank_polars.cli.progress import choose

def margin_value(text: str) -> Any:
    """``--margin``: a number in the metric's units, or a percentage (``1%``).

    >>> margin_value("0.005"), margin_value("1%")
    (0.005, '1%')
    """
    try:
        return float(text)
    except ValueError:
        return text


@click.command(name="gate")
@metric_input_options
@metric_option("Metric the candidate must not lose on; repeat -m, or give a comma list (-m ndcg@10,mrr).")
@click.option("--by", default="model", show_default=True, help="The column whose values are the versions.")
@click.option("--baseline", required=True, help="The version in production.")
@click.option("--candidate", required=True, help="The version that would replace it.")
@click.option("--margin", "margin", required=True, help="The loss allowed before it counts: in the metric's units (0.005) or a share of the baseline's mean (1%).")
@click.option("--segment", "segments", multiple=True, help="A column describing the query (country, query_type); every value is gated too. Repeat for more.")
@click.option("--min-queries", type=click.IntRange(min=2), default=30, show_default=True, help="A segment value with fewer paired queries is shown, not tested.")
@click.option("--alpha", type=click.FloatRange(0, 0.5, min_open=True, max_open=True), default=0.05, show_default=True, help="One-sided level, over every metric and segment value after the correction.")
@click.option("--test", type=click.Choice(["paired_t", "wilcoxon"]), default="paired_t", show_default=True, help="The one-sided test of the per-query improvements.")
@click.option("--correction", type=click.Choice(["none", "bonferroni", "holm", "bh"]), default="holm", show_default=True, help="Correction over every metric and segment value tested.")
@click.option("--require", type=click.Choice(["no-regression", "non-inferiority"]), default="no-regression", show_default=True, help="no-regression: fail on a significant loss beyond the margin; non-inferiority: pass only where a loss below the margin is shown.")
@click.option("--json", "json_file", type=click.Path(dir_okay=False), help="Write the verdict and every row as JSON to this file.")
@click.option("--markdown", "markdown_file", type=click.Path(dir_okay=False), help="Write the Markdown summary to this file (a CI page, a pull-request comment).")
@click.option("--force", is_flag=True, help="Overwrite existing --json / --markdown files.")
@engine_option("The engine that computes the per-query values")
@missing_option
@judge_option
@order_option()
@progress_option
@bad_input_exits_3
def command(run: str, qrels: str | None, format_in: str | None, qrels_format: str | None, metrics: tuple[str, ...],
            by: str, baseline: str, candidate: str, margin: str, segments: tuple[str, ...], min_queries: int,
            alpha: float, test: str, correction: str, require: str, json_file: str | None, markdown_file: str | None,
            force: bool, engine: str, missing: str, order: str, progress: bool | None, history: str | None,
            catalog: str | None, features: str | None, subtopics: str | None, judge: str | None = None) -> int:
    """Gate a release: does the candidate lose more than --margin on some metric or segment?

    Prints the Markdown summary; exits 0 when the candidate passes, 1 when it regresses
    (3 on bad input, with an error line and no summary; 2 for a wrong command line).

    \b
    Example:
      rank-polars gate log/ --qrels qrels.parquet --by model --baseline v1 --candidate v2 \\
          -m ndcg@10 -m mrr --margin 0.005 --segment country --markdown gate.md
    """
    from rank_polars.monitor.gate import gate

    # bad input raises: one error line and BAD_INPUT (3), never FAILED, which is a regression here
    check_file(json_file, force, "JSON file")
    check_file(markdown_file, force, "Markdown file")
    loaded = load(run, qrels, format_in, qrels_format, schema(), [by], order, metrics,
                  tables(history, catalog, features, subtopics))
    for column in segments:
        check_column(loaded.schema, column, "run", "--segment")
    versions = {k: as_column_type(v, loaded.schema.get(by)) for k, v in (("baseline", baseline), ("candidate", candidate))}
    kwargs: dict[str, Any] = {"order": order} if order != "auto" else {}
    if judge is not None:
        kwargs["judge"] = judge
    with choose(progress).phase(loaded.what("gating")):
        result = gate(loaded.run, loaded.metrics, qrels=loaded.qrels, by=by, margin=margin_value(margin),
                      segments=list(segments) or None, min_queries=min_queries, alpha=alpha, test=test,  # type: ignore[arg-type]
                      correction=None if correction == "none" else correction, require=require,  # type: ignore[arg-type]
                      engine=engine, missing=missing, schema=loaded.mapping, **versions, **kwargs)  # type: ignore[arg-type]
    summary = result.markdown()
    click.echo(summary, nl=False)
    if markdown_file:
        write_file(markdown_file, summary, force=force)
    if json_file:
        write_file(json_file, json.dumps(result.to_dict(), indent=1, default=str) + "\n", force=force)
    return OK if result.passed else FAILED
