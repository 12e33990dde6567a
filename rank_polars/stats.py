"""Paired significance tests, bootstrap intervals and multiple-comparison corrections.

Everything works on ``d``, the per-query paired differences (version - baseline), as a
float64 NumPy array.  Only NumPy and the standard library are used: the Student t and
normal tails are computed here (regularized incomplete beta by continued fraction,
``math.erfc``) and Wilcoxon's exact null distribution by counting; the test suite checks
every p-value against SciPy.

Resampling is vectorised: resamples are drawn in chunks of ``rows x n`` matrices (at most
``_CHUNK`` elements each, so memory stays bounded and in cache whatever ``n``), never one
resample per Python iteration.  Sums use NumPy's own loops (``take().sum()``, ``einsum``),
not BLAS, so the numbers do not depend on a BLAS build or its thread count.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

Correction = Literal["bonferroni", "holm", "bh"]

_CHUNK = 1 << 18  # elements of one resampling matrix (2 MiB as float64: stays in cache)
_TIE_RTOL = 1e-9  # resampled statistics within this relative distance of the observed one count as ties


# ----------------------------------------------------------------------------------------
# distributions


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 100_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    return h


def _stirling_rest(x: float) -> float:
    """lgamma(x) - ((x - 1/2) ln x - x + ln(2 pi)/2), for x >= 10."""
    x2 = x * x
    return (1.0 / 12 - (1.0 / 360 - (1.0 / 1260 - 1.0 / (1680 * x2)) / x2) / x2) / x


def log_beta(a: float, b: float) -> float:
    """ln B(a, b), without the cancellation of lgamma differences when one argument is large."""
    small, big = min(a, b), max(a, b)
    if big < 10.0:
        return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    # lgamma(big + small) - lgamma(big) by Stirling's series, differenced term by term
    rise = (
        (big - 0.5) * math.log1p(small / big)
        + small * math.log(big + small)
        - small
        + _stirling_rest(big + small)
        - _stirling_rest(big)
    )
    return math.lgamma(small) - rise


def betainc(a: float, b: float, x: float, y: float | None = None) -> float:
    """Regularized incomplete beta I_x(a, b); ``y`` = 1 - x when known more precisely."""
    y = 1.0 - x if y is None else y
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    log_front = a * math.log(x) + b * math.log(y) - log_beta(a, b)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, y) / b


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with ``df`` degrees of freedom."""
    if math.isnan(t):
        return math.nan
    if math.isinf(t):
        return 0.0
    t2 = t * t
    # P(|T| >= |t|) = I_{df/(df+t^2)}(df/2, 1/2)
    return min(1.0, betainc(df / 2.0, 0.5, df / (df + t2), t2 / (df + t2)))


def normal_two_sided_p(z: float) -> float:
    """P(|Z| >= |z|) for a standard normal Z."""
    if math.isnan(z):
        return math.nan
    return min(1.0, math.erfc(abs(z) / math.sqrt(2.0)))


# ----------------------------------------------------------------------------------------
# tests on paired differences


def paired_t_p(d: np.ndarray) -> float:
    """Two-sided paired t-test (``scipy.stats.ttest_rel``): t = mean / (sd / sqrt(n)), n-1 df.

    All differences zero: p = 1 (SciPy gives NaN).  A constant non-zero difference: p = 0.
    Fewer than two queries: NaN.
    """
    n = d.size
    if n < 2:
        return math.nan
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    if sd == 0.0:
        return 1.0 if mean == 0.0 else 0.0
    return t_two_sided_p(mean / (sd / math.sqrt(n)), n - 1)


def rank_average(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Average ranks (1-based) of ``values`` and the size of each tie group."""
    order = np.argsort(values, kind="stable")
    sorted_vals = values[order]
    new_group = np.concatenate(([True], sorted_vals[1:] != sorted_vals[:-1]))
    starts = np.flatnonzero(new_group)
    sizes = np.diff(np.append(starts, values.size))
    avg = starts + (sizes + 1) / 2.0  # mean of ranks start+1 .. start+size
    ranks = np.empty(values.size)
    ranks[order] = np.repeat(avg, sizes)
    return ranks, sizes


def _wilcoxon_counts(n: int) -> list[int]:
    """Number of subsets of {1..n} with each rank sum 0..n(n+1)/2 (exact integers)."""
    counts = [1]
    for k in range(1, n + 1):
        new = counts + [0] * k
        for s, c in enumerate(counts):
            new[s + k] += c
        counts = new
    return counts


def wilcoxon_p(d: np.ndarray) -> float:
    """Wilcoxon signed-rank test as ``scipy.stats.wilcoxon(d)`` with its defaults.

    Zeros are dropped (``zero_method="wilcox"``), no continuity correction, two-sided;
    SciPy's ``method="auto"``: with at most 50 differences and neither zeros nor ties, the
    exact null distribution; with at most 13 differences and zeros or ties, the exact
    sign-flip permutation distribution of the rank sum; otherwise the normal approximation
    with tie correction.  All differences zero: p = 1 (SciPy gives NaN).  No queries: NaN.
    """
    n_all = d.size
    if n_all == 0:
        return math.nan
    nonzero = d[d != 0]
    count = nonzero.size
    if count == 0:
        return 1.0
    ranks, ties = rank_average(np.abs(nonzero))
    r_plus = float(ranks[nonzero > 0].sum())
    has_ties = bool((ties > 1).any())
    if n_all <= 50 and not has_ties and count == n_all:
        counts = _wilcoxon_counts(count)
        total = 2**count
        k = int(r_plus)
        mean = count * (count + 1) / 4
        cdf = sum(counts[: k + 1]) if k <= mean else total - sum(counts[k + 1 :])
        sf = sum(counts[k:]) if k <= mean else total - sum(counts[:k])
        return min(1.0, 2 * min(sf, cdf) / total)
    if n_all <= 13:
        # every sign pattern of the n differences (zeros included, as SciPy flips them too)
        patterns = ((np.arange(2**n_all)[:, None] >> np.arange(n_all)[None, :]) & 1).astype(bool)
        signs = d[None, :] * np.where(patterns, -1.0, 1.0)
        full_ranks = np.zeros(n_all)
        full_ranks[d != 0] = ranks
        null = ((signs > 0) * full_ranks[None, :]).sum(axis=1)
        gamma = abs(np.finfo(float).eps * 100 * r_plus)
        greater = np.count_nonzero(null >= r_plus - gamma) / null.size
        less = np.count_nonzero(null <= r_plus + gamma) / null.size
        return min(1.0, 2 * min(greater, less))
    mn = count * (count + 1) * 0.25
    var = count * (count + 1) * (2 * count + 1) - float((ties.astype(float) ** 3 - ties).sum()) / 2
    z = (r_plus - mn) / math.sqrt(var / 24)
    return normal_two_sided_p(z)


def _rows_per_chunk(n: int, n_resamples: int) -> int:
    return max(1, min(n_resamples, _CHUNK // max(n, 1)))


def randomization_p(d: np.ndarray, n_resamples: int, rng: np.random.Generator) -> float:
    """Paired randomization (sign-flip permutation) test of the mean difference, two-sided.

    Each resample flips the sign of every difference with probability 1/2 (the versions'
    values of a query are swapped);
    ``p = (1 + #{resamples with |mean*| >= |mean|}) / (1 + n_resamples)``
    (the observed assignment counts once, so p is never 0), where ``>=`` allows a relative
    tolerance of 1e-9 so that exact ties are not lost to rounding.  No queries: NaN.
    """
    n = d.size
    if n == 0:
        return math.nan
    observed = abs(float(d.sum()))
    tol = _TIE_RTOL * float(np.abs(d).sum())
    total = float(d.sum())
    hits = 0
    rows = _rows_per_chunk(n, n_resamples)
    n_bytes = (n + 7) // 8
    for start in range(0, n_resamples, rows):
        r = min(rows, n_resamples - start)
        coins = np.frombuffer(rng.bytes(r * n_bytes), dtype=np.uint8).reshape(r, n_bytes)
        bits = np.unpackbits(coins, axis=1, count=n)
        # sum of s_i d_i with s_i = 1 - 2 b_i  (b_i = 1: the pair is swapped)
        # einsum, not BLAS: single-threaded, same summation order on every machine
        sums = total - 2.0 * np.einsum("ij,j->i", bits, d)
        hits += int(np.count_nonzero(np.abs(sums) >= observed - tol))
    return (1 + hits) / (1 + n_resamples)


def bootstrap_means(d: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Means of ``n_resamples`` paired bootstrap resamples (n queries drawn with replacement).

    When the differences take few distinct values (at most n/256, as for precision or
    reciprocal rank), a resample is drawn as multinomial counts over the distinct values
    (the same resampling distribution, far fewer random draws); otherwise as n random
    query indices.
    """
    n = d.size
    out = np.empty(n_resamples)
    if n == 0:
        out.fill(np.nan)
        return out
    values, counts = np.unique(d, return_counts=True)
    if values.size * 256 <= n:
        probs = counts / n
        rows = _rows_per_chunk(values.size, n_resamples)
        for start in range(0, n_resamples, rows):
            r = min(rows, n_resamples - start)
            out[start : start + r] = np.einsum("ij,j->i", rng.multinomial(n, probs, size=r), values) / n
        return out
    rows = _rows_per_chunk(n, n_resamples)
    for start in range(0, n_resamples, rows):
        r = min(rows, n_resamples - start)
        idx = rng.integers(0, n, (r, n))
        out[start : start + r] = np.take(d, idx).sum(axis=1) / n
    return out


def percentile_ci(means: np.ndarray, confidence: float) -> tuple[float, float]:
    """Percentile interval: the (1-c)/2 and (1+c)/2 quantiles of the bootstrap means."""
    if means.size == 0 or np.isnan(means).any():
        return math.nan, math.nan
    low, high = np.quantile(means, [(1 - confidence) / 2, (1 + confidence) / 2])
    return float(low), float(high)


def bootstrap_p(d: np.ndarray, means: np.ndarray) -> float:
    """Paired bootstrap test of mean difference 0, shift method, two-sided.

    The null distribution is the bootstrap distribution of the mean of the differences
    shifted to mean 0 (``d - mean(d)``), i.e. ``means* - mean``;
    ``p = (1 + #{|means* - mean| >= |mean|}) / (1 + n_resamples)`` with the same 1e-9
    relative tolerance as :func:`randomization_p`.  No queries: NaN.
    """
    if d.size == 0:
        return math.nan
    mean = float(d.mean())
    tol = _TIE_RTOL * float(np.abs(d).mean())
    hits = int(np.count_nonzero(np.abs(means - mean) >= abs(mean) - tol))
    return (1 + hits) / (1 + means.size)


def effect_size(d: np.ndarray) -> float:
    """Paired Cohen's d_z = mean(d) / sd(d) (sd with n-1).

    sd = 0: 0 when the mean is 0 too (identical values), +-inf otherwise (a constant
    shift).  Fewer than two queries: NaN.
    """
    if d.size < 2:
        return math.nan
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    if sd == 0.0:
        return 0.0 if mean == 0.0 else math.copysign(math.inf, mean)
    return mean / sd


# ----------------------------------------------------------------------------------------
# multiple comparisons


def adjust(p: np.ndarray, method: Correction | None) -> np.ndarray:
    """Adjusted p-values over one family; NaN p-values stay NaN and are not counted in it.

    * ``None``: unchanged;
    * ``"bonferroni"``: ``min(1, m p)``;
    * ``"holm"``: with p sorted ascending, ``max_{j<=i} min(1, (m-j+1) p_(j))``;
    * ``"bh"`` (Benjamini-Hochberg): ``min_{j>=i} min(1, m p_(j) / j)``.
    """
    p = np.asarray(p, dtype=np.float64)
    out = p.copy()
    if method is None:
        return out
    valid = ~np.isnan(p)
    q = p[valid]
    m = q.size
    if m == 0:
        return out
    if method == "bonferroni":
        adj = np.minimum(1.0, q * m)
    else:
        order = np.argsort(q, kind="stable")
        ranked = q[order]
        i = np.arange(1, m + 1)
        if method == "holm":
            steps = np.maximum.accumulate(np.minimum(1.0, (m - i + 1) * ranked))
        elif method == "bh":
            steps = np.minimum.accumulate(np.minimum(1.0, m * ranked / i)[::-1])[::-1]
        else:
            raise ValueError(f"unknown correction {method!r}")
        adj = np.empty(m)
        adj[order] = steps
    out[valid] = adj
    return out
