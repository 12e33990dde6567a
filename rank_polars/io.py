"""Reading runs and judgments from files: TREC, CSV/TSV and Parquet.

A single file is recognised by its content, not by its name: ``PAR1`` bytes are Parquet;
text whose first lines have six whitespace-separated fields with a numeric 4th and 5th is
a TREC run (``qid Q0 docno rank score runid``), four fields with a numeric last one are
TREC qrels (``qid iter docno rel``), and a header with commas or tabs is CSV / TSV.  The
suffix (``.parquet``, ``.csv``, ``.tsv``, ``.run``, ``.trec``, ``.txt``, ``.qrels``) only
decides when the content cannot (``--format-in`` / ``--qrels-format`` override both).
A folder, a glob or a list of paths names Parquet files.

Parquet is scanned lazily: only the first and last bytes and the footer of each file are
read here, to refuse a truncated file, a folder whose files disagree on a column, or a
hive folder ``model=A`` holding a file whose own ``model`` column says otherwise.  Text
formats are read in one pass, so that a bad line is reported with its number; their ids
are text (``007`` stays ``007``).  Every fault raises :class:`RankPolarsError` naming the
file.
"""

from __future__ import annotations

import csv
import glob as _glob
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal, Mapping, Sequence

import polars as pl

from .errors import DataError, RankPolarsError, examples

Format = Literal["parquet", "csv", "tsv", "trec", "qrels"]
FORMATS: tuple[str, ...] = ("parquet", "csv", "tsv", "trec", "qrels")
ACCEPTED_FILES = (
    "Parquet (a file, folder, glob or list), a TREC run (qid Q0 docno rank score runid), "
    "TREC qrels (qid iter docno rel), or CSV/TSV with a header"
)

_BY_SUFFIX = {
    ".parquet": "parquet", ".pq": "parquet",
    ".csv": "csv", ".tsv": "tsv", ".tab": "tsv",
    ".run": "trec", ".trec": "trec", ".txt": "trec",
    ".qrels": "qrels",
}
_ALIASES = {"pq": "parquet", "run": "trec", "trec_run": "trec", "trec_qrels": "qrels", "txt": "trec"}
_GLOB_CHARS = "*?["
_MAGIC = b"PAR1"
_SNIFF_BYTES = 1 << 16
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*(e[+-]?\d+)?|\.\d+(e[+-]?\d+)?|inf(inity)?|nan)", re.IGNORECASE)
_DECIMAL = r"[+-]?(\d+\.?\d*|\.\d+)"

# A TREC run line has six fields or more (trec_eval ignores the rest), a qrels line exactly four.
_TREC_RUN = r"^\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)(?:\s.*)?$"
_TREC_QRELS = r"^\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$"


def numeric_roles(position: str = "position", score: str = "score", relevance: str = "relevance") -> dict[str, pl.DataType]:
    """The columns of a CSV/TSV parsed as numbers, by role; every other column stays text."""
    return {position: pl.Int64(), score: pl.Float64(), relevance: pl.Float64()}


DEFAULT_NUMERIC = numeric_roles()


# --- which files a path names --------------------------------------------------------------

def is_glob(path: str) -> bool:
    """Whether ``path`` is a pattern (an existing file named ``run[a].parquet`` is not)."""
    return any(ch in path for ch in _GLOB_CHARS) and not Path(path).exists()


def files_of(path: str | Path) -> list[Path]:
    """The files a path stands for: itself, the matches of a glob, or a folder's Parquet files."""
    s = str(path)
    p = Path(path)
    if p.is_dir():
        return sorted(q for q in p.rglob("*") if q.is_file() and q.suffix.lower() in (".parquet", ".pq"))
    if is_glob(s):
        return sorted(Path(m) for m in _glob.glob(s, recursive=True) if Path(m).is_file())
    return [p] if p.exists() else []


def _check_exists(path: str | Path, what: str) -> None:
    s = str(path)
    p = Path(path)
    if p.is_dir():
        if not files_of(p):
            raise RankPolarsError(f"{what}: folder {s!r} has no .parquet files")
    elif is_glob(s):
        if not files_of(s):
            raise RankPolarsError(f"{what}: no file matches {s!r}")
    elif not p.exists():
        raise RankPolarsError(f"{what}: no such file {s!r}")


# --- what a file holds ---------------------------------------------------------------------

def _head(path: Path, what: str) -> tuple[bytes, int]:
    size = path.stat().st_size
    if size == 0:
        raise DataError(f"{what}: {path} is empty (0 bytes)")
    with open(path, "rb") as f:
        return f.read(_SNIFF_BYTES), size


def _first_line(head: bytes, size: int, path: Path, what: str) -> str | None:
    """The first data line of a text file (not blank, not ``#``); refuses non-UTF-8 bytes."""
    complete = size <= len(head)
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as e:
        if complete or e.start < len(head) - 3:  # not a character cut by the sniffing window
            raise _not_utf8(path, what, head, e.start) from None
        text = head[: e.start].decode("utf-8")
    lines = text.lstrip("\ufeff").splitlines()
    if not complete and lines:
        lines = lines[:-1]  # may be cut
    return next((line for line in lines if line.strip() and not line.lstrip().startswith("#")), None)


def _not_utf8(path: Path, what: str, data: bytes, start: int) -> DataError:
    line = data[:start].count(b"\n") + 1
    return DataError(
        f"{what}: {path} is not UTF-8 text (byte 0x{data[start]:02x} on line {line}); "
        "re-encode it as UTF-8, e.g. `iconv -f latin1 -t utf-8`"
    )


def _sniff_text(first: str) -> str | None:
    """The format the first data line says (the reader then checks every line)."""
    fields = first.split()
    if len(fields) >= 6 and _NUMBER.fullmatch(fields[3]) and _NUMBER.fullmatch(fields[4]):
        return "trec"
    if len(fields) == 4 and re.fullmatch(_DECIMAL, fields[3]):
        return "qrels"
    if "\t" in first:
        return "tsv"
    if "," in first:
        return "csv"
    return None


def sniff(path: str | Path, what: str = "run") -> str:
    """The format of one file from its first bytes (see the module docstring)."""
    p = Path(path)
    head, size = _head(p, what)
    if head.startswith(_MAGIC):
        return "parquet"
    if head.startswith(b"\x1f\x8b"):
        raise DataError(f"{what}: {p} is gzip-compressed; decompress it first (`gunzip`)")
    named = _BY_SUFFIX.get(p.suffix.lower())
    try:
        first = _first_line(head, size, p, what)
    except DataError:
        if named == "parquet":
            raise DataError(f"{what}: {p} is not a Parquet file (it does not start with PAR1), nor text") from None
        raise
    if first is None:
        raise DataError(f"{what}: {p} has no data lines (only blank or # comment lines)")
    if named in ("trec", "qrels"):  # a ".txt" or ".run" that says nothing: the role decides
        named = "qrels" if what == "qrels" else "trec"
    fmt = _sniff_text(first) or named
    if fmt is None or fmt == "parquet":
        raise DataError(f"{what}: cannot tell the format of {p}: expected {ACCEPTED_FILES}; "
                        f"its first line is {first[:80]!r}")
    return fmt


def detect_format(path: str | Path, override: str | None = None, what: str = "run") -> str:
    """The format of ``path``: ``override`` if given; a folder, glob or missing file is Parquet."""
    if override:
        fmt = _ALIASES.get(override.lower(), override.lower())
        if fmt not in FORMATS:
            raise RankPolarsError(f"unknown input format {override!r}; use one of {', '.join(FORMATS)}")
        return fmt
    p = Path(path)
    if p.is_file():
        return sniff(p, what)
    return "parquet"


# --- TREC ------------------------------------------------------------------------------------

def _lines(path: Path, what: str) -> pl.DataFrame:
    """``lineno, line`` of the data lines (blank and ``#`` lines dropped, numbers kept)."""
    _head(path, what)
    try:
        lines = pl.read_csv(path, has_header=False, new_columns=["line"], separator="\x1f", quote_char=None,
                            schema_overrides={"line": pl.String}, truncate_ragged_lines=True)
    except pl.exceptions.ComputeError as e:
        raise _read_error(path, what, e) from None
    lines = lines.with_row_index("lineno", offset=1)
    text = pl.col("line").str.strip_chars()
    return lines.filter(text.is_not_null() & (text != "") & ~text.str.starts_with("#"))


def _read_error(path: Path, what: str, error: Exception) -> DataError:
    """A reader's failure, said with the file (and the line, for bytes that are not UTF-8)."""
    data = path.read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        return _not_utf8(path, what, data, e.start)
    return DataError(f"{what}: cannot read {path}: {str(error).splitlines()[0]}")


def _fields(path: Path, pattern: str, n: int, what: str, layout: str) -> pl.DataFrame:
    lines = _lines(path, what)
    if lines.height == 0:
        raise DataError(f"{what}: {path} has no {layout} lines (only blank or # comment lines)")
    parts = lines.with_columns(pl.col("line").str.extract_groups(pattern).alias("f"))
    bad = parts.filter(pl.col("f").struct.field("1").is_null())
    if bad.height:
        row = bad.row(0, named=True)
        more = f" ({bad.height} bad lines)" if bad.height > 1 else ""
        raise DataError(f"{what}: {path}: line {row['lineno']} is not a TREC {what} line ({layout}): "
                        f"{row['line'][:80]!r}{more}")
    return parts.select("lineno", *(pl.col("f").struct.field(str(i + 1)).alias(f"c{i}") for i in range(n)))


def _bad_field(df: pl.DataFrame, ok: pl.Expr, field: str, path: Path, what: str, expected: str) -> None:
    bad = df.filter(~ok)
    if bad.height:
        row = bad.row(0, named=True)
        more = f" ({bad.height} lines)" if bad.height > 1 else ""
        raise DataError(f"{what}: {path}: line {row['lineno']}: the {field} {row['value']!r} is not {expected}{more}")


def _no_duplicates(df: pl.DataFrame, path: Path, what: str) -> None:
    dup = df.filter(pl.struct("query", "item").is_duplicated())
    if dup.height:
        pairs = dup.group_by("query", "item", maintain_order=True).agg(pl.col("lineno"))
        shown = (f"query {q!r} doc {d!r} (lines {', '.join(map(str, lines))})" for q, d, lines in pairs.iter_rows())
        raise DataError(f"{what}: {path}: duplicate docs, as trec_eval refuses: {examples(shown, 3, quote=False)}")


def read_trec_run(path: str | Path) -> pl.DataFrame:
    """Read a TREC run file (``qid Q0 docno rank score runid``) as trec_eval 10 does.

    Blank lines and lines whose first non-blank character is ``#`` are skipped; fields are
    separated by any whitespace and fields after the sixth are ignored.  The rank column is
    ignored (items are ordered by score, ties by docno descending, as trec_eval), ids are
    text, and the run's name (``runid``) is kept per line.

    Parameters
    ----------
    path
        The run file.

    Returns
    -------
    pl.DataFrame
        ``query`` (str), ``item`` (str), ``score`` (f64), ``runid`` (str), in file order.

    Raises
    ------
    DataError
        A malformed line or a score that is not a number (with the file and line number),
        or a document listed twice for a query (trec_eval: "duplicate docs").

    Examples
    --------
    >>> import rank_polars as rp, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.txt"
    >>> _ = path.write_text("# my run\\n1 Q0 d7 1 2.5 bm25\\n1 Q0 007 2 1.5 bm25\\n")
    >>> rp.read_trec_run(path)
    shape: (2, 4)
    ┌───────┬──────┬───────┬───────┐
    │ query ┆ item ┆ score ┆ runid │
    │ ---   ┆ ---  ┆ ---   ┆ ---   │
    │ str   ┆ str  ┆ f64   ┆ str   │
    ╞═══════╪══════╪═══════╪═══════╡
    │ 1     ┆ d7   ┆ 2.5   ┆ bm25  │
    │ 1     ┆ 007  ┆ 1.5   ┆ bm25  │
    └───────┴──────┴───────┴───────┘
    """
    p = Path(path)
    df = _fields(p, _TREC_RUN, 6, "run", "qid Q0 docno rank score runid")
    df = df.select("lineno", query="c0", item="c2", value="c4", runid="c5")
    score = pl.col("value").cast(pl.Float64, strict=False)
    _bad_field(df, score.is_not_null(), "score (5th field)", p, "run", "a number")
    _no_duplicates(df, p, "run")
    return df.select("query", "item", score.alias("score"), "runid")


def read_trec_qrels(path: str | Path) -> pl.DataFrame:
    """Read TREC qrels (``qid iter docno rel``) as trec_eval 10 does.

    Blank lines and lines whose first non-blank character is ``#`` are skipped.  The grade
    is read like C's ``atol``: a decimal grade is truncated toward zero (``2.7`` is 2,
    ``-0.5`` is 0); negative grades are kept (judged, not relevant).  Ids are text.

    Parameters
    ----------
    path
        The qrels file.

    Returns
    -------
    pl.DataFrame
        ``query`` (str), ``item`` (str), ``relevance`` (i64), in file order.

    Raises
    ------
    DataError
        A line without exactly four fields or with a grade that is not a number (with the
        file and line number), or a document judged twice for a query.

    Examples
    --------
    >>> import rank_polars as rp, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels"
    >>> _ = path.write_text("1 0 d7 2.7\\n1 0 007 1\\n1 0 d9 -1\\n")
    >>> rp.read_trec_qrels(path)
    shape: (3, 3)
    ┌───────┬──────┬───────────┐
    │ query ┆ item ┆ relevance │
    │ ---   ┆ ---  ┆ ---       │
    │ str   ┆ str  ┆ i64       │
    ╞═══════╪══════╪═══════════╡
    │ 1     ┆ d7   ┆ 2         │
    │ 1     ┆ 007  ┆ 1         │
    │ 1     ┆ d9   ┆ -1        │
    └───────┴──────┴───────────┘
    """
    p = Path(path)
    df = _fields(p, _TREC_QRELS, 4, "qrels", "qid iter docno rel")
    df = df.select("lineno", query="c0", item="c2", value="c3")
    _bad_field(df, pl.col("value").str.contains(f"^{_DECIMAL}$"), "grade (4th field)", p, "qrels", "a number")
    _no_duplicates(df, p, "qrels")
    whole = pl.col("value").str.extract(r"^([+-]?\d+)").cast(pl.Int64).fill_null(0)  # atol: the integer part
    return df.select("query", "item", whole.alias("relevance"))


# --- CSV / TSV -------------------------------------------------------------------------------

def read_delimited(
    path: str | Path, separator: str = ",", numeric: Mapping[str, pl.DataType] | None = None, what: str = "run"
) -> pl.DataFrame:
    """A CSV/TSV file with a header; every column is text except the ``numeric`` ones.

    ``numeric`` maps column names to the type they are parsed as (default: ``position``
    integer, ``score`` and ``relevance`` float); a value that does not parse is reported
    with its line.  Ids are never inferred: ``007``, ``1e3`` and ``001`` stay as written.
    """
    p = Path(path)
    _head(p, what)
    try:
        df = pl.read_csv(p, separator=separator, infer_schema=False, raise_if_empty=False)
    except pl.exceptions.ComputeError as e:
        raise _delimited_error(p, separator, what, e) from None
    if df.height == 0:
        raise DataError(f"{what}: {p} has a header ({', '.join(df.columns)}) but no rows: an empty log")
    casts = {c: t for c, t in (DEFAULT_NUMERIC if numeric is None else numeric).items() if c in df.columns}
    for col, dtype in casts.items():
        parsed = pl.col(col).cast(dtype, strict=False)
        bad = df.with_row_index("lineno", offset=2).filter(parsed.is_null() & pl.col(col).is_not_null())
        if bad.height:
            row = bad.row(0, named=True)
            kind = "an integer" if dtype.is_integer() else "a number"
            more = f" ({bad.height} rows)" if bad.height > 1 else ""
            raise DataError(f"{what}: {p}: line {row['lineno']}: column {col!r} is {row[col]!r}, not {kind}{more}")
    return df.with_columns(pl.col(c).cast(t) for c, t in casts.items())


def _delimited_error(path: Path, separator: str, what: str, error: Exception) -> DataError:
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        return _not_utf8(path, what, data, e.start + (3 if data.startswith(b"\xef\xbb\xbf") else 0))
    rows = csv.reader(text.splitlines(), delimiter=separator)  # only on this error path
    header = next(rows, [])
    for lineno, row in enumerate(rows, start=2):
        if len(row) > len(header):
            return DataError(f"{what}: {path}: line {lineno} has {len(row)} fields but the header has "
                             f"{len(header)} ({separator.join(header)})")
    return DataError(f"{what}: cannot read {path}: {str(error).splitlines()[0]}")


# --- Parquet ---------------------------------------------------------------------------------

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

    def scan(self) -> pl.LazyFrame:
        options = {}
        if self.schema is not None:
            options = {"schema": dict(self.schema),
                       "cast_options": pl.ScanCastOptions(integer_cast="upcast", float_cast="upcast")}
        lf = pl.scan_parquet(list(self.files), glob=False, hive_partitioning=bool(self.hive),
                             hive_schema={k: pl.String for k in self.hive} or None, **options)
        return lf.with_columns(pl.col(c).cast(t) for c, t in self.casts) if self.casts else lf

    def with_casts(self, casts: Mapping[str, pl.DataType]) -> ParquetFiles:
        return replace(self, casts=tuple(casts.items())) if casts else self


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
    if head != _MAGIC:
        raise DataError(f"{what}: {p} is not a Parquet file (it does not start with PAR1); a folder, glob "
                        "or list must name Parquet files")
    if tail != _MAGIC or size < 12:
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


def _same_partition_value(path: str, key: str, value: str, what: str) -> None:
    """A file inside ``key=value`` that has its own ``key`` column must agree with the folder."""
    column = pl.col(key).cast(pl.String)
    other = pl.scan_parquet(path, glob=False, hive_partitioning=False).select(column).filter(
        column.ne_missing(value)).head(1).collect()
    if other.height:
        raise DataError(f"{what}: conflicting partition value: {path} is in folder {key}={value} but its "
                        f"{key!r} column holds {other.item()!r}; rename the column or move the file")


def parquet_source(source: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], what: str = "run") -> ParquetFiles:
    """The checked files of a Parquet path, glob, folder or list of paths."""
    if isinstance(source, (str, os.PathLike)):
        _check_exists(source, what)
        paths = [str(f) for f in files_of(source)]
    else:
        paths = []
        for s in source:
            _check_exists(s, what)
            paths += [str(f) for f in files_of(s)]
        if not paths:
            raise RankPolarsError(f"{what}: an empty list of paths")
    return parquet_files(paths, what)


# --- one entry point for paths ---------------------------------------------------------------

def open_path(
    path: str | os.PathLike[str], fmt: str | None = None, *, what: str = "run",
    numeric: Mapping[str, pl.DataType] | None = None,
) -> ParquetFiles | pl.DataFrame:
    """A path read by its format: Parquet stays on disk (checked), text formats are read."""
    _check_exists(path, what)
    fmt = detect_format(path, fmt, what)
    if fmt == "parquet":
        return parquet_source(path, what)
    if Path(path).is_dir() or is_glob(str(path)):
        raise RankPolarsError(f"{what}: {str(path)!r} names several files; only Parquet is read from a folder or glob")
    if fmt in ("csv", "tsv"):
        return read_delimited(path, "," if fmt == "csv" else "\t", numeric, what)
    return read_trec_run(path) if fmt == "trec" else read_trec_qrels(path)


def scan(path: str | Path, fmt: str | None = None, *, what: str = "run",
         numeric: Mapping[str, pl.DataType] | None = None) -> pl.LazyFrame:
    """A LazyFrame over a run or judgments file of format ``fmt`` (detected when None)."""
    opened = open_path(path, fmt, what=what, numeric=numeric)
    return opened.scan() if isinstance(opened, ParquetFiles) else opened.lazy()


# --- ids -------------------------------------------------------------------------------------

def _id_kind(dtype: pl.DataType) -> str:
    if dtype.is_integer():
        return "int"
    if dtype in (pl.String, pl.Categorical, pl.Enum):
        return "text"
    return str(dtype)


def id_casts(run: pl.Schema, qrels: pl.Schema, columns: Sequence[str]) -> dict[str, pl.DataType]:
    """How to read id columns on which the run and the judgments disagree: the one rule.

    Integers of different widths are compared as Int64; integers against text (a Parquet
    ``7`` against a TREC ``"7"``) as text, integers rendered without decimals; any other
    disagreement (e.g. float ids) is refused, since ``7.0`` and ``"7"`` have no one reading.
    """
    casts: dict[str, pl.DataType] = {}
    for col in columns:
        if col not in run or col not in qrels or run[col] == qrels[col]:
            continue
        kinds = {_id_kind(run[col]), _id_kind(qrels[col])}
        if kinds == {"int"} and pl.UInt64 not in (run[col], qrels[col]):
            casts[col] = pl.Int64()
        elif kinds <= {"int", "text"}:
            casts[col] = pl.String()
        else:
            raise RankPolarsError(
                f"qrels: column {col!r} is {qrels[col]} but the run's is {run[col]}; ids are matched as text "
                "or integers: cast one of them"
            )
    return casts


def harmonise_ids(
    run: pl.LazyFrame, qrels: pl.LazyFrame | None, columns: tuple[str, ...]
) -> tuple[pl.LazyFrame, pl.LazyFrame | None]:
    """``run`` and ``qrels`` with their id columns read alike (:func:`id_casts`)."""
    if qrels is None:
        return run, qrels
    casts = id_casts(run.collect_schema(), qrels.collect_schema(), columns)
    if not casts:
        return run, qrels
    exprs = [pl.col(c).cast(t) for c, t in casts.items()]
    return run.with_columns(exprs), qrels.with_columns(exprs)


__all__ = [
    "ACCEPTED_FILES", "DEFAULT_NUMERIC", "FORMATS", "ParquetFiles", "detect_format", "files_of", "harmonise_ids",
    "id_casts", "numeric_roles", "open_path", "parquet_source", "read_delimited", "read_trec_qrels", "read_trec_run", "scan", "sniff",
]
