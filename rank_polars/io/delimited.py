"""CSV and TSV files with a header: ids stay text, the numeric roles are parsed with their line."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Mapping

import polars as pl

from rank_polars.errors import DataError, examples
from rank_polars.io.text import first_bytes, not_utf8


def numeric_roles(position: str = "position", score: str = "score", relevance: str = "relevance") -> dict[str, pl.DataType]:
    """The columns of a CSV/TSV parsed as numbers, by role; every other column stays text."""
    return {position: pl.Int64(), score: pl.Float64(), relevance: pl.Float64()}


DEFAULT_NUMERIC = numeric_roles()


def read_delimited(
    path: str | Path, separator: str = ",", numeric: Mapping[str, pl.DataType] | None = None, what: str = "run"
) -> pl.DataFrame:
    """A CSV/TSV file with a header; every column is text except the ``numeric`` ones.

    ``numeric`` maps column names to the type they are parsed as (default: ``position``
    integer, ``score`` and ``relevance`` float); a value that does not parse is reported
    with its line.  Ids are never inferred: ``007``, ``1e3`` and ``001`` stay as written.
    """
    p = Path(path)
    head, _ = first_bytes(p, what)
    try:  # glob=False: a file named "run[a].csv" is that file, not "runa.csv"
        df = pl.read_csv(p, separator=separator, infer_schema=False, raise_if_empty=False, glob=False)
    except pl.exceptions.ComputeError as e:
        raise _delimited_error(p, separator, what, e) from None
    _one_column_per_name(head, separator, p, what)
    # a blank line is a row of nulls to Polars (pandas and the csv module skip it): dropped, with
    # the line numbers of the others kept for the messages below
    line = "line" + "_" * max(map(len, df.columns), default=0)  # longer than any column's name: no clash
    columns = df.columns
    df = df.with_row_index(line, offset=2).filter(~pl.all_horizontal(pl.col(columns).is_null()))
    if df.height == 0:
        raise DataError(f"{what}: {p} has a header ({', '.join(columns)}) but no rows: an empty log")
    casts = {c: t for c, t in (DEFAULT_NUMERIC if numeric is None else numeric).items() if c in df.columns}
    for col, dtype in casts.items():
        parsed = pl.col(col).cast(dtype, strict=False)
        bad = df.filter(parsed.is_null() & pl.col(col).is_not_null())
        if bad.height:
            row = bad.row(0, named=True)
            kind = "an integer" if dtype.is_integer() else "a number"
            more = f" ({bad.height} rows)" if bad.height > 1 else ""
            raise DataError(f"{what}: {p}: line {row[line]}: column {col!r} is {row[col]!r}, not {kind}{more}")
    return df.drop(line).with_columns(pl.col(c).cast(t) for c, t in casts.items())


def _one_column_per_name(head: bytes, separator: str, path: Path, what: str) -> None:
    """Refuse a header naming a column twice: Polars renames the second ``score`` to
    ``score_duplicated_0``, and which one would then rank the items is a guess."""
    text = head.decode("utf-8", errors="replace").removeprefix("\ufeff")
    header = next(csv.reader(io.StringIO(text), delimiter=separator), [])
    twice = sorted({name for name in header if header.count(name) > 1})
    if twice:
        raise DataError(f"{what}: {path}: the header names more than one column {examples(twice)}; "
                        "rename them, since a column is found by its name")


def _delimited_error(path: Path, separator: str, what: str, error: Exception) -> DataError:
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        return not_utf8(path, what, data, e.start + (3 if data.startswith(b"\xef\xbb\xbf") else 0))
    rows = csv.reader(text.splitlines(), delimiter=separator)  # only on this error path
    header = next(rows, [])
    for lineno, row in enumerate(rows, start=2):
        if len(row) > len(header):
            return DataError(f"{what}: {path}: line {lineno} has {len(row)} fields but the header has "
                             f"{len(header)} ({separator.join(header)})")
    return DataError(f"{what}: cannot read {path}: {str(error).splitlines()[0]}")
