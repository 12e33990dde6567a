"""Parquet files, folders, globs and lists: checked from their footers, scanned lazily."""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Mapping, Sequence
from urllib.parse import unquote

import polars as pl

from rank_polars.errors import DataError, RankPolarsError
from rank_polars.io.paths import check_exists, files_of

PARQUET_MAGIC = b"PAR1"
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"  # the folder value of a null partition key


@dataclass(frozen=True)
class ParquetFiles:
    """Checked Parquet files that both engines read themselves (DuckDB: ``read_parquet``).

    ``hive`` lists the ``key=value`` folder names of the paths (partition columns, read as
    text by both engines); ``schema`` is given when files differ only in integer or float
    width (widened); ``casts`` are id columns read as another type (see ``id_casts``).
    """

    files: tuple[str, ...]
    hive: tuple[str, ...] = ()
    schema: tuple[tuple[str, pl.DataType], ...] | None = None
    casts: tuple[tuple[str, pl.DataType], ...] = ()
    # columns read under another name (the judgments' own names -> the log's), and the columns
    # left out because a renamed one takes their name
    renames: tuple[tuple[str, str], ...] = ()
    drops: tuple[str, ...] = ()

    def scan(self) -> pl.LazyFrame:
        options = {}
        if self.schema is not None:
            options = {"schema": dict(self.schema),
                       "cast_options": pl.ScanCastOptions(integer_cast="upcast", float_cast="upcast")}
        lf = pl.scan_parquet(list(self.files), glob=False, hive_partitioning=bool(self.hive),
                             hive_schema={k: pl.String for k in self.hive} or None, **options)
        if self.renames:
            lf = lf.drop(self.drops).rename(dict(self.renames))
        return lf.with_columns(pl.col(c).cast(t) for c, t in self.casts) if self.casts else lf

    def with_casts(self, casts: Mapping[str, pl.DataType]) -> ParquetFiles:
        return replace(self, casts=tuple(casts.items())) if casts else self

    def renamed(self, renames: Mapping[str, str], drops: Sequence[str] = ()) -> ParquetFiles:
        """These files read with ``renames`` (old -> new name) applied, ``drops`` left out first."""
        return replace(self, renames=tuple(renames.items()), drops=tuple(drops))


def _hive_pairs(path: str) -> dict[str, str]:
    parts = Path(path).parent.parts
    return dict(part.split("=", 1) for part in parts if "=" in part and not part.startswith("="))


def _footer_schema(path: str, what: str) -> pl.Schema:
    p = Path(path)
    size = p.stat().st_size
    if size == 0:
        raise DataError(f"{what}: {p} is empty (0 bytes)")
    with open(p, "rb") as f:
        head = f.read(4)
        f.seek(max(size - 4, 0))
        tail = f.read(4)
    if head != PARQUET_MAGIC:
        raise DataError(f"{what}: {p} is not a Parquet file (it does not start with PAR1); a folder, glob "
                        "or list must name Parquet files")
    if tail != PARQUET_MAGIC or size < 12:
        raise DataError(f"{what}: {p} is a truncated Parquet file (it does not end with PAR1)")
    try:
        return pl.Schema(pl.read_parquet_schema(p))
    except Exception as e:  # a corrupt footer: Polars raises several types
        raise DataError(f"{what}: {p} is a corrupt Parquet file: {str(e).splitlines()[0]}") from None


def _widened(a: pl.DataType, b: pl.DataType) -> pl.DataType | None:
    """The type two files' columns are read as, when that loses nothing; else None."""
    ints = (pl.Int8, pl.Int16, pl.Int32, pl.Int64)
    if a in ints and b in ints:
        return pl.Int64()
    if a in (pl.Float32, pl.Float64) and b in (pl.Float32, pl.Float64):
        return pl.Float64()
    return None


def parquet_files(paths: Sequence[str], what: str = "run") -> ParquetFiles:
    """Check the files (magic bytes, footers, one schema, hive values) and describe them."""
    schemas = {f: _footer_schema(f, what) for f in paths}
    first = paths[0]
    names = schemas[first]
    widened: dict[str, pl.DataType] = {}
    for f, schema in schemas.items():
        for col in set(names) ^ set(schema):
            has, lacks = (first, f) if col in names else (f, first)
            raise DataError(f"{what}: the files disagree on their columns: {col!r} is in {has} but not in {lacks}")
        for col, dtype in schema.items():
            if dtype != names[col]:
                common = _widened(dtype, widened.get(col, names[col]))
                if common is None:
                    raise DataError(f"{what}: the files disagree on column {col!r}: {names[col]} in {first}, "
                                    f"{dtype} in {f}; rewrite them with one type")
                widened[col] = common
    hive = _hive_pairs(first)
    for f in paths:
        pairs = _hive_pairs(f)
        if pairs.keys() != hive.keys():
            raise DataError(f"{what}: the files disagree on partition folders: {first} has {sorted(hive)}, "
                            f"{f} has {sorted(pairs)}")
        for key in set(pairs) & set(schemas[f]):
            _same_partition_value(f, key, pairs[key], what)
    schema = tuple({c: widened.get(c, t) for c, t in names.items()}.items()) if widened else None
    return ParquetFiles(tuple(paths), tuple(hive), schema)


def scanned_files(frame: pl.LazyFrame, what: str = "run") -> ParquetFiles | None:
    """The files of ``frame`` when it is nothing but ``pl.scan_parquet(files)`` with Polars' default
    options over files outside partition folders, else None.

    Such a LazyFrame holds the same rows, columns and types as the paths themselves, so an engine
    that reads Parquet on its own (DuckDB) can read the files instead of having Polars stream them
    into a copy first (200M rows: 45.5 s against 26.4 s from the paths).  Anything else in the plan
    (a filter, a projection, another option, a partition folder whose values Polars would type)
    keeps the LazyFrame's own reading.
    """
    try:
        with warnings.catch_warnings():  # the JSON form is deprecated; a change of it falls back below
            warnings.simplefilter("ignore")
            plan = json.loads(frame.serialize(format="json"))
        paths = [p["inner"] for p in plan["Scan"]["sources"]["Paths"]]
        if "Parquet" not in plan["Scan"]["scan_type"] or not paths:
            return None
        # the plan rebuilt from its paths alone is the plan itself: every option is the default
        if pl.scan_parquet(paths).serialize() != frame.serialize():
            return None
        files = parquet_source(paths, what)
    except Exception:  # not a plain scan (or a form this version does not show): read as a LazyFrame
        return None
    return None if files.hive or files.schema is not None else files


def _same_partition_value(path: str, key: str, value: str, what: str) -> None:
    """A file inside ``key=value`` that has its own ``key`` column must agree with the folder.

    The folder's value is compared percent-decoded, as both engines read it (writers encode
    ``a b/c`` as ``model=a%20b%2Fc``; DuckDB's ``WRITE_PARTITION_COLUMNS`` keeps ``a b/c`` in the file).
    """
    decoded = unquote(value)
    column = pl.col(key).cast(pl.String)
    # the default partition holds the nulls (Spark, DuckDB): its file's column must be null there
    differs = column.is_not_null() if value == HIVE_NULL else column.ne_missing(decoded)
    other = pl.scan_parquet(path, glob=False, hive_partitioning=False).select(column).filter(
        differs).head(1).collect()
    if other.height:
        shown = f"{key}={value}" + (f" (value {decoded!r})" if decoded != value else "")
        raise DataError(f"{what}: conflicting partition value: {path} is in folder {shown} but its "
                        f"{key!r} column holds {other.item()!r}; rename the column or move the file")


def parquet_source(source: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], what: str = "run") -> ParquetFiles:
    """The checked files of a Parquet path, glob, folder or list of paths."""
    if isinstance(source, (str, os.PathLike)):
        check_exists(source, what)
        paths = [str(f) for f in files_of(source)]
    else:
        paths = []
        for s in source:
            check_exists(s, what)
            paths += [str(f) for f in files_of(s)]
        if not paths:
            raise RankPolarsError(f"{what}: an empty list of paths")
        # a file named twice (a glob and a path that overlap) would have its rows read twice
        seen: set[Path] = set()
        for f in paths:
            if Path(f).resolve() in seen:
                raise RankPolarsError(f"{what}: the list of paths names {f} twice (its rows would be read twice)")
            seen.add(Path(f).resolve())
    return parquet_files(paths, what)
