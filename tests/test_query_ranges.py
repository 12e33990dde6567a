"""The Polars engine's metric pass over ranges of query ids (bounded memory, see
``polars_engine.query_ranges``) gives exactly the numbers of one pass, for every metric.

The budget is forced down to a few rows so that small generated logs are cut into many
ranges; the reference is the same evaluation in one pass (the default budget), which the
other test files check against trec_eval, pytrec_eval and the DuckDB engine.
"""

from __future__ import annotations

import warnings

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polars.testing import assert_frame_equal

import rank_polars as rp
from rank_polars.engines import polars_engine
from rank_polars.engines.polars_engine import HELD, query_ranges
from rank_polars.plan import Q

from .test_namespace_and_properties import SPECS
from .test_reference_pytrec_eval import collections, to_frames

# ERR reads the top grade of all judgments: its pass is never cut (see below).  INST and the
# NERR measures are left out: their formulas are the longest (INST's 3,067 tree nodes) and each
# range plans them again; BPM, INSQ and SDCG keep the C/W/L family's nested running sums here
RANGED = [s for s in SPECS if not s.startswith(("err", "inst", "nerr"))]


def evaluate(*args, **kwargs) -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rp.CoverageWarning)
        return rp.evaluate(*args, **kwargs)


def in_ranges(budget: int, *args, **kwargs) -> tuple[pl.DataFrame, int]:
    """``evaluate`` with the metric pass cut at ``budget`` held rows; also the number of ranges."""
    seen: list[int] = []

    def spy(held, _budget=None):
        ranges = query_ranges(held, budget)
        seen.append(len(ranges))
        return ranges

    with pytest.MonkeyPatch.context() as m:
        m.setattr(polars_engine, "query_ranges", spy)
        out = evaluate(*args, **kwargs)
    return out, seen[0] if seen else 1


def versions(run: pl.DataFrame) -> pl.DataFrame:
    """Two versions of the run (one reversed), and a third with a null version name."""
    reversed_ = run.with_columns(score=-pl.col("score"))
    return pl.concat([run.with_columns(model=pl.lit("a")), reversed_.with_columns(model=pl.lit("b")),
                      run.head(run.height // 2).with_columns(model=pl.lit(None, pl.String))])


# each example runs one streaming pass per range (budgets of 1-4 rows: dozens of passes)
@settings(max_examples=15, deadline=None)
@given(collections(), st.sampled_from(["zero", "skip"]), st.integers(1, 4))
def test_ranges_give_the_numbers_of_one_pass(data, missing, budget):
    run, qrels = to_frames(*data)
    log = versions(run)
    kwargs = dict(qrels=qrels, by="model", per_query=True, missing=missing)
    want = evaluate(log, RANGED, **kwargs)
    got, ranges = in_ranges(budget, log, RANGED, **kwargs)
    assert ranges >= 1
    assert_frame_equal(got, want, rel_tol=1e-12, abs_tol=1e-15)  # sums may differ in the last ulp


@settings(max_examples=20, deadline=None)
@given(collections(), st.integers(1, 3))
def test_ranges_with_the_runs_labels(data, budget):
    run, qrels = to_frames(*data)
    positive = qrels.with_columns(pl.col("relevance").clip(lower_bound=0))
    log = run.join(positive, on=["query", "item"], how="left").with_columns(pl.col("relevance").fill_null(0))
    log = log.sort("query", "score", "item", descending=[False, True, True]).with_columns(
        position=pl.int_range(1, pl.len() + 1).over("query")).drop("score")
    names = ["ndcg@3", "ap", "rr", "p@2", "rprec", "rbp"]
    for kwargs in ({}, {"qrels": positive, "labels": "run"}):
        want = evaluate(log, names, per_query=True, **kwargs)
        got, _ = in_ranges(budget, log, names, per_query=True, **kwargs)
        assert_frame_equal(got, want, rel_tol=1e-12, abs_tol=1e-15)


def test_a_small_budget_cuts_the_pass_and_err_is_never_cut():
    log = pl.DataFrame({"query": [f"q{i:02d}" for i in range(40) for _ in range(3)],
                        "item": [f"d{j}" for _ in range(40) for j in range(3)],
                        "position": [j + 1 for _ in range(40) for j in range(3)],
                        "relevance": [int(j == 1) for _ in range(40) for j in range(3)]})
    out, ranges = in_ranges(5, log, ["ap", "ndcg@2"])
    assert ranges == 8  # 40 contributing rows, 5 a range
    assert out["ap"][0] == pytest.approx(0.5) and out["ndcg@2"][0] == pytest.approx(1 / 1.5849625007211562)
    _, ranges = in_ranges(5, log, ["err@2"])
    assert ranges == 1


def _range_of_each_query(held: pl.DataFrame, ranges: list) -> list[int]:
    return held.select(pl.sum_horizontal(*(r.cast(pl.Int32) for r in ranges))).to_series().to_list()


def test_ranges_cover_every_query_once():
    even = pl.DataFrame({Q: [f"q{i}" for i in range(10)], HELD: [3] * 10})
    ranges = query_ranges(even, 10)  # 30 rows, 10 a range
    assert len(ranges) == 3
    assert _range_of_each_query(even, ranges) == [1] * 10
    sizes = [even.filter(r)[HELD].sum() for r in ranges]
    assert sizes == [9, 9, 12]
    # a heavy query is a range of its own; the queries around it share the others
    skewed = even.with_columns(pl.when(pl.col(Q) == "q2").then(50).otherwise(1).alias(HELD))
    ranges = query_ranges(skewed, 10)
    assert _range_of_each_query(skewed, ranges) == [1] * 10
    assert [skewed.filter(r)[Q].to_list() for r in ranges] == [["q0", "q1"], ["q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9"]]
    assert query_ranges(even, 100) == [None]
