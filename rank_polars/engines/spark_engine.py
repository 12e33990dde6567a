"""The Spark engine: the DuckDB engine's SQL, translated by sqlglot, run by a ``SparkSession``.

The same three statements as every SQL engine (:mod:`rank_polars.engines.sql_runner`):
the per-ranking statistics of the run and the per-query statistics of the judgments come
back to the driver as small Polars frames (via Arrow) and are checked by
:mod:`rank_polars.validate` exactly as in the other engines; the universe of (group,
query) pairs goes back to Spark; the metric pass runs in Spark.  Its per-query result
comes back as Polars, or stays in Spark (``per_query="spark"``, :meth:`SparkEngine.keep`).

Sources: a Spark ``DataFrame``, the name of a table or view of the session's catalog,
Parquet path(s) (read by Spark: files, globs, hive-partitioned folders, with partition
values as text as in the other engines), or anything the other engines read (a Polars or
pandas frame, a TREC or CSV file, a dict), handed to Spark as Arrow.  Column checks
(names, types) run on the Spark schema with the other engines' code and messages.

Plans: the log is read by two scans; the only joins over every row of the log (the
judgments joined to the shown rows, the semi-join of the repeat checks) carry a
``SHUFFLE_HASH`` hint on the smaller side, so Spark never sorts the log for a sort-merge
join; windows run over the contributing rows and the judgments only (under position
order; ranking by score is a window over every row, in every engine).
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import re
import shutil
import sys
import tempfile
import uuid
import warnings
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import polars as pl
from sqlglot import exp

from rank_polars import io as rio
from rank_polars.errors import DataError, RankPolarsError
from rank_polars.inputs import Columns, Inputs, prepare, resolve
from rank_polars.plan import Plan, Q, by_name
from rank_polars.progress import NoProgress, Progress
from rank_polars.validate import Missing, check_contributing, check_values, check_column
from rank_polars.engines.base import Outputs
from rank_polars.engines.dialects import transpile
from rank_polars.engines.sql_engine import metric_column, quote
from rank_polars.engines.sql_runner import PER_QUERY, SqlRunner, labelled, reads_files, stream_to_parquet

if TYPE_CHECKING:  # pyspark is an optional extra: rank-polars[spark]
    from pyspark.sql import DataFrame, SparkSession

_COUNTER = itertools.count()


# Where the JVM of a session started here writes its console (log4j lines, the JVM's own
# warnings, stage bars): a file, not the user's terminal (see quiet_jvm).
JVM_LOG = os.path.join(tempfile.gettempdir(), f"rank_polars-spark-{os.getpid()}.log")

# Settings of a session started here: no console progress bars (ours are shown instead,
# with progress=True) and no web UI (a server the user did not ask for, ~1 s of start-up).
QUIET_CONF = {"spark.ui.showConsoleProgress": "false", "spark.ui.enabled": "false"}


def _jvm_running() -> bool:
    try:
        from pyspark import SparkContext
    except ImportError:  # session() says what to install
        return False
    return SparkContext._active_spark_context is not None


def session(spark: SparkSession | None = None) -> SparkSession:
    """``spark``, else the active ``SparkSession``, else one over the running JVM, else a new
    one, started quietly (:func:`quiet_jvm`, :data:`QUIET_CONF`) and reused by later calls."""
    try:
        from pyspark.sql import SparkSession
    except ImportError as e:
        raise RankPolarsError(f"engine='spark' needs pyspark: pip install 'rank-polars[spark]' ({e})") from None
    if spark is not None:
        if not isinstance(spark, SparkSession):
            raise RankPolarsError(f"spark= must be a pyspark.sql.SparkSession, got {type(spark).__name__}")
        return spark
    from pyspark import SparkContext

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    if SparkContext._active_spark_context is not None:  # a JVM already runs (the user's, or ours): reused
        return SparkSession.builder.getOrCreate()
    builder = SparkSession.builder
    for key, value in QUIET_CONF.items():
        builder = builder.config(key, value)
    with quiet_jvm():
        started = builder.getOrCreate()
    started.sparkContext.setLogLevel("ERROR")
    return started


@contextlib.contextmanager
def quiet_jvm() -> Iterator[None]:
    """Start a JVM with its stderr in :data:`JVM_LOG` (file descriptor 2 is the log file while
    the JVM is launched: the child keeps it), and PySpark's pandas-version warning ignored.

    A JVM started with the console prints log4j's profile notice, host-name and native
    library warnings, and ``[Stage N:>`` bars for its whole life; rank-polars' own errors
    carry what the user needs, and the log is there for the rest.
    """
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(JVM_LOG, "ab") as log:
            os.dup2(log.fileno(), 2)
        yield
    except Exception as e:
        os.dup2(saved, 2)
        raise RankPolarsError(f"engine='spark': Spark could not start ({type(e).__name__}: {e}); "
                              f"its log is {JVM_LOG}") from None
    finally:
        os.dup2(saved, 2)
        os.close(saved)


@contextlib.contextmanager
def no_pandas_warning() -> Iterator[None]:
    """PySpark warns about pandas >= 3 on each Arrow transfer; rank-polars uses no pandas there."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
        yield


# --- translation ------------------------------------------------------------------------

def _hint_log_joins(tree: exp.Expression) -> exp.Expression:
    """``SHUFFLE_HASH`` on the right side of each join the log takes part in.

    The log is the ranked run (a subquery aliased ``r``): joined to the judgments
    (``__rp_labelled``) and semi-joined to the contributing rows (the repeat checks).  A
    sort-merge join, Spark's default above the broadcast threshold, would sort every row
    of the log; a shuffled hash join builds on the smaller side and streams the log.
    """
    for select in tree.find_all(exp.Select):
        source = select.args.get("from_") or select.args.get("from")
        if source is None or source.this.alias_or_name != "r" or not isinstance(source.this, exp.Subquery):
            continue
        sides = [j.this.alias_or_name for j in select.args.get("joins") or [] if j.this.alias_or_name]
        if sides:
            select.set("hint", exp.Hint(expressions=[
                exp.Anonymous(this="SHUFFLE_HASH", expressions=[exp.to_identifier(s) for s in sides])]))
    return tree


def to_spark_sql(sql: str) -> str:
    """The generated DuckDB ``sql`` as Spark SQL (checked by :func:`dialects.transpile`)."""
    return transpile(sql, "spark", engine_rewrite=_hint_log_joins)


# --- sources -----------------------------------------------------------------------------

def _is_spark_frame(source: Any) -> bool:
    return type(source).__module__.startswith("pyspark.") and hasattr(source, "schema") and hasattr(source, "toArrow")


def _parquet(spark: SparkSession, files: rio.ParquetFiles) -> DataFrame:
    """Spark's reader over checked files; hive partition values as text (as the other engines)."""
    reader = spark.read
    if files.hive:
        first = files.files[0]
        parts = first.split(os.sep)
        root = os.sep.join(parts[: next(i for i, p in enumerate(parts) if "=" in p)]) or os.sep
        reader = reader.option("basePath", root)
    key = "spark.sql.sources.partitionColumnTypeInference.enabled"
    before = spark.conf.get(key, "true")
    spark.conf.set(key, "false")
    try:
        frame = reader.parquet(*files.files)
    finally:
        spark.conf.set(key, before)
    if files.schema is not None:  # files that differ in integer or float width: widened
        from pyspark.sql import functions as F

        types = {pl.Int64: "bigint", pl.Float64: "double"}
        frame = frame.select(*(F.col(c).cast(types[type(t)]).alias(c) if type(t) in types else F.col(c)
                               for c, t in files.schema), *(F.col(k) for k in files.hive if k not in dict(files.schema)))
    if files.renames:  # the judgments' own names read as the log's (inputs.judgments_as_log)
        frame = frame.drop(*files.drops).withColumnsRenamed(dict(files.renames))
    return frame


def spark_frame(spark: SparkSession, source: Any, what: str) -> DataFrame:
    """A Spark DataFrame over ``source``: a Spark frame, a catalog table name, Parquet path(s),
    or any source the other engines read (handed over as Arrow)."""
    if _is_spark_frame(source):
        return source
    if isinstance(source, str) and not os.path.exists(source) and not rio.is_glob(source):
        try:
            exists = spark.catalog.tableExists(source)
        except Exception:  # a name Spark cannot parse is a path, named as such below
            exists = False
        if exists:
            return spark.table(source)
    resolved = resolve(source, what, {"position": pl.Int64(), "score": pl.Float64(), "relevance": pl.Float64()})
    if isinstance(resolved, rio.ParquetFiles):
        return _parquet(spark, resolved)
    if reads_files(resolved):  # streamed to Parquet by Polars (bounded), read by Spark
        return spark.read.parquet(stream_to_parquet(resolved, _streams(), f"{what}-{uuid.uuid4().hex[:8]}", what))
    with no_pandas_warning():
        return spark.createDataFrame(resolved.collect().to_arrow(compat_level=pl.CompatLevel.oldest()))


_STREAMS: list[str] = []


def _streams() -> str:
    """The folder of this process's streamed inputs (Spark reads them lazily, also from a
    ``per_query="spark"`` frame after the call): removed when the process exits."""
    if not _STREAMS:
        _STREAMS.append(tempfile.mkdtemp(prefix="rank_polars-spark-inputs-"))
        atexit.register(shutil.rmtree, _STREAMS[0], True)
    return _STREAMS[0]


def schema_frame(frame: DataFrame) -> pl.LazyFrame:
    """An empty Polars frame with the Spark frame's columns and types (for the schema checks)."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    return pl.DataFrame(pl.from_arrow(pa.Table.from_batches([], schema=to_arrow_schema(frame.schema)))).lazy()


def _cast(frame: DataFrame, casts: dict[str, pl.DataType]) -> DataFrame:
    from pyspark.sql import functions as F

    for c, t in casts.items():
        frame = frame.withColumn(c, F.col(c).cast("string" if t == pl.String else "bigint"))
    return frame


def judged_rows(run: DataFrame, qrels: DataFrame | None, columns: Columns, by: Sequence[str],
                order: str) -> tuple[DataFrame, pl.LazyFrame]:
    """:func:`rank_polars.inputs.judged_rows` in Spark: the run's judged rows (a judgment
    ``>= 0``; without judgments, a label ``>= 0``), positions numbered anew by ``rank`` (a
    repeated position stays repeated, a null one null, for the checks to refuse), rows with a
    null id kept for the checks to name; and the keys of the rankings left without a row
    (internal names), fetched: one row per such ranking, which the universe scores at length 0."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    def col(name: str) -> Any:  # a column by its name as it is (dots, backticks and all)
        return F.col("`" + name.replace("`", "``") + "`")

    keys = [*by, columns.query]
    if qrels is None:
        kept = run.filter(col(columns.relevance).isNull() | (col(columns.relevance) >= 0))
    else:
        pairs = (qrels.filter(col(columns.relevance) >= 0)
                 .select(col(columns.query).alias("__rp_jq"), col(columns.item).alias("__rp_ji")).distinct())
        judged = (col(columns.query) == F.col("__rp_jq")) & (col(columns.item) == F.col("__rp_ji"))
        ids_null = col(columns.query).isNull() | col(columns.item).isNull()
        kept = (run.join(pairs, on=judged, how="left").filter(F.col("__rp_jq").isNotNull() | ids_null)
                .drop("__rp_jq", "__rp_ji"))
    if order == "position":
        position = col(columns.position)
        numbered = F.rank().over(Window.partitionBy(*map(col, keys)).orderBy(position.asc_nulls_last()))
        kept = kept.withColumn(columns.position, F.when(position.isNull(), None).otherwise(numbered).cast("bigint"))
    internal = [*map(by_name, range(len(by))), Q]
    shown = run.select(*(col(k).alias(n) for k, n in zip(keys, internal))).distinct()
    left = kept.select(*(col(k).alias(f"__rp_kept{i}") for i, k in enumerate(keys))).distinct()
    same = [F.col(n).eqNullSafe(F.col(f"__rp_kept{i}")) for i, n in enumerate(internal)]
    emptied = shown.join(left, on=same, how="left_anti")
    with no_pandas_warning():
        return kept, pl.DataFrame(pl.from_arrow(emptied.toArrow())).lazy()


# --- the engine ---------------------------------------------------------------------------

class SparkEngine(SqlRunner):
    """Evaluate a plan with a ``SparkSession`` (given, active, or new)."""

    def __init__(self, spark: SparkSession | None = None, progress: Progress | None = None) -> None:
        self.progress = progress if progress is not None else NoProgress()
        # a JVM to start is the first wait a user meets: a phase of its own
        starting = spark is None and not _jvm_running()
        with self.progress.phase("starting Spark") if starting else contextlib.nullcontext():
            self.spark = session(spark)
        self.call = f"__rp_{uuid.uuid4().hex[:8]}_{next(_COUNTER)}"
        self.views: list[str] = []

    def prepare(self, run: Any, *, qrels: Any, by: str | Sequence[str] | None, columns: Columns, labels: str,
                order: str, needs_labels: bool = True, auxiliary: Sequence[tuple[str, Any]] = (),
                reads_labels: bool = True, labelled_metric: str | None = None,
                click_metric: str | None = None, judged_only: bool = False) -> Inputs:
        """:func:`rank_polars.inputs.prepare` on the Spark schemas (the same checks and
        messages); the Spark frames, ids cast alike on both sides (and as a family's tables
        need), kept as the sources.  ``judged_only``: the unjudged rows removed in Spark
        (:func:`judged_rows`), as the other engines remove them in Polars."""
        with self.progress.phase("reading the run" + (" and judgments" if qrels is not None else "") + " into Spark"):
            run_frame = spark_frame(self.spark, run, "run")
            qrels_frame = None if qrels is None else spark_frame(self.spark, qrels, "qrels")
        run_schema = schema_frame(run_frame)
        qrels_schema = None if qrels_frame is None else schema_frame(qrels_frame)
        from pyspark.sql import DataFrame as SparkFrame

        # a family's tables by their schema: a Spark frame's or a catalog table's (read lazily),
        # else the source itself (prepare scans it)
        def schema_of(what: str, t: Any) -> Any:
            in_spark = isinstance(t, SparkFrame) or (isinstance(t, str) and not os.path.exists(t) and not rio.is_glob(t))
            return schema_frame(spark_frame(self.spark, t, what)) if in_spark else t

        tables = [(what, schema_of(what, t)) for what, t in auxiliary]
        inputs = prepare(run_schema, qrels=qrels_schema, by=by, columns=columns, labels=labels, order=order,
                         needs_labels=needs_labels, auxiliary=tables, reads_labels=reads_labels,
                         labelled_metric=labelled_metric, click_metric=click_metric)

        def casts(frame: pl.LazyFrame) -> dict[str, pl.DataType]:
            schema = frame.collect_schema()
            return {c: t for c, t in inputs.ids.items() if c in schema and schema[c] != t}

        run_frame = _cast(run_frame, casts(run_schema))
        if qrels_frame is not None and qrels_schema is not None:
            qrels_frame = _cast(qrels_frame, casts(qrels_schema))
        if judged_only and not inputs.unlabelled:
            run_frame, inputs.emptied = judged_rows(run_frame, qrels_frame, columns, inputs.by, inputs.order)
        inputs.run_source, inputs.qrels_source = run_frame, qrels_frame
        return inputs

    def query(self, sql: str) -> pl.DataFrame:
        with no_pandas_warning():
            try:
                return pl.DataFrame(pl.from_arrow(self.spark.sql(to_spark_sql(sql)).toArrow()))
            except Exception as e:
                # a measure family's check stops its statement with raise_error('rank_polars: ...'):
                # the same DataError and message as in DuckDB
                message = str(e)
                if "rank_polars: " not in message or "USER_RAISED_EXCEPTION" not in message:
                    raise
                text = message.split("rank_polars: ", 1)[1].splitlines()[0]
                raise DataError(re.sub(r"\s*SQLSTATE: \w+\s*$", "", text).strip()) from None

    def register(self, name: str, frame: pl.DataFrame) -> str:
        as_arrow = frame.with_columns(pl.col(pl.UInt32, pl.UInt16, pl.UInt8).cast(pl.Int64)).to_arrow(
            compat_level=pl.CompatLevel.oldest())
        with no_pandas_warning():
            return self._view(name, self.spark.createDataFrame(as_arrow))

    def relation(self, source: Any, name: str, what: str) -> str:
        return self._view(name, source)

    def auxiliary(self, source: Any, name: str, what: str) -> str:
        return self._view(name, spark_frame(self.spark, source, what))

    def _view(self, name: str, frame: DataFrame) -> str:
        view = f"{self.call}{name}"
        frame.createOrReplaceTempView(view)
        self.views.append(view)
        return quote(view)

    def close(self) -> None:
        for view in self.views:
            self.spark.catalog.dropTempView(view)
        self.views.clear()

    def evaluate(self, plan: Plan, inputs: Inputs, *, missing: Missing, duplicates: str,
                 families: Outputs = ()) -> pl.DataFrame:
        try:
            return super().evaluate(plan, inputs, missing=missing, duplicates=duplicates, families=families)
        finally:
            self.close()

    def keep(self, plan: Plan, inputs: Inputs, *, missing: Missing, duplicates: str) -> DataFrame:
        """The per-query values as a Spark DataFrame (``per_query="spark"``), checked.

        Columns: the ``by`` columns, the query column and one double column per metric,
        under the user's names, in no particular order.  The checks run first: the
        statistics passes, then one Spark job that collects only the queries a check or a
        non-finite value refuses (none, on good data).  The frame is the plan, not its
        result: every action on it runs the metric pass again (``.cache()`` it to reuse).
        """
        try:
            q, checks = self.checked_pass(plan, inputs, missing=missing, duplicates=duplicates)
            frame = self.spark.sql(to_spark_sql(q.render(f"SELECT * FROM {quote(PER_QUERY)}")))
            self._refuse(frame, plan, inputs, checks)
        finally:
            self.close()
        user = [f"`{k.replace('`', '``')}` AS `{n.replace('`', '``')}`"
                for k, n in zip(inputs.keys, [*inputs.by, inputs.columns.query])]
        user += [f"`{metric_column(i)}` AS `{label.replace('`', '``')}`" for i, (label, _) in enumerate(plan.outputs)]
        return frame.selectExpr(*user)

    def _refuse(self, frame: DataFrame, plan: Plan, inputs: Inputs, checks: list[str]) -> None:
        """Raise as the other engines would, from the rows a check or a value refuses."""
        bad = [f"{quote(check_column(c))} > 0" for c in checks]
        for i in range(len(plan.outputs)):
            m = quote(metric_column(i))
            bad.append(f"({m} IS NULL OR isnan({m}) OR isinf({m}))")
        view = f"{self.call}__rp_result"
        frame.createOrReplaceTempView(view)
        self.views.append(view)
        refused = self.query(f"SELECT * FROM {quote(view)} WHERE {' OR '.join(bad)}")
        table = labelled(check_contributing(refused, inputs, checks), plan)
        check_values(table, plan, inputs)


__all__ = ["SparkEngine", "judged_rows", "schema_frame", "session", "spark_frame", "to_spark_sql"]
