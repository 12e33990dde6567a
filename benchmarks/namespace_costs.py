"""The namespace route's performance goal: ``rp.with_judgments`` and the ``ranking`` namespace in a
``group_by`` of one's own within 1.3x of ``rp.evaluate(..., qrels=)`` (Polars engine) on the same
log, the same numbers.

    python benchmarks/namespace_costs.py --size 20M --rounds 3     # the goal's log (generated if missing)
    python benchmarks/namespace_costs.py --queries 200 --results 20   # a quick look on a tiny log

The log is ``generate.py``'s (``benchmarks/data/<size>``: ``run.parquet`` and ``qrels.parquet``,
100 results x 2 versions per query at 20M rows).  Each measurement is a fresh process reading the
Parquet files lazily (``pl.scan_parquet``), ``by="model"``, the metrics ``ndcg@10`` and ``map``:

* ``evaluate``: ``rp.evaluate(run, ["ndcg@10", "map"], qrels=qrels, by="model")``;
* ``namespace``: ``rp.with_judgments(run, qrels, by="model")``, then
  ``group_by("model", "query").agg(ranked.ranking.ndcg(10, ideal="ideal"), ranked.ranking.ap(ideal="ideal"))``
  and a mean per model, collected once (the README's route).

Reported: the call's wall clock (median over ``--rounds``, the two interleaved), the process's CPU
time (user + system, all threads) and peak RSS (``os.wait4``), and the ratio to ``evaluate``.  The
two routes' means are checked to agree (1e-12) before any time is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import polars as pl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from measured import measured

METRICS = ["ndcg@10", "map"]
TASKS = ("evaluate", "namespace")


def work(task: str, folder: Path) -> dict[str, object]:
    """One measurement, in this process: the seconds of the call and its means per model."""
    import warnings

    import rank_polars as rp

    warnings.simplefilter("ignore", rp.CoverageWarning)  # the generated log misses some rankings, on purpose
    run, qrels = pl.scan_parquet(folder / "run.parquet"), pl.scan_parquet(folder / "qrels.parquet")
    t0 = time.perf_counter()
    if task == "evaluate":
        out = rp.evaluate(run, METRICS, qrels=qrels, by="model")
    else:
        ranked = pl.col("relevance").sort_by("position")
        per_query = rp.with_judgments(run, qrels, by="model").group_by("model", "query").agg(
            ranked.ranking.ndcg(10, ideal="ideal").alias("ndcg@10"), ranked.ranking.ap(ideal="ideal").alias("map"))
        out = per_query.group_by("model").agg(pl.len().alias("queries"), pl.col(METRICS).mean()).collect()
    seconds = time.perf_counter() - t0
    return {"task": task, "seconds": seconds, "values": out.sort("model").select("queries", *METRICS).rows()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", help="2M, 20M, 200M: benchmarks/data/<size> (generated if missing)")
    parser.add_argument("--queries", type=int, help="instead of --size: a log of this many queries (a quick look)")
    parser.add_argument("--results", type=int, default=100, help="with --queries: results per version")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--worker")
    parser.add_argument("--folder", type=Path)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(work(args.worker, args.folder)))
        return
    if args.queries:
        folder = HERE / "data" / f"namespace_{args.queries}x{args.results}"
        generate = ["--queries", str(args.queries), "--results", str(args.results), "--versions", "2"]
    else:
        folder = HERE / "data" / (args.size or "20M")
        generate = ["--rows", args.size or "20M"]
    if not (folder / "meta.json").exists():
        subprocess.run([sys.executable, str(HERE / "generate.py"), *generate, "--out", str(folder)], check=True)
    rows = json.loads((folder / "meta.json").read_text())["rows"]

    load = os.getloadavg()[0]
    runs: dict[str, list[dict[str, object]]] = {task: [] for task in TASKS}
    for _ in range(args.rounds):  # interleaved: a load that comes and goes weighs on both
        for task in TASKS:
            result = measured(__file__, ["--worker", task, "--folder", str(folder)])
            assert result is not None
            runs[task].append(result)
    first = {task: runs[task][0]["values"] for task in TASKS}
    for (qa, *a), (qb, *b) in zip(first["evaluate"], first["namespace"]):
        assert qa == qb and all(abs(x - y) <= 1e-12 for x, y in zip(a, b)), (first["evaluate"], first["namespace"])
    median = {task: {k: statistics.median(r[k] for r in runs[task]) for k in ("seconds", "cpu", "rss_mib")}
              for task in TASKS}
    print(f"{rows:,} rows; {', '.join(METRICS)} by model; median of {args.rounds} rounds; load {load:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after")
    print("| route | call s | x evaluate | CPU s | peak RSS MiB |\n|---|---|---|---|---|")
    for task in TASKS:
        m = median[task]
        print(f"| {task} | {m['seconds']:.2f} | {m['seconds'] / median['evaluate']['seconds']:.2f} | {m['cpu']:.1f} | "
              f"{m['rss_mib']:.0f} |")


if __name__ == "__main__":
    main()
