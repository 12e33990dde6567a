"""How many queries are needed: Sakai's topic set size design, and the power of a paired t-test.

Sakai (*Topic set size design*, Information Retrieval Journal 2016; *Laboratory Experiments in
Information Retrieval*, ch. 6) sizes a test collection from the difference worth detecting,
the variance of the metric, ``alpha`` and the power wanted:

* two versions, paired t-test: the smallest ``n`` whose power against a true mean difference
  ``delta`` reaches ``power``, the power being that of the two-sided test under the noncentral
  t distribution (``df = n - 1``, noncentrality ``sqrt(n) delta / sd``, where ``sd`` is the
  standard deviation of the per-query differences);
* ``m`` versions, one-way ANOVA: ``delta`` is the minimum detectable range (best minus worst
  version); in the least favourable configuration (two versions ``delta`` apart, the others in
  the middle) the noncentrality is ``n delta^2 / (2 sd^2)`` with ``sd`` the within-version
  standard deviation, on ``m - 1`` and ``m (n - 1)`` degrees of freedom (noncentral F).

SciPy's ``nct`` and ``ncf`` give the distributions (imported inside the functions).
"""

from __future__ import annotations

import math
from typing import Any, Literal

from rank_polars.errors import RankPolarsError

_MAX_N = 10**9  # a search beyond this many queries means the difference cannot be detected in practice


def t_power(effect: float, n: int, alpha: float = 0.05) -> float:
    """Power of the two-sided paired t-test on ``n`` queries when the true standardized
    difference (Cohen's d_z = delta / sd of the differences) is ``effect``.

    ``P(|T'| > t_{1-alpha/2, n-1})`` with ``T'`` noncentral t (df ``n - 1``, noncentrality
    ``effect * sqrt(n)``); as ``statsmodels``' ``TTestPower().power(effect, n, alpha)``.

    Examples
    --------
    >>> round(t_power(0.5, 34), 4), round(t_power(0.0, 34), 4)
    (0.8078, 0.05)
    """
    from scipy import stats

    if n < 2:
        return math.nan
    df = n - 1
    crit = float(stats.t.isf(alpha / 2, df))
    nc = effect * math.sqrt(n)
    # the lower tail P(T' < -crit) as the upper tail of -T' (SciPy's nct.cdf gives NaN far in the left tail)
    lower = float(stats.nct.sf(crit, df, -nc))
    return float(stats.nct.sf(crit, df, nc)) + (lower if math.isfinite(lower) else 0.0)


def anova_power(delta: float, sd: float, n: int, versions: int, alpha: float = 0.05) -> float:
    """Power of the one-way ANOVA F-test over ``versions`` versions with ``n`` queries each
    to detect a range ``delta`` between the best and the worst version (Sakai's minimum
    detectable range; noncentrality ``n delta^2 / (2 sd^2)``).

    Examples
    --------
    >>> round(anova_power(0.1, 0.2, 100, 5), 4)
    0.8162
    """
    from scipy import stats

    if n < 2:
        return math.nan
    dfn, dfd = versions - 1, versions * (n - 1)
    crit = float(stats.f.isf(alpha, dfn, dfd))
    return float(stats.ncf.sf(crit, dfn, dfd, n * delta**2 / (2 * sd**2)))


def _smallest_n(power_at: Any, power: float) -> int | None:
    """The smallest n >= 2 with ``power_at(n) >= power`` (power grows with n): doubling, then bisection."""
    if power_at(2) >= power:
        return 2
    high = 4
    while power_at(high) < power:
        if high >= _MAX_N:
            raise RankPolarsError(f"queries_needed: more than {_MAX_N:,} queries would be needed: a difference this "
                                  "small against this spread cannot be detected in practice")
        high = min(high * 2, _MAX_N)
    low = high // 2  # power_at(low) < power <= power_at(high)
    while high - low > 1:
        mid = (low + high) // 2
        if power_at(mid) >= power:
            high = mid
        else:
            low = mid
    return high


def queries_needed(
    delta: float,
    sd: float | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    test: Literal["t", "anova"] = "t",
    versions: int = 2,
    *,
    log: Any = None,
    metric: str | None = None,
    by: str = "model",
    **evaluate_kwargs: Any,
) -> int | None:
    """How many queries a test needs to detect a difference ``delta`` with the given power.

    Parameters
    ----------
    delta
        The difference worth detecting: between two versions' means (``test="t"``), or the
        range between the best and the worst of ``versions`` versions (``test="anova"``).
    sd
        ``test="t"``: the standard deviation of the per-query differences; ``"anova"``: the
        within-version standard deviation of the metric.  ``None``: estimated from ``log``.
    alpha, power
        Two-sided significance level and the power wanted (the probability of detecting
        ``delta`` when it is the true difference).
    test
        ``"t"``: paired t-test between two versions; ``"anova"``: one-way ANOVA over
        ``versions`` versions.  ``versions > 2`` with ``test="t"`` means ``"anova"``.
    log, metric, by, **evaluate_kwargs
        To estimate ``sd`` from a log of several versions (Sakai's estimates): the residual
        variance ``V_E`` of the two-way ANOVA (version x query) of ``metric``'s per-query
        values, ``sd = sqrt(2 V_E)`` for the paired t-test (the variance of a difference of two
        versions) and ``sd = sqrt(V_E)`` for the ANOVA.  ``evaluate_kwargs`` go to
        :func:`rank_polars.evaluate` (``qrels=``, ``missing=``, column names...).

    Returns
    -------
    int or None
        The smallest number of queries whose power reaches ``power``; ``None`` when ``delta``
        is 0 (no number of queries detects no difference).  More than 10^9 queries is a
        ``RankPolarsError`` (it once returned ``None`` from 2^29 on: 784,886,053 looked like 0).

    Examples
    --------
    >>> import rank_polars as rp
    >>> rp.queries_needed(0.05, sd=0.2)
    128
    >>> rp.queries_needed(0.1, sd=0.2, test="anova", versions=5)
    97
    """
    for name, value in (("alpha", alpha), ("power", power)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
            raise RankPolarsError(f"queries_needed: {name} must be between 0 and 1 (exclusive), got {value!r}")
    if isinstance(versions, bool) or not isinstance(versions, int) or versions < 2:
        raise RankPolarsError(f"queries_needed: versions must be an integer >= 2, got {versions!r}")
    if test not in ("t", "anova"):
        raise RankPolarsError(f"queries_needed: test must be 't' or 'anova', got {test!r}")
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not math.isfinite(delta):
        raise RankPolarsError(f"queries_needed: delta must be a finite number, got {delta!r}")
    if versions > 2:
        test = "anova"
    if sd is None:
        if log is None or metric is None:
            raise RankPolarsError("queries_needed: give sd, or log= and metric= to estimate it")
        sd = estimate_sd(log, metric, by=by, test=test, **evaluate_kwargs)
    elif isinstance(sd, bool) or not isinstance(sd, (int, float)) or not sd > 0 or not math.isfinite(sd):
        raise RankPolarsError(f"queries_needed: sd must be a positive number, got {sd!r}")
    if delta == 0:
        return None
    if test == "t":
        effect = abs(delta) / sd
        return _smallest_n(lambda n: t_power(effect, n, alpha), power)
    return _smallest_n(lambda n: anova_power(abs(delta), sd, n, versions, alpha), power)


def estimate_sd(log: Any, metric: str, *, by: str = "model", test: str = "t", **evaluate_kwargs: Any) -> float:
    """Sakai's standard deviation estimate for :func:`queries_needed` from a log of several
    versions: ``sqrt(2 V_E)`` (``test="t"``) or ``sqrt(V_E)`` (``"anova"``), ``V_E`` the
    residual variance of the two-way ANOVA of ``metric``'s per-query values."""
    from rank_polars.stats.anova import anova

    row = anova(log, metric, by=by, **evaluate_kwargs).row(0, named=True)
    v_e = row["ms_residual"]
    if v_e is None or not v_e > 0:
        raise RankPolarsError(f"queries_needed: cannot estimate sd from the log: {row['note'] or 'no residual variance'} "
                              f"({row['versions']} versions, {row['n_queries']} queries of {metric})")
    return math.sqrt(2 * v_e if test == "t" else v_e)


__all__ = ["anova_power", "estimate_sd", "queries_needed", "t_power"]
