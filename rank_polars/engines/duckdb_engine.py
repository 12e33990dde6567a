"""The DuckDB engine: the generated SQL of :mod:`rank_polars.engines.sql_engine`, embedded.

Parquet paths, globs and hive-partitioned folders are read by DuckDB's ``read_parquet``
directly (never through Python objects), so logs larger than memory work: DuckDB spills
to ``temp_directory`` under ``memory_limit``; so is a plain ``pl.scan_parquet(files)``
(:func:`rank_polars.io.scanned_files`).  Any other Polars LazyFrame that reads files (a filtered
``pl.scan_parquet``, ``pl.scan_csv``, anything but frames in memory) is streamed by Polars into a Parquet file in
that folder and read from there, in bounded memory too; frames in memory are handed over as Arrow.

The run is read twice: once for the per-ranking statistics that :mod:`rank_polars.validate`
checks (the same columns as ``run_stats_polars``, so errors read the same whichever engine
found them) and once for the metrics (which also counts duplicates among the contributing
rows, see ``validate.ranking_check_scope``), and the judgments are checked in SQL (``qrels_stats_sql``).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import tempfile
import threading
import warnings
from typing import Any, Iterator

import duckdb
import polars as pl

from rank_polars.errors import DataError, RankPolarsError
from rank_polars.inputs import Inputs
from rank_polars.io import ParquetFiles
from rank_polars.plan import Plan
from rank_polars.validate import Missing
from rank_polars.engines.base import Outputs
from rank_polars.engines.sql_engine import Source, literal, quote
from rank_polars.engines.sql_runner import SqlRunner, reads_files, stream_to_parquet


def read_parquet(files: str, hive: bool = False) -> str:
    """DuckDB's ``read_parquet`` over ``files`` (a SQL list or string literal), told that any
    float column may hold NaN.  A file's min/max leave NaN out (as the format says) and DuckDB
    2, unless told, takes them as proof that there is none: ``isnan(x)`` over a file that
    Polars or Arrow wrote was folded to false, so a NaN score or grade passed the checks from a
    path while the same frame was refused, and a NaN score ranked first (duckdb/duckdb#25521;
    ``can_have_nan`` needs DuckDB 1.3.1).  The cost: no pruning of row groups by an open
    range over a float column (``grade > 0``).  ``hive``: partition values from the folder names,
    as text (as in the Polars engine)."""
    hive_options = "true, hive_types_autocast = false" if hive else "false"
    return f"read_parquet({files}, hive_partitioning = {hive_options}, can_have_nan = true)"


def parquet_scan(source: Any, what: str) -> str | None:
    """``read_parquet([...])`` over the checked files of a Parquet source, else None.

    The files are listed one by one, glob characters escaped (``run[a].parquet`` and a
    folder named with a backslash are read as written); partition values are text, as in
    the Polars engine.
    """
    if not isinstance(source, ParquetFiles):
        return None
    files = "[" + ", ".join(literal(re.sub(r"([\[*?])", r"[\1]", f)) for f in source.files) + "]"
    scan = read_parquet(files, bool(source.hive))
    if source.renames:  # the judgments' own names read as the log's (inputs.judgments_as_log)
        drops = "".join(f" EXCLUDE ({', '.join(quote(c) for c in source.drops)})" if source.drops else "")
        renames = ", ".join(f"{quote(a)} AS {quote(b)}" for a, b in source.renames)
        scan = f"(SELECT *{drops} RENAME ({renames}) FROM {scan})"
    if not source.casts:
        return scan
    casts = ", ".join(f"CAST({quote(c)} AS {'VARCHAR' if t == pl.String else 'BIGINT'}) AS {quote(c)}"
                      for c, t in source.casts)
    return f"(SELECT * REPLACE ({casts}) FROM {scan})"


def _bool_labels_as_numbers(con: duckdb.DuckDBPyConnection, run: str, relevance: str) -> str:
    """``run`` with a BOOLEAN label column as 0/1 (the Polars engine reads it so; the
    generated SQL compares the stored label with numbers)."""
    if str(con.sql(f"SELECT {quote(relevance)} FROM {run}").types[0]) != "BOOLEAN":
        return run
    return f"(SELECT * REPLACE (CAST({quote(relevance)} AS TINYINT) AS {quote(relevance)}) FROM {run})"


# The default memory limit: half of the memory this process may use, at most 1.5 GiB (at
# least 256 MiB).  DuckDB's own default, 80% of RAM, is shared by nothing: on a busy
# machine or in a container it is what makes a large evaluation die instead of spilling.
DEFAULT_FRACTION, DEFAULT_CAP, DEFAULT_FLOOR = 0.5, 3 << 29, 256 << 20
# labels="run" refuses an item shown twice by a distinct count over every row, whose hash tables
# hold more beside DuckDB's limit than the join's plan does: at 200M rows 2.52 GiB of peak RSS
# under a 1.5 GiB limit, 1.73 GiB under 1 GiB (the join-based default: 1.85 GiB under 1.5 GiB)
LABELS_RUN_CAP = 1 << 30


def available_memory() -> int | None:
    """Bytes of memory this process may use: RAM, or a smaller cgroup (container) limit."""
    sizes = []
    try:
        sizes.append(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        pass
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit():
            sizes.append(int(text))
    return min(sizes) if sizes else None


def default_memory_limit(cap: int = DEFAULT_CAP) -> str:
    """``memory_limit`` when none is given: see ``DEFAULT_FRACTION`` (e.g. ``'1536MiB'``), at most
    ``cap`` bytes (:data:`LABELS_RUN_CAP` for ``labels="run"``)."""
    total = available_memory()
    limit = cap if total is None else max(DEFAULT_FLOOR, min(cap, int(total * DEFAULT_FRACTION)))
    return f"{limit >> 20}MiB"


# One embedded DuckDB database per process and setting; each session is a connection to it (a
# cursor).  Opening a database costs ~30 ms (its catalog, buffer manager and threads), a cursor
# ~1 ms, and a cursor's registered frames and temporary views are its own.  Calls that run at the
# same time share their database's memory_limit, so the process stays under it as a whole.
_DATABASES: dict[tuple[int, str, str | None], duckdb.DuckDBPyConnection] = {}
_SPILL: dict[int, str] = {}  # the process's default spill folder, removed at exit
_LOCK = threading.Lock()


def _close_databases() -> None:
    pid = os.getpid()
    for key in [k for k in _DATABASES if k[0] == pid]:
        with contextlib.suppress(Exception):
            _DATABASES.pop(key).close()
    if pid in _SPILL:
        shutil.rmtree(_SPILL.pop(pid), ignore_errors=True)


atexit.register(_close_databases)


def database(memory_limit: str, temp_directory: str | None) -> tuple[duckdb.DuckDBPyConnection, str]:
    """This process's database for these settings, and the folder it spills to (``temp_directory``,
    or a fresh folder under the system's temporary directory, removed when the process exits).
    Keyed by process id too: a forked child must not use its parent's database."""
    pid = os.getpid()
    with _LOCK:
        if temp_directory is None and pid not in _SPILL:
            _SPILL[pid] = tempfile.mkdtemp(prefix="rank_polars-duckdb-")
        spill = temp_directory if temp_directory is not None else _SPILL[pid]
        key = (pid, memory_limit, temp_directory)
        if key not in _DATABASES:
            _DATABASES[key] = duckdb.connect(config={
                "preserve_insertion_order": False,  # lets large sorts and joins stream
                "memory_limit": memory_limit,
                "temp_directory": spill,
            })
        return _DATABASES[key], spill


def fetch(con: duckdb.DuckDBPyConnection, sql: str) -> pl.DataFrame:
    """``sql``'s rows as a Polars frame.  Run with ``execute``, not ``con.sql(sql).pl()``: DuckDB
    2's relation tokenises the text in Python and binds the statement once to learn its columns
    and again to run it, and these statements cost their planning (every metric at once: 0.89 ->
    0.65 CPU s).  Their result is a few rows per ranking, so the extra Arrow copy DuckDB warns
    about on this path costs little."""
    try:
        con.execute(sql)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "Arrow output on a DB-API result", UserWarning)
            return pl.DataFrame(pl.from_arrow(con.to_arrow_table()))
    except BaseException:
        con.abort()  # a result left pending would refuse the connection's next statement
        raise


class DuckDBEngine(SqlRunner):
    """Evaluate a plan in an embedded DuckDB connection (one per call), bounded in memory.

    ``memory_limit`` (default :func:`default_memory_limit`: half the memory, at most 1.5 GiB)
    and ``temp_directory`` (default: a fresh folder under the system's temporary directory,
    removed when the process exits) are DuckDB's settings: what does not fit spills there.
    """

    prove_positions = True  # see SqlRunner: cheaper in DuckDB than its semi-join
    fixed_sums = True  # HUGEINT: the same bits as the Polars engine's fixed point, no sort

    def __init__(self, memory_limit: str | None = None, temp_directory: str | None = None) -> None:
        self.memory_limit = memory_limit if memory_limit is not None else default_memory_limit()
        self.temp_directory = temp_directory
        self.con: duckdb.DuckDBPyConnection | None = None

    def connect(self) -> duckdb.DuckDBPyConnection:
        """A connection of its own to the process's database for these settings; sets ``_spill``."""
        db, self._spill = database(self.memory_limit, self.temp_directory)
        con = db.cursor()
        try:
            con.execute("SET enable_progress_bar = false")  # DuckDB's bar goes to stdout, into the user's output
        except duckdb.InvalidInputException:
            # inside Jupyter without ipywidgets DuckDB refuses to touch the setting (it draws no bar there)
            pass
        return con

    def query(self, sql: str) -> pl.DataFrame:
        assert self.con is not None
        try:
            return fetch(self.con, sql)
        except duckdb.InvalidInputException as e:
            # a measure family's check stops its statement with error('rank_polars: ...')
            if "rank_polars: " not in str(e):
                raise
            raise DataError(str(e).split("rank_polars: ", 1)[1].strip()) from None
        except duckdb.OutOfMemoryException as e:
            raise RankPolarsError(
                f"DuckDB ran out of memory under memory_limit={self.memory_limit!r} "
                f"(spilling to {self._spill!r}): pass a larger duckdb_memory_limit= (e.g. '8GB'), "
                "a duckdb_temp_directory= on a disk with more room, or use engine='polars' (streaming). "
                f"DuckDB said: {str(e).splitlines()[0]}"
            ) from None

    def register(self, name: str, frame: pl.DataFrame) -> str:
        assert self.con is not None
        # a name with NUL makes Polars panic in to_arrow; no argument can name such a column
        self.con.register(name, frame.select(c for c in frame.columns if "\x00" not in c).to_arrow())
        return quote(name)

    def relation(self, source: Any, name: str, what: str) -> str:
        scan = parquet_scan(source, what)
        if scan is not None:
            return scan
        if isinstance(source, pl.LazyFrame):
            if reads_files(source):
                # streamed to Parquet in the spill folder, then read as paths are: collecting
                # it held the whole log (200M rows: 13.55 GiB against 1.74 GiB from paths)
                return read_parquet(literal(stream_to_parquet(source, self._streams(), name, what)))
            source = source.collect()  # frames already in memory: handed over as Arrow
        if not isinstance(source, pl.DataFrame):
            raise RankPolarsError(f"{what}: the duckdb engine reads Polars frames or Parquet path(s), got {type(source).__name__}")
        return self.register(name, source)

    def source(self, inputs: Inputs, duplicates: str) -> Source:
        src = super().source(inputs, duplicates)
        if src.run_labels and not src.unlabelled:
            assert self.con is not None
            src.run = _bool_labels_as_numbers(self.con, src.run, src.relevance)
        return src

    @contextlib.contextmanager
    def session(self) -> Iterator[DuckDBEngine]:
        """An open connection for the duration (spilling to ``temp_directory``, or to the
        process's temporary folder); evaluate and diagnose run inside one."""
        with contextlib.ExitStack() as stack:
            self._stack, self._streamed = stack, None
            self.con = self.connect()
            stack.callback(self._close)
            yield self

    def evaluate(self, plan: Plan, inputs: Inputs, *, missing: Missing, duplicates: str,
                 families: Outputs = ()) -> pl.DataFrame:
        """One row per evaluated (group, query): the internal keys and one Float64 column per metric."""
        with self.session():
            return super().evaluate(plan, inputs, missing=missing, duplicates=duplicates, families=families)

    def _streams(self) -> str:
        """A folder for streamed inputs under the spill folder, removed with the session
        (also when ``temp_directory`` is the user's)."""
        if self._streamed is None:
            os.makedirs(self._spill, exist_ok=True)
            self._streamed = self._stack.enter_context(tempfile.TemporaryDirectory(prefix="rank_polars-inputs-", dir=self._spill))
        return self._streamed

    def _close(self) -> None:
        if self.con is not None:
            self.con.close()
            self.con = None


__all__ = ["LABELS_RUN_CAP", "DuckDBEngine", "available_memory", "default_memory_limit", "fetch", "parquet_scan", "read_parquet"]
