"""Reading a run and its judgments into one internal shape, checked against the schema.

Accepted sources (the same in both engines, through :func:`resolve`):

- a Polars ``DataFrame`` or ``LazyFrame``; a pandas ``DataFrame`` (named index levels
  become columns); a pyarrow ``Table``, ``RecordBatch``, ``RecordBatchReader`` or
  ``Dataset`` (scanned lazily), or any object with the Arrow stream interface
  (``__arrow_c_stream__``, e.g. a DuckDB relation);
- a pytrec_eval-style dict: a run ``{qid: {docid: score}}``, judgments ``{qid: {docid:
  grade}}`` (ids become text; a query with an empty dict has no rows);
- a path: Parquet (file, glob, hive-partitioned folder, or a list of paths: kept on disk
  and scanned lazily, only footers are read here), a TREC run or qrels file, or a CSV/TSV
  file with a header, recognised by content (see :mod:`rank_polars.io`).

Nothing here reads a Parquet log: only schemas.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence, Union

import polars as pl

from rank_polars import io as rio
from rank_polars.errors import RankPolarsError
from rank_polars.plan import GRADE, ITEM, RANK, SCORE, Q, by_name, key_names
from rank_polars.schema import Schema

#: The run's click column under its internal name, beside ``GRADE`` (the labels): what the click
#: metrics read (:mod:`rank_polars.clicks.metrics`), carried only when the call asks for one.
CLICK = "__rp_click"

Source = Union[
    pl.DataFrame, pl.LazyFrame, str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]],
    Mapping[str, Mapping[str, float]], Any,
]
# what a source is resolved to: files both engines read themselves, or a frame
Resolved = Union[rio.ParquetFiles, pl.LazyFrame]
ACCEPTED = (
    "a Polars DataFrame or LazyFrame, a pandas DataFrame, a pyarrow Table/RecordBatchReader/Dataset, "
    "a dict {query: {item: score or grade}}, or a path: " + rio.ACCEPTED_FILES
)


@dataclass(frozen=True)
class Columns:
    """Names of the input columns (the defaults are the data model's names), resolved from a
    :class:`rank_polars.Schema`.  ``judgments``: the judgments' own names, where they differ
    from the log's (:func:`judgments_as_log` renames them before any engine reads them)."""

    query: str = "query"
    item: str = "item"
    position: str = "position"
    score: str = "score"
    relevance: str = "relevance"
    judgments: Columns | None = None
    #: the click column the call's click metrics read (``CLICK`` in the run); None without one
    click: str | None = None

    @classmethod
    def of(cls, schema: Schema) -> Columns:
        """The resolved names of ``schema``."""
        judged = None
        if schema.judgments_differ:
            judged = cls(schema.judged("query"), schema.judged("item"), schema.column("position"),
                         schema.column("score"), schema.judged("relevance"))
        return cls(*(schema.column(r) for r in ("query", "item", "position", "score", "relevance")), judgments=judged)

    @property
    def judged(self) -> Columns:
        """The judgments' names (the log's unless the schema says otherwise)."""
        return self.judgments or self


def reads_run_labels(has_qrels: bool, labels: str) -> bool:
    """Whether the run's relevance column is read: without judgments, or with labels="run"."""
    return not has_qrels or labels == "run"


@dataclass
class Inputs:
    run: pl.LazyFrame  # internal names: by_name(i)..., Q, ITEM, RANK or SCORE, [GRADE], [CLICK]
    qrels: pl.LazyFrame | None  # Q, ITEM, GRADE
    by: list[str]  # the user's grouping column names, in order
    order: str  # "position" or "score"
    columns: Columns
    run_source: Resolved | None = None  # see resolve(): the DuckDB engine reads Parquet files itself
    qrels_source: Resolved | None = None
    checks: str = "full"  # where the ranking checks run: see validate.ranking_check_scope
    labels: str = "qrels"  # with qrels: "run" takes the shown rows' grades from the run's labels
    # no label is read: the log has no relevance column and no measure needs one, or no metric
    # of the call reads labels (click metrics alone); every shown row's grade is then 1
    unlabelled: bool = False
    # the user's query and item columns -> the type the run's ids are read as (after the id rule
    # against the judgments and a family's tables): what a family reads its tables' ids as
    ids: dict[str, pl.DataType] = field(default_factory=dict)
    # the run's number of rows when known without reading them (a DataFrame's height, Parquet
    # footers): whether the Polars engine's pass over every row may hold its distinct counts
    rows: int | None = None
    # the (group, query) keys a judged query's missing ranking was zero-filled at (missing="zero"):
    # a lower-is-better measure leaves them out (validate.leave_out_missing)
    absent: pl.DataFrame | None = None
    # judged_only: the keys of the rankings whose every row was unjudged, so left without a row
    # (:func:`judged_rows`); still rankings of the run, of length 0 (validate.universe)
    emptied: pl.LazyFrame | None = None

    @property
    def run_labels(self) -> bool:
        return reads_run_labels(self.qrels is not None, self.labels)

    @property
    def by_internal(self) -> list[str]:
        return self.keys[:-1]

    @property
    def keys(self) -> list[str]:
        return key_names(len(self.by))


def resolve(source: Source, what: str = "run", numeric: Mapping[str, pl.DataType] | None = None,
            names: Columns | None = None) -> Resolved:
    """What a source stands for, the one function both engines read sources through.

    Parquet paths stay on disk as checked :class:`rank_polars.io.ParquetFiles` (the DuckDB
    engine reads them with ``read_parquet``, Polars scans them), and so does a LazyFrame that is
    nothing but a scan of such files (:func:`rank_polars.io.scanned_files`); every other source becomes
    a LazyFrame (the DuckDB engine receives it as Arrow).  ``numeric`` names the CSV
    columns parsed as numbers (the rest of a CSV is text).  ``names``: the caller's column
    names, which a source without names of its own takes (:func:`_named`).
    """
    if isinstance(source, pl.LazyFrame):
        # a plain pl.scan_parquet is its files: DuckDB then reads them itself, as from paths
        return rio.scanned_files(source, what) or source
    if isinstance(source, rio.ParquetFiles):
        return source
    if isinstance(source, pl.DataFrame):
        return source.lazy()
    if isinstance(source, (str, os.PathLike)):
        # a file's format sniffed once, here: it also says whether its columns have names
        fmt = rio.detect_format(source, None, what) if Path(source).is_file() else None
        opened = rio.open_path(source, fmt, what=what, numeric=numeric)
        if isinstance(opened, rio.ParquetFiles):
            return opened
        return _named(opened.lazy(), names) if fmt in ("trec", "qrels") else opened.lazy()
    if isinstance(source, (list, tuple)) and all(isinstance(s, (str, os.PathLike)) for s in source):
        return rio.parquet_source(source, what)
    if isinstance(source, Mapping):
        return _named(rio.from_dict(source, what).lazy(), names)
    frame = rio.from_foreign(source, what)
    if frame is None:
        raise RankPolarsError(f"{what}: cannot read a {type(source).__module__}.{type(source).__name__}; expected {ACCEPTED}")
    return frame


def judgments_as_log(qrels: Source | None, columns: Columns) -> Source | None:
    """The judgments under the log's column names, when the schema names them otherwise
    (``Schema(relevance="label", judgments=Schema(relevance="grade"))``): renamed once, here,
    before the engines, the measure families and the checks read them, so that each of those
    knows one set of names.  Their own names are checked first, so a missing column is named
    as the user wrote it.  A column of the judgments that already bears a log name it is not
    renamed to is left out (the renamed one stands for that role).

    Parquet files stay files (:meth:`rank_polars.io.ParquetFiles.renamed`: each engine reads them
    renamed); a Spark DataFrame is renamed in Spark; ndeval's subtopic files have their reader's
    names and are left as they are.
    """
    judged = columns.judgments
    if qrels is None or judged is None:
        return qrels
    pairs = {getattr(judged, r): getattr(columns, r) for r in ("query", "item", "relevance")
             if getattr(judged, r) != getattr(columns, r)}
    if type(qrels).__module__.startswith("pyspark."):  # a Spark DataFrame: renamed where it lives
        have = list(qrels.columns)
        _check_judged(have, judged)
        kept = qrels.drop(*[c for c in pairs.values() if c in have and c not in pairs])
        return kept.withColumnsRenamed(pairs)
    if isinstance(qrels, (str, os.PathLike)) and not os.path.exists(qrels) and not rio.is_glob(os.fspath(qrels)):
        raise RankPolarsError(f"qrels: {qrels!r} is not a file; with judgments named otherwise than the log "
                              "(Schema(judgments=...)), give a path, a frame or a Spark DataFrame")
    from rank_polars.io.subtopics import looks_like_subtopic_qrels

    if looks_like_subtopic_qrels(qrels):
        return qrels
    numeric = rio.numeric_roles(judged.position, judged.score, judged.relevance)
    resolved = resolve(qrels, "qrels", numeric, judged)
    have = lazy(resolved).collect_schema().names()
    _check_judged(have, judged)
    drops = [c for c in pairs.values() if c in have and c not in pairs]
    if isinstance(resolved, rio.ParquetFiles):
        return resolved.renamed(pairs, drops)
    return resolved.drop(drops).rename(pairs)


def _check_judged(have: Sequence[str], judged: Columns) -> None:
    schema = pl.Schema({c: pl.Null for c in have})
    for col, role in ((judged.query, "query id"), (judged.item, "item id"), (judged.relevance, "relevance grade")):
        _need(schema, col, "qrels", role)


def _named(frame: pl.LazyFrame, names: Columns | None) -> pl.LazyFrame:
    """A source whose columns have no names of its own (a TREC file's fields, a dict's levels:
    ``query, item, score / relevance``) under the caller's names, so that a PyTerrier-style call
    (``query="qid", item="docno"``, a run frame) reads a TREC qrels file or a dict beside it
    (it said "column 'qid' not found").  A name the frame already has is left alone."""
    if names is None:
        return frame
    have = frame.collect_schema().names()
    wanted = {"query": names.query, "item": names.item, "score": names.score, "relevance": names.relevance}
    rename = {a: b for a, b in wanted.items() if a in have and b != a and b not in have}
    return frame.rename(rename) if rename else frame


def lazy(resolved: Resolved) -> pl.LazyFrame:
    return resolved.scan() if isinstance(resolved, rio.ParquetFiles) else resolved


def scan(source: Source, what: str = "run") -> pl.LazyFrame:
    """A LazyFrame over any accepted source (Parquet paths are scanned, not read)."""
    return lazy(resolve(source, what))


def _with_casts(resolved: Resolved, casts: Mapping[str, pl.DataType]) -> Resolved:
    if isinstance(resolved, rio.ParquetFiles):
        return resolved.with_casts(casts)
    return resolved.with_columns(pl.col(c).cast(t) for c, t in casts.items()) if casts else resolved


def _need(schema: pl.Schema, column: str, what: str, role: str) -> pl.DataType:
    if column not in schema:
        raise RankPolarsError(
            f"{what}: column {column!r} ({role}) not found; columns are {', '.join(map(repr, schema.names()))}"
            f"{_fix(column, schema.names(), what, role)}"
        )
    return schema[column]


def _fix(column: str, names: Sequence[str], what: str, role: str) -> str:
    """What to do about a missing column: the closest name there is, and the keyword (or the
    schema's role) that names the column of this role.

    >>> _fix("ranker_verison", ["query", "ranker_version"], "run", "a 'by' grouping column")
    "; did you mean 'ranker_version'?"
    >>> _fix("query", ["search_id", "sku"], "run", "query id")
    "; name the query id column with query='...' or schema=rp.Schema(query='...')"
    """
    import difflib

    close = difflib.get_close_matches(column, names, n=1, cutoff=0.6)
    said = f"; did you mean {close[0]!r}?" if close else ""
    keyword = next((k for k in ("query", "item", "position", "score", "relevance") if role.startswith(k)), None)
    if keyword is None:
        return said
    name = repr(close[0]) if close else "'...'"
    if what == "qrels":
        return f"{said or ';'} name the judgments' {role} column with schema=rp.Schema(judgments=rp.Schema({keyword}={name}))"
    return f"{said or ';'} name the {role} column with {keyword}={name} or schema=rp.Schema({keyword}={name})"


# 128-bit integers: Polars holds them, Arrow (and so DuckDB) does not: ids are read as their
# decimal text, grades as floats, in both engines
WIDE = (pl.Int128, pl.UInt128)


def _narrowed(resolved: Resolved, ids: Sequence[str]) -> Resolved:
    """A frame's 128-bit integer columns as text (ids and groups) or floats (the rest)."""
    if isinstance(resolved, rio.ParquetFiles):  # Parquet has no 128-bit integers
        return resolved
    wide = [c for c, t in resolved.collect_schema().items() if t in WIDE]
    return resolved.with_columns(pl.col(c).cast(pl.String if c in ids else pl.Float64) for c in wide) if wide else resolved


def _scalar(dtype: pl.DataType, column: str, what: str, role: str) -> None:
    """Ids and groups are matched and grouped by value: a list, struct or object per row has no one reading."""
    if dtype.is_nested() or dtype == pl.Object:
        hint = f"; explode it first (df.explode({column!r}))" if isinstance(dtype, (pl.List, pl.Array)) else ""
        raise RankPolarsError(f"{what}: column {column!r} ({role}) is {dtype}; it must hold one text or number "
                              f"per row{hint}")


def _numeric(dtype: pl.DataType, column: str, what: str) -> None:
    if not (dtype.is_numeric() or dtype == pl.Boolean):
        raise RankPolarsError(f"{what}: column {column!r} must be numeric, got {dtype}")


def prepare(
    run: Source,
    *,
    qrels: Source | None,
    by: str | Sequence[str] | None,
    columns: Columns,
    labels: str = "qrels",
    order: str = "auto",
    needs_labels: bool = True,
    auxiliary: Sequence[tuple[str, Source]] = (),
    reads_labels: bool = True,
    labelled_metric: str | None = None,
    click_metric: str | None = None,
    judged_only: bool = False,
) -> Inputs:
    """The checked inputs.  ``auxiliary``: the (name, table) pairs a measure family matches with
    the run by its query or item ids (a history, a catalogue, subtopic judgments); the run and
    the judgments are read with the id types the one rule (``io.id_casts``) gives against each
    of them too, and ``Inputs.ids`` says what to read those tables' ids as.

    ``reads_labels=False``: no metric of the call reads labels (click metrics alone), so the
    run's relevance column is not read even where it exists.  ``columns.click``: the column the
    call's click metrics read, carried as :data:`CLICK` beside the labels (``click_metric``: the
    first of them, and ``labelled_metric`` the first metric needing labels, named in errors).
    ``judged_only``: the unjudged rows are removed before ranks are numbered (:func:`judged_rows`)."""
    numeric = rio.numeric_roles(columns.position, columns.score, columns.relevance)
    if columns.click is not None:  # a CSV's click counts are numbers too
        numeric = {columns.click: pl.Float64(), **numeric}
    run_src = resolve(run, "run", numeric, columns)
    qrels_src = None if qrels is None else resolve(qrels, "qrels", numeric, columns)
    by_cols = [by] if isinstance(by, str) else list(by or [])
    keys = [columns.query, columns.item, *(c for c in by_cols if isinstance(c, str))]
    run_src = _narrowed(run_src, keys)
    qrels_src = None if qrels_src is None else _narrowed(qrels_src, keys)
    schema = lazy(run_src).collect_schema()
    ids = ((columns.query, "query id"), (columns.item, "item id"))
    for col, role in ids:  # before the id rule compares the sides: the run's own fault first
        if col in schema:
            _scalar(schema[col], col, "run", role)
    if qrels_src is not None:
        qschema = lazy(qrels_src).collect_schema()
        for col, role in (*ids, (columns.relevance, "relevance grade")):
            _need(qschema, col, "qrels", role)
        for col, role in ids:
            _scalar(qschema[col], col, "qrels", role)
        # ids read alike on both sides (io.id_casts: the one rule), in both engines
        casts = rio.id_casts(schema, qschema, (columns.query, columns.item))
        run_src, qrels_src = _with_casts(run_src, casts), _with_casts(qrels_src, casts)
        schema = pl.Schema({**schema, **casts})
    for what, source in auxiliary:  # a family's tables: the same rule, which may widen the run's ids
        aschema = scan(source, what).collect_schema()
        for col, role in ids:
            if col in aschema:
                _scalar(aschema[col], col, what, role)
        casts = rio.id_casts(schema, aschema, [c for c in (columns.query, columns.item) if c in aschema], what)
        run_src = _with_casts(run_src, casts)
        qrels_src = None if qrels_src is None else _with_casts(qrels_src, casts)
        schema = pl.Schema({**schema, **casts})
    run_lf = lazy(run_src)
    if order not in ("auto", "position", "score"):
        raise RankPolarsError(f"order must be 'auto', 'position' or 'score', got {order!r}")
    if order != "auto":  # rank by this column even when the other one exists
        _need(schema, getattr(columns, order), "run", f"{order}, for order={order!r}")
    if len(set(by_cols)) != len(by_cols):
        raise RankPolarsError(f"by: a column is named twice in {by_cols!r}")
    for col in by_cols:
        _need(schema, col, "run", "a 'by' grouping column")
        if col in (columns.query, columns.item):
            raise RankPolarsError(f"by: {col!r} is the query or item column; group by other columns")
    for col, role in (*ids, *((c, "a 'by' grouping column") for c in by_cols)):
        _scalar(_need(schema, col, "run", role), col, "run", role)

    select = [pl.col(c).alias(by_name(i)) for i, c in enumerate(by_cols)]
    select += [pl.col(columns.query).alias(Q), pl.col(columns.item).alias(ITEM)]
    if columns.position in schema and order != "score":
        order = "position"
        dtype = schema[columns.position]
        if not dtype.is_integer():
            raise RankPolarsError(
                f"run: column {columns.position!r} (position) must be an integer type, got {dtype}; "
                "cast it, or drop it to order by score"
            )
        select.append(pl.col(columns.position).cast(pl.Int64).alias(RANK))
    elif columns.score in schema:
        order = "score"
        _numeric(schema[columns.score], columns.score, "run")
        select.append(pl.col(columns.score).cast(pl.Float64).alias(SCORE))
    else:
        raise RankPolarsError(
            f"run: needs a position column {columns.position!r} or a score column {columns.score!r} to order items"
        )

    qrels_lf = None
    if qrels_src is not None:
        # With judgments, the run's own relevance column (if any) is not read: qrels decide.
        _numeric(qschema[columns.relevance], columns.relevance, "qrels")
        qrels_lf = lazy(qrels_src).select(
            pl.col(columns.query).alias(Q),
            pl.col(columns.item).alias(ITEM),
            pl.col(columns.relevance).cast(pl.Float64).alias(GRADE),
        )
    elif labels == "run":
        raise RankPolarsError("labels='run' takes the shown rows' grades from the run and the ideal from qrels: pass qrels=")
    unlabelled = qrels is None and (not reads_labels or not needs_labels and columns.relevance not in schema)
    if unlabelled:  # measures of what is shown alone: every shown row counts as relevant
        select.append(pl.lit(1.0).alias(GRADE))
    elif reads_run_labels(qrels is not None, labels):
        if columns.relevance not in schema and (columns.click is not None or "click" in schema):
            # a click log asked for a metric of labels: its clicks are not read as labels unasked
            clicks = columns.click or "click"
            hint = f" for {labelled_metric}" if labelled_metric else ""
            judged = "; or pass qrels=" if qrels is None else ""
            raise RankPolarsError(f"run: no relevance column {columns.relevance!r}{hint}; a click log's clicks are "
                                  f"read as labels only when asked: relevance={clicks!r}{judged}")
        role = "relevance label; or pass qrels=" if qrels is None else "relevance label, for labels='run'"
        dtype = _need(schema, columns.relevance, "run", role)
        _numeric(dtype, columns.relevance, "run")
        # kept in its own type (the engines cast after filtering): a filter on a cast
        # column does not reach the Parquet reader, and this one keeps ~95% of rows out
        grade = pl.col(columns.relevance)
        select.append((grade if dtype.is_integer() or dtype.is_float() else grade.cast(pl.Float64)).alias(GRADE))
    if columns.click is not None:
        # the click metrics' own column, whatever the labels are (the run's, the judgments')
        if columns.click not in schema:
            what = f" for {click_metric}" if click_metric else ""
            given = ("; clicks given as qrels= are not read as clicks: join them to the log as its "
                     f"{columns.click!r} column (0 where absent)") if qrels is not None else ""
            raise RankPolarsError(f"run: no click column {columns.click!r}{what} (the click metrics read the run's "
                                  f"clicks, whatever qrels= say){given}; columns are "
                                  f"{', '.join(map(repr, schema.names()))}")
        _numeric(schema[columns.click], columns.click, "run")
        select.append(pl.col(columns.click).cast(pl.Float64).alias(CLICK))
    ids_read = {c: schema[c] for c in (columns.query, columns.item)}
    emptied = None
    rows = _known_rows(run, run_src)  # before the filter: an upper bound is what the engine needs
    if judged_only and not unlabelled:
        judged = None if qrels_src is None else lazy(qrels_src)
        run_lf, emptied = judged_rows(run_lf, judged, columns, by_cols, order)
        run_src = run_lf  # every engine reads the filtered rows (DuckDB streams a scan to Parquet)
        emptied = emptied.select(*(pl.col(c).alias(by_name(i)) for i, c in enumerate(by_cols)),
                                 pl.col(columns.query).alias(Q))
    return Inputs(run_lf.select(select), qrels_lf, by_cols, order, columns, run_src, qrels_src, labels=labels,
                  unlabelled=unlabelled, ids=ids_read, rows=rows, emptied=emptied)


_JUDGED = "__rp_is_judged"


def judged_rows(run: pl.LazyFrame, qrels: pl.LazyFrame | None, columns: Columns, by: Sequence[str],
                order: str) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """The run's judged rows, ranked anew, and the rankings left without a row (their keys, in
    the user's names): trec_eval's ``-J``, pytrec_eval's ``judged_docs_only_flag``.

    A row is judged when the judgments grade its (query, item) ``>= 0`` (without judgments:
    when its own label is ``>= 0``; a negative grade is "unjudged", as in trec_eval).  The other
    rows are removed before ranks are numbered: by score the engines rank what is left; by
    position the positions become 1, 2, ... in their order (``rank("min")``, so that a repeated
    position stays repeated and is refused).  Rows with a null id or label are kept, for the
    checks to name them.

    >>> run = pl.DataFrame({"query": ["q", "q", "q"], "item": ["a", "b", "c"], "position": [1, 2, 3]})
    >>> qrels = pl.DataFrame({"query": ["q", "q"], "item": ["a", "c"], "relevance": [0, 1]})
    >>> kept, emptied = judged_rows(run.lazy(), qrels.lazy(), Columns(), [], "position")
    >>> kept.collect().rows(), emptied.collect().height
    ([('q', 'a', 1), ('q', 'c', 2)], 0)
    """
    keys = [*by, columns.query]
    if qrels is None:
        grade = pl.col(columns.relevance)
        kept = run.filter(grade.is_null() | (grade >= 0))
    else:
        pairs = (qrels.filter(pl.col(columns.relevance) >= 0).select(columns.query, columns.item).unique()
                 .with_columns(pl.lit(True).alias(_JUDGED)))
        flagged = run.join(pairs, on=[columns.query, columns.item], how="left", maintain_order="left")
        ids_null = pl.col(columns.query).is_null() | pl.col(columns.item).is_null()
        kept = flagged.filter(pl.col(_JUDGED).is_not_null() | ids_null).drop(_JUDGED)
    if order == "position":
        kept = kept.with_columns(pl.col(columns.position).rank("min").over(keys).cast(pl.Int64))
    shown = run.select(keys).unique()
    emptied = shown.join(kept.select(keys).unique(), on=keys, how="anti", nulls_equal=True)
    return kept, emptied


def _known_rows(run: Source, resolved: Resolved) -> int | None:
    """The run's rows, from a DataFrame or the Parquet footers (None for a LazyFrame: its plan
    may read anything, so it is not run to count)."""
    if isinstance(run, pl.DataFrame):
        return run.height
    if isinstance(resolved, rio.ParquetFiles):
        return int(resolved.scan().select(pl.len()).collect().item())
    return None
