"""The monitor's means and standard deviations from whole-number sums, against ``statistics``
(exact rational arithmetic over the floats themselves)."""

from __future__ import annotations

import math
import statistics

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from rank_polars.monitor.sums import exact_moments, square_sums, square_terms

# within spread_terms' bound: (2v)^2 < 2^40
values = st.floats(min_value=-2.0**19 + 1, max_value=2.0**19 - 1, allow_nan=False)


def _moments(xs: list[float]) -> tuple[float, float | None]:
    frame = pl.DataFrame({"g": [0] * len(xs), "x": xs})
    sums = frame.with_columns(square_terms(pl.col("x"), "x")).group_by("g").agg(pl.len().alias("n"), *square_sums("x"))
    row = exact_moments(sums, "x").row(0, named=True)
    return row["mean_x"], row["sd_x"]


@settings(max_examples=150, deadline=None)
@given(st.lists(values, min_size=1, max_size=40), st.floats(0, 2.0**18), st.floats(1e-12, 1.0))
def test_the_same_mean_and_sd_as_exact_arithmetic(xs: list[float], shift: float, spread: float) -> None:
    # a large common value with a small spread: where a sum of squares less the squared sum cancels
    xs = xs + [shift + spread * (i % 3) for i in range(len(xs))]
    mean, sd = _moments(xs)
    scale = max(abs(x) for x in xs)
    assert math.isclose(mean, statistics.fmean(xs), rel_tol=1e-12, abs_tol=2.0**-60 * max(scale, 1.0))
    expected = statistics.stdev(xs)
    # each term is floor(x * 2^64) / 2^64: within 2^-64 of x, so the sd within 2^-64 too
    assert sd is not None and math.isclose(sd, expected, rel_tol=1e-12, abs_tol=2.0**-60)


def test_one_value_has_no_spread() -> None:
    assert _moments([0.25]) == (0.25, None)


def test_equal_values_have_a_spread_of_zero() -> None:
    assert _moments([1e5 + 0.1] * 7) == (1e5 + 0.1, 0.0)
