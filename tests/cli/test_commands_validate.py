"""rank-polars validate."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from tests.cli.helpers import M_ARGS, METRICS, expected, invoke, one_line_error


def test_validate_clean(files: dict[str, Path]) -> None:
    result = invoke("validate", files["parquet"], "--by", "model")
    assert "0 errors" in result.stdout and "labels (run): 0:" in result.stdout


def test_validate_finds_errors(tmp_path: Path, log: pl.DataFrame) -> None:
    bad = pl.concat([log, log.head(2)]).with_columns(
        pl.when(pl.col("position") == 3).then(None).otherwise(pl.col("relevance")).alias("relevance")
    )
    bad.write_parquet(tmp_path / "bad.parquet")
    result = invoke("validate", tmp_path / "bad.parquet", "--by", "model", code=None)
    assert result.exit_code == 1
    out = result.stdout
    assert "duplicate items within a ranking" in out
    assert "duplicate positions" in out and "null or NaN relevance" in out
    assert "3 errors" in out
    as_json = json.loads(invoke("validate", tmp_path / "bad.parquet", "--by", "model", "--format", "json", code=None).stdout)
    assert as_json["errors"] == 3 and {f["check"] for f in as_json["findings"]} >= {"duplicates", "nulls"}


def test_validate_warnings_alone_exit_0(tmp_path: Path, log: pl.DataFrame, files: dict[str, Path]) -> None:
    """Tied scores and queries missing in one version are warnings: exit code 0."""
    run = log.drop("position").with_columns(pl.col("score").round(1))
    run = run.filter(~((pl.col("model") == "bot-v2") & (pl.col("query") == "q0003")))
    run.write_csv(tmp_path / "run.csv")
    out = invoke("validate", tmp_path / "run.csv", "--by", "model").stdout
    assert "tied scores" in out and "bot-v2 lacks 1" in out and "'q0003'" in out
    assert "0 errors" in out
    trec = invoke("validate", files["trec"], "--qrels", files["qrels"]).stdout
    assert "unjudged share of the top 10" in trec and "labels (qrels)" in trec


def test_validate_missing_column_is_an_error(tmp_path: Path, log: pl.DataFrame) -> None:
    log.drop("relevance").write_parquet(tmp_path / "nolabels.parquet")
    result = invoke("validate", tmp_path / "nolabels.parquet", "--by", "model", code=None)
    assert result.exit_code == 1 and "no relevance column" in result.stdout


def test_validate_counts_have_thousands_separators(tmp_path: Path) -> None:
    from rank_polars.datasets import sample_log

    log = sample_log()
    log.write_parquet(tmp_path / "big.parquet")
    out = invoke("validate", tmp_path / "big.parquet", "--by", "model").stdout
    assert f"{log.height:,} rows" in out and "," in f"{log.height:,}"
