"""Subtopic judgments given as a Parquet path to a call of diversity measures alone.

The Polars and DuckDB engines then read only the rows the measures read and the rows a check
refuses, and the file's distinct queries (``diversity.checks._read_relevant``), where a DataFrame, Spark
and ``checks="strict"`` read the whole table.  Whatever the judgments hold (nulls in any column,
NaN, infinite or negative grades, repeats read or unread, no relevant row at all), the path
must give what the DataFrame gives: the same values to the last bit, or the same error.
"""

from __future__ import annotations

import math
import uuid
from pathlib import Path
from typing import Any

import hypothesis.strategies as st
import polars as pl
import pytest
from hypothesis import HealthCheck, Phase, given, settings

import rank_polars as rp
from rank_polars.errors import RankPolarsError

SCHEMA = {"query": pl.String, "subtopic": pl.Int64, "item": pl.String, "relevance": pl.Float64}
NAMES = [["alpha_ndcg@5", "nerr_ia@3", "strec@5"], ["alpha_ndcg(rel=2)@5", "map_ia"], ["p_ia@5", "nnrbp"],
         ["alpha_ndcg(judged_only=true)@5"]]
GRADES = st.sampled_from([0.0, 0.0, 1.0, 2.0, 3.0, None, math.nan, math.inf, -1.0])


def _outcome(run: pl.DataFrame, qrels: Any, names: list[str], engine: str, checks: str = "full") -> Any:
    """The per-query table, or the error's type and message."""
    try:
        return rp.evaluate(run, names, qrels=qrels, by="model", per_query=True, engine=engine,
                           checks=checks).sort("model", "query")
    except (RankPolarsError, ValueError) as error:
        return type(error).__name__, str(error)


def _same(path: Any, frame: Any) -> None:
    if isinstance(frame, tuple):
        assert path == frame
    else:
        assert not isinstance(path, tuple), path
        assert path.equals(frame), (path, frame)


@st.composite
def judgments(draw: st.DrawFn) -> list[tuple[Any, ...]]:
    """Subtopic judgments over queries q0-q3 and items d0-d5, mostly clean: now and then a null
    id or subtopic, a NaN, infinite, negative or null grade, a row repeated."""
    rows: list[tuple[Any, ...]] = []
    for q in (f"q{i}" for i in range(draw(st.integers(1, 4)))):
        for s in range(1, draw(st.integers(1, 3)) + 1):
            for d in draw(st.lists(st.sampled_from([f"d{j}" for j in range(6)]), unique=True, max_size=5)):
                grade = draw(GRADES) if draw(st.integers(0, 9)) == 0 else float(draw(st.integers(0, 3)))
                rows.append((q, s, d, grade))
    if rows and draw(st.booleans()):
        rows.append(draw(st.sampled_from(rows)))  # a repeat, read or not
    if rows and draw(st.integers(0, 3)) == 0:  # a null id or subtopic
        i, column = draw(st.integers(0, len(rows) - 1)), draw(st.integers(0, 2))
        rows[i] = tuple(None if c == column else v for c, v in enumerate(rows[i]))
    return draw(st.permutations(rows))


RUN = pl.DataFrame([(m, f"q{i}", f"d{(j * (i + 2) + (m == 'b')) % 7}", j + 1)
                    for m in ("a", "b") for i in range(4) for j in range(5)], orient="row",
                   schema={"model": pl.String, "query": pl.String, "item": pl.String, "position": pl.Int64})


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck),
          phases=[Phase.explicit, Phase.generate])
@given(rows=judgments(), names=st.sampled_from(NAMES), engine=st.sampled_from(["polars", "duckdb"]))
def test_a_path_gives_what_the_frame_gives(rows: list[tuple[Any, ...]], names: list[str], engine: str,
                                           tmp_path: Path) -> None:
    frame = pl.DataFrame(rows, orient="row", schema=SCHEMA)
    path = tmp_path / f"subtopics-{uuid.uuid4().hex}.parquet"  # one file per example (tmp_path is shared)
    frame.write_parquet(path)
    _same(_outcome(RUN, str(path), names, engine), _outcome(RUN, frame, names, engine))


@pytest.mark.parametrize("row, message", [
    pytest.param(("q1", 1, None, 0.0), "null", id="null-item-unread"),
    pytest.param((None, 1, "d1", 0.0), "null", id="null-query-unread"),
    pytest.param(("q1", None, "d1", 0.0), "null", id="null-subtopic-unread"),
    pytest.param(("q1", 1, "d1", None), "null", id="null-grade"),
    pytest.param(("q1", 1, "d1", math.nan), "NaN", id="nan-grade"),
    pytest.param(("q1", 1, "d1", -1.0), ">= 0", id="negative-grade"),
    pytest.param(("q0", 1, "d0", 1.0), "repeated", id="read-repeat"),
])
def test_each_refused_row_is_refused_alike_from_a_path(row: tuple[Any, ...], message: str, tmp_path: Path) -> None:
    """Each kind of refused row, in a file whose row groups hold statistics (the null ids' filter
    then skips the row groups without any) and in one without them: the error is the
    DataFrame's, in both engines."""
    clean = [("q0", 1, "d0", 1.0), ("q0", 2, "d1", 2.0), ("q1", 1, "d2", 1.0), ("q1", 1, "d3", 0.0)]
    frame = pl.DataFrame([*clean, row], orient="row", schema=SCHEMA)
    expected = _outcome(RUN, frame, NAMES[0], "polars")
    assert isinstance(expected, tuple) and message in expected[1]
    for statistics in (True, False):
        path = tmp_path / f"stats-{statistics}.parquet"
        frame.write_parquet(path, statistics=statistics, row_group_size=2)
        for engine in ("polars", "duckdb"):
            _same(_outcome(RUN, str(path), NAMES[0], engine), expected)


def test_a_path_without_any_relevant_row_scores_every_judged_query_0(tmp_path: Path) -> None:
    """No row is read: every judged query of the file is still evaluated (each 0), as from the frame."""
    frame = pl.DataFrame([("q0", 1, "d0", 0.0), ("q2", 1, "d1", 0.0)], orient="row", schema=SCHEMA)
    path = tmp_path / "zeros.parquet"
    frame.write_parquet(path)
    with pytest.warns(Warning):
        got = _outcome(RUN, str(path), NAMES[0], "polars")
    with pytest.warns(Warning):
        _same(got, _outcome(RUN, frame, NAMES[0], "polars"))
    assert got["query"].unique().sort().to_list() == ["q0", "q2"]
    assert got["alpha_ndcg@5"].to_list() == [0.0] * 4


def test_strict_checks_read_every_row_of_a_path(tmp_path: Path) -> None:
    """``checks="strict"`` refuses a repeat among grade-0 rows, which only the whole table shows."""
    frame = pl.DataFrame([("q0", 1, "d0", 1.0), ("q0", 1, "d1", 0.0), ("q0", 1, "d1", 0.0)], orient="row", schema=SCHEMA)
    path = tmp_path / "repeat.parquet"
    frame.write_parquet(path)
    got = _outcome(RUN, str(path), NAMES[0], "polars", checks="strict")
    assert isinstance(got, tuple) and "repeated" in got[1]
    assert not isinstance(_outcome(RUN, str(path), NAMES[0], "polars"), tuple)
