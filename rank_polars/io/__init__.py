"""Reading runs and judgments: TREC, CSV/TSV and Parquet files, dicts, pandas and Arrow.

One module per format: :mod:`.parquet`, :mod:`.delimited` (CSV/TSV), :mod:`.trec`,
:mod:`.frames` (dicts, pandas, pyarrow), with :mod:`.detect` (which format a file holds),
:mod:`.paths` (which files a path names) and :mod:`.ids` (ids read alike on both sides).

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

import os
from pathlib import Path
from typing import Mapping

import polars as pl

from rank_polars.errors import RankPolarsError
from rank_polars.io.delimited import DEFAULT_NUMERIC, numeric_roles, read_delimited
from rank_polars.io.detect import ACCEPTED_FILES, FORMATS, Format, detect_format, sniff
from rank_polars.io.frames import from_dict, from_foreign
from rank_polars.io.ids import harmonise_ids, id_casts
from rank_polars.io.parquet import ParquetFiles, parquet_files, parquet_source, scanned_files
from rank_polars.io.paths import check_exists, files_of, is_glob
from rank_polars.io.trec import read_trec_qrels, read_trec_run


def open_path(
    path: str | os.PathLike[str], fmt: str | None = None, *, what: str = "run",
    numeric: Mapping[str, pl.DataType] | None = None,
) -> ParquetFiles | pl.DataFrame:
    """A path read by its format: Parquet stays on disk (checked), text formats are read."""
    check_exists(path, what)
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


__all__ = [
    "ACCEPTED_FILES", "DEFAULT_NUMERIC", "FORMATS", "ParquetFiles", "detect_format", "files_of", "harmonise_ids",
    "id_casts", "numeric_roles", "open_path", "parquet_source", "read_delimited", "read_trec_qrels", "read_trec_run", "scan", "scanned_files", "sniff",
]
