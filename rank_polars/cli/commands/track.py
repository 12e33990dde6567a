"""``rank-polars track``: evaluate the partitions a store lacks, print the series of all it holds.

Exit statuses are every command's (:mod:`rank_polars.cli.errors`): ``OK`` (0), ``FAILED`` (1: bad
data or arguments, one ``error: ...`` line), ``USAGE`` (2: the command line, ``--engine spark``).
"""

from __future__ import annotations

from pathlib import Path

import click

from rank_polars.cli.options import engine_option, judge_option, metric_option, missing_option, output_options, progress_option, project, schema
from rank_polars.cli.output import check_file, check_output, emit, write_file
from rank_polars.cli.progress import choose


@click.command(name="track")
@click.argument("log", metavar="LOG")
@metric_option("Metric to track; repeat -m, or give a comma list (-m ndcg@10,mrr).")
@click.option("--store", required=True, type=click.Path(file_okay=False), help="The store folder (created if absent): per-query values per partition and a manifest.")
@click.option("--qrels", metavar="QRELS", help="Judgments (Parquet); when given they alone decide relevance.")
@click.option("--by", multiple=True, default=["model"], show_default=True, help="Grouping column within a partition; repeat for more.")
@click.option("--time", "time_col", default=None, help="The partition column (hive folders LOG/<time>=<value>/; default: the project file's time role, else date).")
@click.option("--window", help="Aggregate the stored per-query values per window of dates (7d, 1w, 1mo) instead of per partition.")
@click.option("--ci", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.95, show_default=True, help="Level of the interval on each aggregate.")
@click.option("--ci-method", type=click.Choice(["t", "bootstrap", "bca"]), default="t", show_default=True, help="t (from the stored counts, means, sds) or a seeded bootstrap of the stored per-query values.")
@click.option("--rebuild", is_flag=True, help="Empty a store made with other metrics, judgments or settings and evaluate every partition again.")
@click.option("--report", type=click.Path(dir_okay=False), help="Also write an HTML page with each metric's series per version and its band.")
@engine_option("The engine that evaluates a new partition")
@missing_option
@judge_option
@output_options
@progress_option
def command(log: str, metrics: tuple[str, ...], store: str, qrels: str | None, by: tuple[str, ...], time_col: str | None,
            window: str | None, ci: float, ci_method: str, rebuild: bool, report: str | None, engine: str, missing: str,
            fmt: str | None, output: str | None, force: bool, progress: bool | None, judge: str | None = None) -> None:
    """Evaluate the partitions of LOG the store does not hold yet; print the series.

    \b
    Example (a daily job):
      rank-polars track log/ --store eval_store/ -m ndcg@10 -m mrr --by model --time date
    """
    from rank_polars.monitor.track import track

    if engine == "spark":
        raise click.UsageError("track evaluates with --engine polars or duckdb")
    fmt = check_output(output, fmt, force)
    check_file(report, force, "report file")
    # --time, else the project file's time role ([columns] time = "day"), else date
    mapping = schema().with_names(time=time_col or project(click.get_current_context())[1].time)
    display = choose(progress)
    series = track(log, list(metrics), qrels=qrels, by=list(by), store=store, schema=mapping, ci=ci,
                   ci_method=ci_method, window=window, missing=missing, engine=engine, rebuild=rebuild,  # type: ignore[arg-type]
                   progress=display, **({"judge": judge} if judge is not None else {}))
    emit(series, fmt, output, force=force)
    if report:
        from rank_polars.report_segments import series_page

        write_file(report, series_page(series, list(metrics), by=list(by), time=mapping.column("time"),
                                       title=f"{Path(log).name}: {', '.join(metrics)}"), force=force)
        click.echo(f"wrote the report to {report}", err=True)
