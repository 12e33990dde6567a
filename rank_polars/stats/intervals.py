"""Confidence intervals on every aggregate of :func:`rank_polars.evaluate` (``ci=``).

Queries are the unit: an interval says how far a version's mean (sum, geometric mean) over
*these* queries could be from its mean over the population of queries they were drawn from.

* ``"t"``: ``mean +- t_{(1+c)/2, n-1} sd / sqrt(n)`` from the group's count, mean and standard
  deviation, aggregated by Polars (the per-query values do not come back to Python); a sum's
  interval is ``n`` times its mean's, a geometric mean's is ``exp`` of the t interval on the
  mean of ``ln(max(x, 1e-5))`` (trec_eval's floor).
* ``"bootstrap"`` (percentile) and ``"bca"`` (bias-corrected and accelerated, Efron &
  Tibshirani ch. 14, as ``scipy.stats.bootstrap(method="BCa")``): ``n_resamples`` resamples of
  the group's queries with replacement (:func:`rank_polars.stats.resampling.bootstrap_means`,
  vectorised and seeded: the same seed gives the same intervals on every machine).

A group with fewer than two queries has no interval (null), nor has a group whose values are
all the same (no spread: a zero-width interval would claim a certainty the queries cannot give),
nor a ``"catalog"`` metric (one value per group, not a mean over queries; ``compare`` gives
the difference of two versions' catalogue values a bootstrap interval over lists).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal, Sequence

import numpy as np
import polars as pl

from rank_polars.errors import RankPolarsError
from rank_polars.measures.base import GM_FLOOR, Measure
from rank_polars.stats.resampling import bootstrap_means

Method = Literal["t", "bootstrap", "bca"]
_SPREAD_RTOL = 1e-12  # values within this share of their size are the same (rounding, not data)
METHODS = ("t", "bootstrap", "bca")


def check_ci(ci: Any, method: Any, n_resamples: Any = 10_000) -> None:
    """Refuse a level outside (0, 1), an unknown method or a bad number of resamples."""
    if isinstance(ci, bool) or not isinstance(ci, (int, float)) or not 0 < ci < 1:
        raise RankPolarsError(f"ci must be a confidence level between 0 and 1 (exclusive), e.g. 0.95; got {ci!r}")
    if method not in METHODS:
        raise RankPolarsError(f"ci_method must be 't', 'bootstrap' or 'bca', got {method!r}")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 1:
        raise RankPolarsError(f"ci_resamples must be an integer >= 1, got {n_resamples!r}")


def _transformed(label: str, measure: Measure) -> pl.Expr:
    """The per-query values whose mean the aggregate is a function of (logs for a geometric mean)."""
    col = pl.col(label).cast(pl.Float64)
    return col.clip(lower_bound=GM_FLOOR).log() if measure.AGGREGATE == "gmean" else col


def _back(aggregate: str, x: np.ndarray, n: np.ndarray) -> np.ndarray:
    """The aggregate from the mean of the transformed values."""
    if aggregate == "sum":
        return x * n
    if aggregate == "gmean":
        return np.exp(x)
    return x


def intervals(
    table: pl.DataFrame,
    outputs: Sequence[tuple[str, Measure]],
    by: Sequence[str],
    confidence: float = 0.95,
    method: Method = "t",
    n_resamples: int = 10_000,
    seed: int = 0,
) -> pl.DataFrame:
    """``<label>_low`` and ``<label>_high`` per group of ``by`` for each ``(label, spec)`` of ``outputs``.

    ``table`` holds one row per (group, query): the ``by`` columns and one column per label
    (the per-query table of :func:`rank_polars.evaluate`).  Rows come in the order of the
    sorted groups.

    Examples
    --------
    >>> import polars as pl
    >>> from rank_polars.measures import parse
    >>> per = pl.DataFrame({"model": ["a"] * 4 + ["b"] * 4, "ndcg": [.2, .5, .4, .9, .3, .6, .4, .9]})
    >>> intervals(per, [("ndcg", parse("ndcg"))], ["model"])
    shape: (2, 3)
    ┌───────┬──────────┬───────────┐
    │ model ┆ ndcg_low ┆ ndcg_high │
    │ ---   ┆ ---      ┆ ---       │
    │ str   ┆ f64      ┆ f64       │
    ╞═══════╪══════════╪═══════════╡
    │ a     ┆ 0.031557 ┆ 0.968443  │
    │ b     ┆ 0.129002 ┆ 0.970998  │
    └───────┴──────────┴───────────┘
    """
    check_ci(confidence, method, n_resamples)
    by = list(by)
    plain = [(label, spec) for label, spec in outputs if spec.AGGREGATE != "catalog"]
    grouped = table.group_by(by) if by else None
    if method == "t":
        stats_exprs = [pl.len().alias("__n")]  # keeps a group whose metrics are all catalogue-level
        for label, spec in plain:
            # sorted: the engines give a group's queries in any order, and a sum's last bit follows
            # the order of its terms (the bounds changed in the last digit from run to run)
            g = _transformed(label, spec).sort()
            # n is the values the measure defines (a family may leave some null, e.g. ctr@k of a
            # ranking with no row in its top k): the mean is over those, so the interval is too
            stats_exprs += [g.count().alias(f"{label}__n"), g.mean().alias(f"{label}__mean"),
                            g.std(ddof=1).alias(f"{label}__sd")]
        agg = grouped.agg(stats_exprs) if grouped is not None else table.select(stats_exprs)
        if by:
            agg = agg.sort(by, nulls_last=True)
        return _t_bounds(agg, outputs, by, confidence)
    return _bootstrap_bounds(table, outputs, by, confidence, method, n_resamples, seed)


def _t_bounds(agg: pl.DataFrame, outputs: Sequence[tuple[str, Measure]], by: list[str],
              confidence: float) -> pl.DataFrame:
    # scipy.special's quantile is the one scipy.stats.t.ppf calls, without scipy.stats' import
    # (about a second: the cost of a daily job's series)
    from scipy.special import stdtrit

    columns: dict[str, Any] = {c: agg[c] for c in by}
    for label, spec in outputs:
        if spec.AGGREGATE == "catalog":
            low = high = np.full(agg.height, np.nan)
        else:
            n = agg[f"{label}__n"].to_numpy().astype(np.float64)
            with np.errstate(invalid="ignore", divide="ignore"):
                quantile = np.where(n >= 2, stdtrit(np.maximum(n - 1, 1), (1 + confidence) / 2), np.nan)
            mean = agg[f"{label}__mean"].to_numpy().astype(np.float64)
            sd = agg[f"{label}__sd"].fill_null(np.nan).to_numpy().astype(np.float64)
            # no spread beyond rounding: no interval (as stats.degenerate for differences)
            sd = np.where(sd <= _SPREAD_RTOL * np.abs(mean), np.nan, sd)
            half = quantile * sd / np.sqrt(n)
            low, high = _back(spec.AGGREGATE, mean - half, n), _back(spec.AGGREGATE, mean + half, n)
        columns[f"{label}_low"], columns[f"{label}_high"] = low, high
    return pl.DataFrame(columns).with_columns(pl.exclude(by).fill_nan(None))


def bootstrap_interval(values: np.ndarray, aggregate: str, confidence: float, method: Method, n_resamples: int,
                       rng: np.random.Generator) -> tuple[float, float, np.ndarray]:
    """The percentile or BCa interval of one group's aggregate, and its bootstrap distribution.

    ``values``: the group's per-query values (already on the log scale for ``"gmean"``).  BCa:
    ``z0 = Phi^-1(share of resampled aggregates below the observed one, ties counting half)``,
    acceleration from the jackknife of the aggregate, and the quantiles
    ``Phi(z0 + (z0 + z) / (1 - a (z0 + z)))`` for ``z = Phi^-1((1 -+ c) / 2)``, as SciPy.
    """
    from scipy.special import ndtr, ndtri

    n = values.size
    if n < 2 or float(np.ptp(values)) <= _SPREAD_RTOL * float(np.abs(values).max()):
        return math.nan, math.nan, np.full(n_resamples, np.nan)
    dist = _back(aggregate, bootstrap_means(values, n_resamples, rng), np.float64(n))
    alpha = (1 - confidence) / 2
    if method == "bca":
        # the aggregate as evaluate gives it (a sum is summed, not n x the mean: on values on a
        # grid, resampled aggregates tie with it exactly, and z0 counts those ties)
        observed = float(values.sum()) if aggregate == "sum" else float(_back(aggregate, np.float64(values.mean()),
                                                                              np.float64(n)))
        z0 = float(ndtri((np.count_nonzero(dist < observed) + np.count_nonzero(dist <= observed)) / (2 * dist.size)))
        loo = (values.sum() - values) / (n - 1)  # the jackknife means
        theta = _back(aggregate, loo, np.float64(n - 1))
        u = (n - 1) * (theta.mean() - theta)
        denominator = float(np.square(u).sum() / n**2) ** 1.5
        a = float(np.power(u, 3).sum() / n**3) / denominator / 6 if denominator > 0 else math.nan
        levels = []
        for z in (float(ndtri(alpha)), -float(ndtri(alpha))):
            levels.append(float(ndtr(z0 + (z0 + z) / (1 - a * (z0 + z)))))
    else:
        levels = [alpha, 1 - alpha]
    if not all(math.isfinite(q) for q in levels):  # a degenerate distribution (every resample the same)
        return math.nan, math.nan, dist
    low, high = np.quantile(dist, levels)
    return float(low), float(high), dist


def _bootstrap_bounds(table: pl.DataFrame, outputs: Sequence[tuple[str, Measure]], by: list[str], confidence: float,
                      method: Method, n_resamples: int, seed: int) -> pl.DataFrame:
    plain = [(label, spec) for label, spec in outputs if spec.AGGREGATE != "catalog"]
    values = table.select(*by, *[_transformed(label, spec).alias(label) for label, spec in plain])
    if by:
        parts = values.sort(by, nulls_last=True).partition_by(by, maintain_order=True, as_dict=True)
    else:
        parts = {(): values}
    rows = []
    for g, (key, part) in enumerate(parts.items()):
        row: dict[str, Any] = dict(zip(by, key))
        for k, (label, spec) in enumerate(outputs):
            if spec.AGGREGATE == "catalog":
                row[f"{label}_low"] = row[f"{label}_high"] = None
                continue
            rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(g, k)))
            # sorted: the engines give a group's queries in any order, the resamples must not depend on it
            # the values the measure defines (nulls are left out of the mean, so out of its resamples)
            defined = part[label].drop_nulls().to_numpy().astype(np.float64)
            low, high, _ = bootstrap_interval(np.sort(defined), spec.AGGREGATE, confidence, method, n_resamples, rng)
            row[f"{label}_low"], row[f"{label}_high"] = low, high
        rows.append(row)
    schema = {**{c: table.schema[c] for c in by}, **{f"{label}_{s}": pl.Float64 for label, _ in outputs
                                                     for s in ("low", "high")}}
    return pl.DataFrame(rows, schema=schema, orient="row").with_columns(pl.exclude(by).fill_nan(None))


# ----------------------------------------------------------------------------------------
# ratios of means: the delta method (Deng, Knoblich & Lu, KDD 2018, "Applying the Delta Method
# in Metric Analytics", eq. 3-4)


@dataclass(frozen=True)
class Estimate:
    """An estimate with its standard error and its normal interval ``[low, high]``."""

    value: float
    se: float
    low: float
    high: float


def linearise(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The delta method's linearisation of the ratio of means ``R = mean(x) / mean(y)``:
    ``R + (x_i - R y_i) / mean(y)`` per unit (ranking, session).  Its mean is ``R`` and its sample
    variance / n is the delta-method variance of ``R``, so a test or interval on means of these
    values is one on the ratio (what ``ctr(agg="ratio")``'s per-ranking values are).

    Examples
    --------
    >>> import numpy as np
    >>> z = linearise(np.array([1.0, 0.0, 2.0]), np.array([3.0, 2.0, 5.0]))
    >>> round(float(z.mean()), 6), round(3 / 10, 6)
    (0.3, 0.3)
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    ybar = y.mean()
    ratio = x.sum() / y.sum()
    return ratio + (x - ratio * y) / ybar


def ratio_of_means(x: np.ndarray, y: np.ndarray, confidence: float = 0.95) -> Estimate:
    """The delta-method interval of a ratio of means ``R = mean(x) / mean(y)`` from per-unit
    numerators ``x_i`` and denominators ``y_i`` (clicks and impressions per ranking):
    ``var(R) ~ (s_x^2 - 2 R s_xy + R^2 s_y^2) / (n mean(y)^2)`` with sample moments (n - 1), and
    the normal interval ``R +- z_{(1+c)/2} se``.  NaN below two units or with ``mean(y) = 0``.

    Examples
    --------
    >>> import numpy as np
    >>> e = ratio_of_means(np.array([1.0, 0.0, 2.0, 1.0]), np.array([3.0, 2.0, 5.0, 2.0]))
    >>> round(e.value, 6), round(e.se, 6), round(e.low, 6), round(e.high, 6)
    (0.333333, 0.078567, 0.179344, 0.487323)
    """
    from scipy.special import ndtri

    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    n = x.size
    if x.shape != y.shape:
        raise RankPolarsError(f"ratio_of_means: numerator and denominator have {x.size} and {y.size} units")
    if n < 2 or y.mean() == 0:
        return Estimate(math.nan if n == 0 or y.sum() == 0 else float(x.sum() / y.sum()), math.nan, math.nan, math.nan)
    ratio = float(x.sum() / y.sum())
    cov = np.cov(x, y, ddof=1)
    var = (cov[0, 0] - 2 * ratio * cov[0, 1] + ratio * ratio * cov[1, 1]) / (n * float(y.mean()) ** 2)
    se = math.sqrt(max(var, 0.0))
    half = float(ndtri((1 + confidence) / 2)) * se
    return Estimate(ratio, se, ratio - half, ratio + half)


def difference(a: np.ndarray, b: np.ndarray, confidence: float = 0.95) -> tuple[Estimate, float]:
    """Two independent estimates (A/B arms: different rankings, not paired): ``mean(b) - mean(a)``
    from per-unit values whose mean is each arm's estimate (plain values, or :func:`linearise`'d
    ratios: then this is the delta method), its standard error ``sqrt(s_a^2/n_a + s_b^2/n_b)``,
    the normal interval and the two-sided z test's p-value.  No spread in either arm (or fewer
    than two units in one): NaN standard error, interval and p.

    Examples
    --------
    >>> import numpy as np
    >>> e, p = difference(np.array([0.2, 0.4, 0.3, 0.5]), np.array([0.5, 0.6, 0.4, 0.7]))
    >>> round(e.value, 6), round(e.low, 6), round(e.high, 6), round(p, 6)
    (0.2, 0.021081, 0.378919, 0.02846)
    """
    from scipy.special import ndtr, ndtri

    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    value = float(b.mean() - a.mean()) if a.size and b.size else math.nan
    if a.size < 2 or b.size < 2:
        return Estimate(value, math.nan, math.nan, math.nan), math.nan
    var = float(a.var(ddof=1)) / a.size + float(b.var(ddof=1)) / b.size
    scale = max(float(np.abs(a).max()), float(np.abs(b).max()))
    if var <= (_SPREAD_RTOL * scale) ** 2:  # no spread in either arm: nothing to test against
        return Estimate(value, math.nan, math.nan, math.nan), math.nan
    se = math.sqrt(var)
    half = float(ndtri((1 + confidence) / 2)) * se
    return Estimate(value, se, value - half, value + half), float(2 * ndtr(-abs(value) / se))


__all__ = ["METHODS", "Estimate", "bootstrap_interval", "check_ci", "difference", "intervals", "linearise",
           "ratio_of_means"]
