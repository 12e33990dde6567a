"""Bad input of ``rp.counterfactual``: clear errors with counts and a few offending queries,
never a NaN or an infinity in an estimate.  Run on the renamed inputs (internal names of
:mod:`.plan`), the same for both engines, in one aggregated pass per frame."""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from ..errors import CoverageWarning, DataError, RankPolarsError, examples, plural, warn
from .plan import B, C, D, E, P, Q, R, T, Plan


def check_arguments(clip: Any, ci: Any, n_resamples: Any, min_clicks: Any) -> None:
    if clip is not None and (isinstance(clip, bool) or not isinstance(clip, (int, float))
                             or not math.isfinite(clip) or clip <= 0):
        raise RankPolarsError(f"counterfactual: clip is the largest importance weight kept, a positive number; "
                              f"got {clip!r}")
    if ci is not None and (isinstance(ci, bool) or not isinstance(ci, float) or not 0 < ci < 1):
        raise RankPolarsError(f"counterfactual: ci is a confidence level strictly between 0 and 1 (0.95); got {ci!r}")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 1:
        raise RankPolarsError(f"counterfactual: n_resamples must be a positive integer; got {n_resamples!r}")
    if isinstance(min_clicks, bool) or not isinstance(min_clicks, int) or min_clicks < 0:
        raise RankPolarsError(f"counterfactual: min_clicks must be a non-negative integer; got {min_clicks!r}")


def _bad(frame: pl.LazyFrame, conditions: dict[str, pl.Expr], what: str) -> None:
    """Raise for the first condition any row meets, with its count and a few queries."""
    counts = frame.select(**{name: cond.fill_null(True).sum() for name, cond in conditions.items()}).collect()
    for name, cond in conditions.items():
        count = int(counts[name][0])
        if count:
            queries = frame.filter(cond.fill_null(True)).select(Q).unique(maintain_order=True).head(6).collect()
            raise DataError(f"counterfactual: {plural(count, 'row')} of the {what} {name} "
                            f"(queries {examples(queries[Q].to_list())})")


def check_log(plan: Plan, log: pl.LazyFrame, names: dict[str, str]) -> None:
    c, p = pl.col(C), pl.col(P)
    conditions = {
        f"have a null, negative or non-integer click count ({names[C]!r})":
            c.is_null() | (c < 0) | (c != c.floor()) | ~c.is_finite(),
        f"have a null or non-positive position ({names[P]!r})": p.is_null() | (p < 1),
    }
    if plan.slate:
        b = pl.col(B)
        conditions[f"have a logging propensity ({names[B]!r}) that is null or outside (0, 1]"] = (
            b.is_null() | ~b.is_finite() | (b <= 0) | (b > 1))
        if not plan.deterministic:
            e = pl.col(E)
            conditions[f"have an evaluation propensity ({names[E]!r}) that is null or outside [0, 1]"] = (
                e.is_null() | ~e.is_finite() | (e < 0) | (e > 1))
    _bad(log, conditions, "log")
    shape = {"share a position within one logged ranking": pl.len().over([*plan.keys, P]) > 1}
    if plan.estimator in ("standard_ips", "sn_standard_ips"):
        for col, who in ({B: "logging"} | ({} if plan.deterministic else {E: "evaluation"})).items():
            shape[f"carry a {who} slate propensity ({names[col]!r}) that is not the same for the whole ranking"] = (
                pl.col(col).n_unique().over(plan.keys) > 1)
    if plan.estimator in ("rips", "sn_rips"):
        for col, who in ({B: "logging"} | ({} if plan.deterministic else {E: "evaluation"})).items():
            shape[f"carry a {who} cascade propensity ({names[col]!r}) above one at an earlier position "
                  f"(it must not increase down a ranking)"] = pl.col(col) > pl.col(col).cum_min().over(plan.keys,
                                                                                                      order_by=P)
    _bad(log, shape, "log")

def check_candidate(candidate: pl.LazyFrame, by_score: bool) -> None:
    r = pl.col(R)
    conditions = {"repeat an item within a query": pl.len().over([Q, D]) > 1,
                  "have a null query or item": pl.col(Q).is_null() | pl.col(D).is_null()}
    if by_score:
        conditions["have a null or NaN score"] = pl.col("_score").is_null() | pl.col("_score").is_nan()
    else:
        conditions["have a null or non-positive position"] = r.is_null() | (r < 1)
        conditions["share a position within a query"] = pl.len().over([Q, R]) > 1
    _bad(candidate, conditions, "candidate")


def check_examination(plan: Plan, log: pl.LazyFrame, candidate: pl.LazyFrame, examination: pl.LazyFrame) -> None:
    on = list(plan.examination_by)
    t = pl.col(T)
    bad = examination.select(
        dup=(pl.len().over([*on, P]) > 1).sum(), bad=(t.is_null() | ~t.is_finite() | (t <= 0)).sum()).collect()
    if bad["dup"][0]:
        raise DataError(f"counterfactual: the examination frame gives {plural(int(bad['dup'][0]), 'row')} for a "
                        f"position{' and group' if on else ''} that another row also gives")
    if bad["bad"][0]:
        raise DataError(f"counterfactual: {plural(int(bad['bad'][0]), 'examination probability')} null, not finite "
                        f"or not positive (an inverse propensity must be finite: estimate the curve on more "
                        f"clicks or drop those positions from the log)")
    known = examination.select(*on, P)
    clicked = log.filter(pl.col(C) > 0).select(*on, P, Q)
    lacking = clicked.join(known, on=[*on, P], how="anti").collect()
    if lacking.height:
        raise DataError(f"counterfactual: {plural(lacking.height, 'clicked row')} at positions the examination "
                        f"frame does not give ({examples(sorted(set(lacking[P].to_list())), quote=False)}; "
                        f"queries {examples(lacking[Q].unique(maintain_order=True).to_list())})")
    kmax = [w.k for w in plan.weights if w.needs_examination_at_rank]
    if kmax:
        limit = None if None in kmax else max(k for k in kmax if k is not None)
        ranks = candidate.select(Q, D, R) if limit is None else candidate.filter(pl.col(R) <= limit).select(Q, D, R)
        used = log.filter(pl.col(C) > 0).select(*on, Q, D).join(ranks, on=[Q, D]).select(*on, pl.col(R).alias(P))
        missing = used.join(known, on=[*on, P], how="anti").select(P).unique().collect()
        if missing.height:
            raise DataError(f"counterfactual: clicks@k / ctr@k weigh a click by the examination at its rank in the "
                            f"candidate, and the examination frame does not give ranks "
                            f"{examples(sorted(missing[P].to_list()), quote=False)}")


def check_coverage(plan: Plan, log: pl.LazyFrame, candidate: pl.LazyFrame) -> None:
    """Warn with counts when the candidate and the log do not cover each other."""
    pairs = log.select(Q, D).unique()
    queries = log.select(Q).unique()
    cand_in = candidate.join(queries, on=Q, how="semi")
    unseen = cand_in.join(pairs, on=[Q, D], how="anti").select(pl.len(), pl.col(Q).n_unique()).collect()
    extra = candidate.join(queries, on=Q, how="anti").select(pl.col(Q).n_unique()).collect().item()
    unranked = queries.join(candidate.select(Q).unique(), on=Q, how="anti").select(pl.len()).collect().item()
    notes = []
    if unseen.item(0, 0):
        notes.append(f"candidate items never logged for their query: {unseen.item(0, 0):,} (in "
                     f"{unseen.item(0, 1):,} of the logged queries); no click can support them, so they add 0 (the "
                     f"estimate is a lower bound where they matter)")
    if extra:
        notes.append(f"candidate queries without a logged ranking, not estimated: {extra:,}")
    if unranked:
        notes.append(f"logged queries the candidate does not rank, counted with 0: {unranked:,}")
    if notes:
        warn("counterfactual: " + "; ".join(notes), CoverageWarning)
