"""The performance goal of the online metrics: ``evaluate`` of the click metrics at most
1.2x ``evaluate(["rr"])`` on the same click log, with peak RSS within evaluate's bounds.

    python benchmarks/clicks_costs.py --rankings 100000     # 20M rows: 100k queries x 100 x 2 arms
    python benchmarks/clicks_costs.py --rankings 2000 --depth 20   # a quick look

The log is ``counterfactual_costs.py``'s (its ``build``, the same seed, so the same rows):
``model`` (2 arms), ``query``, ``item``, ``position`` 1..depth, ``click`` 0/1 from the
position-based model. The goal is stated at 200M rows (2M rankings x 100); ``--rankings 1000000``
gives them.

Measured, each in a fresh process reading the Parquet file, ``by="model"``: the floor
``evaluate(log, ["rr"], relevance="click")``; ``ctr@10`` alone; the six online metrics in one call
(``ctr@10``, ``ctr(agg=ratio)@10``, ``clicks@10``, ``abandonment``, ``click_rr``,
``last_click_rr``); in Polars and DuckDB. Reported: the call's wall clock, the process's CPU
time (user + system, all threads) and peak RSS (``os.wait4``). The engines' values are checked
to agree (1e-9) before times are printed.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from counterfactual_costs import click_log_cli  # the same log, the same generator

ONLINE = ["ctr@10", "ctr(agg=ratio)@10", "clicks@10", "abandonment", "click_rr", "last_click_rr"]
TASKS = {"rr": ["rr"], "ctr": ["ctr@10"], "online": ONLINE}


def work(task: str, folder: Path) -> dict[str, object]:
    """One measurement, in this process."""
    import rank_polars as rp

    engine, _, name = task.partition(":")
    log = pl.scan_parquet(folder / "clicks.parquet") if engine == "polars" else str(folder / "clicks.parquet")
    t0 = time.perf_counter()
    out = rp.evaluate(log, TASKS[name], by="model", relevance="click", engine=engine)
    seconds = time.perf_counter() - t0
    return {"task": task, "seconds": seconds, "values": out.sort("model").drop("model").rows()}


def main() -> None:
    cli = click_log_cli(__file__, __doc__, "clicks_costs", work)
    if cli is None:
        return
    args, _, rows, child = cli
    load = os.getloadavg()[0]
    results = {f"{e}:{t}": child(f"{e}:{t}") for e in ("polars", "duckdb") for t in TASKS}
    for t in TASKS:
        a = np.array(results[f"polars:{t}"]["values"], dtype=float)
        b = np.array(results[f"duckdb:{t}"]["values"], dtype=float)
        assert np.allclose(a, b, rtol=1e-9), t
    print(f"{rows:,} rows ({args.rankings:,} queries x {args.depth} positions x 2 arms); load "
          f"{load:.1f} before, {os.getloadavg()[0]:.1f} after")
    print("| engine | metrics | call s | x rr | CPU s | peak RSS MiB |\n|---|---|---|---|---|---|")
    for key, r in results.items():
        engine, _, t = key.partition(":")
        floor = results[f"{engine}:rr"]
        print(f"| {engine} | {', '.join(TASKS[t])} | {r['seconds']:.2f} | {r['seconds'] / floor['seconds']:.2f} | "
              f"{r['cpu']:.1f} | {r['rss_mib']:.0f} |")


if __name__ == "__main__":
    main()
