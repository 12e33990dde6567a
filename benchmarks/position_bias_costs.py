"""The performance goal of position bias: ``rp.position_bias(method="pivot")`` at most
2x ``evaluate(["rr"])`` on the same click log; ``"all_pairs"`` (and the adjacent chain) beside it.

    python benchmarks/position_bias_costs.py --rankings 100000     # 20M rows: 100k queries x 100 x 2 arms
    python benchmarks/position_bias_costs.py --rankings 2000 --depth 20   # a quick look

The log is ``counterfactual_costs.py``'s (its ``build``, the same seed, so the same rows):
``model`` (2 arms), ``query``, ``item``, ``position`` 1..depth, ``click`` from the
position-based model with examination 1/p; each query shown once per arm, so every
(query, item) is shown at (at most) two positions, one per arm: the interventions of
Agarwal et al. come from the two rankers (``position_bias`` pools the arms; no ``by``).

Measured, each in a fresh process reading the Parquet file: ``evaluate(log, ["rr"],
by="model", relevance="click")`` (the floor) and ``position_bias(log, method)`` for each method
in Polars and DuckDB; reported: the call's wall clock, the process's CPU time (user + system,
all threads) and peak RSS (``os.wait4``). The two engines' curves are checked to agree (1e-9),
and the largest distance to the true 1/p is printed, before times are.
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

METHODS = ("pivot", "adjacent_chain", "all_pairs")


def work(task: str, folder: Path) -> dict[str, object]:
    """One measurement, in this process."""
    import warnings

    import rank_polars as rp

    warnings.simplefilter("ignore")  # deep positions of a small log may lack support
    log = pl.scan_parquet(folder / "clicks.parquet")
    t0 = time.perf_counter()
    if task == "rr":
        values = rp.evaluate(log, ["rr"], by="model", relevance="click")["rr"].to_list()
    else:
        engine, _, method = task.partition(":")
        values = rp.position_bias(log, method, engine=engine)["examination"].to_list()
    return {"task": task, "seconds": time.perf_counter() - t0, "values": values}


def main() -> None:
    # a folder of its own (counterfactual_costs.py may be writing its copy at the same time)
    cli = click_log_cli(__file__, __doc__, "position_bias_clicks", work,
                        lambda parser: parser.add_argument("--methods", default=",".join(METHODS)))
    if cli is None:
        return
    args, _, rows, child = cli
    tasks = ["rr"] + [f"{engine}:{m}" for m in args.methods.split(",") for engine in ("polars", "duckdb")]
    results = {task: child(task) for task in tasks}
    truth = 1.0 / np.arange(1, args.depth + 1)
    for m in args.methods.split(","):
        a = np.array(results[f"polars:{m}"]["values"], dtype=float)
        b = np.array(results[f"duckdb:{m}"]["values"], dtype=float)
        assert np.allclose(a, b, rtol=1e-9, equal_nan=True), m
        print(f"{m}: largest |estimate - 1/p| {np.nanmax(np.abs(a - truth)):.4f}, null at {int(np.isnan(a).sum())} positions")
    floor = results["rr"]
    print(f"{rows:,} rows ({args.rankings:,} queries x {args.depth} positions x 2 arms); load "
          f"{os.getloadavg()[0]:.1f}")
    print("| task | call s | x rr | CPU s | peak RSS MiB |\n|---|---|---|---|---|")
    for r in results.values():
        print(f"| {r['task']} | {r['seconds']:.2f} | {r['seconds'] / floor['seconds']:.2f} | {r['cpu']:.1f} | "
              f"{r['rss_mib']:.0f} |")


if __name__ == "__main__":
    main()
