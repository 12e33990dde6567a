"""Serendipity in Polars (:mod:`rank_polars.families.beyond.polars`): each shown item's
similarity to its user's history, by the profile of feature vectors or categories (in ranges
of users past :data:`SERENDIPITY_CELLS`) or by co-occurrence pair counts
(:func:`cooccurrence_dots`, chunks of :data:`DOTS_CHUNK`), and each list's mean over its
rows of a relevant item's unexpectedness.
"""

from __future__ import annotations

import polars as pl

from rank_polars.engines.polars_engine import ordered_sum
from rank_polars.measures.beyond import Beyond
from rank_polars.plan import ITEM, Q, RANK
from rank_polars.families.beyond.checks import shown_cells
from rank_polars.families.beyond.polars_context import DIM, REL, W, Ctx, exact_sum, missing_items
from rank_polars.families.beyond.polars_pairs import HistoryPairs, _chunks
from rank_polars.families.beyond.polars_similarity import Vectors, _coded_cells, _sims


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
