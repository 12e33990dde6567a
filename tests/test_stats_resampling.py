"""The resampling machinery (rank_polars.stats.resampling): exact uniform draws, lookup-table sign
flips, tasks on threads (same numbers whatever the thread count), progress counts, and the
resampling distributions against SciPy's permutation_test and bootstrap."""

from __future__ import annotations

import itertools
import math
import threading
from collections import Counter

import numpy as np
import pytest

import scipy.stats as ss

from rank_polars.stats import resampling
from rank_polars.stats.compare import compare

from .test_compare import log_from_values


def draw_indices(n: int, count: int, seed: int) -> np.ndarray:
    out = np.empty(count, np.uint64)
    return resampling._uniform_indices(np.random.default_rng(seed), n, out).copy()


def test_uniform_indices_are_exact_where_multiply_shift_is_biased():
    # n = 3 * 2^30: multiply-shift without rejection maps two 32-bit words to every index
    # divisible by 3 and one to the others (P(index % 3 == 0) = 1/2); Lemire's rejection
    # (a quarter of the words here) must bring it back to 1/3
    n = 3 << 30
    idx = draw_indices(n, 600_000, 0)
    assert idx.min() >= 0 and idx.max() < n
    share = np.mean(idx % 3 == 0)
    assert share == pytest.approx(1 / 3, abs=5 * math.sqrt(2 / 9 / idx.size))
    # and halves stay halves
    assert np.mean(idx < n // 2) == pytest.approx(0.5, abs=5 * math.sqrt(0.25 / idx.size))


@pytest.mark.parametrize("n", [1, 2, 7, 1000])
def test_uniform_indices_cover_every_index_evenly(n):
    count = 200 * n if n > 1 else 100
    idx = draw_indices(n, count, n)
    counts = np.bincount(idx, minlength=n)
    assert counts.size == n
    # chi-square with n-1 degrees of freedom, far in the tail only if not uniform
    chi2 = float(((counts - count / n) ** 2 / (count / n)).sum())
    assert chi2 < n - 1 + 6 * math.sqrt(2 * max(n - 1, 1)) + 10


def test_subset_sum_tables():
    rows = np.random.default_rng(3).normal(size=(5, 8))
    table = resampling._subset_sums(rows)
    for byte in range(256):
        bits = [(byte >> k) & 1 for k in range(8)]
        assert table[:, byte] == pytest.approx(rows @ np.array(bits, dtype=float), rel=1e-14, abs=1e-14)


def exact_randomization(d: np.ndarray, strict: bool = False) -> float:
    """P(|sum s_i d_i| >= |sum d_i|) over all 2^n sign vectors (ties within 1e-9 count,
    or none with ``strict``)."""
    signs = np.array(list(itertools.product([1.0, -1.0], repeat=d.size)))
    sums = np.abs(signs @ d)
    tol = 1e-9 * np.abs(d).sum()
    return float(np.mean(sums > abs(d.sum()) + tol if strict else sums >= abs(d.sum()) - tol))


@pytest.mark.parametrize("batch", [resampling._BATCH, 7000])
def test_randomization_matches_exact_enumeration_with_padding_and_ties(monkeypatch, batch):
    # 13 differences (padded to 16 for the byte tables) on a 0.1 grid: many sign vectors
    # tie with the observed sum up to rounding, and ties must count
    monkeypatch.setattr(resampling, "_BATCH", batch)
    d = np.array([0.1, 0.2, -0.1, 0.3, 0.0, 0.2, -0.2, 0.1, 0.4, -0.3, 0.1, 0.2, -0.1])
    exact, strict = exact_randomization(d), exact_randomization(d, strict=True)
    r = 40_000
    se = math.sqrt(exact * (1 - exact) / r)
    assert exact - strict > 20 * se  # losing the ties would be seen
    for seed in (0, 1):
        p = resampling.randomization_p(d, r, np.random.default_rng(seed))
        assert p == pytest.approx(exact, abs=5 * se)


def test_randomization_over_several_tasks_matches_the_normal_limit():
    # 8000 differences, several tasks: the sign-flip null of sum s_i d_i has mean 0 and
    # variance sum d_i^2, and is normal to high accuracy at this size
    rng = np.random.default_rng(4)
    d = rng.normal(0.0, 1.0, 8000)
    d += 1.3 * math.sqrt((d**2).sum()) / d.size - d.mean()  # observed z about 1.3
    r = 20_000
    assert len(resampling._task_bounds(1000, 1000 * r)) > 1
    expected = 2 * ss.norm.sf(abs(d.sum()) / math.sqrt((d**2).sum()))
    p = resampling.randomization_p(d, r, np.random.default_rng(0))
    assert p == pytest.approx(expected, abs=5 * math.sqrt(expected * (1 - expected) / r))


def test_bootstrap_means_match_the_exact_distribution():
    # 5 distinct values: the 5^5 equally likely index tuples give the exact distribution
    d = np.array([0.3, -0.1, 0.05, 0.7, -0.45])
    exact = Counter(round(sum(d[list(t)]) / d.size, 12) for t in itertools.product(range(d.size), repeat=d.size))
    support = np.array(sorted(exact))
    cdf = np.cumsum([exact[v] for v in support]) / d.size**d.size
    r = 40_000
    means = np.round(resampling.bootstrap_means(d, r, np.random.default_rng(2)), 12)
    assert set(means.tolist()) <= set(support.tolist())
    empirical = np.searchsorted(np.sort(means), support, side="right") / r
    assert np.abs(empirical - cdf).max() < 1.95 / math.sqrt(r)  # Kolmogorov-Smirnov, alpha = 0.001


def test_bootstrap_over_several_tasks_has_the_right_moments():
    d = np.random.default_rng(6).exponential(1.0, 3000) - 0.8
    r = 20_000
    assert len(resampling._task_bounds(r, d.size * r)) > 1
    means = resampling.bootstrap_means(d, r, np.random.default_rng(0))
    se = d.std() / math.sqrt(d.size)  # the exact sd of a bootstrap mean
    assert means.mean() == pytest.approx(d.mean(), abs=5 * se / math.sqrt(r))
    assert means.std() == pytest.approx(se, rel=5 / math.sqrt(2 * r))


def test_same_numbers_whatever_the_thread_count(monkeypatch):
    monkeypatch.setattr(resampling, "_TASK_WORK", 1 << 12)  # many tasks at a small size
    monkeypatch.setattr(resampling, "_BATCH", 200)  # and several batches of randomization resamples
    d = np.random.default_rng(8).normal(0.02, 0.3, 3001)
    assert len(resampling._task_bounds(500, 3001 * 500)) == resampling._TASKS
    results = []
    for workers in (1, 2, 5):
        monkeypatch.setattr(resampling, "_MAX_WORKERS", workers)
        results.append((
            resampling.bootstrap_means(d, 500, np.random.default_rng(1)),
            resampling.randomization_p(d, 500, np.random.default_rng(1)),
        ))
    for means, p in results[1:]:
        assert np.array_equal(means, results[0][0]) and p == results[0][1]
    rng = np.random.default_rng(9)
    log = log_from_values({"v1": list(rng.random(2000)), "v2": list(rng.random(2000))})
    frames = []
    for workers in (1, 3):
        monkeypatch.setattr(resampling, "_MAX_WORKERS", workers)
        frames.append(compare(log, "dcg@1", test="randomization", n_resamples=300, seed=5))
    assert frames[0].equals(frames[1])


# ----------------------------------------------------------------------------------------
# against SciPy's resampling (distributional agreement within Monte Carlo error, seeded)


def mean_statistic(x, axis=-1):
    return np.mean(x, axis=axis)


@pytest.mark.parametrize(("n", "shift"), [(12, 0.08), (15, 0.05), (400, 0.02), (400, 0.0)])
def test_randomization_agrees_with_scipy_permutation_test(n, shift):
    d = np.random.default_rng(n).normal(shift, 0.2, n)
    r = 20_000
    # n <= 15: SciPy enumerates all 2^n sign flips (the exact p); above, its own Monte Carlo
    exact = n <= 15
    reference = ss.permutation_test(
        (d,), mean_statistic, permutation_type="samples", vectorized=True, alternative="two-sided",
        n_resamples=np.inf if exact else r, rng=np.random.default_rng(1),
    ).pvalue
    ours = resampling.randomization_p(d, r, np.random.default_rng(2))
    q = (ours + reference) / 2
    se = math.sqrt(q * (1 - q) / r) * (1 if exact else math.sqrt(2))
    assert ours == pytest.approx(reference, abs=5 * se + 1 / r)


@pytest.mark.parametrize("n", [7, 60, 2000])
def test_bootstrap_agrees_with_scipy_bootstrap(n):
    d = np.random.default_rng(n).exponential(0.3, n) - 0.25
    r = 20_000
    scipy_res = ss.bootstrap(
        (d,), mean_statistic, n_resamples=r, method="percentile", vectorized=True, confidence_level=0.95,
        rng=np.random.default_rng(1),
    )
    ours = resampling.bootstrap_means(d, r, np.random.default_rng(2))
    # the two resampling distributions of the mean: Kolmogorov-Smirnov, two samples of r
    assert ss.ks_2samp(ours, scipy_res.bootstrap_distribution).pvalue > 1e-3
    # the percentile interval: each end within Monte Carlo error of SciPy's
    low, high = resampling.percentile_ci(ours, 0.95)
    se = scipy_res.standard_error
    assert low == pytest.approx(scipy_res.confidence_interval.low, abs=0.1 * se)
    assert high == pytest.approx(scipy_res.confidence_interval.high, abs=0.1 * se)
    # the shift-method p on either distribution
    theirs = resampling.bootstrap_p(d, scipy_res.bootstrap_distribution)
    q = resampling.bootstrap_p(d, ours)
    assert q == pytest.approx(theirs, abs=5 * math.sqrt(2 * theirs * (1 - theirs) / r) + 2 / r)


# ----------------------------------------------------------------------------------------
# progress: resamples reported from inside the tasks add up to those requested


class Recorder:
    def __init__(self):
        self.calls: list[int] = []
        self.lock = threading.Lock()

    def __call__(self, k: int) -> None:
        with self.lock:
            self.calls.append(k)


@pytest.mark.parametrize(
    ("n", "r"),
    [(0, 10), (1, 7), (13, 1000), (3000, 777), (5000, 1500), (300_000, 3)],  # empty .. longer than a step
)
def test_progress_counts_add_up(monkeypatch, n, r):
    monkeypatch.setattr(resampling, "_TASK_WORK", 1 << 14)  # several tasks on threads
    monkeypatch.setattr(resampling, "_MAX_WORKERS", 3)
    monkeypatch.setattr(resampling, "_BATCH", 400)  # and several randomization batches
    d = np.random.default_rng(n).normal(0.0, 1.0, n)
    for draw in (
        lambda advance: resampling.bootstrap_means(d, r, np.random.default_rng(0), advance),
        lambda advance: resampling.randomization_p(d, r, np.random.default_rng(0), advance),
    ):
        seen = Recorder()
        draw(seen)
        assert sum(seen.calls) == r and min(seen.calls, default=1) > 0
    # few distinct values: the multinomial path
    coarse = np.random.default_rng(1).choice([0.0, 0.5, 1.0], 3000)
    seen = Recorder()
    resampling.bootstrap_means(coarse, 999, np.random.default_rng(0), seen)
    assert sum(seen.calls) == 999
