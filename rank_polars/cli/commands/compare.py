"""``rank-polars compare``: versions against a baseline, query by query."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import click
import polars as pl

from rank_polars.presentation import comparison_display, groups, verdict
from rank_polars.progress import NoProgress, Progress
from rank_polars.cli.loading import check_column, load
from rank_polars.schema import Schema
from rank_polars.cli.options import engine_option, judge_option, metric_input_options, metric_option, missing_option, order_option, output_options, progress_option, schema, tables
from rank_polars.cli.output import check_file, check_output, emit, write_file
from rank_polars.cli.progress import choose


def run_compare(run: Any, metrics: Sequence[Any], *, qrels: Any, by: str, baseline: str | None, test: str | None,
                correction: str | None, alpha: float, n_resamples: int, seed: int, missing: str, engine: str,
                confidence: float, columns: Schema | None = None, order: str = "auto",
                progress: Progress | None = None, interval: str | None = None,
                catalog_resamples: int = 1000, segments: Sequence[str] = (), min_queries: int = 30,
                judge: str | None = None) -> pl.DataFrame:
    """:func:`rank_polars.compare` with the CLI's column mapping."""
    from rank_polars.stats.compare import compare

    kwargs: dict[str, Any] = {"schema": columns} if columns is not None else {}
    if order != "auto":
        kwargs["order"] = order
    if progress is not None:  # compare reports its resamples; the evaluate inside it, its phases
        kwargs["progress"] = progress
    if segments:  # the difference per segment value (rank_polars.monitor.segments)
        kwargs.update(segments=list(segments), min_queries=min_queries)
    if judge is not None:  # one judge's labels of judgments with several
        kwargs["judge"] = judge
    return compare(
        run, list(metrics), qrels=qrels, by=by, baseline=baseline, test=test, correction=correction, alpha=alpha,
        n_resamples=n_resamples, seed=seed, missing=missing, engine=engine, confidence=confidence, interval=interval,
        catalog_resamples=catalog_resamples, **kwargs,
    )


def as_column_type(value: str, dtype: pl.DataType | None) -> Any:
    """``value`` as a value of a column of ``dtype`` (``"1"`` is ``1`` in an integer column); as given
    when the column is text or the value is not one of its type (the library then names the versions).

    >>> as_column_type("1", pl.Int64()), as_column_type("v1", pl.Int64()), as_column_type("007", pl.String())
    (1, 'v1', '007')
    """
    if dtype is None or dtype == pl.String:
        return value
    try:
        return pl.Series([value]).cast(dtype, strict=True).item()
    except (pl.exceptions.PolarsError, ValueError):
        return value


def groups_text(table: pl.DataFrame, alpha: float) -> str:
    """Per metric, the versions by mean with their letters: versions sharing a letter are not
    significantly different (printed when every pair of three or more versions was compared)."""
    out = []
    for metric in table["metric"].unique(maintain_order=True):
        g = groups(table, metric, alpha)
        width = max(len(v) for v in g["version"])
        out.append(f"groups on {metric} (versions sharing a letter are not significantly different):\n")
        out += [f"  {v:<{width}}  {m:.4f}  {letters}\n" for v, m, letters in g.iter_rows()]
    return "".join(out)


def write_html_report(path: str, run: Any, metrics: Sequence[Any], comparison: pl.DataFrame, *, force: bool,
                      display: Progress | None = None, **kwargs: Any) -> None:
    """The HTML report of ``comparison``, written safely (see :func:`..output.write_file`)."""
    from rank_polars.report import report_html

    with (display or NoProgress()).phase("writing the report"):
        write_file(path, report_html(run, list(metrics), comparison=comparison, **kwargs), force=force)


@click.command(name="compare")
@metric_input_options
@metric_option("Metric to compare on; repeat -m, or give a comma list (-m ndcg@10,map).")
@click.option("--by", default="model", show_default=True, help="The column whose values are the versions compared.")
@click.option("--baseline", help="The version the others are compared with (default: every pair of versions, the first in sorted order as baseline).")
@click.option("--pairs", type=click.Choice(["all"]), help="Compare every pair of versions (the default without --baseline).")
@click.option("--test", type=click.Choice(["paired_t", "wilcoxon", "randomization", "bootstrap", "tukey", "randomized-tukey", "delta"]), default=None, help="Significance test over paired per-query values (default: paired_t; delta for a ratio metric whose versions share no query); tukey / randomized-tukey: one family of all pairs (Tukey HSD on the two-way ANOVA residual, or Carterette's randomised Tukey); delta: A/B arms, unpaired z test (the delta method for ctr(agg=ratio)).")
@click.option("--interval", type=click.Choice(["t", "bootstrap", "tukey", "delta"]), help="Interval on the difference (default: t for paired_t, tukey for tukey, delta for delta, bootstrap otherwise).")
@click.option("--correction", type=click.Choice(["none", "bonferroni", "holm", "bh"]), default="holm", show_default=True, help="Multiple-comparison correction over all (metric, version) pairs.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True, help="Significance level: a corrected p-value below it is a significant difference.")
@click.option("--confidence", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.95, show_default=True, help="Confidence level of the interval on the difference.")
@click.option("--n-resamples", type=click.IntRange(min=1), default=10_000, show_default=True, help="Resamples for randomization and bootstrap tests.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the randomization and bootstrap resamples (the same seed, the same p-values).")
@click.option("--catalog-resamples", type=click.IntRange(min=1), default=1000, show_default=True, help="Resamples of the bootstrap over lists for catalogue-level metrics (gini, entropy, coverage): each re-evaluates the metric on a resampled log.")
@engine_option("The engine that computes the per-query values")
@missing_option
@click.option("--report", type=click.Path(dir_okay=False), help="Also write a self-contained HTML report (table and plots) to this file.")
@click.option("--segment", "segments", multiple=True, help="A column describing the query (country, query_type): the difference per value, corrected over every value and metric, worst loss first. Repeat for more.")
@click.option("--min-queries", type=click.IntRange(min=2), default=30, show_default=True, help="With --segment: a value with fewer paired queries is shown, not tested.")
@judge_option
@order_option()
@output_options
@progress_option
def command(run: str, qrels: str | None, format_in: str | None, qrels_format: str | None,
            metrics: tuple[str, ...], by: str, baseline: str | None,
            pairs: str | None, test: str | None, interval: str | None, correction: str, alpha: float, confidence: float, n_resamples: int, seed: int, catalog_resamples: int, engine: str,
            missing: str, report: str | None, fmt: str | None, output: str | None, force: bool, order: str,
            progress: bool | None, history: str | None, catalog: str | None, features: str | None,
            subtopics: str | None, segments: tuple[str, ...] = (), min_queries: int = 30,
            judge: str | None = None) -> None:
    """Compare versions of a system (values of --by) against a baseline, query by query.

    \b
    Example:
      rank-polars compare log/ -m ndcg@10 -m mrr --by model --baseline bot-v1 --report report.html
    """
    if pairs and baseline:
        raise click.UsageError("--pairs all compares every pair of versions; leave --baseline out")
    fmt = check_output(output, fmt, force)
    check_file(report, force, "report file")
    loaded = load(run, qrels, format_in, qrels_format, schema(), [by], order,
                  metrics, tables(history, catalog, features, subtopics))
    for column in segments:
        check_column(loaded.schema, column, "run", "--segment")
    corr = None if correction == "none" else correction
    if baseline is not None:  # the command line gives text: a version in a numeric (or date) column is a number
        baseline = as_column_type(baseline, loaded.schema.get(by))
    display = choose(progress)
    with display.phase(loaded.what("comparing")):
        table = run_compare(
            loaded.run, loaded.metrics, qrels=loaded.qrels, by=by, baseline=baseline, test=test, correction=corr,
            alpha=alpha, n_resamples=n_resamples, seed=seed, missing=missing, engine=engine,
            confidence=confidence, columns=loaded.mapping, order=order, progress=display, interval=interval,
            catalog_resamples=catalog_resamples, segments=segments, min_queries=min_queries, judge=judge,
        )
    if segments:
        from rank_polars.monitor.segments import where_it_loses

        emit(table, fmt, output, force=force, footer=where_it_loses(table))
        if report:
            from rank_polars.report_segments import report_html

            with display.phase("writing the report"):
                write_file(report, report_html(loaded.run, loaded.metrics, segments=table, qrels=loaded.qrels, by=by,
                                               baseline=baseline, missing=missing, engine=engine, columns=loaded.mapping,
                                               title=f"{Path(run).name}: {', '.join(metrics)}", order=order,
                                               judge=judge), force=force)
            click.echo(f"wrote the report to {report}", err=True)
        return
    family = test in ("tukey", "randomized-tukey")  # adjusted over the pairs, not by --correction
    # (comparison_display and verdict read W/T/L and power where they exist: null for delta's unpaired arms)
    footer = "".join(verdict(r, None if family else corr) + "\n" for r in table.iter_rows(named=True))
    versions = pl.concat([table["baseline"], table["version"]]).n_unique() if table.height else 0
    if baseline is None and versions >= 3:  # three or more versions, every pair
        footer += groups_text(table, alpha)
    emit(table, fmt, output, force=force, display=comparison_display(table, confidence), footer=footer)
    if report:
        write_html_report(
            report, loaded.run, loaded.metrics, table, force=force, display=display, qrels=loaded.qrels, by=by,
            missing=missing, engine=engine, columns=loaded.mapping, title=f"{Path(run).name}: {', '.join(metrics)}",
            correction=corr, confidence=confidence, order=order, qrels_label=loaded.qrels_label or None, judge=judge,
        )
        click.echo(f"wrote the report to {report}", err=True)
