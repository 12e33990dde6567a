"""Helpers and fixtures shared by the command-line tests."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner, Result

import rank_polars as rp
from rank_polars.cli import main
from rank_polars.datasets import chatbot_log

METRICS = ["ndcg@10", "mrr", "map"]
M_ARGS = [a for m in METRICS for a in ("-m", m)]


def invoke(*args: object, code: int | None = 0) -> Result:
    """Run the command line in-process; check the exit code unless ``code`` is None."""
    result = CliRunner().invoke(main, [str(a) for a in args])
    if code is not None:
        assert result.exit_code == code, (result.output, result.exception)
    return result


def one_line_error(result: Result) -> str:
    """The failure is one ``error: ...`` line on stderr, no traceback, and nothing on stdout."""
    assert result.exit_code != 0, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert result.stdout == ""
    return lines[0]


def expected(log: pl.DataFrame, **kwargs: object) -> pl.DataFrame:
    return rp.evaluate(log, METRICS, by="model", **kwargs)
