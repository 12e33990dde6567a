"""Where the Spark engine's time goes: JVM start-up, planning, work.

    python benchmarks/spark_split.py --run demo_log/ --label 4k-spark
    python benchmarks/spark_split.py --run /tmp/rp_bench/20M/run.parquet --qrels /tmp/rp_bench/20M/qrels.parquet --label 20M-spark

One process, the way ``rank-polars evaluate --engine spark`` runs: ``session()`` starts the
JVM (start-up); then one ``rp.evaluate`` whose SQL statements are timed in two parts:
*planning* (rank-polars' plan and checks in Python, sqlglot's translation, Spark's parse and
analysis in ``spark.sql``) and *work* (``toArrow``: Spark's optimisation and the jobs).  A
second, identical ``rp.evaluate`` shows what a reused session costs.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import polars as pl

HERE = Path(__file__).resolve().parent
METRICS = ["ndcg@10", "map"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", required=True)
    ap.add_argument("--qrels", help="judgments (default: the run's own relevance column)")
    ap.add_argument("--label", required=True)
    args = ap.parse_args()
    start = time.perf_counter()
    import rank_polars as rp
    from rank_polars.engines import spark_engine

    imports = time.perf_counter() - start
    t = time.perf_counter()
    spark = spark_engine.session()
    startup = time.perf_counter() - t
    spent = {"translate": 0.0, "analyse": 0.0, "work": 0.0}

    def query(self, sql: str) -> pl.DataFrame:
        t0 = time.perf_counter()
        text = spark_engine.to_spark_sql(sql)
        t1 = time.perf_counter()
        frame = self.spark.sql(text)
        t2 = time.perf_counter()
        with spark_engine.no_pandas_warning():
            table = pl.DataFrame(pl.from_arrow(frame.toArrow()))
        spent["translate"] += t1 - t0
        spent["analyse"] += t2 - t1
        spent["work"] += time.perf_counter() - t2
        return table

    spark_engine.SparkEngine.query = query  # type: ignore[method-assign]
    calls = []
    for _ in range(2):
        for k in spent:
            spent[k] = 0.0
        t = time.perf_counter()
        rp.evaluate(args.run, METRICS, qrels=args.qrels, by="model", engine="spark", spark=spark)
        total = time.perf_counter() - t
        calls.append({"total": total, **spent, "python": total - sum(spent.values())})
    result = {"run": args.run, "imports": imports, "jvm_startup": startup, "calls": calls,
              "loadavg_1min": os.getloadavg()[0]}
    out = HERE / "results" / args.label
    out.with_suffix(".json").write_text(json.dumps(result, indent=1))
    rows = [f"| {name} | {c['total']:.1f} | {c['python']:.1f} | {c['translate']:.1f} | {c['analyse']:.1f} | {c['work']:.1f} |"
            for name, c in zip(("first call", "second call (session reused)"), calls)]
    text = "\n".join([f"Spark time split ({args.run}); imports {imports:.1f} s, JVM start-up {startup:.1f} s; "
                      f"load average {result['loadavg_1min']:.1f} on {os.cpu_count()} cores", "",
                      "| call | total s | rank-polars in Python (reading schemas, checks) | sqlglot translation | Spark parse+analysis | Spark work |",
                      "|---|---|---|---|---|---|", *rows])
    out.with_suffix(".md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
