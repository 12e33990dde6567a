"""CLI messages speak CLI: option spellings, "did you mean" on every column name."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from rank_polars.cli.errors import cli_wording
from tests.cli.helpers import invoke, one_line_error


@pytest.mark.parametrize(
    ("library", "cli"),
    [
        ("keep one row per query and item, or pass duplicates='first'", "keep one row per query and item, or pass --duplicates first"),
        ("label every row, or pass qrels=)", "label every row, or pass --qrels)"),
        ("labels='run' needs every row judged; pass labels='qrels' to use", "--labels run needs every row judged; pass --labels qrels to use"),
        ("missing must be 'zero' or 'skip', got 'maybe'", "missing must be 'zero' or 'skip', got 'maybe'"),
        ("use n_resamples=1000 or more", "use --n-resamples 1000 or more"),
    ],
)
def test_cli_wording(library: str, cli: str) -> None:
    assert cli_wording(library) == cli


def test_duplicates_error_names_the_option(tmp_path: Path, log: pl.DataFrame) -> None:
    relevant = log.filter(pl.col("relevance") > 0).head(1).with_columns(position=pl.lit(99, pl.Int64))
    pl.concat([log, relevant]).write_parquet(tmp_path / "dup.parquet")
    line = one_line_error(invoke("evaluate", tmp_path / "dup.parquet", "-m", "ndcg@10", "--by", "model", code=1))
    assert "--duplicates first" in line and "duplicates='first'" not in line


@pytest.mark.parametrize("command", [["evaluate", "-m", "ndcg@10"], ["compare", "-m", "ndcg@10"]])
def test_did_you_mean_on_column_options(command: list[str], files: dict[str, Path]) -> None:
    for option, wrong, right in (("--by", "modle", "model"), ("--query", "qeury", "query"), ("--relevance", "relevence", "relevance")):
        line = one_line_error(invoke(command[0], files["parquet"], *command[1:], option, wrong, code=1))
        assert f"did you mean {right!r}" in line, line


def test_validate_did_you_mean(files: dict[str, Path]) -> None:
    out = invoke("validate", files["parquet"], "--by", "modle", code=1).stdout
    assert "run has no 'by' column 'modle'; did you mean 'model'?" in out
    out = invoke("validate", files["parquet"], "--item", "iten", code=1).stdout
    assert "did you mean 'item'?" in out
