"""Bad input of ``rp.counterfactual``: clear errors with counts and a few offending queries,
never a NaN or an infinity in an estimate.  Run on the renamed inputs (internal names of
:mod:`.plan`), the same for both engines, in one aggregated pass per frame."""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from rank_polars.errors import CoverageWarning, DataError, RankPolarsError, examples, plural, warn
from rank_polars.clicks.counterfactual.plan import B, C, D, E, P, Q, R, T, Plan

#: Every check streams the log (bounded memory whatever its size), as the estimate does.
STREAMING = "streaming"
# no common-subplan caching: plans that share a scan of the log would otherwise cache it whole
NO_CACHE = pl.QueryOptFlags(comm_subplan_elim=False)


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
    counts = frame.select(**{name: cond.fill_null(True).sum() for name, cond in conditions.items()}).collect(engine=STREAMING)
    for name, cond in conditions.items():
        count = int(counts[name][0])
        if count:
            queries = frame.filter(cond.fill_null(True)).select(Q).unique(maintain_order=True).head(6).collect(engine=STREAMING)
            raise DataError(f"counterfactual: {what} rows that {name}: {count:,} (queries "
                            f"{examples(queries[Q].to_list())})")


def _repeated(frame: pl.LazyFrame, key: list[str], what: str, label: str, hint: str = "") -> None:
    """Raise when rows repeat ``key``: their count and a few queries (one group-by)."""
    groups = frame.group_by(key).agg(n=pl.len()).filter(pl.col("n") > 1)
    found = groups.select(rows=pl.col("n").sum(), queries=pl.col(Q).unique().head(6)).collect(engine=STREAMING)
    rows = int(found["rows"][0] or 0) if found.height else 0
    if rows:
        queries = found["queries"].to_list() if found.height else []
        raise DataError(f"counterfactual: the {what} has {plural(rows, 'row')} repeating a key ({label}; queries "
                        f"{examples(queries)}){hint}")


def check_types(frame: pl.LazyFrame, integers: dict[str, str], numbers: dict[str, str], what: str) -> None:
    """Refuse a position that is not an integer type (a cast would truncate 1.7 to 1) and a
    click count or probability that is not a number, by the user's column name."""
    schema = frame.collect_schema()
    for role, column in integers.items():
        if role in schema and not schema[role].is_integer():
            raise RankPolarsError(f"counterfactual: the {what}'s {column!r} (a position) must be an integer type, got "
                                  f"{schema[role]}; cast it")
    for role, column in numbers.items():
        if role in schema and not (schema[role].is_numeric() or schema[role] == pl.Boolean):
            raise RankPolarsError(f"counterfactual: the {what}'s {column!r} must be numeric, got {schema[role]}")


def check_log(plan: Plan, log: pl.LazyFrame, names: dict[str, str]) -> None:
    c, p = pl.col(C), pl.col(P)
    # a null id would make a ranking of its own, or lose a click, without a word; a null session
    # would merge every session of its query without one into one logged ranking (one too few)
    ids = [Q, D, *plan.session]
    said = ", ".join(repr(names.get(c, c)) for c in ids)
    conditions = {
        f"have a null query{', item or session' if plan.session else ' or item'} ({said})":
            pl.any_horizontal(pl.col(c).is_null() for c in ids),
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
    # Rows sharing a position in a ranking: every row for the slate estimators (OBP refuses
    # them), only the clicked rows for ips (the rows that carry a term, as evaluate's
    # checks="full" reads the rows that can change a value; an unclicked row beside a click
    # changes nothing, each click is weighed at its own logged position): a group-by over the
    # clicks, not a window over the whole log (finding the unclicked rows at a clicked
    # position takes a semi-join of the whole log: 0.4 s on 10M rows, an eighth of the estimate).
    hint = "" if plan.session else ("; if a query was shown several times, pass session= with the columns that "
                                    "tell its showings apart")
    rows = log if plan.slate else log.filter(pl.col(C) > 0)
    _repeated(rows, [*plan.keys, P], "log", f"{'' if plan.slate else 'clicked '}rows sharing a position within "
              f"one logged ranking", hint)
    shape: dict[str, pl.Expr] = {}
    if plan.estimator in ("standard_ips", "sn_standard_ips"):
        for col, who in ({B: "logging"} | ({} if plan.deterministic else {E: "evaluation"})).items():
            shape[f"carry a {who} slate propensity ({names[col]!r}) that is not the same for the whole ranking"] = (
                pl.col(col).n_unique().over(plan.keys) > 1)
    if plan.estimator in ("rips", "sn_rips"):
        for col, who in ({B: "logging"} | ({} if plan.deterministic else {E: "evaluation"})).items():
            shape[f"carry a {who} cascade propensity ({names[col]!r}) above one at an earlier position "
                  f"(it must not increase down a ranking)"] = pl.col(col) > pl.col(col).cum_min().over(plan.keys,
                                                                                                      order_by=P)
    if shape:
        _bad(log, shape, "log")

def check_candidate(candidate: pl.LazyFrame, by_score: bool, column: str, deepest: int | None) -> None:
    """Nulls and repeats, over the candidate's rows that can carry a weight (``deepest``: the
    deepest cutoff asked for, None for every row).  Two items at one position and one item at
    two positions of a ranking are refused for every estimator, as ``evaluate`` refuses them:
    two items at one position have no order between them, so the rank each is weighed at and
    the length a ``ctr@k`` or ``p`` divides by would be a guess, and the slate estimators need
    the one item shown at a logged position.  A candidate ranked by a score has distinct
    positions by construction (ties broken by item)."""
    conditions = {"have a null query or item": pl.col(Q).is_null() | pl.col(D).is_null()}
    if by_score:
        conditions["have a null or NaN score"] = pl.col("_score").is_null() | pl.col("_score").is_nan()
    else:
        conditions["have a null or non-positive position"] = pl.col(R).is_null() | (pl.col(R) < 1)
    _bad(candidate, conditions, "candidate")
    # both repeats as distinct counts per query: one group-by over the queries (a group-by over
    # (query, item) and another over (query, position) took 4x as long on 10M rows)
    per_query = candidate.group_by(Q).agg(
        positions=pl.lit(0, pl.UInt32) if by_score else pl.len() - pl.col(R).n_unique(),
        items=pl.len() - pl.col(D).n_unique())
    found = per_query.select(rows=pl.col("positions").sum(), rankings=(pl.col("positions") > 0).sum(),
                             items=pl.col("items").sum()).collect(engine=STREAMING)
    rows = int(found["rows"][0] or 0)
    if rows:
        queries = (per_query.filter(pl.col("positions") > 0).select(Q).sort(Q).head(6)
                   .collect(engine=STREAMING)[Q].to_list())
        scope = ("counting every row" if deepest is None else
                 f"counting the rows ranked at most {deepest}, the deepest cutoff asked for")
        raise DataError(f"counterfactual: the candidate's column {column!r}: duplicate positions within a ranking "
                        f"({plural(rows, 'repeated row')} in {plural(int(found['rankings'][0]), 'ranking')}, "
                        f"{scope}), e.g. query {examples(queries)}: give each item of a query its own position, "
                        f"or rank by a score column (score=..., ties broken by item)")
    if int(found["items"][0] or 0):  # the rows and a few queries, only on the way to the error
        _repeated(candidate, [Q, D], "candidate", "an item ranked twice for one query")


def check_examination(plan: Plan, log: pl.LazyFrame, candidate: pl.LazyFrame, examination: pl.LazyFrame) -> None:
    on = list(plan.examination_by)
    t = pl.col(T)
    dup = examination.select((pl.len().over([*on, P]) > 1).sum()).collect(engine=STREAMING).item()
    if dup:
        raise DataError(f"counterfactual: the examination frame gives {plural(int(dup), 'row')} for a "
                        f"position{' and group' if on else ''} that another row also gives")
    # A probability that is null, zero, negative or not finite cannot be inverted; it matters only
    # where a click needs it (position_bias gives null where a position has no support).
    known = examination.filter(t.is_not_null() & t.is_finite() & (t > 0)).select(*on, P)
    clicked = log.filter(pl.col(C) > 0).select(*on, P, Q)
    lacking = clicked.join(known, on=[*on, P], how="anti").collect(engine=STREAMING)
    if lacking.height:
        raise DataError(f"counterfactual: {plural(lacking.height, 'clicked row')} at positions where the examination "
                        f"frame gives no usable probability (missing, null, zero, negative or not finite: an inverse "
                        f"propensity must be finite) ({examples(sorted(set(lacking[P].to_list())), quote=False)}; "
                        f"queries {examples(lacking[Q].unique(maintain_order=True).to_list())})")
    kmax = [w.k for w in plan.weights if w.needs_examination_at_rank]
    if kmax:
        limit = None if None in kmax else max(k for k in kmax if k is not None)
        ranks = candidate.select(Q, D, R) if limit is None else candidate.filter(pl.col(R) <= limit).select(Q, D, R)
        used = log.filter(pl.col(C) > 0).select(*on, Q, D).join(ranks, on=[Q, D]).select(*on, pl.col(R).alias(P))
        missing = used.join(known, on=[*on, P], how="anti").select(P).unique().collect(engine=STREAMING)
        if missing.height:
            raise DataError(f"counterfactual: clicks@k / ctr@k weigh a click by the examination at its rank in the "
                            f"candidate, and the examination frame gives no usable probability at ranks "
                            f"{examples(sorted(missing[P].to_list()), quote=False)}")


def check_coverage(plan: Plan, log: pl.LazyFrame, candidate: pl.LazyFrame) -> None:
    """Warn with counts when the candidate and the log do not cover each other (the candidate
    comes cut at the deepest cutoff asked for: its items that can carry a weight)."""
    queries = log.select(Q).unique()
    cand_in = candidate.select(Q, D).join(queries, on=Q, how="semi")
    # the log probes the (smaller) candidate: how many of the candidate's pairs it shows
    seen = log.select(Q, D).join(cand_in, on=[Q, D], how="inner").unique()
    total, shown, extra, unranked = (f.item() for f in pl.collect_all(engine=STREAMING, optimizations=NO_CACHE, lazy_frames=[
        cand_in.select(pl.len()), seen.select(pl.len()),
        candidate.select(Q).unique().join(queries, on=Q, how="anti").select(pl.len()),
        queries.join(candidate.select(Q).unique(), on=Q, how="anti").select(pl.len())]))
    missing, unseen_queries = total - shown, 0
    if missing:
        unseen_queries = cand_in.join(seen, on=[Q, D], how="anti").select(pl.col(Q).n_unique()).collect(engine=STREAMING).item()
    notes = []
    if missing:
        notes.append(f"candidate items never logged for their query: {missing:,} (in "
                     f"{unseen_queries:,} of the logged queries); no click can support them, so they add 0 (the "
                     f"estimate is a lower bound where they matter)")
    if extra:
        notes.append(f"candidate queries without a logged ranking, not estimated: {extra:,}")
    if unranked:
        notes.append(f"logged queries the candidate does not rank, counted with 0: {unranked:,}")
    if notes:
        warn("counterfactual: " + "; ".join(notes), CoverageWarning)
