"""The beyond-accuracy measures of the catalogue and of popularity in Polars
(:mod:`rank_polars.families.beyond.polars`), all from counts of the log and of the history:
coverage, entropy, the Gini index and its exposure-weighted form; ARP, APLT / ACLT, PopRSP and
PopREO; novelty, EPC and EFD.
"""

from __future__ import annotations

import math

import polars as pl

from rank_polars.formula.tree import polars_power, polars_quotient
from rank_polars.engines.polars_engine import ordered_sum
from rank_polars.measures.beyond import Beyond
from rank_polars.plan import ITEM, Q, RANK
from rank_polars.families.beyond.checks import catalogue
from rank_polars.families.beyond.polars_context import (HEAD_FLAG, POP, REL, Ctx, _by, missing_items, popularity,
                                                        short_head)


# -- coverage --------------------------------------------------------------------------------
def catalog_coverage(label: str, spec: Beyond, ctx: Ctx) -> pl.LazyFrame:
    top = ctx.top(spec)
    items = ctx.items(spec)
    if spec.sources.get("catalog") is not None:
        missing_items(label, top, items, "catalog", "coverage is a share of the catalogue")
    size = items.select(pl.len()).collect().item()
    return _by(top, ctx.groups, polars_quotient(pl.col(ITEM).n_unique(), size).alias(label))


def entropy(label: str, spec: Beyond, ctx: Ctx) -> pl.LazyFrame:
    """The items shown c times (m of them) as one term m x -p log2 p (500 terms for 600k items
    on the 20M-row benchmark log, whose sum in ascending order is the exactly rounded entropy;
    the items' terms in any one order were 3e-13 to 2e-11 from it)."""
    counts = ctx.top(spec).group_by([*ctx.groups, ITEM]).agg(pl.len().cast(pl.Float64).alias(POP))
    sizes = counts.group_by([*ctx.groups, POP]).agg(pl.len().cast(pl.Float64).alias("__rp_m"))
    m = pl.col("__rp_m")
    p = pl.col(POP) / (pl.col(POP) * m).sum()  # a sum of counts: exact in any order
    # 0 + sum: one item shown (p = 1) is an entropy of 0.0, not -0.0
    return _by(sizes, ctx.groups, (pl.lit(0.0) + ordered_sum(m * -(p * p.log(2)))).alias(label))


def _gini(label: str, exposure: pl.LazyFrame, n: int, groups: list[str]) -> pl.LazyFrame:
    """RecBole's form: the catalogue's n values ascending, the unshown ones (0) first; both sums
    added one by one in that order (exposures are fractions; counts are exact either way)."""
    x = pl.col(POP).sort()
    j = pl.int_range(1, pl.len() + 1, dtype=pl.Int64)
    terms = (2 * (n - pl.len() + j) - n - 1).cast(pl.Float64) * x
    value = terms.cum_sum().last() / (n * x.cum_sum().last())
    return _by(exposure, groups, value.alias(label))


def gini(label: str, spec: Beyond, ctx: Ctx, weight: pl.Expr | None = None) -> pl.LazyFrame:
    top = ctx.top(spec)
    items = ctx.items(spec)
    if catalogue(spec) != "log":  # the log's own items hold every shown one
        missing_items(label, top, items, catalogue(spec), "the Gini index is over the catalogue's items")
    n = items.select(pl.len()).collect().item()
    # an item's exposure: its rows' weights in ascending order (a count is exact); a weight is
    # a column before the group-by (a gather inside it runs per group)
    if weight is not None:
        top = top.with_columns(weight.alias(_WEIGHT))
    value = pl.len().cast(pl.Float64) if weight is None else ordered_sum(pl.col(_WEIGHT))
    exposure = top.group_by([*ctx.groups, ITEM]).agg(value.alias(POP))
    return _gini(label, exposure, n, ctx.groups)


_WEIGHT = "__rp_weight"


def exposure_gini(label: str, spec: Beyond, ctx: Ctx) -> pl.LazyFrame:
    weight = polars_power(spec.params["patience"], pl.col(RANK).cast(pl.Float64))
    return gini(label, spec, ctx, weight)


# -- popularity ------------------------------------------------------------------------------
def _with_pop(label: str, spec: Beyond, ctx: Ctx, users: bool = False) -> pl.LazyFrame:
    pop = popularity(ctx.popular(label, spec), users)
    return ctx.top(spec).join(pop, on=ITEM, how="left")


def arp(label: str, spec: Beyond, ctx: Ctx) -> pl.LazyFrame:
    rows = _with_pop(label, spec, ctx)
    # popularities are counts: their sum is exact in any order
    return rows.group_by(ctx.keys).agg(pl.col(POP).fill_null(0.0).mean().alias(label))


def aplt(label: str, spec: Beyond, ctx: Ctx) -> pl.LazyFrame:
    head = short_head(ctx.popular(label, spec), spec.params["head"]).with_columns(pl.lit(True).alias(HEAD_FLAG))
    rows = ctx.top(spec).join(head, on=ITEM, how="left")
    tail = pl.col(HEAD_FLAG).is_null().cast(pl.Float64)
    value = tail.sum() if spec.NAME == "aclt" else tail.mean()  # of 0/1 flags: exact in any order
    return rows.group_by(ctx.keys).agg(value.alias(label))


def _groups_of(spec: Beyond, ctx: Ctx, label: str) -> tuple[pl.LazyFrame, int, int]:
    """(``ITEM``, ``HEAD_FLAG``) over the catalogue, and the sizes of head and tail."""
    history = ctx.popular(label, spec)
    items = ctx.items(spec)
    head = short_head(history, spec.params["head"]).with_columns(pl.lit(True).alias(HEAD_FLAG))
    flagged = items.join(head, on=ITEM, how="left").with_columns(pl.col(HEAD_FLAG).fill_null(False))
    sizes = flagged.select(pl.col(HEAD_FLAG).sum().alias("h"), (~pl.col(HEAD_FLAG)).sum().alias("t")).collect()
    missing_items(label, ctx.top(spec), items, catalogue(spec), "its popularity group (head or tail of the catalogue) is unknown")
    return flagged, int(sizes.item(0, 0)), int(sizes.item(0, 1))


def _std_over_mean(label: str, frame: pl.LazyFrame, groups: list[str]) -> pl.LazyFrame:
    """Elliot's np.std([a, b]) / np.mean([a, b]) with a = Nh/Dh, b = Nt/Dt (population std);
    the sums are of counts, exact in any order."""
    a = pl.col("nh").sum() / pl.col("dh").sum()
    b = pl.col("nt").sum() / pl.col("dt").sum()
    dh, dt = pl.col("dh").sum(), pl.col("dt").sum()
    # Elliot divides 0 by 0 (NaN) when a group has no item to show or nothing was shown: null here
    defined = (dh > 0) & (dt > 0) & (pl.col("nh").sum() + pl.col("nt").sum() > 0)
    return _by(frame, groups, pl.when(defined).then((a - b).abs() / (a + b)).alias(label))


def pop_rsp(label: str, spec: Beyond, ctx: Ctx) -> pl.LazyFrame:
    flagged, n_head, n_tail = _groups_of(spec, ctx, label)
    seen = _seen_groups(spec, ctx, flagged)
    shown = ctx.top(spec).select(*ctx.keys, ITEM).unique().join(flagged, on=ITEM)
    per = shown.group_by(ctx.keys).agg(pl.col(HEAD_FLAG).sum().cast(pl.Float64).alias("nh"),
                                       (~pl.col(HEAD_FLAG)).sum().cast(pl.Float64).alias("nt"))
    per = per.join(seen, on=Q, how="left").with_columns(
        (n_head - pl.col("sh").fill_null(0)).cast(pl.Float64).alias("dh"),
        (n_tail - pl.col("st").fill_null(0)).cast(pl.Float64).alias("dt"))
    return _std_over_mean(label, per, ctx.groups)


def _seen_groups(spec: Beyond, ctx: Ctx, flagged: pl.LazyFrame) -> pl.LazyFrame:
    """(``Q``, sh, st): how many head / tail items each query's history holds."""
    seen = ctx.history(spec).unique().join(flagged, on=ITEM)
    return seen.group_by(Q).agg(pl.col(HEAD_FLAG).sum().alias("sh"), (~pl.col(HEAD_FLAG)).sum().alias("st"))


def pop_reo(label: str, spec: Beyond, ctx: Ctx) -> pl.LazyFrame:
    flagged, _, _ = _groups_of(spec, ctx, label)
    relevant = ctx.relevant().join(flagged, on=ITEM)
    past = ctx.history(spec).unique().with_columns(pl.lit(True).alias("__rp_past"))
    shown = ctx.top(spec).select(*ctx.keys, ITEM).unique().with_columns(pl.lit(True).alias("__rp_shown"))
    rel = (relevant.join(past, on=[Q, ITEM], how="left").join(shown, on=[*ctx.keys, ITEM], how="left", nulls_equal=True)
           .with_columns(pl.col("__rp_past").fill_null(False), pl.col("__rp_shown").fill_null(False)))
    h, s, p = pl.col(HEAD_FLAG), pl.col("__rp_shown"), pl.col("__rp_past")
    per = rel.group_by(ctx.keys).agg(
        (h & s).sum().cast(pl.Float64).alias("nh"), (~h & s).sum().cast(pl.Float64).alias("nt"),
        (h & ~p).sum().cast(pl.Float64).alias("dh"), (~h & ~p).sum().cast(pl.Float64).alias("dt"))
    # lists whose query has no relevant item are left out (Elliot's get_user_rel(u) test);
    # a relevant item outside the catalogue is in neither group
    has = ctx.relevant().select(ctx.keys).unique()
    return _std_over_mean(label, per.join(has, on=ctx.keys, how="semi", nulls_equal=True), ctx.groups)


# -- novelty ---------------------------------------------------------------------------------
def _history_rows(spec: Beyond, ctx: Ctx) -> float:
    """The history's number of rows (Parquet metadata alone for a file)."""
    return float(ctx.history(spec).select(pl.len()).collect().item())


def novelty(label: str, spec: Beyond, ctx: Ctx) -> pl.LazyFrame:
    """The mean over the shown rows, the rows of the items of one popularity (k of them) as one
    term k x novelty, the terms in ascending order: on the 20M-row benchmark log 860 terms,
    1 ulp from the exactly rounded mean (each list's sum in rank order and the lists' sums in
    ascending order: 1.2e-13 from it; recommenders' count x novelty per item: 2.7e-11)."""
    rows = _history_rows(spec, ctx)
    history = ctx.popular(label, spec)
    if spec.params["unseen"] == "error":
        missing_items(label, ctx.top(spec), history.select(ITEM), "history",
                      "its novelty -log2(0) is infinite; pass unseen='zero' to count it as 0 (recommenders)")
    shown = ctx.top(spec).group_by([*ctx.groups, ITEM]).agg(pl.len().cast(pl.Float64).alias("__rp_k"))
    shown = shown.join(popularity(history), on=ITEM, how="left")
    terms = shown.group_by([*ctx.groups, POP]).agg(pl.col("__rp_k").sum())  # of counts: exact in any order
    k, nov = pl.col("__rp_k"), (-polars_quotient(pl.col(POP), rows).log(2)).fill_null(0.0)
    return _by(terms, ctx.groups, (ordered_sum(k * nov) / k.sum()).alias(label))


def _expected(label: str, spec: Beyond, ctx: Ctx, gain: pl.Expr, users: bool = False) -> pl.LazyFrame:
    """Elliot's EPC / EFD: sum rel disc gain / sum disc, for lists whose query has a relevant item."""
    top = ctx.labelled(_with_pop(label, spec, ctx, users))
    disc = 1.0 / (pl.col(RANK).cast(pl.Float64) + 1.0).log(2)
    per = top.group_by(ctx.keys).agg((ordered_sum(pl.col(REL) * disc * gain, RANK) / ordered_sum(disc, RANK)).alias(label))
    has = ctx.relevant().select(ctx.keys).unique().with_columns(pl.lit(True).alias("__rp_has"))
    per = per.join(has, on=ctx.keys, how="left", nulls_equal=True)
    return per.select(*ctx.keys, pl.when(pl.col("__rp_has")).then(pl.col(label)).alias(label))


def epc(label: str, spec: Beyond, ctx: Ctx) -> pl.LazyFrame:
    # an item's users over all users, both distinct (Elliot's; a repeated row counted twice made
    # the share exceed 1 and EPC negative)
    users = float(ctx.history(spec).select(pl.col(Q).n_unique()).collect().item())
    return _expected(label, spec, ctx, 1.0 - polars_quotient(pl.col(POP).fill_null(0.0), users), users=True)


def efd(label: str, spec: Beyond, ctx: Ctx) -> pl.LazyFrame:
    rows = _history_rows(spec, ctx)
    least = float(popularity(ctx.history(spec)).select(pl.col(POP).min()).collect().item())
    nov = -polars_quotient(pl.col(POP), rows).log(2)
    # an item absent from the history gets the history's largest novelty (Elliot's _max_nov)
    return _expected(label, spec, ctx, nov.fill_null(-(math.log(least / rows) / math.log(2.0))))
