"""A NaN (or infinite) score or grade read from a Parquet file is refused as it is from a frame.

Parquet's min/max statistics leave NaN out, as the format says, and DuckDB 2 read them as proof
that a float column holds none: ``isnan(x)`` over a file that Polars or Arrow wrote was folded
to false (duckdb/duckdb#25521).  From a path, the DuckDB engine then gave ``ndcg@3`` for a
ranking with a NaN score (the NaN ranked first, silently), and scored a NaN judgment as 0,
where the same frame was refused.  Each case here runs from the frame, the path and a lazy scan
of it (which the DuckDB engine streams to a Parquet file of its own), in every engine: one
outcome, an error naming the column.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import rank_polars as rp
from rank_polars.errors import RankPolarsError

NAN, INF = math.nan, math.inf
RUN = pl.DataFrame({"query": ["q0", "q0", "q0", "q1", "q1"], "item": ["a", "b", "c", "a", "b"],
                    "score": [3.0, 2.0, 1.0, 2.0, 1.0], "relevance": [1.0, 0.0, 1.0, 0.0, 1.0]})
QRELS = pl.DataFrame({"query": ["q0", "q0", "q1"], "item": ["a", "c", "b"], "relevance": [1.0, 2.0, 1.0]})
SUBTOPICS = pl.DataFrame({"query": ["q0", "q1"], "subtopic": [1, 1], "item": ["b", "a"], "relevance": [0.0, 0.0]})


def _outcome(run: Any, metrics: list[str], engine: str, **kw: Any) -> Any:
    """The per-query table, or the error's type and message."""
    try:
        return rp.evaluate(run, metrics, engine=engine, per_query=True, **kw).sort("query")
    except (RankPolarsError, ValueError) as error:
        return type(error).__name__, str(error)


def _sources(frame: pl.DataFrame, path: Path) -> dict[str, Any]:
    frame.write_parquet(path)  # Polars' writer: min/max statistics without the NaN
    return {"frame": frame, "path": str(path), "scan": pl.scan_parquet(path)}


CASES = {
    # a NaN score among the scores (trec_eval's order): it ranked first in DuckDB from a path
    "nan-score": ("run", RUN.with_columns(pl.Series("score", [3.0, NAN, 1.0, 2.0, 1.0])), ["ndcg@3", "p@3"], "score"),
    "nan-label": ("run", RUN.with_columns(pl.Series("relevance", [1.0, NAN, 1.0, 0.0, 1.0])), ["ndcg@3"], "relevance"),
    # a NaN judgment was scored as 0 in DuckDB from a path
    "nan-judgment": ("qrels", QRELS.with_columns(pl.Series("relevance", [1.0, NAN, 1.0])), ["ndcg@3"], "relevance"),
    "infinite-judgment": ("qrels", QRELS.with_columns(pl.Series("relevance", [1.0, INF, 1.0])), ["ndcg@3"], "relevance"),
    # subtopic judgments without a relevant row but with a NaN grade (a case of
    # test_diversity_file_read's path-vs-frame test: the family's check spoke first from a
    # path, the engine's from the frame)
    "nan-subtopic-judgment": ("qrels", pl.concat([SUBTOPICS, pl.DataFrame(
        {"query": ["q1"], "subtopic": [1], "item": ["b"], "relevance": [NAN]})]), ["alpha_ndcg@3"], "relevance"),
}


def _check(case: str, engine: str, folder: Path, **kw: Any) -> None:
    role, frame, metrics, column = CASES[case]
    outcomes = {}
    for how, source in _sources(frame, folder / f"{case}.parquet").items():
        if role == "run":
            outcomes[how] = _outcome(source, metrics, engine, **kw)
        else:
            outcomes[how] = _outcome(RUN.drop("relevance"), metrics, engine, qrels=source, **kw)
    expected = outcomes["frame"]
    assert isinstance(expected, tuple), expected
    assert column in expected[1] and ("NaN" in expected[1] or "finite" in expected[1]), expected
    assert outcomes["path"] == expected
    assert outcomes["scan"] == expected


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize("case", list(CASES))
def test_a_nan_in_a_parquet_file_is_refused_as_in_the_frame(case: str, engine: str, tmp_path: Path) -> None:
    _check(case, engine, tmp_path)


def test_a_nan_in_a_parquet_file_is_refused_as_in_the_frame_in_spark(spark_session: Any, tmp_path: Path) -> None:
    """Spark reads the same files itself: its ``isnan`` is not folded from the statistics (all
    five cases in one test: one Spark session, few statements)."""
    for case in CASES:
        _check(case, "spark", tmp_path, spark=spark_session)
