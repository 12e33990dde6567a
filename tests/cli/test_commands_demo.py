"""rank-polars demo."""

from __future__ import annotations

from pathlib import Path

from tests.cli.helpers import M_ARGS, METRICS, expected, invoke, one_line_error


def test_demo(tmp_path: Path) -> None:
    out = invoke("demo", "--out", tmp_path / "demo").stdout
    assert (tmp_path / "demo" / "log" / "model=bot-v1").is_dir()
    assert "engine=polars and engine=duckdb agree" in out
    assert "verdict: bot-v2 is better than bot-v1 on ndcg@10 by +" in out
    line = one_line_error(invoke("demo", "--out", tmp_path / "demo", code=None))
    assert "not empty" in line


# ----------------------------------------------------------------------------------------
