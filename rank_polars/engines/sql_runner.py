"""The checked evaluation of a plan through the generated SQL, whatever database runs it.

Both SQL engines (DuckDB, Spark) run the same three statements of
:mod:`rank_polars.engines.sql_engine` and check their small results in Polars with
:mod:`rank_polars.validate`, so a bad input gives the same error in every engine:

1. the per-ranking statistics of the run (one row per ranking: its length and the counts
   ``validate.stat_names`` asks for), checked by ``validate.check_run``;
2. the per-query statistics of the judgments (one row per judged query), checked by
   ``validate.check_qrels``;
3. the metric pass over the contributing rows, against the universe of (group, query)
   pairs that ``validate.universe`` computed from 1 and 2 (handed back to the database),
   with the duplicate counts among contributing rows (``validate.check_contributing``).

An engine says how to run a DuckDB-dialect statement (:meth:`SqlRunner.query`), how to
hand it a Polars frame (:meth:`SqlRunner.register`) and where its sources are
(:meth:`SqlRunner.relation`); nothing else differs.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import replace
from typing import Any, Callable

import polars as pl

from rank_polars.errors import RankPolarsError

from rank_polars.inputs import Inputs, resolve
from rank_polars.plan import N_RET, Q, Plan
from rank_polars.progress import NoProgress, Progress
from rank_polars.validate import (
    DISTINCT,
    Missing,
    check_contributing,
    check_qrels,
    check_run,
    contributing_stat_names,
    repeat_checks,
    repeat_depth,
    stat_names,
    universe,
)
from rank_polars.engines.base import Engine, FamilySql, Outputs, attach, repeat_refusal, sql_family_values
from rank_polars.engines.sql_engine import (
    EXACT,
    POSITIONS_DISTINCT,
    QRELS,
    RUN,
    UNIVERSE,
    Query,
    Source,
    compile_expr,
    distinct_sql,
    metric_column,
    per_query_query,
    positions_distinct_sql,
    qrels_stats_sql,
    quote,
    ranked_cte,
    stat_sql,
)

PER_QUERY = "__rp_per_query"  # the last CTE of sql_engine.per_query_query
UNIVERSE_GIVEN = "__rp_universe_given"
FAMILY_RUN = "__rp_family_run"  # the ranked run, as the measure families read it
_ON_DRIVER = itertools.count()  # the driver's tables: one name each (a family's statements are built first, then run)


class SqlRunner(Engine):
    """The three statements of an evaluation, run by a subclass's database."""

    # whether statement 1 tries to prove each ranking's positions distinct (integer bit
    # aggregates, sql_engine.positions_distinct_sql), sparing the metric pass its semi-join
    # of every row against the contributing positions when every ranking is proven
    prove_positions = False
    # where the phases of an evaluation are reported (the Spark engine's; DuckDB's caller shows one
    # phase around the whole call)
    progress: Progress = NoProgress()
    # sums of fractions in fixed point (a 128-bit integer: DuckDB's HUGEINT), else in rank order
    fixed_sums = False

    def query(self, sql: str) -> pl.DataFrame:
        """Run ``sql`` (DuckDB dialect) and return its (small) result."""
        raise NotImplementedError

    def register(self, name: str, frame: pl.DataFrame) -> str:
        """Make ``frame`` readable as a table; return the table expression naming it."""
        raise NotImplementedError

    def relation(self, source: Any, name: str, what: str) -> str:
        """A table expression reading ``source`` (the run or the judgments)."""
        raise NotImplementedError

    def auxiliary(self, source: Any, name: str, what: str) -> str:
        """A table expression over a table a measure family's spec carries (any source
        ``evaluate`` accepts)."""
        return self.relation(resolve(source, what), name, what)

    def source(self, inputs: Inputs, duplicates: str) -> Source:
        c = inputs.columns
        return Source(
            run=self.relation(inputs.run_source, "__rp_run_source", "run"),
            qrels=None if inputs.qrels_source is None else self.relation(inputs.qrels_source, "__rp_qrels_source", "qrels"),
            by=list(inputs.by), order=inputs.order, query=c.query, item=c.item, position=c.position,
            score=c.score, relevance=c.relevance, dedupe=duplicates == "first", labels=inputs.labels,
            unlabelled=inputs.unlabelled, click=c.click,
            # the same bits every run, whatever the threads or partitions: sums in fixed point
            # where the database has a 128-bit integer, else in rank order (Spark's
            # translation: dialects._ordered_sum)
            ordered=not self.fixed_sums, fixed=self.fixed_sums,
        )

    def checked_pass(self, plan: Plan, inputs: Inputs, *, missing: Missing, duplicates: str) -> tuple[Query, list[str]]:
        """Statements 1 and 2, checked; the metric pass (3) to run and the checks it counts."""
        q, checks, _ = self.checked_universe(plan, inputs, missing=missing, duplicates=duplicates)
        return q, checks

    def checked_universe(self, plan: Plan, inputs: Inputs, *, missing: Missing,
                         duplicates: str) -> tuple[Query, list[str], pl.DataFrame]:
        """:meth:`checked_pass`, and the universe it handed to the database (keys and ``N_RET``)."""
        src = self.source(inputs, duplicates)
        with self.progress.phase("checking the run" + (" and judgments" if src.qrels is not None else "")):
            stats = self.run_stats(plan, src, inputs, duplicates)
            check_run(stats, inputs)
            judged = None
            if src.qrels is not None:
                judged = self.qrels_stats(plan, src, inputs)
                check_qrels(judged, inputs)
        uni = universe(stats, inputs, judged, missing)
        table = self.register(UNIVERSE_GIVEN, uni.with_columns(pl.col(N_RET).cast(pl.Int64)))
        checks = contributing_stat_names(inputs, duplicates, plan)
        proven = ["rank_dup"] if POSITIONS_DISTINCT in stats.columns and stats[POSITIONS_DISTINCT].min() == 1 else []
        self._src, self._universe, self._proven = src, table, proven  # the metric pass again, in rank order
        return per_query_query(plan, src, table, checks=checks, proven=proven), checks, uni

    def evaluate(self, plan: Plan, inputs: Inputs, *, missing: Missing, duplicates: str,
                 families: Outputs = ()) -> pl.DataFrame:
        """One row per evaluated (group, query): the internal keys and one Float64 column per
        metric (the plan's, then the families' of :mod:`rank_polars.engines.base`)."""
        q, checks, uni = self.checked_universe(plan, inputs, missing=missing, duplicates=duplicates)
        with self.progress.phase(f"metric pass and fetching ({len(plan.outputs)} metrics)"):
            table = self.query(q.render(f"SELECT * FROM {quote(PER_QUERY)}"))
            if EXACT in table.columns and not table[EXACT].all():
                # a fixed-point sum beyond its bound (grades of 2^40 and more): every sum in
                # rank order instead, the same bits every run too
                q = per_query_query(plan, replace(self._src, fixed=False, ordered=True), self._universe,
                                    checks=checks, proven=self._proven)
                table = self.query(q.render(f"SELECT * FROM {quote(PER_QUERY)}"))
            table = check_contributing(table.drop(EXACT, strict=False), inputs, checks)
        table = labelled(table, plan)
        if not families:
            return table
        # the families read the metric pass's CTEs (run, judgments, universe) and the ranked run
        ranked = ranked_cte(Source(run="", qrels=None, by=list(inputs.by), order=inputs.order))
        ctes = Query([*q.ctes, (FAMILY_RUN, ranked)])
        tables = FamilySql(run=quote(FAMILY_RUN), qrels=quote(QRELS) if inputs.qrels is not None else None,
                           universe=quote(UNIVERSE), keys=inputs.keys, columns=inputs.columns,
                           relation=self.auxiliary, query=self.query,
                           on_driver=self.on_driver, ordered=True, universe_frame=uni,
                           repeats=repeat_refusal(inputs, duplicates, plan), repeat_depth=plan.check_depth,
                           checks=inputs.checks,
                           text_ids=tuple(c for c, t in inputs.ids.items() if t == pl.String))
        with self.progress.phase(f"measure families ({len(families)} metrics)"):
            return attach(table, sql_family_values(families, tables, ctes.render), inputs.keys, uni)

    def on_driver(self, select: str, compute: Callable[[pl.DataFrame], pl.DataFrame]) -> str:
        """A registered table of ``compute`` over the rows ``select`` gives: the rows come to the
        driver, ``compute`` runs there in Polars, and the result goes back to the database to be
        joined.  A measure family's step that SQL writes badly runs so (the diversity family's
        greedy ideal: Spark's ``WITH RECURSIVE`` refuses the window or aggregate each step needs;
        in DuckDB the recursive CTE, ``to_sql``'s form, took 2.3 s of a 4.4 s statement at 10M
        run rows, where the whole call took 14.6-15.5 -> 12.8-13.0 s at 20M rows this way)."""
        return self.register(f"__rp_on_driver_{next(_ON_DRIVER)}", compute(self.query(select)))

    def qrels_stats(self, plan: Plan, src: Source, inputs: Inputs) -> pl.DataFrame:
        """Statement 2, unchecked: one row per judged query (computed in the database: the
        judgments never leave it)."""
        qstats = qrels_stats_sql(inputs.checks, compile_expr(plan.contributes))
        return self.query(with_inputs(plan, src, qstats))

    def run_stats(self, plan: Plan, src: Source, inputs: Inputs, duplicates: str) -> pl.DataFrame:
        """Statement 1, unchecked: one row per ranking, its length and the counts of
        ``validate.stat_names`` (``rank_polars.diagnose`` reports them all as findings)."""
        keys = ", ".join(quote(k) for k in inputs.keys)
        aggs = [f"COUNT(*) AS {quote(N_RET)}"]
        depth = repeat_depth(inputs, plan)
        names = stat_names(inputs, duplicates, plan)
        # the distinct counts over every row: statements of their own (distinct_sql), which spill
        distinct = [n for n in names if n in DISTINCT]
        aggs += [f"CAST({stat_sql(n, depth)} AS BIGINT) AS {quote(n)}" for n in names if n not in distinct]
        if self.prove_positions and ("rank_dup" in distinct or "rank_dup" in repeat_checks(
                src.run_labels, contributing_stat_names(inputs, duplicates, plan))):
            aggs.append(f"{positions_distinct_sql()} AS {quote(POSITIONS_DISTINCT)}")
        final = f"SELECT {keys}, {', '.join(aggs)} FROM {quote(RUN)} GROUP BY {keys}"
        stats = self.query(with_inputs(plan, src, final)).with_columns(pl.col(N_RET).cast(pl.UInt32))
        proven = POSITIONS_DISTINCT in stats.columns and stats[POSITIONS_DISTINCT].min() == 1
        for name in distinct:
            if name == "rank_dup" and proven:
                # every ranking's positions proven distinct in statement 1: no repeat to count
                # (a GROUP BY over every row saved: 1.7 s of alpha_ndcg@20's 16 s at 20M rows)
                stats = stats.with_columns(pl.lit(0, pl.Int64).alias(name))
                continue
            found = self.query(with_inputs(plan, src, distinct_sql(name, inputs.keys, quote(RUN), depth)))
            stats = (stats.join(found.with_columns(pl.col(name).cast(pl.Int64)), on=inputs.keys, how="left", nulls_equal=True)
                     .with_columns(pl.col(name).fill_null(0)))
        return stats


def reads_files(frame: pl.LazyFrame) -> bool:
    """Whether ``frame`` reads anything but frames already in memory (a scan of files, a
    source Polars cannot show): only a plan over in-memory frames alone is cheap to collect."""
    try:
        plan = frame.explain(optimized=False)
    except Exception:  # a plan Polars cannot show is read as the bounded way
        return True
    return "SCAN" in plan or "DF [" not in plan


def stream_to_parquet(frame: pl.LazyFrame, folder: str, name: str, what: str) -> str:
    """``frame`` written by Polars' streaming engine to ``folder/name.parquet`` (bounded
    memory, whatever its size); the file's path."""
    path = os.path.join(folder, f"{name}.parquet")
    try:
        frame.sink_parquet(path, compression="lz4", engine="streaming")
    except pl.exceptions.PolarsError as e:
        raise RankPolarsError(f"{what}: the LazyFrame could not be read: {str(e).splitlines()[0]}") from None
    return path


def with_inputs(plan: Plan, src: Source, final: str) -> str:
    """``final`` over the run/qrels CTEs alone (the metric CTEs are not needed)."""
    q = per_query_query(plan, src, quote("__rp_unused"))
    wanted = {"__rp_raw", RUN, QRELS}
    return Query([(n, body) for n, body in q.ctes if n in wanted]).render(final)


def labelled(table: pl.DataFrame, plan: Plan) -> pl.DataFrame:
    """The metric columns under their labels (``ndcg@10``), as Float64."""
    names = {metric_column(i): label for i, (label, _) in enumerate(plan.outputs)}
    return table.rename(names).with_columns(pl.col(label).cast(pl.Float64) for label in names.values())


__all__ = ["PER_QUERY", "SqlRunner", "labelled", "reads_files", "stream_to_parquet", "with_inputs"]
