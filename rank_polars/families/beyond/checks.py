"""The checks of the beyond-accuracy measures' auxiliary tables, shared by both engines.

The checks of the auxiliary tables (an empty history, vectors of unequal lengths, a zero
vector, a shown item absent from the catalogue or the features) are written once, here, in
Polars, and run before either engine computes, so both raise the same error.  The checks that
need the shown items run in each engine and raise the same :class:`DataError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import polars as pl

from rank_polars.engines.base import Outputs
from rank_polars.errors import DataError, RankPolarsError, examples
from rank_polars.inputs import Columns, scan
from rank_polars.measures.beyond import Beyond
from rank_polars.plan import ITEM, Q

#: Where a shown item may be missing, and what the message says about it.
MARKER = "rank_polars: "

#: Two ids written alike when, the characters of ``ID_SPACE`` stripped around them, they are
#: equal, or both match ``ID_DIGITS`` with the same digits before the point, leading zeros
#: dropped: "7", "007", "7.0" ("0" and "000" alike).  Both
#: engines compare the ids of a history and of the log by them (only to refuse a mismatch).
ID_DIGITS = r"^[0-9]+(\.0+)?$"
ID_SPACE = " \t\r\n"


@dataclass(frozen=True)
class Features:
    """A checked features table: ``kind`` "vector" (``dim`` long) or "category"; ``column``:
    the user's column holding them.  For vectors, the table as read for the checks: ``items``
    (the item ids), ``matrix`` (one row per item, float32 or float64 as given) and ``norm``
    (each row's Euclidean norm, in float64), so that the Polars engine reads them once."""

    kind: str
    column: str
    dim: int = 0
    listed: bool = False  # categories: a list of strings per row (else one string per row)
    items: pl.Series | None = field(default=None, compare=False, repr=False)
    matrix: Any = field(default=None, compare=False, repr=False)
    norm: Any = field(default=None, compare=False, repr=False)


def aux(spec: Beyond, name: str, columns: Columns) -> pl.LazyFrame:
    """The table ``spec`` carries as ``name``, its query / item columns renamed to ``Q`` /
    ``ITEM`` (as :meth:`FamilyFrames.source`, without its id casts: the checks both engines
    share read each table alone)."""
    source = spec.sources.get(name)
    if source is None:
        raise RankPolarsError(spec.needs_table(name))
    frame = scan(source, f"{spec.name} {name}")
    names = frame.collect_schema().names()
    return frame.rename({u: i for u, i in ((columns.query, Q), (columns.item, ITEM)) if u in names})


def need_columns(frame: pl.LazyFrame, spec: Beyond, name: str, wanted: Sequence[str], columns: Columns) -> None:
    have = frame.collect_schema().names()
    user = {Q: columns.query, ITEM: columns.item}
    lacking = [user.get(c, c) for c in wanted if c not in have]
    if lacking:
        shown = [{Q: columns.query, ITEM: columns.item}.get(c, c) for c in have]
        raise RankPolarsError(f"{spec.name}: the {name} table has no column {lacking[0]!r} (the run's "
                              f"{'query' if lacking[0] == columns.query else 'item'} column); its columns are "
                              f"{examples(shown, 10)}")


def check_history(spec: Beyond, columns: Columns) -> pl.LazyFrame:
    """The history (``Q``, ``ITEM``), refused when empty or with null ids."""
    history = aux(spec, "history", columns)
    need_columns(history, spec, "history", [Q, ITEM], columns)
    stats = history.select(pl.len().alias("rows"), pl.col(Q).null_count().alias("q"),
                           pl.col(ITEM).null_count().alias("i")).collect()
    rows, nq, ni = stats.row(0)
    if rows == 0:
        raise DataError(f"{spec.name}: the history table is empty: popularity and co-occurrence need past interactions")
    if nq or ni:
        raise DataError(f"{spec.name}: the history table has {nq + ni} null "
                        f"{columns.query if nq else columns.item} values")
    if spec.params.get("sim") == "cooccurrence":
        # recommenders' cosine divides the pairs' count by sqrt(rows of i x rows of j): with a
        # (user, item) row repeated it exceeds 1 (and 1 - ILS goes negative); no count of repeats
        # is the right one, so they are refused rather than read one way silently
        repeated = history.select(pl.len() - pl.struct(Q, ITEM).n_unique()).collect().item()
        if repeated:
            some = (history.group_by(Q, ITEM).len().filter(pl.col("len") > 1).select(Q).unique().sort(Q)
                    .head(3).collect()[Q].to_list())
            raise DataError(f"{spec.name}: the history table repeats {repeated:,} ({columns.query}, {columns.item}) "
                            f"rows, e.g. {columns.query} {examples(some)}: the co-occurrence cosine counts each "
                            f"user's interaction with an item once; drop the repeats (history.unique())")
    return history


def check_catalog(spec: Beyond, columns: Columns) -> pl.LazyFrame:
    catalog = aux(spec, "catalog", columns)
    need_columns(catalog, spec, "catalog", [ITEM], columns)
    stats = catalog.select(pl.len(), pl.col(ITEM).null_count()).collect()
    if stats.item(0, 0) == 0:
        raise DataError(f"{spec.name}: the catalog table is empty")
    if stats.item(0, 1):
        raise DataError(f"{spec.name}: the catalog table has {stats.item(0, 1)} null {columns.item} values")
    return catalog


def check_features(spec: Beyond, columns: Columns) -> Features:
    """The kind of the features table, refused with counts when vectors differ in length, are
    null, not finite or zero, an item has two rows of vectors, or an item has no category."""
    features = aux(spec, "features", columns)
    need_columns(features, spec, "features", [ITEM], columns)
    # as the history's and the catalogue's: a row whose item was lost (a category table's null
    # item was reported as an item without category, a vector's row was kept unread)
    nulls = features.select(pl.col(ITEM).null_count()).collect().item()
    if nulls:
        raise DataError(f"{spec.name}: the features table has {nulls} null {columns.item} values")
    schema = features.collect_schema()
    others = [c for c in schema.names() if c != ITEM]
    if len(others) != 1:
        raise RankPolarsError(f"{spec.name}: the features table needs the item column and one more column (a numeric "
                              f"vector, or categories); it has {examples(others, 10) or 'no other column'}")
    column, dtype = others[0], schema[others[0]]
    inner = dtype.inner if isinstance(dtype, (pl.List, pl.Array)) else None
    if inner is not None and inner.is_numeric():
        return _check_vectors(spec, features, column, dtype)
    if dtype in (pl.String, pl.Categorical) or isinstance(dtype, pl.Enum) or (inner is not None and inner in (pl.String, pl.Categorical)):
        if inner is not None:  # a list of categories per item: one row per item, no null inside
            _check_category_lists(spec, features, column)
        else:  # one row per (item, category): a null row is a category nobody named, as in a list
            _refuse_null_categories(spec, features, column)
        empty = _categories(features, column, dtype).group_by(ITEM).agg(pl.col("__rp_cat").drop_nulls().n_unique().alias("n"))
        empty = features.select(ITEM).unique().join(empty.filter(pl.col("n") > 0), on=ITEM, how="anti").collect()
        if empty.height:
            raise DataError(f"{spec.name}: features column {column!r}: {empty.height} items have no category (a zero "
                            f"category vector: their similarity is undefined), e.g. {examples(empty[ITEM].to_list())}")
        return Features("category", column, listed=inner is not None)
    raise RankPolarsError(f"{spec.name}: features column {column!r} is {dtype}: expected a list or array of numbers "
                          "(a vector) or strings (categories)")


def _refuse_repeated_items(items: pl.Series, where: str, rule: str) -> None:
    """Refuse a features table whose item column repeats an item: the rows of repeated items."""
    if items.n_unique() == items.len():  # the usual case, at a tenth of the cost of the count
        return
    dup = int(items.is_duplicated().sum())
    if dup:
        raise DataError(f"{where}: {dup} rows repeat an item ({rule})")


def _check_category_lists(spec: Beyond, features: pl.LazyFrame, column: str) -> None:
    """A list column of categories: an item on two rows (which list is its?) or a null inside a
    list (a category nobody named; a null inside a vector is refused too) is refused."""
    where = f"{spec.name}: features column {column!r}"
    listed = features.filter(pl.col(column).is_not_null() & (pl.col(column).list.len() > 0))
    _refuse_repeated_items(features.select(ITEM).collect()[ITEM], where, "one list of categories per item, or one "
                           "row per item and category in a text column")
    nulls = listed.select(ITEM, pl.col(column)).explode(column).filter(pl.col(column).is_null()).select(ITEM).collect()
    if nulls.height:
        raise DataError(f"{where}: {nulls[ITEM].n_unique()} items have a null inside their list of categories, e.g. "
                        f"{examples(nulls[ITEM].unique(maintain_order=True).head(3).to_list())}")


def _refuse_null_categories(spec: Beyond, features: pl.LazyFrame, column: str) -> None:
    """A text column of categories (one row per item and category): a null category was
    dropped, so an item with "a" and a null row was read as "a" alone (a left join's hole, or
    a category lost upstream) while a null inside a list is refused."""
    nulls = features.filter(pl.col(column).is_null()).select(ITEM).collect()
    if nulls.height:
        some = nulls[ITEM].unique(maintain_order=True).head(5).to_list()
        raise DataError(f"{spec.name}: features column {column!r}: {nulls.height} rows have a null category (of "
                        f"{nulls[ITEM].n_unique()} items, e.g. {examples(some)}): name it, or drop the row if the "
                        "item has no such category")


def _check_vectors(spec: Beyond, features: pl.LazyFrame, column: str, dtype: Any) -> Features:
    """Read the vectors once, refuse with counts when they differ in length, are null, hold a
    value that is not finite, or are zero, or an item has two rows; else the checked vectors.

    The checks run in NumPy over the item x dimension matrix: at 1M items x 64 dimensions
    they cost about as much as reading the column (Polars' per-list ``list.eval`` cost 4x it)."""
    import numpy as np

    frame = features.select(ITEM, column).collect()
    where = f"{spec.name}: features column {column!r}"
    if frame.height == 0:
        raise DataError(f"{spec.name}: the features table is empty")
    _refuse_repeated_items(frame[ITEM], where, "one vector per item")
    vec = frame[column]
    if vec.null_count():
        raise DataError(f"{where}: {vec.null_count()} items have a null vector")
    if isinstance(dtype, pl.List):
        lengths = vec.list.len()
        lo, hi = int(lengths.min()), int(lengths.max())  # type: ignore[arg-type]
        if lo != hi:
            counts = lengths.value_counts(sort=False).sort(lengths.name)
            text = ", ".join(f"{n} of length {length}" for length, n in counts.iter_rows())
            raise DataError(f"{where}: the vectors have unequal lengths ({text}): cosine needs one length")
        vec = vec.list.to_array(lo)
    dim = int(vec.dtype.size)  # type: ignore[attr-defined]
    inner = vec.dtype.inner  # type: ignore[attr-defined]
    # float32 stays float32 (half the memory); the norms and every later sum are float64
    matrix = vec.cast(pl.Array(inner if inner in (pl.Float32, pl.Float64) else pl.Float64, dim)).to_numpy()
    matrix = matrix.reshape(frame.height, dim)  # a null inside a vector is NaN here
    squares = np.einsum("ij,ij->i", matrix, matrix, dtype=np.float64)
    # a NaN or infinite component makes its row's sum of squares NaN or infinite, so only those
    # rows are read again (a pass of isfinite over the whole matrix cost as much as the sums)
    odd = np.flatnonzero(~np.isfinite(squares))
    bad = int((~np.isfinite(matrix[odd]).all(axis=1)).sum())
    if bad:
        raise DataError(f"{where}: {bad} vectors hold a NaN, infinite or null value")
    # a squared norm past float64's range (components beyond ~1e154, or all below ~1e-154): each
    # engine divided by an infinite (or a subnormal, imprecise) norm and the vector's cosines came
    # out 0 (or wrong), silently; refused: no real embedding is near it, a rescaled copy is exact.
    # The rows left in ``odd`` overflowed; of the tiny sums, only those of a nonzero vector
    tiny = np.flatnonzero(squares < np.finfo(np.float64).tiny)
    extreme = np.union1d(odd, tiny[(matrix[tiny] != 0).any(axis=1)])  # row numbers, in order
    if len(extreme):
        some = frame[ITEM].gather(extreme).to_list()
        raise DataError(f"{where}: {len(extreme)} vectors are too large or too small to normalise in float64 "
                        f"(their squared norm leaves its range; divide them by their largest component), "
                        f"e.g. {examples(some)}")
    norm = np.sqrt(squares)
    zero = norm == 0
    if zero.any():
        some = frame[ITEM].filter(pl.Series(zero)).to_list()
        raise DataError(f"{where}: {int(zero.sum())} items have a zero vector, whose cosine with anything is "
                        f"undefined (e.g. {examples(some)})")
    return Features("vector", column, dim, items=frame[ITEM], matrix=matrix, norm=norm)


def _categories(features: pl.LazyFrame, column: str, dtype: Any) -> pl.LazyFrame:
    """(``ITEM``, ``__rp_cat``): one row per distinct category of an item."""
    if isinstance(dtype, (pl.List, pl.Array)):
        features = features.select(ITEM, pl.col(column).cast(pl.List(pl.String))).explode(column)
    return features.select(ITEM, pl.col(column).cast(pl.String).alias("__rp_cat")).drop_nulls().unique()


def categories(features: pl.LazyFrame, info: Features) -> pl.LazyFrame:
    return _categories(features, info.column, features.collect_schema()[info.column])


def check_specs(outputs: Outputs, columns: Columns, read: bool = True) -> dict[str, dict[str, Any]]:
    """Every spec's auxiliary tables checked (the same in every engine), by label.  ``read``
    False (``to_sql``: the tables are SQL names, nothing is read): only the arguments."""
    checked: dict[str, dict[str, Any]] = {}
    for label, spec in outputs:
        if not isinstance(spec, Beyond):
            raise RankPolarsError(f"{label!r} is not a beyond-accuracy measure")
        info: dict[str, Any] = {}
        sim = spec.params.get("sim")
        if not read:
            if sim == "features":
                raise RankPolarsError(f"to_sql cannot write {label!r}: the kind and length of the features are read "
                                      "from the table; use rp.evaluate, or sim='cooccurrence'")
            checked[label] = info
            continue
        if "history" in spec.SOURCES and (spec.sources.get("history") is not None or _needs(spec, "history")):
            check_history(spec, columns)
        if spec.sources.get("catalog") is not None:
            check_catalog(spec, columns)
        if sim == "features":
            info["features"] = check_features(spec, columns)
        checked[label] = info
    return checked


def catalogue(spec: Beyond) -> str:
    """Where the catalogue of ``spec`` comes from: ``"catalog"``, ``"history"``, or ``"log"``
    (the distinct items of the whole log, every version and rank: ``"gini@10"`` by name)."""
    for name in ("catalog", "history"):
        if spec.sources.get(name) is not None:
            return name
    return "log"


def _needs(spec: Beyond, name: str) -> bool:
    """Whether the spec cannot do without the table ``name``."""
    if name == "history":
        return spec.NAME in ("arp", "aplt", "aclt", "novelty", "epc", "efd", "pop_reo", "pop_rsp") or \
            spec.params.get("sim") == "cooccurrence" or spec.NAME == "serendipity"
    return False


def shown_cells(universe: pl.DataFrame, k: int | None, dim: int) -> pl.DataFrame:
    """``Q, HELD``: per query, the shown vector components a pass of serendipity over feature
    vectors holds (``min(N_RET, k)`` rows of ``dim`` each, over its lists), from which both
    engines cut their ranges of query ids (``beyond_polars.SERENDIPITY_CELLS``,
    ``beyond_sql.SERENDIPITY_CELLS``)."""
    return list_cells(universe, k, lambda shown: shown * dim)


def list_cells(universe: pl.DataFrame, k: int | None, cells: Callable[[pl.Expr], pl.Expr]) -> pl.DataFrame:
    """``Q, HELD``: per query, ``cells`` of each list's shown rows (``min(N_RET, k)``) summed
    over its lists (:func:`shown_cells`; the pairs of shown items, ``beyond_sql.ranges``)."""
    from rank_polars.engines.polars_engine import HELD
    from rank_polars.plan import N_RET

    shown = pl.col(N_RET) if k is None else pl.min_horizontal(pl.col(N_RET), pl.lit(k))
    return universe.filter(pl.col(Q).is_not_null()).group_by(Q).agg(cells(shown).sum().alias(HELD))


__all__ = ["ID_DIGITS", "ID_SPACE", "MARKER", "Features", "aux", "catalogue", "categories", "check_specs", "list_cells", "shown_cells"]
