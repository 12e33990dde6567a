"""rp.agreement's ways of keying an item: integer query and item ids (read as one Int64 key, in
narrow types and in UInt64 above Int64's range) against the references and against the same
judgments under text ids; a judge grading an item twice, however often and with whichever
grades, refused with the count a plain group-by gives."""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import rank_polars as rp
from tests.test_judges_agreement import (
    LEVELS,
    _alpha,
    _close,
    _fleiss,
    _reference_pair,
    _wide,
    judgments,
)

# query and item ids as integers in these types, shifted by these offsets (UInt64: above Int64)
ID_TYPES = [(pl.Int64, 0), (pl.Int8, -100), (pl.UInt16, 7), (pl.UInt64, 2**63 + 11), (pl.Int32, -(2**31))]


def _integer_ids(frame: pl.DataFrame, dtype: pl.DataType, offset: int) -> pl.DataFrame:
    """``q3`` -> ``offset + 3``, ``d5`` -> ``offset + 5``: the order of the ids is kept (one digit each)."""
    return frame.with_columns(pl.col(c).replace_strict({v: offset + int(v[1:]) for v in frame[c].unique()}, return_dtype=dtype)
                              for c in ("query", "item"))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(judgments(), st.sampled_from(ID_TYPES))
def test_integer_ids_give_the_references_values_and_the_text_ids_table(frame: pl.DataFrame, ids: tuple[Any, int]) -> None:
    names = sorted(frame["judge"].unique().to_list())
    if len(names) < 2:
        return
    numbered = _integer_ids(frame, *ids)
    got = rp.agreement(numbered, n_resamples=20, seed=3)
    # the same queries in the same order: the same resamples, so the same table to the bit
    assert_frame_equal(got, rp.agreement(frame, n_resamples=20, seed=3), check_exact=True)
    values = {(r["judges"], r["statistic"]): r["value"] for r in got.iter_rows(named=True)}
    for a, b in combinations(names, 2):
        for statistic, want in _reference_pair(frame, a, b).items():
            _close(values[f"{a}|{b}", statistic], want)
    wide = _wide(frame)
    for level in LEVELS:
        _close(values["all", f"krippendorff_alpha_{level}"], _alpha(wide.select(names).to_numpy().T, level))
    _close(values["all", "fleiss_kappa"], _fleiss(wide.drop_nulls(names).select(names).to_numpy()))
    per = rp.agreement_per_query(numbered)
    assert per["query"].dtype == ids[0]
    text = rp.agreement_per_query(frame).with_columns(
        pl.col("query").map_elements(lambda q: str(ids[1] + int(q[1:])), return_dtype=pl.String))
    assert_frame_equal(per.with_columns(pl.col("query").cast(pl.String)), text, check_exact=True)
    assert_frame_equal(rp.grade_confusion(numbered), rp.grade_confusion(frame), check_exact=True)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(judgments(), st.data(), st.booleans())
def test_a_judge_grading_an_item_twice_is_refused_with_the_count_of_such_items(frame: pl.DataFrame, data: Any,
                                                                               numbered: bool) -> None:
    """Repeats of any judge (the last field of the packed word too), up to 9 times, with any grades."""
    if not frame.height:
        return
    picks = data.draw(st.lists(st.tuples(st.integers(0, frame.height - 1), st.integers(1, 8),
                                         st.sampled_from([None, "max", "min"])), max_size=4))
    extra = []
    for row, times, grade in picks:
        query, item, judge, relevance = frame.row(row)
        value = {"max": frame["relevance"].max(), "min": frame["relevance"].min(), None: relevance}[grade]
        extra += [(query, item, judge, value)] * times
    doubled = pl.concat([frame, pl.DataFrame(extra, schema=frame.schema, orient="row")])
    if numbered:
        doubled = _integer_ids(doubled, pl.Int64, 0)
    twice = doubled.group_by("query", "item", "judge").len().filter(pl.col("len") > 1).select("query", "item").unique()
    if doubled["judge"].n_unique() < 2:
        return
    if not twice.height:
        rp.agreement(doubled, n_resamples=5)
        return
    with pytest.raises(rp.RankPolarsError, match=rf"qrels: {twice.height} \(query, item\) pairs are judged twice by one judge"):
        rp.agreement(doubled, n_resamples=5)
    with pytest.raises(rp.RankPolarsError, match="judged twice"):
        rp.grade_confusion(doubled)


def test_many_judges_with_integer_ids_read_the_same_as_with_text_ids() -> None:
    """22 judges of an 8-grade scale: several packed words per item, keyed by one integer."""
    rng = np.random.default_rng(7)
    names = [f"j{i:02d}" for i in range(22)]
    rows = [(f"q{q}", f"d{i}", j, float(min(7, max(0, base + rng.integers(-1, 2)))))
            for q in range(6) for i in range(5) for base in [int(rng.integers(0, 8))] for j in names if rng.random() < 0.9]
    frame = pl.DataFrame(rows, schema=["query", "item", "judge", "relevance"], orient="row")
    assert_frame_equal(rp.agreement(_integer_ids(frame, pl.Int64, 40), n_resamples=10), rp.agreement(frame, n_resamples=10),
                       check_exact=True)
    twice = pl.concat([frame, frame.filter(pl.col("judge") == "j21").head(2)])
    with pytest.raises(rp.RankPolarsError, match="2 \\(query, item\\) pairs are judged twice"):
        rp.agreement(_integer_ids(twice, pl.Int64, 0), n_resamples=10)


@pytest.mark.parametrize("k", [2, 3, 4, 7, 8])
@pytest.mark.parametrize("judge", ["a", "b", "c"])
@pytest.mark.parametrize("times", [2, 3, 5])
@pytest.mark.parametrize("numbered", [False, True])
def test_repeats_of_the_top_grade_that_carry_into_the_next_judges_field_are_refused(k: int, judge: str, times: int,
                                                                                   numbered: bool) -> None:
    """An item only ``judge`` graded, ``times`` times, with the top of a ``k``-grade scale (whose
    sums carry furthest); every other item graded once by each judge."""
    rows = [("q1", f"d{i}", j, float(i % k)) for i in range(max(k, 3)) for j in "abc"]
    rows += [("q1", "d9", judge, float(k - 1))] * times
    frame = pl.DataFrame(rows, schema=["query", "item", "judge", "relevance"], orient="row")
    with pytest.raises(rp.RankPolarsError, match=r"1 \(query, item\) pairs are judged twice"):
        rp.agreement(_integer_ids(frame, pl.Int64, 0) if numbered else frame, n_resamples=5)


@pytest.mark.parametrize("scale", [1, 3_000_000])  # sums below float32's exact range, and above it (float64 again)
@pytest.mark.parametrize("n_queries, n_resamples", [(7, 50), (300_000, 9)])  # one step, and several
def test_the_resampled_counts_are_the_integer_products_of_the_same_draws(scale: int, n_queries: int,
                                                                          n_resamples: int) -> None:
    from scipy import sparse

    from rank_polars.judges.agreement import _CHUNK, _resampled
    from rank_polars.stats.resampling import _uniform_indices

    rng = np.random.default_rng(n_queries)
    counts = rng.integers(0, 4, (n_queries, 6)) * rng.integers(0, 2, (n_queries, 6)) * scale
    got = _resampled(sparse.csr_array(counts.astype(np.float64)), n_queries, n_resamples, seed=11)
    draws = np.random.default_rng(11)
    step = max(1, _CHUNK // n_queries)  # the steps' draws, in order, from one generator
    picks = np.concatenate([_uniform_indices(draws, n_queries, np.empty(min(step, n_resamples - s) * n_queries, np.uint64))
                            for s in range(0, n_resamples, step)]).reshape(n_resamples, n_queries)
    want = np.stack([counts[p].sum(axis=0) for p in picks])  # int64: exact
    assert want.max() >= (2**24 if scale > 1 else 0)
    assert np.array_equal(got, want.astype(np.float64))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(judgments(judges=3), st.sampled_from([["j0", "j1"], ["j2", "j0"], ["j1", "j2", "j0"]]))
def test_chosen_judges_read_as_the_table_of_their_rows_alone(frame: pl.DataFrame, chosen: list[str]) -> None:
    """``judges=``: the grades only the others gave are no part of the scale (interval alpha reads it)."""
    frame = frame.with_columns(pl.when(pl.col("judge") == "j1").then(pl.col("relevance") * 3 + 1).otherwise("relevance"))
    alone = frame.filter(pl.col("judge").is_in(chosen))
    if set(chosen) - set(alone["judge"]):
        with pytest.raises(rp.RankPolarsError, match="is not a judge of the judgments"):
            rp.agreement(frame, judges=chosen, n_resamples=5)
        return
    assert_frame_equal(rp.agreement(frame, judges=chosen, n_resamples=20), rp.agreement(alone, n_resamples=20),
                       check_exact=True)
    wide = _wide(alone)
    names = sorted(chosen)
    values = {r["statistic"]: r["value"] for r in rp.agreement(frame, judges=chosen, n_resamples=5)
              .filter(pl.col("judges") == "all").iter_rows(named=True)}
    for level in LEVELS:
        _close(values[f"krippendorff_alpha_{level}"], _alpha(wide.select(names).to_numpy().T, level))
