"""Reading ranking logs and judgments from files, for the command line.

Formats are detected from the path (or given explicitly):

==============================  ===============================================
``.parquet`` / ``.pq``, folder  Parquet: a file, a glob, or a hive-partitioned
                                folder (``model=bot-v1/part-0.parquet``)
``.csv`` / ``.tsv``             comma / tab separated, with a header
``.run`` / ``.trec`` / ``.txt`` TREC run: ``qid Q0 docno rank score tag``
``.qrels``                      TREC qrels: ``qid iter docno rel``
==============================  ===============================================

Parquet and CSV are scanned lazily.  TREC files are parsed in one pass (their lines are
checked, so that a malformed line is reported with its number).  In a TREC run the rank
column is ignored and items are ordered by score, as trec_eval does; query and item ids
are strings, qrels grades integers.
"""

from __future__ import annotations

import glob as _glob
from pathlib import Path
from typing import Literal

import polars as pl

from .errors import DataError, RankPolarsError

Format = Literal["parquet", "csv", "tsv", "trec", "qrels"]
FORMATS: tuple[str, ...] = ("parquet", "csv", "tsv", "trec", "qrels")

_BY_SUFFIX = {
    ".parquet": "parquet", ".pq": "parquet",
    ".csv": "csv", ".tsv": "tsv", ".tab": "tsv",
    ".run": "trec", ".trec": "trec", ".txt": "trec",
    ".qrels": "qrels",
}
_GLOB_CHARS = "*?["

# One TREC line: at least 4 (qrels) or 5 (run) whitespace-separated fields.
_TREC_RUN = r"^\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)(?:\s+(\S+))?\s*$"
_TREC_QRELS = r"^\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$"


def is_glob(path: str) -> bool:
    return any(ch in path for ch in _GLOB_CHARS)


def detect_format(path: str | Path, override: str | None = None) -> str:
    """The format of ``path``: ``override`` if given, else from the suffix (folders: Parquet)."""
    if override:
        fmt = override.lower()
        aliases = {"pq": "parquet", "run": "trec", "trec_run": "trec", "trec_qrels": "qrels", "txt": "trec"}
        fmt = aliases.get(fmt, fmt)
        if fmt not in FORMATS:
            raise RankPolarsError(f"unknown input format {override!r}; use one of {', '.join(FORMATS)}")
        return fmt
    p = Path(path)
    if p.is_dir():
        return "parquet"
    name = p.name.lower()
    for suffix in (".gz", ".zst"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    suffix = Path(name).suffix
    if suffix in _BY_SUFFIX:
        return _BY_SUFFIX[suffix]
    raise RankPolarsError(
        f"cannot tell the format of {str(path)!r} from its name; pass --format-in/--qrels-format "
        f"({', '.join(FORMATS)})"
    )


def files_of(path: str | Path) -> list[Path]:
    """The files a path stands for (a file, the matches of a glob, or a folder's Parquet files)."""
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
        return
    if is_glob(s):
        if not files_of(s):
            raise RankPolarsError(f"{what}: no file matches {s!r}")
        return
    if not p.exists():
        raise RankPolarsError(f"{what}: no such file {s!r}")


def scan_parquet(path: str | Path) -> pl.LazyFrame:
    p = Path(path)
    if p.is_dir():
        files = [str(f) for f in files_of(p)]
        return pl.scan_parquet(files, hive_partitioning=True)
    return pl.scan_parquet(str(path), hive_partitioning=True)


def scan_delimited(path: str | Path, separator: str) -> pl.LazyFrame:
    return pl.scan_csv(str(path), separator=separator, infer_schema_length=10_000, try_parse_dates=True)


def _trec_lines(path: str | Path, pattern: str, n_fields: int, what: str) -> pl.DataFrame:
    files = files_of(path)
    frames = []
    for f in files:
        lines = pl.read_csv(
            f, has_header=False, new_columns=["line"], separator="\x1f", quote_char=None,
            schema_overrides={"line": pl.String},
        )
        lines = lines.with_row_index("lineno", offset=1).filter(pl.col("line").str.strip_chars() != "")
        parts = lines.with_columns(pl.col("line").str.extract_groups(pattern).alias("f"))
        bad = parts.filter(pl.col("f").struct.field("1").is_null())
        if bad.height:
            row = bad.row(0, named=True)
            raise DataError(
                f"{what}: {f}: line {row['lineno']} is not a TREC {what} line "
                f"({'qid Q0 docno rank score [tag]' if what == 'run' else 'qid iter docno rel'}): {row['line'][:80]!r}"
                + (f" ({bad.height} bad lines)" if bad.height > 1 else "")
            )
        frames.append(parts.select([pl.col("f").struct.field(str(i + 1)).alias(f"c{i}") for i in range(n_fields)]))
    return pl.concat(frames) if len(frames) > 1 else frames[0]


def read_trec_run(path: str | Path) -> pl.LazyFrame:
    """A TREC run as ``query, item, score, tag`` (strings; score Float64; rank dropped)."""
    df = _trec_lines(path, _TREC_RUN, 6, "run")
    try:
        score = pl.col("c4").cast(pl.Float64, strict=True)
        df = df.select(
            pl.col("c0").alias("query"), pl.col("c2").alias("item"), score.alias("score"),
            pl.col("c5").fill_null("").alias("tag"),
        )
    except pl.exceptions.InvalidOperationError as e:
        raise DataError(f"run: {path}: the score column (5th field) is not numeric") from e
    return df.lazy()


def read_trec_qrels(path: str | Path) -> pl.LazyFrame:
    """TREC qrels as ``query, item, relevance`` (strings; relevance Int64)."""
    df = _trec_lines(path, _TREC_QRELS, 4, "qrels")
    try:
        df = df.select(
            pl.col("c0").alias("query"), pl.col("c2").alias("item"),
            pl.col("c3").cast(pl.Int64, strict=True).alias("relevance"),
        )
    except pl.exceptions.InvalidOperationError as e:
        raise DataError(f"qrels: {path}: the relevance column (4th field) is not an integer") from e
    return df.lazy()


def scan(path: str | Path, fmt: str | None = None, *, what: str = "run") -> pl.LazyFrame:
    """A LazyFrame over a run or judgments file, of format ``fmt`` (detected when None)."""
    _check_exists(path, what)
    fmt = detect_format(path, fmt)
    if fmt == "parquet":
        return scan_parquet(path)
    if fmt == "csv":
        return scan_delimited(path, ",")
    if fmt == "tsv":
        return scan_delimited(path, "\t")
    if fmt == "trec":
        return read_trec_run(path)
    return read_trec_qrels(path)


def harmonise_ids(
    run: pl.LazyFrame, qrels: pl.LazyFrame | None, columns: tuple[str, ...]
) -> tuple[pl.LazyFrame, pl.LazyFrame | None]:
    """Cast id columns to strings on both sides when the run and the judgments disagree.

    Files of different formats read the same ids differently (a CSV ``1`` is an integer, a
    TREC ``1`` a string); compared as strings they match.
    """
    if qrels is None:
        return run, qrels
    rs, qs = run.collect_schema(), qrels.collect_schema()
    casts = [c for c in columns if c in rs and c in qs and rs[c] != qs[c]]
    if not casts:
        return run, qrels
    cast = [pl.col(c).cast(pl.String) for c in casts]
    return run.with_columns(cast), qrels.with_columns(cast)


__all__ = ["FORMATS", "detect_format", "files_of", "harmonise_ids", "read_trec_qrels", "read_trec_run", "scan"]
