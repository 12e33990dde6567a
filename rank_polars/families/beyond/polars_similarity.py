"""ILS and diversity in Polars and NumPy (:mod:`rank_polars.families.beyond.polars`): items
as vectors (normalised feature vectors, categories, history columns: :class:`Vectors`,
:func:`_cells`), and each list's ``(|sum_i u_i|^2 - sum_i |u_i|^2) / (n(n - 1))`` by dense
vectors (:func:`ils_vectors`) or sparse products (:func:`ils_sparse`; co-occurrence by the
pair counts of :mod:`rank_polars.families.beyond.polars_pairs` where they cost less), a chunk
of lists at a time.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import polars as pl

from rank_polars.errors import DataError
from rank_polars.measures.beyond import Beyond
from rank_polars.plan import ITEM, Q, RANK
from rank_polars.families.beyond.checks import Features, categories
from rank_polars.families.beyond.polars_context import DIM, W, Ctx, missing_items, missing_message
from rank_polars.families.beyond.polars_pairs import cooccurrence_pairs


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
