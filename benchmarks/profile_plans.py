"""The engines' plans beside the hand-written ones: each DuckDB statement with its
``EXPLAIN ANALYZE`` profile (flattened: one line per operator, rows and seconds), and the
Polars engine's streaming plan.

    python benchmarks/profile_plans.py --data benchmarks/data/2M --labels qrels --checks full
    python benchmarks/profile_plans.py --data benchmarks/data/2M --hand

Run it in-process and on files already in the page cache: it is for reading plans, the
timings of ``run.py`` (whole processes, medians) are the ones to quote.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import duckdb

import rank_polars as rp
from rank_polars.engines import duckdb_engine

HERE = Path(__file__).resolve().parent
METRICS = ["ndcg@10", "ap@100", "rr", "p@10", "r@100"]


def flatten(node: dict, depth: int = 0, out: list[str] | None = None) -> list[str]:
    """One line per operator of a DuckDB JSON profile: seconds, rows out, type, details."""
    out = [] if out is None else out
    info = node.get("extra_info", {})
    detail = " ".join(f"{k}={v}" for k, v in info.items() if k in ("CTE Name", "Join Type", "Conditions", "Groups",
                                                                   "Aggregates", "Function", "Filters", "Projections"))
    detail = detail.replace("\n", " ")
    out.append(f"{node.get('timing', 0):7.3f}s {node.get('intermediate_rows', 0):>10,}  {'  ' * depth}{node['type']} {detail[:160]}")
    for child in node.get("children", []):
        flatten(child, depth + 1, out)
    return out


def explain(con: duckdb.DuckDBPyConnection, sql: str) -> str:
    profile = json.loads(con.sql("EXPLAIN (ANALYZE, FORMAT JSON) " + sql).fetchall()[0][1])
    lines = []
    for op in profile["operator"]:
        lines += flatten(op)
    return "\n".join(lines)


def profile_duckdb(run: str, qrels: str, labels: str, checks: str, show_sql: bool) -> None:
    original = duckdb_engine.DuckDBEngine.query

    def query(self, sql: str):
        t0 = time.perf_counter()
        out = original(self, sql)
        seconds = time.perf_counter() - t0
        print(f"\n===== statement: {seconds:.3f} s")
        if show_sql:
            print(sql)
        print(explain(self.con, sql))
        return out

    duckdb_engine.DuckDBEngine.query = query
    try:
        rp.evaluate(run, METRICS, qrels=qrels, by="model", missing="skip", engine="duckdb", labels=labels, checks=checks)
    finally:
        duckdb_engine.DuckDBEngine.query = original


def profile_hand(run: str, qrels: str) -> None:
    sys.path.insert(0, str(HERE))
    import worker

    con = duckdb.connect(config={"preserve_insertion_order": False})
    for labels in (False, True):
        print(f"\n===== hand-duckdb labels={labels}")
        print(explain(con, worker.hand_duckdb_sql(f"read_parquet('{run}')", f"read_parquet('{qrels}')", labels)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=HERE / "data" / "2M")
    ap.add_argument("--labels", default="qrels", choices=["qrels", "run"])
    ap.add_argument("--checks", default="full", choices=["fast", "full", "strict"])
    ap.add_argument("--sql", action="store_true", help="print each statement too")
    ap.add_argument("--hand", action="store_true", help="the hand-written DuckDB plans instead")
    args = ap.parse_args()
    warnings.simplefilter("ignore", rp.CoverageWarning)
    run, qrels = str(args.data / "run.parquet"), str(args.data / "qrels.parquet")
    if args.hand:
        profile_hand(run, qrels)
    else:
        profile_duckdb(run, qrels, args.labels, args.checks, args.sql)


if __name__ == "__main__":
    main()
