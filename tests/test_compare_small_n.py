"""The randomised Tukey HSD and the small-n rule of ``docs/comparing.md``: a test that cannot reach
``p < alpha`` on its queries, whatever their values, is not run (found by an adversarial pass: with
5 queries it gave p = 0.0628 where ``randomization`` said "n too small", and p = 1.0 on one query).

Its smallest p over m versions and n queries (those where the versions are not all equal) is
``1 / (m(m-1))^(n-1)``: checked here against every permutation of small designs (for four
versions it is not ``1 / (m!)^(n-1)``: the versions between the best and the worst can be permuted
without changing the range)."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import polars as pl
import pytest

import rank_polars as rp
from rank_polars.errors import SmallSampleWarning
from rank_polars.stats import tests as stats
from rank_polars.stats.anova import randomized_tukey
from rank_polars.stats.compare import compare_values


def frame(y: np.ndarray) -> pl.DataFrame:
    """versions x queries as the per-query table compare_values reads."""
    m, n = y.shape
    return pl.DataFrame({"model": [f"v{i}" for i in range(m) for _ in range(n)],
                         "query": [f"q{j:02d}" for _ in range(m) for j in range(n)],
                         "x": y.reshape(-1).astype(np.float64)})


def exact_p(y: np.ndarray) -> np.ndarray:
    """The randomised Tukey p[i, j] over every one of the (m!)^n permutations (no resampling)."""
    m, n = y.shape
    observed = np.abs(y.mean(axis=1)[:, None] - y.mean(axis=1)[None, :])
    perms = [list(p) for p in itertools.permutations(range(m))]
    ranges = []
    for choice in itertools.product(perms, repeat=n):
        mu = np.stack([y[p, j] for j, p in enumerate(choice)], axis=1).mean(axis=1)
        ranges.append(mu.max() - mu.min())
    return (np.array(ranges)[None, None, :] >= observed[:, :, None] - 1e-12).mean(axis=2)


def extreme(m: int, n: int) -> np.ndarray:
    """Version i scores i on every query, plus a query-specific offset: the observed assignment is
    the only one (up to relabelling the versions alike) whose range of means is the largest."""
    return np.arange(m, dtype=np.float64)[:, None] + 10.0 * np.arange(n)[None, :]


# ---------------------------------------------------------------------------------------------
# the bound, against exact enumeration


@pytest.mark.parametrize(("m", "n"), [(2, 1), (2, 3), (2, 6), (3, 1), (3, 2), (3, 3), (4, 2), (4, 3), (5, 2)])
def test_the_bound_is_the_exact_smallest_p(m, n):
    """The permutations giving some (c, d) the values of the widest pair (a, b) on every query keep
    the observed range: m(m-1) of the (m(m-1))^n choices of those two slots per query, so the
    smallest p is 1 / (m(m-1))^(n-1), reached by the most extreme data (for its widest pair)."""
    p = exact_p(extreme(m, n))
    bound = stats.smallest_p("randomized-tukey", n, math.inf, versions=m)
    assert bound == pytest.approx((m * (m - 1)) ** (1 - n), rel=1e-15)
    assert p[0, m - 1] == pytest.approx(bound, rel=1e-12)
    assert p[~np.eye(m, dtype=bool)].min() == pytest.approx(bound, rel=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_no_data_gives_a_p_below_the_bound(seed):
    """Random designs, ties and constant queries included: the exact p never falls below
    1 / (m(m-1))^(n'-1), n' counting the queries where the versions are not all equal."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 5))
    n = int(rng.integers(1, {2: 7, 3: 5, 4: 4}[m]))
    y = rng.integers(0, 3, size=(m, n)).astype(np.float64)
    y[:, 0] = 1.0  # a query where every version is equal: it permutes to itself
    varying = int(np.count_nonzero(np.any(y != y[:1], axis=0)))
    bound = stats.smallest_p("randomized-tukey", varying, math.inf, versions=m)
    assert exact_p(y).min() >= bound - 1e-12


def test_two_versions_count_as_the_sign_flips():
    for n in range(80):
        assert (stats.smallest_p("randomized-tukey", n, 10**6, versions=2)
                == stats.smallest_p("randomization", n, 10**6))
    assert stats.smallest_p("randomized-tukey", 10**6, 99, versions=5) == 1 / 100  # no overflow
    assert stats.smallest_p("randomized-tukey", 3, 10**9, versions=300) == 1 / (1 + 10**9)


def test_queries_needed_at_alpha_005():
    """What the docs state: 6 queries for 2 versions, 3 for 3 to 5, 2 for 6 or more."""
    needed = {m: next(n for n in range(1, 50) if stats.smallest_p("randomized-tukey", n, math.inf, versions=m) < 0.05)
              for m in range(2, 8)}
    assert needed == {2: 6, 3: 3, 4: 3, 5: 3, 6: 2, 7: 2}


# ---------------------------------------------------------------------------------------------
# compare: below the bound no p-value, a note and a SmallSampleWarning, as for randomization


def test_five_queries_two_versions_is_n_too_small_as_randomization():
    log = pl.DataFrame({"model": ["a"] * 5 + ["b"] * 5, "query": [f"q{i}" for i in range(5)] * 2,
                        "item": ["x"] * 10, "position": [1] * 10, "relevance": [0] * 5 + [1] * 5})
    for test in ("randomized-tukey", "randomization"):
        with pytest.warns(SmallSampleWarning, match=f"the {test} test was not run on 1 of 1 rows") as caught:
            row = rp.compare(log, "p@1", pairs="all", test=test).row(0, named=True)
        assert (row["p_value"], row["p_adjusted"], row["significant"], row["note"]) == (None, None, False, "n too small")
        assert f"{2 / 2**5:.4g} >= alpha 0.05" in str(caught[0].message)
    assert "5 where the versions differ) and 2 versions" in str(caught[0].message) or test == "randomization"
    with pytest.warns(SmallSampleWarning) as caught:
        rp.compare(log, "p@1", pairs="all", test="randomized-tukey")
    assert "over 5 queries (5 where the versions differ) and 2 versions" in str(caught[0].message)


def test_one_query_has_no_p_value():
    y = np.array([[0.2], [0.7], [0.4]])
    with pytest.warns(SmallSampleWarning, match="1 / \\(3\\*2\\)\\^\\(1-1\\)"):
        out = compare_values(frame(y), pairs="all", test="randomized-tukey", n_resamples=500)
    assert out["p_value"].to_list() == [None] * 3 and set(out["note"]) == {"n too small"}
    assert not out["significant"].any()


def test_three_versions_two_queries_too_few_three_enough():
    with pytest.warns(SmallSampleWarning, match="smallest p it could give"):
        two = compare_values(frame(extreme(3, 2)), pairs="all", test="randomized-tukey", n_resamples=2000)
    assert set(two["note"]) == {"n too small"} and two["p_value"].null_count() == 3
    with warnings.catch_warnings():
        warnings.simplefilter("error", SmallSampleWarning)
        three = compare_values(frame(extreme(3, 3)), pairs="all", test="randomized-tukey", n_resamples=20_000)
    assert three["note"].null_count() == 3
    # never below the bound: the resamples cannot resolve less than the exact smallest p
    assert (three["p_value"] >= 1 / 36).all()
    far = three.filter((pl.col("baseline") == "v0") & (pl.col("version") == "v2")).row(0, named=True)
    assert far["p_value"] == pytest.approx(1 / 36, abs=4.5 * math.sqrt(1 / 36 * 35 / 36 / 20_000))


def test_a_query_with_every_version_equal_does_not_count():
    """Six queries but one has all versions equal: five that can change, 2 / 2^5 >= 0.05."""
    y = np.vstack([np.zeros(6), np.r_[0.0, np.ones(5)]])
    with pytest.warns(SmallSampleWarning, match="5 where the versions differ"):
        row = compare_values(frame(y), pairs="all", test="randomized-tukey").row(0, named=True)
    assert row["note"] == "n too small" and row["p_value"] is None
    # the same with a sixth query that differs is run (2 / 2^6 < 0.05)
    y = np.vstack([np.zeros(6), np.ones(6) + np.arange(6) / 100])
    row = compare_values(frame(y), pairs="all", test="randomized-tukey", n_resamples=4000).row(0, named=True)
    assert row["note"] is None and row["p_value"] >= 2 / 2**6


def test_too_few_resamples_says_so():
    y = extreme(3, 6)
    with pytest.warns(SmallSampleWarning, match="n_resamples too small"):
        out = compare_values(frame(y), pairs="all", test="randomized-tukey", n_resamples=10)
    assert set(out["note"]) == {"n_resamples too small"} and out["p_value"].null_count() == 3


def test_enough_queries_unchanged_by_the_rule():
    """Above the bound the p-values are the randomised test's own (same seed, same numbers)."""
    rng = np.random.default_rng(0)
    y = rng.random((3, 12))
    out = compare_values(frame(y), pairs="all", test="randomized-tukey", n_resamples=999, seed=5)
    seq = np.random.SeedSequence(5, spawn_key=(0,))
    p = randomized_tukey(y, 999, np.random.default_rng(seq))
    assert out["p_value"].to_list() == pytest.approx([p[0, 1], p[0, 2], p[1, 2]], rel=1e-15)
