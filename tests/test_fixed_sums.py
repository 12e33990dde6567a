"""The engines' fixed-point sums: the exact sum of the terms (``math.fsum``'s, to the unit of
2^-64 per term), the same bits in any order and in both engines, and the rank-order pass where
a sum leaves the fixed point's bound (grades of 2^40 and more) instead of a wrapped-around integer.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rank_polars as rp
from rank_polars.engines.polars_engine import FIXED_BOUND, FIXED_SCALE, fixed_bound, fixed_sum

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(st.lists(finite, min_size=0, max_size=60), st.randoms(use_true_random=False))
def test_fixed_sum_is_the_exact_sum_in_any_order(terms: list[float], rnd) -> None:
    frame = pl.DataFrame({"x": terms}, schema={"x": pl.Float64})
    total = frame.select(fixed_sum(pl.col("x"))).item()
    shuffled = terms[:]
    rnd.shuffle(shuffled)
    again = pl.DataFrame({"x": shuffled}, schema={"x": pl.Float64}).select(fixed_sum(pl.col("x"))).item()
    assert total.hex() == again.hex()  # the same bits in any order
    # within one unit of 2^-64 per term of the exact sum (math.fsum: correctly rounded)
    assert abs(total - math.fsum(terms)) <= len(terms) / FIXED_SCALE + 2 * math.ulp(math.fsum(terms))
    assert frame.select(fixed_bound(pl.col("x"))).item() < FIXED_BOUND


def _log(seed: int = 5, queries: int = 60) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(seed)
    n = queries * 30
    run = pl.DataFrame({"model": rng.choice(["a", "b"], n), "query": rng.integers(0, queries, n).astype(str),
                        "item": rng.integers(0, 80, n).astype(str), "score": rng.random(n).round(2)})
    run = run.unique(["model", "query", "item"], keep="first", maintain_order=True)
    qrels = run.select("query", "item").unique(maintain_order=True).sample(fraction=0.4, seed=seed)
    return run, qrels.with_columns(relevance=pl.Series(rng.integers(0, 4, qrels.height)))


METRICS = ["ndcg@10", "ndcg", "ap", "rbp(p=0.8)", "bpref", "p@5", "rr", "r@20", "err@10", "infap"]


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_row_order_does_not_change_a_bit(engine: str) -> None:
    run, qrels = _log()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rp.CoverageWarning)
        one = rp.evaluate(run, METRICS, qrels=qrels, by="model", per_query=True, engine=engine)
        two = rp.evaluate(run.sample(fraction=1.0, shuffle=True, seed=1), METRICS, qrels=qrels.reverse(), by="model",
                          per_query=True, engine=engine)
    for m in METRICS:
        assert [v.hex() for v in one[m]] == [v.hex() for v in two[m]], m


def test_engines_agree_bit_for_bit() -> None:
    run, qrels = _log(seed=9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rp.CoverageWarning)
        a = rp.evaluate(run, METRICS, qrels=qrels, by="model")
        b = rp.evaluate(run, METRICS, qrels=qrels, by="model", engine="duckdb")
    for m in METRICS:
        assert [v.hex() for v in a[m]] == [v.hex() for v in b[m]], m


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_beyond_the_bound_sums_in_rank_order(engine: str) -> None:
    """Grades of 2^61: a DCG term alone is past the bound (2^62 over two terms).  nDCG and ERR's
    ratios do not depend on the grades' scale with a linear gain, so they equal the values at
    grades 0-3; an Int128 that wrapped around, or a refused cast, would not."""
    run, qrels = _log(seed=3)
    huge = qrels.with_columns(pl.col("relevance").cast(pl.Float64) * 2.0**61)
    metrics = ["ndcg@10", "ndcg", "p@5", "ap"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rp.CoverageWarning)
        small = rp.evaluate(run, metrics, qrels=qrels, by="model", per_query=True, engine=engine)
        large = rp.evaluate(run, metrics, qrels=huge, by="model", per_query=True, engine=engine)
    for m in metrics:
        assert np.allclose(small[m].to_numpy(), large[m].to_numpy(), rtol=1e-12, atol=1e-15), m


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize("metric", ["err", "ndcg(gain=exp)@5"])
def test_a_term_that_is_not_a_number_is_refused_not_left_out(engine: str, metric: str) -> None:
    """2^2000 overflows: the term is infinite or NaN.  Left out of a fixed-point sum it would give
    a finite, wrong value; its bound sends it to the rank-order sum, which the checks refuse."""
    run = pl.DataFrame({"query": ["q", "q", "r"], "item": ["a", "b", "a"], "position": [1, 2, 1]})
    qrels = pl.DataFrame({"query": ["q", "q", "r"], "item": ["a", "b", "a"], "relevance": [2000, 1, 1]})
    with pytest.raises(rp.DataError):
        rp.evaluate(run, [metric], qrels=qrels, engine=engine)
