"""The beyond-accuracy measures in Polars (lazy; the few scalars of a history are collected).

Every similarity is a sum over the list, never over pairs: an item is a vector u_i (its
normalised features, its normalised category indicator, or its history column over
sqrt(pop)), and for a list of n items ``sum_{i != j} u_i . u_j = |sum_i u_i|^2 - sum_i |u_i|^2``.
The cost per list is k rows times the vector length (dense features), the items'
categories, or the items' history rows (co-occurrence).

Every sum of fractions is added in a fixed order (:func:`ordered_sum`; the same bits whatever
order the streaming engine delivers the rows in, however many threads): over a list's rows in
rank order, over items or popularities in ascending order of the terms; or exactly, whatever
the order (:func:`exact_sum`: a user's profile).  A sum of whole numbers held in Float64
(counts, popularities, 0/1 flags: below 2^53) is exact in any order and stays a plain sum.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

import polars as pl

from rank_polars.formula.tree import polars_power, polars_quotient
from rank_polars.engines.base import FamilyFrames, Outputs
from rank_polars.engines.polars_engine import ordered_sum
from rank_polars.errors import DataError
from rank_polars.measures.beyond import Beyond
from rank_polars.plan import GRADE, ITEM, Q, RANK
from rank_polars.families.beyond.checks import ID_DIGITS, ID_SPACE, Features, catalogue, categories, shown_cells
from rank_polars.families.diversity import run_starts, segment_sums

POP, REL, DIM, W = "__rp_pop", "__rp_rel", "__rp_dim", "__rp_w"
HEAD_FLAG, CAT = "__rp_head", "__rp_cat"


class Ctx:
    """What the measures of one call share: the frames, the top rows per cutoff, the checked tables."""

    def __init__(self, frames: FamilyFrames, checked: dict[str, dict[str, Any]]) -> None:
        self.frames, self.checked = frames, checked
        self.keys, self.groups = frames.keys, frames.groups
        lists = frames.universe.lazy().select(self.keys)
        self.run = frames.run.join(lists, on=self.keys, how="semi", nulls_equal=True)
        self.matched: set[int] = set()  # the history tables found to share an item with the log

    def top(self, spec: Beyond) -> pl.LazyFrame:
        run = self.run if spec.k is None else self.run.filter(pl.col(RANK) <= spec.k)
        return run

    def history(self, spec: Beyond) -> pl.LazyFrame:
        return self.frames.source(spec, "history").select(Q, ITEM)

    def popular(self, label: str, spec: Beyond) -> pl.LazyFrame:
        """The history, refused when items of the log match its items only once their ids are
        written alike (:func:`unmatched_message`); checked once per history table of the call."""
        history = self.history(spec)
        key = id(spec.sources.get("history"))
        # integer ids on both sides (the id rule reads the history's as the run's: text on either
        # side makes both text) cannot be written two ways: nothing to compare (0.4 s at 20M rows)
        if key not in self.matched and self.frames.run.collect_schema()[ITEM].is_integer():
            self.matched.add(key)
        if key not in self.matched:
            # the items the measure reads (the top k), not every row of a large log
            logged, past = self.top(spec).select(ITEM).unique(), history.select(ITEM).unique()
            # only the ids found on one side alone are rewritten and compared (few in a sound pipeline)
            canon = pl.col(ITEM).cast(pl.String).str.strip_chars(ID_SPACE)
            digits = canon.str.split(".").list.first().str.strip_chars_start("0").replace("", "0")  # as the SQL's
            canon = pl.when(canon.str.contains(ID_DIGITS)).then(digits).otherwise(canon)
            only_log = logged.join(past, on=ITEM, how="anti").with_columns(canon.alias("__rp_c"))
            only_past = past.join(logged, on=ITEM, how="anti").select(canon.alias("__rp_c"), pl.col(ITEM).alias("__rp_h"))
            pair = (pl.col(ITEM).cast(pl.String) + " as " + pl.col("__rp_h").cast(pl.String)).alias("__rp_pair")
            pairs = only_log.join(only_past, on="__rp_c").select(ITEM, pair).collect()
            if pairs.height:
                raise DataError(unmatched_message(label, pairs[ITEM].n_unique(), sorted(pairs["__rp_pair"])[:5]))
            self.matched.add(key)
        return history

    def items(self, spec: Beyond) -> pl.LazyFrame:
        """The catalogue: ``catalog=``, else the history's distinct items, else the log's
        (every version, every rank: a name such as ``"gini@10"`` carries no table)."""
        name = catalogue(spec)
        if name == "log":
            return self.frames.run.select(ITEM).unique()
        return self.frames.source(spec, name).select(ITEM).unique()

    def labelled(self, top: pl.LazyFrame) -> pl.LazyFrame:
        """``REL``: 1.0 for a relevant row: the judgments' grade when there are judgments (with
        ``labels="run"`` the run's labels agree with them on every relevant row: checked), else
        the run's label."""
        qrels = self.frames.qrels
        if qrels is None:
            return top.with_columns((pl.col(GRADE) > 0).cast(pl.Float64).alias(REL))
        grades = qrels.group_by(Q, ITEM).agg(pl.col(GRADE).max().alias("__rp_grade"))
        joined = top.join(grades, on=[Q, ITEM], how="left")
        return joined.with_columns((pl.col("__rp_grade").fill_null(0) > 0).cast(pl.Float64).alias(REL))

    def relevant(self) -> pl.LazyFrame:
        """(keys, ``ITEM``): the relevant items of each evaluated list (all its judgments, or
        the relevant rows of the whole list when the run carries the labels)."""
        if self.frames.qrels is not None:
            rel = self.frames.qrels.filter(pl.col(GRADE) > 0).select(Q, ITEM).unique()
            lists = self.frames.universe.lazy().select(self.keys)
            return lists.join(rel, on=Q)
        return self.run.filter(pl.col(GRADE) > 0).select(*self.keys, ITEM).unique()


def popularity(history: pl.LazyFrame, users: bool = False) -> pl.LazyFrame:
    """(``ITEM``, ``POP``): history rows per item; ``users``: distinct users (queries) per item."""
    count = pl.col(Q).n_unique() if users else pl.len()
    return history.group_by(ITEM).agg(count.cast(pl.Float64).alias(POP))


def short_head(history: pl.LazyFrame, head: float) -> pl.LazyFrame:
    """(``ITEM``): the most popular items (ties by item id) until they make up ``head`` of the
    history's rows: an item is in while the rows before it are fewer than ``head`` x rows (Elliot)."""
    pop = popularity(history).sort([POP, ITEM], descending=[True, False])
    before = pl.col(POP).cum_sum() - pl.col(POP)
    return pop.filter(before < head * pl.col(POP).sum()).select(ITEM)


def missing_items(label: str, shown: pl.LazyFrame, table: pl.LazyFrame, what: str, consequence: str) -> None:
    """Raise when shown items have no row in ``table`` (the same message as the SQL check)."""
    absent = shown.select(ITEM).unique().join(table.select(ITEM).unique(), on=ITEM, how="anti").collect()
    if absent.height:
        raise DataError(missing_message(label, absent.height, sorted(map(str, absent[ITEM].to_list())), what, consequence))


def missing_message(label: str, n: int, some: list[str], what: str, consequence: str) -> str:
    return (f"{label}: {n} shown items have no row in the {what} table, e.g. "
            f"{', '.join(repr(s) for s in some[:5])}: {consequence}")


def unmatched_message(label: str, n: int, pairs: list[str]) -> str:
    """Items of the log without a row in the history that match one of its items once both ids
    are written alike (spaces around, leading zeros, a ".0": ``ID_DIGITS``): "7" against "007"
    or "7.0" (a CSV export, a float column written out).  By the id rule they differ, so each
    would count as never seen (popularity 0, the long tail, no co-occurrence), silently; a
    history whose items are simply other items (cold items) is read as given.  The same message
    as the SQL check (``beyond_sql.check_matched``)."""
    return (f"{label}: {n} items of the log have no row in the history table but match one of its items once the "
            f"ids are written alike, e.g. {', '.join(repr(s) for s in pairs)}: each would count as never seen; "
            "write the ids one way (by the id rule 7 is '7', not '007' or '7.0')")


def exact_sum(values: pl.Expr) -> pl.Expr:
    """The sum of ``values`` below 100 in magnitude (normalised vectors' components, cosine
    weights), exact whatever the order: as Decimal(18, 16) (each term rounded to 1e-16, a few
    ulps, as DuckDB casts), whose sum is exact (Decimal(38, 16), 128 bits), then Float64: the
    same sums as the SQL engines' (``beyond_sql.exact_sum``).  A user's profile over 64
    dimensions as 64 ordered sums made serendipity 3.5x slower (200k lists, 5M history rows:
    6.2 -> 22 s), as exact sums 1.4x (8.7 s)."""
    return values.cast(pl.Decimal(18, 16)).sum().cast(pl.Float64)


def _ratio(num: pl.Expr, den: pl.Expr) -> pl.Expr:
    return pl.when(den > 0).then(num / den)


def _by(frame: pl.LazyFrame, on: list[str], *aggs: pl.Expr) -> pl.LazyFrame:
    return frame.group_by(on).agg(*aggs) if on else frame.select(*aggs)


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


# -- similarity ------------------------------------------------------------------------------
def _cells(label: str, spec: Beyond, ctx: Ctx) -> pl.LazyFrame:
    """Items as sparse vectors (``ITEM``, ``DIM``, ``W`` unnormalised): an item's history
    queries and its rows with each (co-occurrence), or its categories, 1.0 each."""
    if spec.params["sim"] == "cooccurrence":
        return ctx.popular(label, spec).group_by([ITEM, Q]).agg(pl.len().cast(pl.Float64).alias(W)).rename({Q: DIM})
    info: Features = ctx.checked[label]["features"]
    cats = categories(ctx.frames.source(spec, "features"), info).rename({"__rp_cat": DIM})
    return cats.with_columns(pl.lit(1.0).alias(W))


class Vectors:
    """Items as vectors for one spec: ``dense`` (ITEM, f0..) for feature vectors, else
    ``sparse`` (ITEM, DIM, W): :func:`_cells` over the square root of the item's sum."""

    def __init__(self, label: str, spec: Beyond, ctx: Ctx) -> None:
        self.dense: pl.LazyFrame | None = None
        self.sparse: pl.LazyFrame | None = None
        self.cols: list[str] = []
        cooccurrence = spec.params["sim"] == "cooccurrence"
        self.table = ctx.history(spec).select(ITEM) if cooccurrence else ctx.frames.source(spec, "features").select(ITEM)
        info: Features | None = None if cooccurrence else ctx.checked[label]["features"]
        if info is not None and info.kind == "vector":
            # one column per dimension, divided by the norm computed once (a struct unnested:
            # 6x faster than one list.get per dimension at 64 dimensions)
            vec = pl.col(info.column).cast(pl.List(pl.Float64)).list.to_array(info.dim).alias("__rp_v")
            self.cols = [f"__rp_f{j}" for j in range(info.dim)]
            norm = pl.col("__rp_v").arr.eval(pl.element() * pl.element()).arr.sum().sqrt().alias("__rp_norm")
            self.dense = (ctx.frames.source(spec, "features").select(ITEM, vec).with_columns(norm)
                          .select(ITEM, pl.col("__rp_v").arr.to_struct(fields=self.cols), "__rp_norm").unnest("__rp_v")
                          .select(ITEM, *(pl.col(c) / pl.col("__rp_norm") for c in self.cols)))
        else:
            # a sum of counts (or of 1.0 per category): exact in any order
            self.sparse = _cells(label, spec, ctx).with_columns((pl.col(W) / pl.col(W).sum().over(ITEM).sqrt()).alias(W))


UNKNOWN = "its similarity is unknown (never taken as 0); give every shown item a vector or a category"


def _sims(label: str, spec: Beyond, ctx: Ctx, shown: pl.LazyFrame) -> Vectors:
    vectors = Vectors(label, spec, ctx)
    # co-occurrence: an item absent from the history co-occurs with nothing, similarity 0 by
    # definition (recommenders); features: a missing vector is an error, never a 0
    if spec.params["sim"] == "features":
        missing_items(label, shown, vectors.table, "features", UNKNOWN)
    return vectors


#: Rows of normalised vectors held at once by :func:`ils_vectors` (x the dimension x 8 bytes).
ILS_CHUNK = 1 << 18


def ils_vectors(label: str, spec: Beyond, ctx: Ctx, info: Features) -> pl.LazyFrame:
    """ILS by feature-vector cosine, per list ``(|sum_i u_i|^2 - sum_i |u_i|^2) / (n(n - 1))``
    over the vectors the checks read (:class:`Features`): the shown rows are joined to the row
    of their item, then NumPy adds the normalised rows of each list (in rank order, each list
    alone: the same bits whatever order the lists are collected in) a chunk of lists at a time.
    k x d operations per list, no pair of items; the features are read once, and a
    64-dimensional catalogue of 1M items is not turned into 64 columns (which cost more than
    the whole evaluation of nDCG)."""
    import numpy as np

    idx = "__rp_idx"
    index = pl.DataFrame({ITEM: info.items, idx: np.arange(len(info.items), dtype=np.int64)})
    lists, n = _lists(ctx, spec, ctx.frames.read_ids(index.lazy()))
    absent = lists[ITEM].explode().drop_nulls().unique()
    if absent.len():
        raise DataError(missing_message(label, absent.len(), sorted(map(str, absent.to_list())), "features", UNKNOWN))
    flat = lists[idx].explode().to_numpy()
    lengths = n.astype(np.int64)
    ends = np.cumsum(lengths)
    ss, diag = np.empty(len(n)), np.empty(len(n))

    def chunk(first: int, last: int) -> None:
        lo, hi = (int(ends[first - 1]) if first else 0), int(ends[last - 1])
        rows = flat[lo:hi]
        # float32 rows are widened inside the float64 division, exactly as by astype first (the
        # same bits), without astype's float64 copy of the chunk (memory; no change measured in
        # the time of ils@10 at 20M shown rows)
        u = np.divide(info.matrix[rows], info.norm[rows, None])
        sums = _list_sums(u, lengths[first:last])
        ss[first:last] = np.einsum("ij,ij->i", sums, sums)
        diag[first:last] = _list_sums(np.einsum("ij,ij->i", u, u)[:, None], lengths[first:last])[:, 0]

    # lists [first, last): at least one list, and about ILS_CHUNK rows; the chunks on both cores
    # (NumPy's gathers, casts and sums release the GIL; each writes its own slice of ss, diag)
    bounds, first = [], 0
    while first < len(n):
        last = max(first + 1, int(np.searchsorted(ends, (ends[first - 1] if first else 0) + ILS_CHUNK, side="right")))
        bounds.append((first, last))
        first = last
    with ThreadPoolExecutor(max_workers=max(1, min(len(bounds), os.cpu_count() or 1))) as pool:
        list(pool.map(lambda b: chunk(*b), bounds))
    return _ils_frame(label, spec, ctx, lists, n, ss, diag)


def _list_sums(u: Any, lengths: Any) -> Any:
    """The sums of ``u``'s rows list by list (each list's rows contiguous, in order): the lists
    of each length at once, as a (lists, length, d) array summed over its middle axis, row after
    row (3x faster than ``np.add.reduceat``, which loops per list; its sums may differ in the
    last bit)."""
    import numpy as np

    if len(lengths) and lengths[0] > 0 and (lengths == lengths[0]).all():  # the usual case at a cutoff
        return u.reshape(len(lengths), int(lengths[0]), -1).sum(axis=1)
    out = np.zeros((len(lengths), u.shape[1]))
    starts = np.cumsum(lengths) - lengths
    for size in np.unique(lengths[lengths > 0]):
        which = np.flatnonzero(lengths == size)
        rows = (starts[which][:, None] + np.arange(size)).ravel()
        out[which] = u[rows].reshape(len(which), size, -1).sum(axis=1)
    return out


#: Products held at once by :func:`ils_sparse` (entries of a chunk's list x dimension matrix).
COOC_CHUNK = 1 << 24


def _coded_cells(label: str, spec: Beyond, ctx: Ctx) -> tuple[pl.DataFrame, pl.DataFrame]:
    """:func:`_cells` with ``__rp_idx`` (the item's code) and ``DIM`` as codes 0, 1, ...; and the
    items by code (``ITEM``, ``__rp_idx``).  Codes in the ids' sorted order, so the sums run in
    the same order at any thread count."""
    idx = "__rp_idx"
    cells = _cells(label, spec, ctx).collect()
    index = cells.select(pl.col(ITEM).unique().sort()).with_row_index(idx).with_columns(pl.col(idx).cast(pl.Int64))
    cells = cells.join(index, on=ITEM).with_columns((pl.col(DIM).rank("dense") - 1).cast(pl.Int64).alias(DIM))
    return cells, index


def ils_sparse(label: str, spec: Beyond, ctx: Ctx) -> pl.LazyFrame:
    """ILS by the cosine of sparse item vectors (history co-occurrence, or categories) as
    sparse products: B (item x dimension) holds :func:`_cells` over the square root of the
    item's sum (count(i, q) / sqrt(pop(i)) for a history query q; 1 / sqrt(its categories)),
    A (list x item) the shown rows, and a list's ``|sum_i u_i|^2`` is the squared norm of its
    row of A @ B (SciPy, a chunk of lists at a time).  The cost per list is its items'
    dimensions (co-occurrence: sum of pop(i), as the join it replaces), but as a compiled
    sparse product instead of a hash group-by over (list, dimension) (3.3 -> 0.3 CPU s at 200k
    shown rows, 0.5M history rows).  An item absent from the history has an empty row: it
    counts in n, adds nothing (recommenders); one absent from the features is an error.  A
    list's sums are its own row's, added in a fixed order (A's entries in item-code order, B's
    in dimension-code order: codes of the sorted ids), the same bits however the lists are
    collected.  Co-occurrence takes :func:`cooccurrence_pairs` instead where that costs less
    (the list sums grow as lists x users)."""
    import numpy as np
    from scipy import sparse

    idx = "__rp_idx"
    if spec.params["sim"] == "features":
        missing_items(label, ctx.top(spec), ctx.frames.source(spec, "features").select(ITEM), "features", UNKNOWN)
    cells, index = _coded_cells(label, spec, ctx)
    lists, n = _lists(ctx, spec, ctx.frames.read_ids(index.lazy()))
    flat = lists[idx].explode()
    row = np.repeat(np.arange(lists.height, dtype=np.int64), n.astype(np.int64))
    seen = flat.is_not_null().to_numpy()
    cols = flat.to_numpy()[seen].astype(np.int64)
    a = sparse.csr_array((np.ones(len(cols)), (row[seen], cols)), shape=(lists.height, index.height))
    if spec.params["sim"] == "cooccurrence":
        # the list sums' cost: each list's items' cells (B's row lengths), to weigh the other way
        item = cells[idx].to_numpy()
        cost = float(np.bincount(item, minlength=index.height)[a.indices].sum())
        pairs = cooccurrence_pairs(a, item, cells[DIM].to_numpy(), cells[W].to_numpy(), cost)
        if pairs is not None:
            return _ils_frame(label, spec, ctx, lists, n, 2.0 * pairs, np.zeros(lists.height))
    # a sum of counts (or of 1.0 per category): exact in any order
    cells = cells.sort(idx, DIM).with_columns((pl.col(W) / pl.col(W).sum().over(idx).sqrt()).alias(W))
    b = sparse.csr_array((cells[W].to_numpy(), (cells[idx].to_numpy(), cells[DIM].to_numpy())),
                         shape=(index.height, int(cells[DIM].max()) + 1))  # type: ignore[arg-type]
    work = np.cumsum(a @ np.diff(b.indptr).astype(np.float64))  # each list's products
    diag = _row_sums_of_squares(b)
    ss = np.empty(lists.height)
    first = 0
    while first < lists.height:
        done = work[first - 1] if first else 0.0
        last = max(first + 1, int(np.searchsorted(work, done + COOC_CHUNK, side="right")))
        ss[first:last] = _row_sums_of_squares(a[first:last] @ b)
        first = last
    return _ils_frame(label, spec, ctx, lists, n, ss, a @ diag)


#: Pairs of items one chunk of :func:`cooccurrence_pairs` generates (a chunk of lists, or of
#: users' histories): ~30 bytes each.
PAIR_CHUNK = 1 << 24


def _pair_blocks(starts: Any, sizes: Any) -> Any:
    """For the segments of each length, every pair of positions ``(p, q)``, p before q, inside
    each segment ``[start, start + size)``, and the segment's number: one block per length."""
    import numpy as np

    for size in np.unique(sizes[sizes > 1]):
        which = np.flatnonzero(sizes == size)
        p, q = np.triu_indices(int(size), 1)
        at = starts[which][:, None]
        yield (at + p).ravel(), (at + q).ravel(), np.repeat(which, len(p))


def _segment_pairs(starts: Any, sizes: Any, values: Any) -> tuple[Any, Any, Any]:
    """Every pair ``(values[p], values[q])`` of :func:`_pair_blocks`, and the segment's number."""
    import numpy as np

    blocks = [(values[p], values[q], owner) for p, q, owner in _pair_blocks(starts, sizes)]
    if not blocks:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    return tuple(np.concatenate(column) for column in zip(*blocks))  # type: ignore[return-value]


def _chunks(pairs: Any, size: int | None = None) -> list[tuple[int, int]]:
    """Runs ``[lo, hi)`` of consecutive segments holding about ``size`` (:data:`PAIR_CHUNK`)
    pairs each."""
    import numpy as np

    size = PAIR_CHUNK if size is None else size
    ends, out, first = np.cumsum(pairs), [], 0
    while first < len(pairs):
        done = int(ends[first - 1]) if first else 0
        last = max(first + 1, int(np.searchsorted(ends, done + size, side="right")))
        out.append((first, last))
        first = last
    return out


class HistoryPairs:
    """The pairs of items of each user's history, counted where they are asked for: ``N_ij =
    sum_q c_iq c_jq`` over the history's cells (``item``, ``user``, ``count``; item codes below
    ``width``), of the items ``kept`` alone.  The pairs are made a chunk of users at a time
    (:data:`PAIR_CHUNK`), one frame per history length, kept where a key asked for holds them
    (a hash semi-join) and counted; the counts are integers, exact in any order."""

    def __init__(self, item: Any, user: Any, count: Any, width: int, kept: Any) -> None:
        import numpy as np

        self.width = np.int64(width)
        item, user, count = item[kept[item]], user[kept[item]], count[kept[item]]
        order = pl.Series(user.astype(np.int64) * self.width + item).arg_sort().to_numpy()  # by user, then item
        self.item, self.count = item[order], count[order]
        users = user[order]
        self.ones = bool((self.count == 1.0).all())  # (then a pair's count is its number of users)
        self.starts = np.flatnonzero(run_starts(users))
        self.sizes = np.diff(np.append(self.starts, len(users)))
        per_user = self.sizes * (self.sizes - 1) // 2
        self.pairs = float(per_user.sum())
        self.chunks = _chunks(per_user)

    def counts(self, keys: Any) -> Any:
        """``N`` for each key ``x * width + y`` (x < y; 0 where no user has both)."""
        import numpy as np

        needed = pl.DataFrame({"k": keys})
        found = []
        for lo, hi in self.chunks:
            parts = []
            # one frame per history length: no concatenation of the chunk's pairs
            for p, q, _ in _pair_blocks(self.starts[lo:hi], self.sizes[lo:hi]):
                part = {"k": self.item[p] * self.width + self.item[q]}
                if not self.ones:
                    part["w"] = self.count[p] * self.count[q]
                parts.append(pl.DataFrame(part))
            if parts:
                pairs = pl.concat(parts, rechunk=False).lazy().join(needed.lazy(), on="k", how="semi")
                counted = pl.len().cast(pl.Float64) if self.ones else pl.col("w").sum()
                found.append(pairs.group_by("k").agg(counted.alias("w")).collect())
        cooc = pl.concat(found).group_by("k").agg(pl.col("w").sum()) if found else pl.DataFrame(
            schema={"k": pl.Int64, "w": pl.Float64})
        return (needed.join(cooc, on="k", how="left", maintain_order="left")
                .get_column("w").fill_null(0.0).to_numpy())


def cooccurrence_pairs(a: Any, item: Any, user: Any, count: Any, work: float) -> Any:
    """Each list's sum over its pairs of items of their co-occurrence cosine, ``N_ij /
    (sqrt(pop_i) sqrt(pop_j))`` with ``N_ij = sum_q c_iq c_jq`` over the history's users, or None
    where the list sums of :func:`ils_sparse` (their cost: ``work``) cost less.

    ``a``: lists x item codes (CSR, codes sorted); ``item``, ``user``, ``count``: the history's
    cells (an item's rows for a user).  The list sums cost, per list, the history rows of its
    items, which grows as lists x users (a shown item is about as popular as there are users:
    21.6 s at 200k lists of 10 over a 5M-row history, recommenders 104.7 s).  Here, as
    recommenders does: the pairs of each user's history items (only items some list shows), kept
    where some list holds the pair, counted (:class:`HistoryPairs`); then one look-up per pair of
    a list.  That grows with the users' histories squared and the lists' pairs, linearly in
    each.  A list's pairs are added in a fixed order (its codes' order), so the bits do not
    depend on how the lists were collected.  Lists in chunks of :data:`PAIR_CHUNK` pairs (the
    histories' pairs are made once per chunk of lists)."""
    import numpy as np

    pop = np.bincount(item, weights=count, minlength=a.shape[1])
    shown = np.zeros(a.shape[1], dtype=bool)
    shown[a.indices] = True
    history = HistoryPairs(item, user, count, a.shape[1], shown)
    lengths = np.diff(a.indptr)
    l_pairs = lengths * (lengths - 1) // 2
    list_chunks = _chunks(l_pairs)
    if len(list_chunks) * history.pairs + float(l_pairs.sum()) >= work:
        return None
    total = np.zeros(a.shape[0])
    for lo, hi in list_chunks:
        x, y, owner = _segment_pairs(a.indptr[lo:hi], lengths[lo:hi], a.indices)
        if not len(x):
            continue
        sims = history.counts(x.astype(np.int64) * history.width + y) / (np.sqrt(pop[x]) * np.sqrt(pop[y]))
        # a list's pairs in their generated order (its codes' order), added one by one from 0.0
        by_list = np.argsort(owner, kind="stable")
        owners = owner[by_list]
        starts = run_starts(owners)
        total[lo + owners[starts]] = segment_sums(starts, sims[by_list])
    return total


def _row_sums_of_squares(m: Any) -> Any:
    """Each row's sum of squared entries of a CSR matrix, added in the row's order (SciPy's
    ``m.multiply(m).sum(1)`` builds a second matrix first: 2x the whole product's time)."""
    import numpy as np

    rows = np.repeat(np.arange(m.shape[0]), np.diff(m.indptr))
    return np.bincount(rows, weights=m.data * m.data, minlength=m.shape[0])


def _lists(ctx: Ctx, spec: Beyond, index: pl.LazyFrame) -> tuple[pl.DataFrame, Any]:
    """Each list's item codes (``__rp_idx`` from ``index``, null where absent) in rank order,
    the shown items absent from ``index`` (``ITEM``), and the lists' lengths."""
    top = ctx.top(spec).select(*ctx.keys, ITEM, RANK).join(index, on=ITEM, how="left")
    lists = top.group_by(ctx.keys).agg(pl.col("__rp_idx").sort_by(RANK),
                                       pl.col(ITEM).filter(pl.col("__rp_idx").is_null())).collect()
    return lists, lists["__rp_idx"].list.len().to_numpy().astype("float64")


def _ils_frame(label: str, spec: Beyond, ctx: Ctx, lists: pl.DataFrame, n: Any, ss: Any, diag: Any) -> pl.LazyFrame:
    """(keys, label): ``(ss - diag) / (n(n - 1))`` for lists of two items or more, else null."""
    import numpy as np

    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(n >= 2, (ss - diag) / (n * (n - 1)), np.nan)
    out = pl.Series(label, value, nan_to_null=True)
    if spec.NAME == "diversity":
        out = 1.0 - out
    return lists.select(ctx.keys).with_columns(out.alias(label)).lazy()


def ils(label: str, spec: Beyond, ctx: Ctx) -> pl.LazyFrame:
    info = ctx.checked[label].get("features")
    if spec.params["sim"] == "features" and info is not None and info.kind == "vector":
        return ils_vectors(label, spec, ctx, info)
    return ils_sparse(label, spec, ctx)


#: The shown rows' vector components (top-k rows x dimensions) one pass of serendipity over
#: feature vectors holds: past it the pass runs once per range of query ids
#: (:func:`serendipity_ranges`; as the DuckDB engine's ``beyond_sql.SERENDIPITY_CELLS``), each
#: over the shown rows and the history of its users alone, the normalised vectors computed
#: once.  A pass holds its history rows and its shown rows joined to their d components (and
#: its users' d exact sums): one pass over the 200M-row benchmark (2M users x 100 shown, a
#: 50M-row history, 64-d) peaked at 12.2 GiB of RSS (79.6 s); ranges of 2^24 (~26k lists at
#: k=10): 2.3 GiB (80 s).  At 20M shown rows: one pass 8.3 s, 2.8 GiB; 8 ranges 9.3 s, 2.0 GiB.
SERENDIPITY_CELLS = 1 << 24

#: The (shown item, history item) pairs :func:`cooccurrence_dots` holds at once, with their
#: keys, counts and similarities: 200k lists of 10 over a 5M-row history (50M pairs) held 3.3
#: GiB in chunks of 2^24, 1.8 GiB in chunks of 2^22, within ``evaluate``'s 2 GiB (24 -> 28 s:
#: each chunk makes the history's pairs again).
DOTS_CHUNK = 1 << 22


def cooccurrence_dots(label: str, spec: Beyond, ctx: Ctx, top: pl.LazyFrame, history: pl.LazyFrame) -> pl.LazyFrame:
    """``Q, ITEM, __rp_dot``: each shown item's co-occurrence cosine with its user's history
    items, summed (exactly, :func:`exact_sum`): ``N_ih / (sqrt(pop_i) sqrt(pop_h))`` with the
    pair counts of :class:`HistoryPairs` (an item with itself: ``sum_q c_iq^2``).  The cost is
    each user's shown items times history items, and the history's pairs of those items; the
    profile dot product over the history's users (each shown item joined to its history rows)
    grew as lists x users: 4.1 s and 3.0 GiB at 20k lists of 10 over a 0.5M-row history.  A
    chunk of :data:`DOTS_CHUNK` (shown item, history item) pairs at a time."""
    import numpy as np

    idx, h = "__rp_idx", "__rp_h"
    cells, index = _coded_cells(label, spec, ctx)
    item, count = cells[idx].to_numpy(), cells[W].to_numpy()
    width = index.height
    pop = np.bincount(item, weights=count, minlength=width)
    own = np.bincount(item, weights=count * count, minlength=width)
    shown = top.select(Q, ITEM).unique().join(index.lazy(), on=ITEM).sort(Q).collect()
    past = history.select(Q, ITEM).join(index.lazy(), on=ITEM).select(Q, pl.col(idx).alias(h)).collect()
    kept = np.zeros(width, dtype=bool)
    kept[shown[idx].to_numpy()] = True
    kept[past[h].to_numpy()] = True
    pairs_of = HistoryPairs(item, cells[DIM].to_numpy(), count, width, kept)
    per_row = (shown.select(Q).join(past.group_by(Q).len(), on=Q, how="left", maintain_order="left")
               .get_column("len").fill_null(0).to_numpy())
    out = []
    for lo, hi in _chunks(per_row, DOTS_CHUNK):
        rows = shown.slice(lo, hi - lo).join(past, on=Q)
        x, y = rows[idx].to_numpy(), rows[h].to_numpy()
        low, high = np.minimum(x, y), np.maximum(x, y)
        n = np.where(low == high, own[low], pairs_of.counts(low * pairs_of.width + high))
        sim = n / (np.sqrt(pop[x]) * np.sqrt(pop[y]))
        out.append(rows.select(Q, ITEM).with_columns(pl.Series("__rp_sim", sim))
                   .group_by(Q, ITEM).agg(exact_sum(pl.col("__rp_sim")).alias("__rp_dot")))
    if not out:
        return pl.LazyFrame(schema={Q: shown.schema[Q], ITEM: shown.schema[ITEM], "__rp_dot": pl.Float64})
    return pl.concat(out).lazy()


def serendipity_ranges(ctx: Ctx, spec: Beyond, dim: int) -> list[pl.Expr | None]:
    """Predicates on the query id cutting the evaluated lists into ranges of about
    :data:`SERENDIPITY_CELLS` shown components (``min(N_RET, k)`` x ``dim`` per list);
    ``[None]``: one pass."""
    from rank_polars.engines.polars_engine import query_ranges

    return query_ranges(shown_cells(ctx.frames.universe, spec.k, dim), SERENDIPITY_CELLS)


def serendipity(label: str, spec: Beyond, ctx: Ctx) -> pl.LazyFrame:
    top = ctx.labelled(ctx.top(spec))
    history = ctx.history(spec).join(ctx.run.select(Q).unique(), on=Q, how="semi")
    if spec.params["sim"] == "cooccurrence":
        dots = cooccurrence_dots(label, spec, ctx, top, history)
        return _serendipity_value(label, ctx, top.join(dots, on=[Q, ITEM], how="left", nulls_equal=True), history)
    v = _sims(label, spec, ctx, top)
    if spec.params["sim"] == "features":
        missing_items(label, history, v.table, "features",
                      "a history item's similarity is unknown (never taken as 0)")
    ranges = [None] if v.dense is None else serendipity_ranges(ctx, spec, len(v.cols))
    if len(ranges) == 1:
        return _serendipity(label, ctx, top, history, v)
    # a large log: each range of users on its own (a list and its user's profile lie in one
    # range: the same bits as one pass), the normalised vectors computed once
    v.dense = v.dense.collect().lazy()
    return pl.concat([_serendipity(label, ctx, top.filter(part), history.filter(part), v).collect(engine="streaming")
                      for part in ranges]).lazy()


def _serendipity(label: str, ctx: Ctx, top: pl.LazyFrame, history: pl.LazyFrame, v: Vectors) -> pl.LazyFrame:
    """Serendipity of the lists of ``top`` (labelled), their users' ``history``."""
    # a user's profile: the history's vectors (or weights) summed exactly; a shown item's dot
    # product with it: its terms in ascending order; a list's mean: its rows in rank order
    if v.dense is not None:
        profile = history.join(v.dense, on=ITEM).group_by(Q).agg(*(exact_sum(pl.col(c)).alias(c + "p") for c in v.cols))
        rows = top.join(v.dense, on=ITEM).join(profile, on=Q, how="left")
        dot = pl.sum_horizontal(pl.col(c) * pl.col(c + "p").fill_null(0.0) for c in v.cols)
        rows = rows.with_columns(dot.alias("__rp_dot"))
    else:
        assert v.sparse is not None
        profile = history.join(v.sparse, on=ITEM).group_by([Q, DIM]).agg(exact_sum(pl.col(W)).alias("__rp_p"))
        dots = (top.select(*ctx.keys, ITEM).join(v.sparse, on=ITEM).join(profile, on=[Q, DIM])
                .group_by([*ctx.keys, ITEM]).agg(ordered_sum(pl.col(W) * pl.col("__rp_p")).alias("__rp_dot")))
        rows = top.join(dots, on=[*ctx.keys, ITEM], how="left", nulls_equal=True)
    return _serendipity_value(label, ctx, rows, history)


def _serendipity_value(label: str, ctx: Ctx, rows: pl.LazyFrame, history: pl.LazyFrame) -> pl.LazyFrame:
    """Each list's serendipity from its rows with ``__rp_dot`` (a shown item's similarity to its
    user's history, summed; null: 0) and the user's ``history``."""
    past = history.group_by(Q).agg(pl.len().cast(pl.Float64).alias("__rp_nh"))
    rows = rows.join(past, on=Q, how="left")
    unexpected = (1.0 - pl.col("__rp_dot").fill_null(0.0) / pl.col("__rp_nh")) * pl.col(REL)
    # a list whose query has no history has no value (recommenders' inner merge drops it)
    value = pl.when(pl.col("__rp_nh").is_not_null().all()).then(ordered_sum(unexpected, RANK) / pl.len())
    return rows.group_by(ctx.keys).agg(value.alias(label))


MEASURES: dict[str, Callable[[str, Beyond, Ctx], pl.LazyFrame]] = {
    "catalog_coverage": catalog_coverage, "entropy": entropy, "gini": gini, "exposure_gini": exposure_gini,
    "arp": arp, "aplt": aplt, "aclt": aplt, "pop_reo": pop_reo, "pop_rsp": pop_rsp, "novelty": novelty,
    "epc": epc, "efd": efd, "ils": ils, "diversity": ils, "serendipity": serendipity,
}


def values(outputs: Outputs, frames: FamilyFrames, checked: dict[str, dict[str, Any]]) -> pl.LazyFrame:
    ctx = Ctx(frames, checked)
    catalog = outputs[0][1].AGGREGATE == "catalog"
    on = ctx.groups if catalog else ctx.keys
    parts = [MEASURES[spec.NAME](label, spec, ctx) for label, spec in outputs]  # type: ignore[arg-type]
    out = parts[0]
    for part in parts[1:]:
        out = out.join(part, on=on, how="full", coalesce=True, nulls_equal=True) if on else out.join(part, how="cross")
    return out


__all__ = ["MEASURES", "popularity", "short_head", "values"]
