"""The performance goal of the SQL macros: ``rank_eval`` with judgments (DuckDB SQL alone, the
macros of ``sql/``) within 1.3x ``evaluate(engine="duckdb")`` on the same files.

    python benchmarks/sql_macros_costs.py --size 20M        # the goal's size (benchmarks/data/20M, generated if missing)
    python benchmarks/sql_macros_costs.py --queries 500 --results 20   # a quick look (a tiny log in benchmarks/data/)
    python benchmarks/sql_macros_costs.py --folder /tmp/bench2M        # a log generate.py --out wrote

The log and judgments are ``generate.py``'s (``run.parquet``, ``qrels.parquet``); the metrics are
``run.py``'s (ndcg@10, ap@100, rr, p@10, r@100), ``by="model"``, ``missing="zero"``.  Measured, each
in a fresh process: ``evaluate(run, metrics, qrels=, by="model", engine="duckdb")`` on the file
paths, and ``FROM rank_eval('run.parquet', judgments := 'qrels.parquet', ...)`` on a DuckDB
connection with the macros loaded (their loading is not timed; the statement's binding is).
Reported: the call's wall clock, the process's CPU time (user + system, all threads), peak RSS
(``os.wait4``), and the ratio to ``evaluate``.  The two results are checked to agree (1e-9)
before the times are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from measured import measured  # noqa: E402  (one measured process, as the other *_costs.py)
from worker import NAMES  # noqa: E402  (run.py's metrics)

TASKS = ("evaluate", "rank_eval")


def work(task: str, folder: Path) -> dict[str, object]:
    """One measurement, in this process."""
    import warnings

    warnings.simplefilter("ignore")  # coverage warnings: the same numbers either way
    run, qrels = str(folder / "run.parquet"), str(folder / "qrels.parquet")
    if task == "evaluate":
        import rank_polars as rp

        t0 = time.perf_counter()
        out = rp.evaluate(run, NAMES, qrels=qrels, by="model", engine="duckdb")
        seconds = time.perf_counter() - t0
    else:
        import duckdb

        from rank_polars.formula import sql_macros

        con = duckdb.connect()
        sql_macros.load(con)
        metrics = "[" + ", ".join(f"'{m}'" for m in NAMES) + "]"
        t0 = time.perf_counter()
        out = con.sql(f"FROM rank_eval('{run}', judgments := '{qrels}', metrics := {metrics}, by := ['model'])").pl()
        seconds = time.perf_counter() - t0
    out = out.sort("model")
    return {"task": task, "seconds": seconds, "queries": out["queries"].to_list(),
            "values": out.select(NAMES).rows()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", help="rows, e.g. 20M: benchmarks/data/<size> (generate.py --rows)")
    parser.add_argument("--queries", type=int, help="or a log of this many queries (generate.py --queries)")
    parser.add_argument("--results", type=int, default=100, help="with --queries: shown per ranking")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--worker")
    parser.add_argument("--folder", type=Path, help="or the folder of a log generate.py wrote")
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(work(args.worker, args.folder)))
        return
    if args.folder:  # a log generate.py wrote (--out), e.g. python benchmarks/generate.py --rows 2M --out /tmp/bench2M
        folder, generate = args.folder, []
    elif args.size:
        folder, generate = HERE / "data" / args.size, ["--rows", args.size]
    elif args.queries:
        folder = HERE / "data" / f"sql_macros_{args.queries}x{args.results}"
        generate = ["--queries", str(args.queries), "--results", str(args.results)]
    else:
        parser.error("give --size, --queries or --folder")
    if generate and not (folder / "meta.json").exists():
        subprocess.run([sys.executable, str(HERE / "generate.py"), *generate, "--out", str(folder)], check=True)
    rows = json.loads((folder / "meta.json").read_text())["rows"]
    load = os.getloadavg()[0]
    results: dict[str, list[dict[str, object]]] = {t: [] for t in TASKS}
    for _ in range(args.repeat):
        for task in TASKS:  # alternated, so that a change of the machine's load hits both
            result = measured(__file__, ["--worker", task, "--folder", str(folder)])
            assert result is not None
            results[task].append(result)
    got, want = results["rank_eval"][0], results["evaluate"][0]
    assert got["queries"] == want["queries"], (got["queries"], want["queries"])
    assert np.allclose(np.array(got["values"], dtype=float), np.array(want["values"], dtype=float), rtol=1e-9, atol=1e-12)
    best = {t: min(results[t], key=lambda r: float(r["seconds"])) for t in TASKS}  # type: ignore[arg-type]
    floor = best["evaluate"]
    print(f"{rows:,} rows ({folder.name}), metrics {', '.join(NAMES)}, by model; best of {args.repeat}; "
          f"load {load:.1f} before, {os.getloadavg()[0]:.1f} after")
    print("| call | wall s | x evaluate | CPU s | x evaluate (CPU) | peak RSS MiB |\n|---|---|---|---|---|---|")
    for task, r in best.items():
        print(f"| {task} | {r['seconds']:.2f} | {float(r['seconds']) / float(floor['seconds']):.2f} | {r['cpu']:.1f} | "
              f"{float(r['cpu']) / float(floor['cpu']):.2f} | {r['rss_mib']:.0f} |")


if __name__ == "__main__":
    main()
