"""The DuckDB engine: the generated SQL of :mod:`rank_polars.engines.sql_engine`, embedded.

Parquet paths, globs and hive-partitioned folders are read by DuckDB's ``read_parquet``
directly (never through Python objects), so logs larger than memory work: DuckDB spills
to ``temp_directory`` under ``memory_limit``.  Polars frames are handed over as Arrow.

The run is read twice: once for the per-ranking statistics that :mod:`rank_polars.validate`
checks (the same columns as ``run_stats_polars``, so errors read the same whichever engine
found them) and once for the metrics (which also counts duplicates among the contributing
rows, see ``validate.ranking_check_scope``), and the judgments are checked in SQL (``qrels_stats_sql``).
"""

from __future__ import annotations

import re
from typing import Any

import duckdb
import polars as pl

from ..errors import RankPolarsError
from ..inputs import Inputs
from ..io import ParquetFiles
from ..plan import GRADE, ITEM, N_RET, Q, RANK, SCORE, Plan
from ..validate import Missing, check_contributing, check_qrels, check_run, contributing_stat_names, stat_names, universe
from .sql_engine import (
    QRELS,
    RUN,
    STATS_SQL,
    Query,
    Source,
    compile_expr,
    literal,
    metric_column,
    per_query_query,
    qrels_stats_sql,
    quote,
)

def parquet_scan(source: Any, what: str) -> str | None:
    """``read_parquet([...])`` over the checked files of a Parquet source, else None.

    The files are listed one by one, glob characters escaped (``run[a].parquet`` and a
    folder named with a backslash are read as written); partition values are text, as in
    the Polars engine.
    """
    if not isinstance(source, ParquetFiles):
        return None
    files = "[" + ", ".join(literal(re.sub(r"([\[*?])", r"[\1]", f)) for f in source.files) + "]"
    hive = "true, hive_types_autocast = false" if source.hive else "false"
    scan = f"read_parquet({files}, hive_partitioning = {hive})"
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


class DuckDBEngine:
    """Evaluate a plan in an embedded DuckDB connection (one per call)."""

    def __init__(self, memory_limit: str | None = None, temp_directory: str | None = None) -> None:
        self.memory_limit = memory_limit
        self.temp_directory = temp_directory

    def connect(self) -> duckdb.DuckDBPyConnection:
        config: dict[str, Any] = {"preserve_insertion_order": False}  # lets large sorts and joins stream
        if self.memory_limit is not None:
            config["memory_limit"] = self.memory_limit
        if self.temp_directory is not None:
            config["temp_directory"] = str(self.temp_directory)
        return duckdb.connect(config=config)

    def _relation(self, con: duckdb.DuckDBPyConnection, source: Any, name: str, what: str) -> str:
        scan = parquet_scan(source, what)
        if scan is not None:
            return scan
        if isinstance(source, pl.LazyFrame):
            source = source.collect()
        if not isinstance(source, pl.DataFrame):
            raise RankPolarsError(f"{what}: the duckdb engine reads Polars frames or Parquet path(s), got {type(source).__name__}")
        con.register(name, source.to_arrow())
        return quote(name)

    def evaluate(self, plan: Plan, inputs: Inputs, *, missing: Missing, duplicates: str) -> pl.DataFrame:
        """One row per evaluated (group, query): the internal keys and one Float64 column per metric."""
        con = self.connect()
        try:
            c = inputs.columns
            run = self._relation(con, inputs.run_source, "__rp_run_source", "run")
            if inputs.run_labels:
                run = _bool_labels_as_numbers(con, run, c.relevance)
            src = Source(
                run=run,
                qrels=None if inputs.qrels_source is None else self._relation(con, inputs.qrels_source, "__rp_qrels_source", "qrels"),
                by=list(inputs.by), order=inputs.order, query=c.query, item=c.item, position=c.position,
                score=c.score, relevance=c.relevance, dedupe=duplicates == "first", labels=inputs.labels,
            )
            stats = self._stats(con, plan, src, inputs, duplicates)
            check_run(stats, inputs)
            judged = None
            if src.qrels is not None:
                # checked in SQL: the judgments never leave DuckDB (nor its memory limit)
                qstats = qrels_stats_sql(inputs.checks, compile_expr(plan.contributes))
                judged = con.sql(self._with(plan, src, qstats)).pl()
                check_qrels(judged, inputs)
            uni = universe(stats, inputs, judged, missing)
            con.register("__rp_universe_given", uni.to_arrow())
            checks = contributing_stat_names(inputs, duplicates, plan)
            q = per_query_query(plan, src, quote("__rp_universe_given"), checks=checks)
            table = con.sql(q.render(f"SELECT * FROM {quote('__rp_per_query')}")).pl()
        finally:
            con.close()
        table = check_contributing(table, inputs, checks)
        names = {metric_column(i): label for i, (label, _) in enumerate(plan.outputs)}
        return table.rename(names).with_columns(pl.col(label).cast(pl.Float64) for label in names.values())

    @staticmethod
    def _with(plan: Plan, src: Source, final: str) -> str:
        """``final`` over the run/qrels CTEs alone (the metric CTEs are not needed)."""
        q = per_query_query(plan, src, quote("__rp_unused"))
        wanted = {"__rp_raw", RUN, QRELS}
        return Query([(n, body) for n, body in q.ctes if n in wanted]).render(final)

    def _stats(self, con: duckdb.DuckDBPyConnection, plan: Plan, src: Source, inputs: Inputs, duplicates: str) -> pl.DataFrame:
        keys = ", ".join(quote(k) for k in inputs.keys)
        aggs = [f"COUNT(*) AS {quote(N_RET)}"]
        aggs += [f"CAST({STATS_SQL[n]} AS BIGINT) AS {quote(n)}" for n in stat_names(inputs, duplicates, plan)]
        final = f"SELECT {keys}, {', '.join(aggs)} FROM {quote(RUN)} GROUP BY {keys}"
        return con.sql(self._with(plan, src, final)).pl().with_columns(pl.col(N_RET).cast(pl.UInt32))


__all__ = ["DuckDBEngine", "parquet_scan"]
