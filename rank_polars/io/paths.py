"""Which files a path names: itself, the matches of a glob, or a folder's Parquet files."""

from __future__ import annotations

import glob as _glob
from pathlib import Path

from rank_polars.errors import RankPolarsError

_GLOB_CHARS = "*?["


def is_glob(path: str) -> bool:
    """Whether ``path`` is a pattern (an existing file named ``run[a].parquet`` is not)."""
    return any(ch in path for ch in _GLOB_CHARS) and not Path(path).exists()


def bookkeeping(name: str) -> bool:
    """A name a folder's listing leaves out, as Spark, Hive and pyarrow do: one starting with
    ``.`` or with ``_`` (not a partition folder ``_key=value``).  A Spark job still writing keeps
    its files under ``_temporary/`` (read as well, every row came twice); ``_SUCCESS``, ``.crc``
    and editors' hidden copies are no data either."""
    return name.startswith(".") or (name.startswith("_") and "=" not in name)


def files_of(path: str | Path) -> list[Path]:
    """The files a path stands for: itself, the matches of a glob, or a folder's Parquet files
    (without :func:`bookkeeping` names, at any depth)."""
    s = str(path)
    p = Path(path)
    if p.is_dir():
        return sorted(q for q in p.rglob("*") if q.is_file() and q.suffix.lower() in (".parquet", ".pq")
                      and not any(bookkeeping(part) for part in q.relative_to(p).parts))
    if is_glob(s):
        return sorted(Path(m) for m in _glob.glob(s, recursive=True) if Path(m).is_file())
    return [p] if p.exists() else []


def check_exists(path: str | Path, what: str) -> None:
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
