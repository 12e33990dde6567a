"""The store of :func:`rank_polars.track`: per-query values per partition, and what they were made from.

Layout of a store folder::

    manifest.json                      settings (metric specs, by, time, missing, the judgments'
                                       fingerprint, the library version) and, per partition, the
                                       fingerprint of the input it was evaluated from
    values/<time>=<value>/part.parquet the per-query values of that partition: the ``by`` columns,
                                       the query column, one column per metric
    summary/<time>=<value>.parquet     per group: queries, each metric's aggregate (evaluate's) and
                                       the count, mean and sd its t interval is made of

**What counts as changed.**  A partition of files is fingerprinted by its files' names, sizes and
modification times (``os.stat``: no byte is read, so checking 30 days costs nothing); a file
rewritten in place with the same size within the file system's time resolution is not seen (pass
``rebuild=True``).  A partition of a frame (a value of the time column) is fingerprinted by its
content, hashed in Polars (count and two sums of the row hashes: independent of row order; the
hash may change with Polars' version, which then re-evaluates).  Judgments given as files are
fingerprinted as files, as a frame by content.

**Writes.**  Each file is written beside its place and moved in (``os.replace``); the manifest
last.  A run killed mid-way leaves at worst values the manifest does not list: re-evaluated next
time.  One writer at a time: two jobs writing one store are not coordinated.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import polars as pl

from rank_polars.errors import RankPolarsError
from rank_polars.io import files_of

MANIFEST = "manifest.json"
FORMAT = 1  # the layout's version, written in the manifest


@dataclass(frozen=True)
class Partition:
    """One value of the time column: what to evaluate for it and the fingerprint of that input."""

    value: str
    source: Any  # a list of file paths, or a LazyFrame filtered to this value
    fingerprint: str


def library_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("rank-polars")
    except PackageNotFoundError:  # a source tree that is not installed
        return "unknown"


def _stat(files: Sequence[Path]) -> str:
    parts = []
    for f in sorted(files):
        st = f.stat()
        parts.append(f"{f.resolve()}:{st.st_size}:{st.st_mtime_ns}")
    return "files:" + hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]


def _content(frame: pl.LazyFrame, keys: Sequence[str] = ()) -> pl.LazyFrame:
    """Per group of ``keys``: an order-free fingerprint of the rows (count and two sums of row hashes)."""
    h = pl.struct(pl.all().exclude(list(keys))).hash(seed=0)
    aggs = [pl.len().alias("n"), (h % 1_000_000_007).sum().alias("a"), (h // 4_294_967_296).sum().alias("b")]
    return frame.group_by(list(keys)).agg(aggs) if keys else frame.select(aggs)


def fingerprint_source(source: Any) -> str:
    """The fingerprint of judgments (or any source): files by stat, a frame by content."""
    if source is None:
        return "none"
    if isinstance(source, (str, os.PathLike)) or (isinstance(source, (list, tuple)) and source and
                                                  all(isinstance(s, (str, os.PathLike)) for s in source)):
        paths = [source] if isinstance(source, (str, os.PathLike)) else list(source)
        return _stat([f for p in paths for f in files_of(p)])
    from rank_polars.inputs import scan

    row = _content(scan(source, "qrels")).collect().row(0)
    return "content:" + ":".join(map(str, row))


_HIVE = re.compile(r"^([^=/\\]+)=(.*)$")


def partitions(source: Any, time: str) -> list[Partition]:
    """The partitions of ``source`` by the ``time`` column.

    * a folder: its ``<time>=<value>`` sub-folders (hive partitions);
    * a glob or a list of paths: each file's ``<time>=<value>`` folder;
    * a file outside such a folder: each value of its column ``time`` (fingerprinted by the file's
      stat and the value: a changed file evaluates its values again), or, without that column, the
      file itself, its name without extension as the value;
    * a DataFrame or LazyFrame: each value of the column ``time``.
    """
    if isinstance(source, (pl.DataFrame, pl.LazyFrame)):
        return _frame_partitions(source.lazy(), time)
    paths = [source] if isinstance(source, (str, os.PathLike)) else list(source) \
        if isinstance(source, (list, tuple)) else None
    if not paths or not all(isinstance(p, (str, os.PathLike)) for p in paths):
        raise RankPolarsError("track: the log must be a folder of partitions, a glob or a list of Parquet files, or a "
                              f"Polars DataFrame / LazyFrame with a {time!r} column; got {type(source).__name__}")
    groups: dict[str, list[Path]] = {}
    inside: list[Partition] = []  # the values of the time column of files outside a <time>= folder
    for p in paths:
        files = files_of(p)
        if not files:
            raise RankPolarsError(f"track: no Parquet file at {str(p)!r}")
        root = Path(p) if Path(p).is_dir() else None
        for f in files:
            value = _value_of(f, time, root)
            if value is None:
                inside += _file_partitions(f, time, [k for k, _ in _hive(f, root)])
            else:
                groups.setdefault(value, []).append(f)
    out = [Partition(v, [str(f) for f in sorted(fs)], _stat(fs)) for v, fs in groups.items()] + inside
    twice = sorted(v for v, n in Counter(p.value for p in out).items() if n > 1)
    if twice:
        raise RankPolarsError(f"track: the partition {time}={twice[0]} is in more than one place (folders or files "
                              "of the log): give each value once")
    return sorted(out, key=lambda p: p.value)


def _hive(file: Path, root: Path | None) -> list[tuple[str, str]]:
    """The ``(key, value)`` of each ``<key>=<value>`` folder ``file`` is in (below ``root``), outermost first."""
    parts = file.relative_to(root).parts[:-1] if root is not None else file.parts[:-1]
    return [(m.group(1), m.group(2)) for m in map(_HIVE.match, parts) if m]


def _value_of(file: Path, time: str, root: Path | None) -> str | None:
    return next((value for key, value in reversed(_hive(file, root)) if key == time), None)


def _file_partitions(file: Path, time: str, keys: Sequence[str] = ()) -> list[Partition]:
    """A file outside a ``<time>=`` folder: one partition per value of its time column, or the file
    (refused when it is in other ``<key>=`` folders: a misspelt time column, not one partition)."""
    lf = pl.scan_parquet(file)
    if time not in lf.collect_schema().names():
        if keys:
            from rank_polars.presentation import did_you_mean

            raise RankPolarsError(f"track: {str(file)!r} is in {', '.join(f'{k}=' for k in keys)} folders and has no "
                                  f"column {time!r} (the time role: time= or Schema(time=)): name the partition "
                                  f"column as the time{did_you_mean(time, keys) or ''}")
        return [Partition(file.stem, [str(file)], _stat([file]))]
    values = lf.select(pl.col(time).cast(pl.String).unique().sort()).collect()[time]
    if values.null_count():
        raise RankPolarsError(f"track: column {time!r} of {str(file)!r} has null values: every row needs its partition")
    stat = _stat([file])
    return [Partition(v, lf.filter(pl.col(time).cast(pl.String) == v).drop(time), f"{stat}:{v}") for v in values]


def _frame_partitions(frame: pl.LazyFrame, time: str) -> list[Partition]:
    names = frame.collect_schema().names()
    if time not in names:
        from rank_polars.presentation import did_you_mean

        raise RankPolarsError(f"track: no column {time!r} (the time role: time= or Schema(time=)) in the log"
                              f"{did_you_mean(time, names) or ''}; columns are {', '.join(map(repr, names[:12]))}")
    key = "__rp_time"
    text = frame.with_columns(pl.col(time).cast(pl.String).alias(key))
    prints = _content(text.drop(time), [key]).collect()
    if prints[key].null_count():
        raise RankPolarsError(f"track: column {time!r} has null values ({prints.filter(pl.col(key).is_null())['n'][0]} "
                              "rows): every row needs its partition")
    return [Partition(v, frame.filter(pl.col(time).cast(pl.String) == v).drop(time), f"content:{n}:{a}:{b}")
            for v, n, a, b in prints.sort(key).iter_rows()]


class Store:
    """A store folder: its manifest, and the files of each partition."""

    def __init__(self, path: str | os.PathLike[str], time: str) -> None:
        self.path = Path(path)
        self.time = time
        self.manifest: dict[str, Any] = {}
        if (self.path / MANIFEST).is_file():
            self.manifest = json.loads((self.path / MANIFEST).read_text(encoding="utf-8"))
        elif self.path.exists() and any(self.path.iterdir()):
            raise RankPolarsError(f"track: {str(self.path)!r} is not empty and has no {MANIFEST}: not a store "
                                  "(give an empty or new folder)")

    def check(self, settings: dict[str, Any], rebuild: bool) -> None:
        """Refuse a store made with other settings (metrics, judgments, by, time, missing), or empty it
        with ``rebuild``: values made otherwise would be mixed in one series."""
        held = self.manifest.get("settings")
        if held is None or held == settings:
            self.manifest["settings"] = settings
            self.manifest.setdefault("partitions", {})
            return
        if rebuild:
            for folder in ("values", "summary"):
                shutil.rmtree(self.path / folder, ignore_errors=True)
            self.manifest = {"settings": settings, "partitions": {}}
            return
        changed = [k for k in settings if held.get(k) != settings[k]]
        what = {"metrics": "metrics (or parameters)", "by": "grouping columns", "time": "time column",
                "columns": "column names", "options": "evaluate options (judge=, labels=, order=, ...)"}
        raise RankPolarsError(f"track: the store {str(self.path)!r} was made with different "
                              f"{', '.join(what.get(k, k) for k in changed)} (stored: "
                              f"{'; '.join(f'{k}={held.get(k)!r}' for k in changed)}); its values would not be "
                              "comparable: pass rebuild=True to evaluate every partition again, or use another store")

    def stale(self, parts: Sequence[Partition]) -> list[Partition]:
        """The partitions the store lacks or holds from another input."""
        held = self.manifest.get("partitions", {})
        return [p for p in parts if held.get(p.value, {}).get("input") != p.fingerprint]

    def _place(self, kind: str, value: str) -> Path:
        name = f"{self.time}={value}"
        return self.path / "values" / name / "part.parquet" if kind == "values" else self.path / "summary" / f"{name}.parquet"

    def write(self, value: str, fingerprint: str, per: pl.DataFrame, summary: pl.DataFrame) -> None:
        """Write one partition's per-query values and summary, then record it in the manifest."""
        for kind, frame in (("values", per), ("summary", summary)):
            target = self._place(kind, value)
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{target.name}.tmp")
            frame.write_parquet(tmp)
            os.replace(tmp, target)
        self.manifest.setdefault("partitions", {})[value] = {"input": fingerprint, "rows": per.height}
        self.manifest["library"] = library_version()
        self.manifest["format"] = FORMAT
        self.save()

    def save(self) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        tmp = self.path / f".{MANIFEST}.tmp"
        tmp.write_text(json.dumps(self.manifest, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, self.path / MANIFEST)

    def values(self) -> pl.LazyFrame:
        """Every stored per-query value, with the time column (text) first."""
        return self._scan("values")

    def summaries(self) -> pl.DataFrame:
        """Every stored partition's summary, with the time column (text) first."""
        return self._scan("summary").collect()

    def _scan(self, kind: str) -> pl.LazyFrame:
        held = sorted(self.manifest.get("partitions", {}))
        if not held:
            raise RankPolarsError(f"track: the store {str(self.path)!r} holds no partition yet")
        frames = [pl.scan_parquet(self._place(kind, v)).with_columns(pl.lit(v).alias(self.time)) for v in held]
        lf = pl.concat(frames, how="vertical_relaxed")
        return lf.select(self.time, pl.exclude(self.time))


__all__ = ["MANIFEST", "Partition", "Store", "fingerprint_source", "library_version", "partitions"]
