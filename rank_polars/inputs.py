"""Reading a run and its judgments into one internal shape, checked against the schema.

A run is a ``pl.DataFrame``, a ``pl.LazyFrame``, or a Parquet path / glob / directory / list
of paths (scanned lazily, never read in full).  Nothing here reads data: only schemas.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence, Union

import polars as pl

from .errors import RankPolarsError
from .plan import GRADE, ITEM, Q, RANK, SCORE, by_name, key_names

Source = Union[pl.DataFrame, pl.LazyFrame, str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]]


@dataclass(frozen=True)
class Columns:
    """Names of the input columns (the defaults are the data model's names)."""

    query: str = "query"
    item: str = "item"
    position: str = "position"
    score: str = "score"
    relevance: str = "relevance"


def reads_run_labels(has_qrels: bool, labels: str) -> bool:
    """Whether the run's relevance column is read: without judgments, or with labels="run"."""
    return not has_qrels or labels == "run"


@dataclass
class Inputs:
    run: pl.LazyFrame  # internal names: by_name(i)..., Q, ITEM, RANK or SCORE, [GRADE]
    qrels: pl.LazyFrame | None  # Q, ITEM, GRADE
    by: list[str]  # the user's grouping column names, in order
    order: str  # "position" or "score"
    columns: Columns
    run_source: object = None  # what the user passed (the DuckDB engine reads Parquet paths itself)
    qrels_source: object = None
    checks: str = "full"  # where the ranking checks run: see validate.ranking_check_scope
    labels: str = "qrels"  # with qrels: "run" takes the shown rows' grades from the run's labels

    @property
    def run_labels(self) -> bool:
        return reads_run_labels(self.qrels is not None, self.labels)

    @property
    def by_internal(self) -> list[str]:
        return self.keys[:-1]

    @property
    def keys(self) -> list[str]:
        return key_names(len(self.by))


def parquet_paths(source: object, what: str = "run") -> str | list[str] | None:
    """The Parquet file, glob or list of files a path-like source names, else None.

    A folder means every ``*.parquet`` below it (hive-partitioned).  Both engines read
    paths through this one function, so they accept exactly the same sources.
    """
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.is_dir():
            return str(path / "**" / "*.parquet")
        if not any(ch in str(source) for ch in "*?[") and not path.exists():
            raise RankPolarsError(f"{what}: no such file {str(source)!r}")
        return str(source)
    if isinstance(source, (list, tuple)) and source and all(isinstance(s, (str, os.PathLike)) for s in source):
        return [str(s) for s in source]
    return None


def scan(source: Source, what: str = "run") -> pl.LazyFrame:
    """A LazyFrame over a frame or Parquet file(s); paths are scanned, not read."""
    if isinstance(source, pl.LazyFrame):
        return source
    if isinstance(source, pl.DataFrame):
        return source.lazy()
    paths = parquet_paths(source, what)
    if paths is not None:
        return pl.scan_parquet(paths, hive_partitioning=True)
    raise RankPolarsError(
        f"{what}: expected a Polars DataFrame/LazyFrame or Parquet path(s), got {type(source).__name__}"
    )


def _need(schema: pl.Schema, column: str, what: str, role: str) -> pl.DataType:
    if column not in schema:
        raise RankPolarsError(
            f"{what}: column {column!r} ({role}) not found; columns are {', '.join(map(repr, schema.names()))}"
        )
    return schema[column]


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
) -> Inputs:
    run_lf = scan(run, "run")
    schema = run_lf.collect_schema()
    if order not in ("auto", "position", "score"):
        raise RankPolarsError(f"order must be 'auto', 'position' or 'score', got {order!r}")
    if order != "auto":  # rank by this column even when the other one exists
        _need(schema, getattr(columns, order), "run", f"{order}, for order={order!r}")
    by_cols = [by] if isinstance(by, str) else list(by or [])
    if len(set(by_cols)) != len(by_cols):
        raise RankPolarsError(f"by: a column is named twice in {by_cols!r}")
    for col in by_cols:
        _need(schema, col, "run", "a 'by' grouping column")
        if col in (columns.query, columns.item):
            raise RankPolarsError(f"by: {col!r} is the query or item column; group by other columns")
    _need(schema, columns.query, "run", "query id")
    _need(schema, columns.item, "run", "item id")

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
    if qrels is not None:
        # With judgments, the run's own relevance column (if any) is not read: qrels decide.
        qrels_lf = scan(qrels, "qrels")
        qschema = qrels_lf.collect_schema()
        for col, role in ((columns.query, "query id"), (columns.item, "item id"), (columns.relevance, "relevance grade")):
            _need(qschema, col, "qrels", role)
        _numeric(qschema[columns.relevance], columns.relevance, "qrels")
        for col in (columns.query, columns.item):
            if qschema[col] != schema[col]:
                raise RankPolarsError(
                    f"qrels: column {col!r} is {qschema[col]} but the run's is {schema[col]}; cast one of them"
                )
        qrels_lf = qrels_lf.select(
            pl.col(columns.query).alias(Q),
            pl.col(columns.item).alias(ITEM),
            pl.col(columns.relevance).cast(pl.Float64).alias(GRADE),
        )
    elif labels == "run":
        raise RankPolarsError("labels='run' takes the shown rows' grades from the run and the ideal from qrels: pass qrels=")
    if reads_run_labels(qrels is not None, labels):
        role = "relevance label; or pass qrels=" if qrels is None else "relevance label, for labels='run'"
        dtype = _need(schema, columns.relevance, "run", role)
        _numeric(dtype, columns.relevance, "run")
        # kept in its own type (the engines cast after filtering): a filter on a cast
        # column does not reach the Parquet reader, and this one keeps ~95% of rows out
        grade = pl.col(columns.relevance)
        select.append((grade if dtype.is_integer() or dtype.is_float() else grade.cast(pl.Float64)).alias(GRADE))
    return Inputs(run_lf.select(select), qrels_lf, by_cols, order, columns, run, qrels, labels=labels)
