"""rank-polars compare."""

from __future__ import annotations

import io
from pathlib import Path

import polars as pl

from tests.cli.helpers import M_ARGS, METRICS, expected, invoke, one_line_error


def test_compare(files: dict[str, Path]) -> None:
    out = invoke("compare", files["folder"], *M_ARGS, "--by", "model", "--baseline", "bot-v1", "--correction", "holm").stdout
    assert "bot-v2" in out and "W/T/L" in out
    assert "bot-v2 is better than bot-v1 on ndcg@10 by +" in out and "significant after holm" in out
    table = pl.read_csv(io.StringIO(invoke("compare", files["folder"], "-m", "ndcg@10", "--test", "bootstrap",
                                       "--n-resamples", "200", "--format", "csv").stdout))
    assert table["metric"].to_list() == ["ndcg@10"] and table["version"].to_list() == ["bot-v2"]
    assert {"p_value", "ci_low", "ci_high", "wins", "ties", "losses"} <= set(table.columns)
