"""``validate.universe``: the (group, query) pairs every engine evaluates, against a plain-Python
reference on generated rankings and judged queries (groups that ranked every judged query, some,
none; null group values; queries nobody judged), under ``missing="zero"`` and ``"skip"``.

It finds the judged rankings by a membership test and looks up the (group, judged query) pairs
only for groups that ranked fewer judged queries than there are (at 10M rankings the join of
every pair with the rankings was the peak of the call)."""

from __future__ import annotations

import warnings
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rank_polars.inputs import Columns, Inputs
from rank_polars.plan import N_RET, Q
from rank_polars.validate import universe

QUERIES = ["q1", "q2", "q3", "q4", "10", "1"]


def _inputs(by: int) -> Inputs:
    return Inputs(run=pl.LazyFrame(), qrels=None, by=[f"g{i}" for i in range(by)], order="position",
                  columns=Columns("query", "item", "position", "score", "relevance"))


@settings(max_examples=150, deadline=None)
@given(by=st.integers(0, 2), data=st.data(), missing=st.sampled_from(["zero", "skip"]))
def test_universe_equals_the_pairs_of_groups_and_judged_queries(by: int, data: Any, missing: str) -> None:
    inputs = _inputs(by)
    keys = inputs.keys
    groups = st.tuples(*[st.sampled_from(["a", "b", None]) for _ in range(by)])
    rankings = data.draw(st.lists(st.tuples(groups, st.sampled_from(QUERIES), st.integers(1, 30)),
                                  unique_by=lambda r: (r[0], r[1])))
    judged = data.draw(st.lists(st.sampled_from(QUERIES), min_size=1, unique=True))
    stats = pl.DataFrame([(*g, q, n) for g, q, n in rankings], schema={**{k: pl.String for k in keys}, N_RET: pl.UInt32},
                         orient="row")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = universe(stats, inputs, pl.DataFrame({Q: judged}), missing)  # type: ignore[arg-type]
    present = {(*g, q, n) for g, q, n in rankings if q in judged}
    seen_groups = {g for g, _, _ in rankings} | ({()} if by == 0 else set())  # no groups: one, always there
    absent = {(*g, q, 0) for g in seen_groups for q in judged if (g, q) not in {(r[0], r[1]) for r in rankings}}
    expected = present | (absent if missing == "zero" else set())
    assert sorted(got.rows(), key=repr) == sorted(expected, key=repr)
    assert got.columns == [*keys, N_RET] and got.schema[N_RET] == pl.UInt32
    # every pair dropped or zero-filled is reported, with its count
    messages = [str(w.message) for w in caught]
    unjudged = {q for _, q, _ in rankings if q not in judged}
    assert any(m.startswith(f"{len(unjudged)} queries of the run have no judgments") for m in messages) == bool(unjudged)
    assert any(m.startswith(f"{len(absent)} (group, judged query) pairs") for m in messages) == bool(absent)


@pytest.mark.parametrize("missing", ["zero", "skip"])
def test_universe_of_a_group_with_no_judged_ranking(missing: str) -> None:
    """A group whose every ranking is unjudged still misses every judged query."""
    stats = pl.DataFrame({"__rp_by0": ["a", "b"], Q: ["q1", "zz"], N_RET: pl.Series([3, 2], dtype=pl.UInt32)})
    with pytest.warns(UserWarning):
        got = universe(stats, _inputs(1), pl.DataFrame({Q: ["q1"]}), missing)  # type: ignore[arg-type]
    assert sorted(got.rows()) == ([("a", "q1", 3), ("b", "q1", 0)] if missing == "zero" else [("a", "q1", 3)])
