"""From the parts table (:mod:`.plan`) to the estimates: point estimate, bootstrap interval over
the logged rankings, support and effective sample size.  The same for both engines.

Point estimates, per group and metric (n: the group's logged rankings; Y_s, D_s, C_s: the sums of
``y``, ``den``, ``cnt`` over the group's rankings for slot s):

* ips, standard / independent / rips: Σ y / n (OBP's ``estimate_policy_value``: the weighted
  rewards summed, over the number of slates);
* self-normalised: Σ_s Y_s · C_s / D_s / n, i.e. each weight divided by the mean weight of its
  slot (OBP's ``iw / iw.mean()``; one slot for snips and sn_standard_ips, one per position for
  sn_independent_ips and sn_rips); a slot where no weight is positive (D_s = 0) adds 0 (OBP
  divides 0 by 0 there and returns NaN for the whole estimate).

The bootstrap is the Poisson bootstrap over logged rankings (each ranking drawn Poisson(1)
times per resample, independently, so rankings can be processed in chunks): the estimate of a
resample is the formula above over the weighted sums, computed for all resamples at once by
one product of a (resamples × rankings) weight matrix with the (rankings × sums) table per
chunk of rankings, never a Python loop per resample or per row.  A resample that draws no
ranking (probability e^-n) has no estimate and is left out.  The interval is the percentile
interval of the resampled estimates.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl

from rank_polars.errors import DataError, LowSupportWarning, examples, plural, warn
from rank_polars.stats.resampling import percentile_ci
from rank_polars.clicks.counterfactual.plan import SLOT, Plan


_STEP = 1 << 22  # weight-matrix elements per bootstrap step (bounded memory whatever n)


def estimates(plan: Plan, parts: pl.DataFrame, *, ci: float | None, n_resamples: int, seed: int,
              min_clicks: int) -> pl.DataFrame:
    """One row per group and metric: the estimate, its interval, support and ESS."""
    by = list(plan.by)
    # no logged ranking, no group: an empty table (as with by=), not an estimate of nothing
    groups = parts.partition_by(by, maintain_order=True, as_dict=True) if by else ({(): parts} if parts.height else {})
    rows: list[dict[str, Any]] = []
    for index, (key, frame) in enumerate(sorted(groups.items(), key=lambda kv: _sortable(kv[0]))):
        rows += _group(plan, dict(zip(by, key)), frame, ci, n_resamples, seed, index)
    schema: dict[str, Any] = {b: parts.schema[b] for b in by}
    schema |= {"metric": pl.String, "estimator": pl.String, "estimate": pl.Float64}
    if ci is not None:
        schema |= {"ci_low": pl.Float64, "ci_high": pl.Float64}
    schema |= {"rankings": pl.Int64, "clicks": pl.Float64, "logged_clicks": pl.Float64, "ess": pl.Float64}
    out = pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)
    _refuse_overflow(plan, out)
    _warn_support(plan, out, min_clicks)
    return out


def _refuse_overflow(plan: Plan, out: pl.DataFrame) -> None:
    """A weight of 1 / 1e-320 is infinite, and 1 / 1e-300 squares to infinity in the ESS: the
    estimate is then not a number to print.  An error naming the metric, never inf or NaN."""
    # an interval bound may be NaN for want of resamples; infinite, it overflowed like the rest
    bounds = [c for c in ("ci_low", "ci_high") if c in out.columns]
    overflow = [~pl.col(c).is_finite() for c in ("estimate", "ess")] + [pl.col(c).is_infinite() for c in bounds]
    bad = out.filter(pl.any_horizontal(e.fill_null(False) for e in overflow))
    if bad.height:
        shown = [f"{row['metric']}{' for ' + ', '.join(f'{b}={row[b]!r}' for b in plan.by) if plan.by else ''}"
                 for row in bad.iter_rows(named=True)]
        raise DataError(f"counterfactual: {plural(bad.height, 'estimate')} ({examples(shown, 3, quote=False)}) "
                        f"{'is' if bad.height == 1 else 'are'} not a finite number: an importance weight overflows "
                        "float64 (a propensity or examination probability near 1e-300 or below); clip the weights "
                        "(clip=) or check those probabilities")


def _sortable(key: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple((v is None, v) for v in key)


def _group(plan: Plan, group: dict[str, Any], frame: pl.DataFrame, ci: float | None, n_resamples: int,
           seed: int, index: int) -> list[dict[str, Any]]:
    # rankings and slots as dense codes (the parts come sorted by the ranking keys, then slot)
    codes = frame.select(r=pl.struct(plan.keys).rle_id(), s=pl.col(SLOT).rank("dense") - 1)
    r, s = codes["r"].to_numpy().astype(np.int64), codes["s"].to_numpy().astype(np.int64)
    n, slots, m = int(r.max()) + 1 if r.size else 0, int(s.max()) + 1 if s.size else 1, len(plan.weights)
    cube = np.zeros((n, slots, m + 2))  # per ranking and slot: y_0 .. y_{m-1}, den, cnt
    for j, col in enumerate([*(f"y_{i}" for i in range(m)), "den", "cnt"]):
        np.add.at(cube[:, :, j], (r, s), frame[col].to_numpy())
    flat = np.concatenate([cube.reshape(n, -1), np.ones((n, 1))], axis=1)
    point = _estimate(plan, flat.sum(axis=0)[None, :], slots, m)[0]
    bounds = _bootstrap(plan, flat, slots, m, ci, n_resamples, np.random.default_rng([seed, index])) if ci else None
    out = []
    for i, weight in enumerate(plan.weights):
        w1, w2 = float(frame[f"w1_{i}"].sum()), float(frame[f"w2_{i}"].sum())
        row = {**group, "metric": weight.label, "estimator": plan.estimator, "estimate": float(point[i])}
        if ci is not None:
            row |= {"ci_low": float(bounds[0][i]), "ci_high": float(bounds[1][i])}  # type: ignore[index]
        row |= {"rankings": n, "clicks": float(frame[f"sup_{i}"].sum()),
                "logged_clicks": float(frame["clicks"].sum()), "ess": w1 * w1 / w2 if w2 > 0 else 0.0}
        out.append(row)
    return out


def _estimate(plan: Plan, totals: np.ndarray, slots: int, m: int) -> np.ndarray:
    """Estimates (resamples × metrics) from summed parts (resamples × (slots·(m+2) + 1))."""
    n = totals[:, -1:]
    cube = totals[:, :-1].reshape(len(totals), slots, m + 2)
    y, den, cnt = cube[:, :, :m], cube[:, :, m], cube[:, :, m + 1]
    if plan.self_normalised:
        # y / den first: a tiny den (subnormal weights) must not overflow cnt / den
        ratio = np.divide(y, den[:, :, None], out=np.zeros_like(y), where=den[:, :, None] > 0)
        total = (ratio * cnt[:, :, None]).sum(axis=1)
    else:
        total = y.sum(axis=1)
    return np.divide(total, n, out=np.full_like(total, np.nan), where=n > 0)


def _bootstrap(plan: Plan, flat: np.ndarray, slots: int, m: int, ci: float, n_resamples: int,
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    sums = np.zeros((n_resamples, flat.shape[1]))
    step = max(1, _STEP // n_resamples)
    for start in range(0, flat.shape[0], step):
        chunk = flat[start : start + step]
        draws = rng.poisson(1.0, size=(n_resamples, chunk.shape[0])).astype(np.float64)
        sums += np.einsum("bn,nk->bk", draws, chunk)  # NumPy's own loops: no BLAS-dependent rounding
    est = _estimate(plan, sums, slots, m)
    low, high = np.full(m, math.nan), np.full(m, math.nan)
    for i in range(m):
        values = est[:, i][np.isfinite(est[:, i])]
        low[i], high[i] = percentile_ci(values, ci)
    return low, high


def _warn_support(plan: Plan, out: pl.DataFrame, min_clicks: int) -> None:
    few = out.filter(pl.col("clicks") < min_clicks)
    if few.height == 0:
        return
    shown = [
        f"{row['metric']}{' for ' + ', '.join(f'{b}={row[b]!r}' for b in plan.by) if plan.by else ''}: "
        f"{plural(int(row['clicks']), 'click')} of {int(row['logged_clicks']):,} logged, effective sample size "
        f"{row['ess']:.1f}"
        for row in few.iter_rows(named=True)
    ]
    warn(f"counterfactual: few logged clicks support {plural(few.height, 'estimate')} (fewer than "
         f"min_clicks={min_clicks}): {examples(shown, 3, quote=False)}; its interval, if any, is unreliable",
         LowSupportWarning)
