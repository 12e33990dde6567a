"""``rank-polars demo``: the whole job on the bundled support-chatbot log."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import click
import polars as pl

from rank_polars.presentation import comparison_display, verdict
from rank_polars.cli.errors import CLIError
from rank_polars.cli.formatters import to_table
from rank_polars.cli.options import progress_option
from rank_polars.cli.output import check_file
from rank_polars.cli.progress import choose
from rank_polars.cli.commands.compare import run_compare, write_html_report


def write_partitioned(log: pl.DataFrame, folder: Path, by: str = "model") -> list[Path]:
    """Write ``log`` as hive-partitioned Parquet (``folder/model=bot-v1/0.parquet``)."""
    paths = []
    for (value,), part in log.partition_by(by, as_dict=True, maintain_order=True).items():
        sub = folder / f"{by}={value}"
        sub.mkdir(parents=True, exist_ok=True)
        path = sub / "0.parquet"
        part.drop(by).write_parquet(path)
        paths.append(path)
    return paths


@click.command(name="demo")
@click.option("--out", type=click.Path(file_okay=False), help="Folder to write the support-chatbot log to (default: a temporary folder).")
@click.option("--force", is_flag=True, help="Write into --out even if it is not empty.")
@click.option("--report", type=click.Path(dir_okay=False), help="Also write the HTML report of the comparison to this file.")
@progress_option
def command(out: str | None, force: bool, report: str | None, progress: bool | None) -> None:
    """Run the whole job on the bundled support-chatbot log (two bot versions).

    Writes the log as a hive-partitioned Parquet folder, evaluates it with both engines
    (Polars and DuckDB, which agree), compares bot-v2 with bot-v1 and prints a verdict.
    """
    from rank_polars.datasets import sample_log
    from rank_polars.evaluate import evaluate as rp_evaluate

    check_file(report, force, "report file")
    display = choose(progress)
    if out:
        folder = Path(out)
        if folder.exists() and any(folder.iterdir()) and not force:
            raise CLIError(f"folder {out!r} is not empty; pass --force to write into it")
    else:
        folder = Path(tempfile.mkdtemp(prefix="rank-polars-demo-"))
    log_dir = folder / "log"
    if log_dir.exists():
        shutil.rmtree(log_dir)
    log = sample_log()
    versions = sorted(log["model"].unique().to_list())
    write_partitioned(log, log_dir)
    per_version = log.group_by("model").agg(pl.col("query").n_unique()).sort("model")
    click.echo(
        f"1. wrote the support-chatbot log to {log_dir}/ ({log.height:,} rows: {len(versions)} versions "
        f"x {per_version['query'][0]} questions, hive-partitioned by model)"
    )
    metrics = ["ndcg@10", "mrr", "map", "p@5"]
    click.echo(f"\n2. rank-polars evaluate {log_dir} --by model " + " ".join(f"-m {m}" for m in metrics))
    with display.phase("evaluating with polars"):
        by_polars = rp_evaluate(str(log_dir), metrics, by="model", engine="polars")
    with display.phase("evaluating with duckdb"):
        by_duckdb = rp_evaluate(str(log_dir), metrics, by="model", engine="duckdb")
    click.echo(to_table(by_polars), nl=False)
    gap = max(
        abs(a - b) for m in metrics for a, b in zip(by_polars.sort("model")[m].to_list(), by_duckdb.sort("model")[m].to_list())
    )
    agree = "agree" if gap < 1e-9 else "DISAGREE"
    click.echo(f"   engine=polars and engine=duckdb {agree} (largest difference {gap:.1e})")

    baseline, challenger = versions[0], versions[-1]
    compare_metrics = ["ndcg@10", "mrr", "map"]
    click.echo(f"\n3. rank-polars compare {log_dir} --by model --baseline {baseline} " + " ".join(f"-m {m}" for m in compare_metrics))
    with display.phase("comparing"):
        table = run_compare(
            str(log_dir), compare_metrics, qrels=None, by="model", baseline=baseline, test="paired_t", correction="holm",
            alpha=0.05, n_resamples=10_000, seed=0, missing="zero", engine="polars", confidence=0.95, progress=display,
        )
    click.echo(to_table(comparison_display(table)), nl=False)
    rows = {(r["metric"], str(r["version"])): r for r in table.iter_rows(named=True)}
    main_row = rows.get(("ndcg@10", challenger)) or next(iter(rows.values()))
    click.echo(f"\nverdict: {verdict(main_row, 'holm')}")
    if report:
        write_html_report(report, str(log_dir), compare_metrics, table, force=force, display=display, by="model",
                          title="rank-polars demo: bot-v1 vs bot-v2", correction="holm")
        click.echo(f"wrote the report to {report}")
    click.echo(f"\nnext: rank-polars validate {log_dir} --by model; rank-polars compare {log_dir} -m ndcg@10 --report report.html")
