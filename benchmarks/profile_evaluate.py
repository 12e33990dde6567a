"""Where rank_polars.evaluate spends its time: each phase timed alone, plans explained.

    python benchmarks/profile_evaluate.py --data benchmarks/data/20M

Replays the phases of ``evaluate`` (it does not change the package): the validation pass
(per-ranking statistics, with and without the ``n_unique`` duplicate checks), the checks,
reading and checking the judgments, the universe of (version, query) pairs, and the metric
pass; for both engines, next to the floor (read + one grouped sum).  Writes the timings
and the plans (Polars ``explain()``; ``profile()`` was removed in Polars 2; DuckDB ``EXPLAIN ANALYZE``) to
``benchmarks/results/profile_<label>.txt`` and prints the timings.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import polars as pl

import rank_polars as rp
from rank_polars.engines.polars_engine import contributes_expr
from rank_polars.engines.polars_engine import per_query as polars_per_query
from rank_polars.evaluate import finish
from rank_polars.inputs import Columns, prepare
from rank_polars.measures import parse_all
from rank_polars.plan import ITEM, N_RET, RANK, build_plan
from rank_polars.validate import (
    check_qrels,
    check_run,
    contributing_stat_names,
    qrels_stats_polars,
    run_stats_polars,
    stat_names,
    universe,
)

HERE = Path(__file__).resolve().parent
METRICS = ["ndcg@10", "ap@100", "rr", "p@10", "r@100"]


class Timer:
    def __init__(self) -> None:
        self.rows: list[tuple[str, float]] = []

    def __call__(self, label: str, fn):
        t0 = time.perf_counter()
        out = fn()
        self.rows.append((label, time.perf_counter() - t0))
        print(f"{label:<60} {self.rows[-1][1]:8.2f} s", flush=True)
        return out


def profile_polars(run: str, qrels: str, t: Timer, report: list[str], streaming: bool) -> None:
    engine = "streaming" if streaming else "auto"
    tag = f"polars[{engine}]"
    t(f"{tag} evaluate() end to end", lambda: rp.evaluate(run, METRICS, qrels=qrels, by="model", missing="skip", streaming=streaming))
    t(f"{tag} floor: scan + group_by(model, query).sum(relevance)", lambda: pl.scan_parquet(run).group_by("model", "query").agg(
        pl.col("relevance").sum()).collect(engine=engine))
    plan = build_plan(parse_all(METRICS))
    inputs = prepare(run, qrels=qrels, by="model", columns=Columns())
    stats_lf = run_stats_polars(inputs, "error", plan)
    report += [f"== {tag} validation plan (run_stats_polars)", stats_lf.explain(engine=engine)]
    stats = t(f"{tag} validation pass over all rows (lengths; ranking checks run in the metric pass)", lambda: stats_lf.collect(engine=engine))
    keys = inputs.keys
    t(f"{tag}   variant: len only", lambda: inputs.run.group_by(keys).agg(pl.len()).collect(engine=engine))
    t(f"{tag}   variant: len + null/<1 checks, no n_unique", lambda: inputs.run.group_by(keys).agg(
        pl.len(), pl.col(RANK).null_count().alias("a"), (pl.col(RANK) < 1).sum().alias("b"),
        pl.col(ITEM).null_count().alias("c")).collect(engine=engine))
    t(f"{tag}   variant: len + n_unique(item)", lambda: inputs.run.group_by(keys).agg(
        pl.len(), pl.col(ITEM).n_unique()).collect(engine=engine))
    t(f"{tag}   variant: len + n_unique(position)", lambda: inputs.run.group_by(keys).agg(
        pl.len(), pl.col(RANK).n_unique()).collect(engine=engine))
    t(f"{tag} check_run on the statistics", lambda: check_run(stats, inputs))
    q = t(f"{tag} judgment statistics + check_qrels", lambda: (lambda df: (check_qrels(df, inputs), df)[1])(
        qrels_stats_polars(inputs, contributes_expr(plan)).collect(engine=engine)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        uni = t(f"{tag} universe (joins of statistics and judged queries)", lambda: universe(stats, inputs, q, "skip"))
    checks = contributing_stat_names(inputs, "error", plan)
    metric_lf = polars_per_query(plan, inputs, uni, checks)
    report += [f"== {tag} metric plan (per_query)", metric_lf.explain(engine=engine)]
    table = t(f"{tag} metric pass (per_query collect, with the item checks)", lambda: metric_lf.collect(engine=engine))
    t(f"{tag} finish (means)", lambda: finish(table, plan, inputs, False))


def profile_duckdb(run: str, qrels: str, t: Timer, report: list[str]) -> None:
    try:
        from rank_polars.engines.duckdb_engine import DuckDBEngine
        from rank_polars.engines.sql_engine import STATS_SQL
        from rank_polars.engines.sql_engine import Source, compile_expr, per_query_query, qrels_stats_sql, quote
    except ImportError as exc:  # the engine is still being written
        report.append(f"== duckdb: not available ({exc})")
        return
    import duckdb

    t("duckdb evaluate() end to end", lambda: rp.evaluate(run, METRICS, qrels=qrels, by="model", missing="skip", engine="duckdb"))
    con = duckdb.connect(config={"preserve_insertion_order": False})
    t("duckdb floor: read_parquet + GROUP BY ALL sum(relevance)", lambda: con.sql(
        f"SELECT model, query, sum(relevance) FROM read_parquet('{run}') GROUP BY ALL").to_arrow_table())
    plan = build_plan(parse_all(METRICS))
    inputs = prepare(run, qrels=qrels, by="model", columns=Columns())
    eng = DuckDBEngine()
    c = inputs.columns
    src = Source(run=eng._relation(con, run, "r", "run"), qrels=eng._relation(con, qrels, "q", "qrels"), by=["model"],
                 order=inputs.order, query=c.query, item=c.item, position=c.position, score=c.score,
                 relevance=c.relevance, dedupe=False)
    stats = t("duckdb validation pass over all rows (_stats)", lambda: eng._stats(con, plan, src, inputs, "error"))
    stats_sql = eng._with(plan, src, "SELECT 1")  # CTEs only, to explain the statistics query below
    keys = ", ".join(quote(k) for k in inputs.keys)
    no_distinct = stats_sql.replace("SELECT 1", f"SELECT {keys}, COUNT(*) FROM {quote('__rp_run')} GROUP BY {keys}")
    aggs = ", ".join(f"{STATS_SQL[n]} AS {n}" for n in stat_names(inputs, "error", plan))
    full_stats = stats_sql.replace("SELECT 1", f"SELECT {keys}, COUNT(*), {aggs} FROM {quote('__rp_run')} GROUP BY {keys}")
    t("duckdb   variant: COUNT(*) only", lambda: con.sql(no_distinct).to_arrow_table())
    qstats_sql = eng._with(plan, src, qrels_stats_sql(inputs.checks, compile_expr(plan.contributes)))
    qdf = t("duckdb judgment statistics + check_qrels", lambda: (lambda df: (check_qrels(df, inputs), df)[1])(
        con.sql(qstats_sql).pl()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        uni = universe(stats, inputs, qdf, "skip")
    con.register("__rp_universe_given", uni.to_arrow())
    q = per_query_query(plan, src, quote("__rp_universe_given"), checks=contributing_stat_names(inputs, "error", plan))
    sql = q.render(f"SELECT * FROM {quote('__rp_per_query')}")
    t("duckdb metric pass (per-query SQL)", lambda: con.sql(sql).to_arrow_table())
    for title, text in (("metric pass", sql), ("validation statistics", full_stats)):
        rows = con.sql("EXPLAIN ANALYZE " + text).fetchall()
        report += [f"== duckdb EXPLAIN ANALYZE: {title}", "\n".join(str(r[1]) for r in rows)]
    report += ["== duckdb metric SQL", sql]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--label")
    ap.add_argument("--engines", default="polars,polars-memory,duckdb")
    args = ap.parse_args()
    run, qrels = str(args.data / "run.parquet"), str(args.data / "qrels.parquet")
    warnings.simplefilter("ignore", rp.CoverageWarning)
    t, report = Timer(), []
    engines = args.engines.split(",")
    if "polars" in engines:
        profile_polars(run, qrels, t, report, streaming=True)
    if "polars-memory" in engines:
        profile_polars(run, qrels, t, report, streaming=False)
    if "duckdb" in engines:
        profile_duckdb(run, qrels, t, report)
    out = HERE / "results" / f"profile_{args.label or args.data.name}.txt"
    out.parent.mkdir(exist_ok=True)
    timings = "\n".join(f"{label:<60} {sec:8.2f} s" for label, sec in t.rows)
    out.write_text(f"data: {args.data}\n\n{timings}\n\n" + "\n\n".join(report) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
