"""Paired significance tests, effect size and multiple-comparison corrections.

Everything works on ``d``, the per-query paired differences (version - baseline), as a
float64 NumPy array.  The distributions are SciPy's (``scipy.stats`` or ``scipy.special``,
imported inside the functions, so that ``import rank_polars`` and :func:`rank_polars.evaluate`
do not load it);
what is ours is the guards for degenerate data, which SciPy answers with NaN, and the
vectorised resampling tests (:mod:`rank_polars.stats.resampling`).
"""

from __future__ import annotations

import math
import warnings
from typing import Literal

import numpy as np

from rank_polars.stats.resampling import bootstrap_means, bootstrap_p, percentile_ci, randomization_p

Correction = Literal["bonferroni", "holm", "bh"]


def paired_t_p(d: np.ndarray) -> float:
    """Two-sided paired t-test (``scipy.stats.ttest_rel``): t = mean / (sd / sqrt(n)), n-1 df.

    No spread (every difference the same, 0 or not: :func:`degenerate`): NaN, there is no
    variance to test against (SciPy gives NaN for exact zeros, and a p near 0 when rounding
    leaves a spread of 1e-17).  Fewer than two queries: NaN.

    Examples
    --------
    >>> import numpy as np
    >>> round(paired_t_p(np.array([0.1, 0.3, -0.05, 0.2])), 6)
    0.162733
    >>> paired_t_p(np.zeros(3)), paired_t_p(np.full(3, 0.25)), paired_t_p(np.array([0.4]))
    (nan, nan, nan)
    """
    # the t distribution's upper tail as ``scipy.stats.t.sf`` computes it (``stdtr(df, -t)``, the
    # same bits), without importing ``scipy.stats``: that import takes longer than the tests
    # of a leaderboard's every pair of versions
    from scipy.special import stdtr

    n = d.size
    if n < 2 or degenerate(d) is not None:
        return math.nan
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    return float(2.0 * stdtr(n - 1, -(abs(mean) / (sd / math.sqrt(n)))))


#: Why a paired test has no p-value on these differences (:func:`degenerate`).
NO_DIFFERENCE = "no difference on any query"
SAME_DIFFERENCE = "the difference is the same on every query"
_SPREAD_RTOL = 1e-12  # differences within this share of the values' scale are equal (rounding, not data)


def degenerate(d: np.ndarray, scale: float = 0.0) -> str | None:
    """Why the differences ``d`` leave no variance to test against, or ``None``.

    :data:`NO_DIFFERENCE` when every difference is 0, :data:`SAME_DIFFERENCE` when every
    difference is the same non-zero number (a constant shift: the paired t statistic and the
    bootstrap distribution have no spread; SciPy answers a p of 0 or of 1e-49 from rounding).
    "The same" allows a spread of 1e-12 of ``scale`` (the largest |value| compared; at least
    the largest |difference|): ``(x + 0.25) - x`` is not exactly 0.25 on every query.  Fewer
    than two differences: ``None`` (too few queries is another reason, see :func:`smallest_p`).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([0.1, 0.2, 0.3, 0.7])
    >>> degenerate((x + 0.25) - x), degenerate(x - x), degenerate(np.array([0.1, 0.2]))
    ('the difference is the same on every query', 'no difference on any query', None)
    """
    if d.size < 2:
        return None
    tol = _SPREAD_RTOL * max(scale, float(np.abs(d).max()))
    if float(np.abs(d).max()) <= _SPREAD_RTOL * scale or not d.any():
        return NO_DIFFERENCE
    if float(d.max() - d.min()) <= tol:
        return SAME_DIFFERENCE
    return None


def t_interval(d: np.ndarray, confidence: float) -> tuple[float, float]:
    """The t interval on the mean of ``d``: ``mean +- t_{(1+c)/2, n-1} sd / sqrt(n)``, as
    ``scipy.stats.ttest_rel(y, x).confidence_interval(c)``.  A constant ``d`` (:func:`degenerate`)
    or fewer than two values: NaN (SciPy's ``[mean, mean]`` would claim a certainty the data lack).

    Examples
    --------
    >>> import numpy as np
    >>> [round(v, 6) for v in t_interval(np.array([0.1, 0.3, -0.05, 0.2]), 0.95)]
    [-0.100076, 0.375076]
    """
    from scipy import stats

    n = d.size
    if n < 2 or degenerate(d) is not None:
        return math.nan, math.nan
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    half = float(stats.t.ppf((1 + confidence) / 2, n - 1)) * sd / math.sqrt(n)
    return mean - half, mean + half


def wilcoxon_p(d: np.ndarray) -> float:
    """Wilcoxon signed-rank test, ``scipy.stats.wilcoxon(d)`` with its defaults spelled out.

    Zeros are dropped (``zero_method="wilcox"``), no continuity correction, two-sided;
    ``method="auto"`` (SciPy >= 1.15): with at most 50 differences and neither zeros nor
    ties, the exact null distribution; with at most 13 and zeros or ties, the exact
    sign-flip permutation distribution of the rank sum; otherwise the normal approximation
    with tie correction.  All differences zero: p = 1 (SciPy gives NaN).  No queries: NaN.

    Examples
    --------
    >>> import numpy as np
    >>> wilcoxon_p(np.array([0.1, 0.3, -0.05, 0.2, 0.15, 0.4]))
    0.0625
    >>> wilcoxon_p(np.zeros(4)), wilcoxon_p(np.array([]))
    (1.0, nan)
    """
    from scipy import stats

    if d.size == 0:
        return math.nan
    if not d.any():
        return 1.0
    nonzero = d != 0
    if d.size <= 13 and (not nonzero.all() or np.unique(np.abs(d)).size < d.size):
        # SciPy's own branch, but with the rank sum vectorised over the 2^n sign flips
        # (scipy.stats.wilcoxon evaluates it once per flip: ~1 s at n = 13)
        ranks = np.zeros(d.size)
        ranks[nonzero] = stats.rankdata(np.abs(d[nonzero]))
        return float(stats.permutation_test(
            (d,), lambda s, axis: ((s > 0) * ranks).sum(axis=axis), permutation_type="samples",
            n_resamples=np.inf, vectorized=True, alternative="two-sided",
        ).pvalue)
    with warnings.catch_warnings():  # SciPy's note that the normal approximation is rough at small n
        warnings.simplefilter("ignore", UserWarning)
        result = stats.wilcoxon(d, zero_method="wilcox", correction=False, alternative="two-sided", method="auto")
    return float(result.pvalue)


def effect_size(d: np.ndarray, scale: float | None = None) -> float:
    """Paired Cohen's d_z = mean(d) / sd(d) (sd with n-1): a definition, not a distribution.

    sd = 0: 0 when the mean is 0 too (identical values), +-inf otherwise (a constant
    shift).  With ``scale`` (the largest |value| compared, as :func:`degenerate`; what
    ``compare`` passes) "0" allows rounding: ``(x + 0.25) - x`` has an sd of 1e-17, and
    d_z = 7e15 would be a number where the tests say there is no spread.  Without it, sd is
    0 only exactly.  Fewer than two queries: NaN.

    Examples
    --------
    >>> import numpy as np
    >>> round(effect_size(np.array([0.1, 0.3, -0.05, 0.2])), 6)
    0.92094
    >>> effect_size(np.zeros(3)), effect_size(np.full(3, -0.25))
    (0.0, -inf)
    """
    if d.size < 2:
        return math.nan
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    if scale is not None:
        why = degenerate(d, scale)
    else:
        why = None if sd else NO_DIFFERENCE if mean == 0.0 else SAME_DIFFERENCE
    if why == NO_DIFFERENCE:
        return 0.0
    if why == SAME_DIFFERENCE:
        return math.copysign(math.inf, mean)
    return mean / sd


def smallest_p(test: str, n: int, n_resamples: float, versions: int = 2) -> float:
    """The smallest p-value ``test`` can give on ``n`` paired queries, whatever they are.

    * ``"paired_t"``: 0 from two queries on (the t distribution reaches any p), 1 below;
    * ``"wilcoxon"``: 2 / 2^n, both extreme sign patterns of n ranks (exact for n <= 50);
    * ``"randomization"``: 2 / 2^n, both extreme of the 2^n sign flips, and never below the
      resolution 1 / (1 + n_resamples);
    * ``"bootstrap"``: 1 / n^n, the probability of one of the n^n equally likely resamples
      (the test cannot resolve less), and never below 1 / (1 + n_resamples);
    * ``"randomized-tukey"`` over ``versions`` (m) versions: ``1 / (m(m-1))^(n-1)``, and never
      below 1 / (1 + n_resamples).  Each query's m values are permuted across the versions.  Take
      the versions a, b with the largest and smallest mean: every permutation that gives some c
      a's value and some d b's value on every query has a range of the version means at least the
      observed one, and there are m(m-1) such (c, d), each of probability 1 / (m(m-1))^n.  Data
      with a uniquely widest range reach the bound.  For two and three versions that is
      ``1 / (m!)^(n-1)``, for two ``2 / 2^n``: the sign flips of ``"randomization"``.

    For the tests of signs (``wilcoxon``, ``randomization``, ``randomized-tukey``) the caller counts
    in n only the queries that can change: those with a difference (all versions equal permutes to
    itself).

    Examples
    --------
    >>> [smallest_p("wilcoxon", n, 10_000) for n in (1, 2, 5, 6)]
    [1.0, 0.5, 0.0625, 0.03125]
    >>> [round(smallest_p("bootstrap", n, 10_000), 6) for n in (1, 2, 3, 20)]
    [1.0, 0.25, 0.037037, 0.0001]
    >>> [round(smallest_p("randomized-tukey", n, 10_000, versions=4), 6) for n in (1, 2, 3)]
    [1.0, 0.083333, 0.006944]
    """
    if test == "paired_t":
        return 0.0 if n >= 2 else 1.0
    exact = min(1.0, math.ldexp(1.0, 1 - n)) if n else 1.0
    if test == "wilcoxon":
        return exact
    if test == "bootstrap":
        exact = float(n) ** -n if n else 1.0
    if test == "randomized-tukey":
        exact = _permutations_floor(n, versions)
    return max(exact, 1.0 / (1 + n_resamples))


def _permutations_floor(n: int, versions: int) -> float:
    """``1 / (m(m-1))^(n-1)``: the share of the permutations of n queries' values across m versions
    that give one (ordered) pair of versions the values of the observed widest pair on every query."""
    if n <= 1 or versions < 2:
        return 1.0
    return float(versions * (versions - 1)) ** (1 - n)  # underflows to 0, never overflows


def adjust(p: np.ndarray, method: Correction | None) -> np.ndarray:
    """Adjusted p-values over one family; NaN p-values stay NaN and are not counted in it.

    * ``None``: unchanged;
    * ``"bonferroni"``: ``min(1, m p)``;
    * ``"holm"``: with p sorted ascending, ``max_{j<=i} min(1, (m-j+1) p_(j))``;
    * ``"bh"`` (Benjamini-Hochberg): ``scipy.stats.false_discovery_control``, that is
      ``min_{j>=i} min(1, m p_(j) / j)``.

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([0.01, 0.04, np.nan, 0.03, 0.005])
    >>> adjust(p, "holm").round(4).tolist(), adjust(p, "bh").round(4).tolist()
    ([0.03, 0.06, nan, 0.06, 0.02], [0.02, 0.04, nan, 0.04, 0.02])
    """
    p = np.asarray(p, dtype=np.float64)
    out = p.copy()
    valid = ~np.isnan(p)
    q, m = p[valid], int(valid.sum())
    if method is None or m == 0:
        return out
    if method == "bonferroni":
        out[valid] = np.minimum(1.0, q * m)
    elif method == "holm":
        order = np.argsort(q, kind="stable")
        adj = np.empty(m)
        adj[order] = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * q[order]))
        out[valid] = adj
    elif method == "bh":
        from scipy import stats

        out[valid] = stats.false_discovery_control(q, method="bh")
    else:
        raise ValueError(f"unknown correction {method!r}")
    return out


__all__ = [
    "NO_DIFFERENCE", "SAME_DIFFERENCE", "adjust", "bootstrap_means", "bootstrap_p", "degenerate", "effect_size",
    "paired_t_p", "percentile_ci", "randomization_p", "smallest_p", "t_interval", "wilcoxon_p",
]
