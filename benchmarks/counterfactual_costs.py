"""The performance goal of counterfactual estimates: ``rp.counterfactual(...,
estimator="ips")`` at most 2x ``evaluate(["rr"])`` on the same click log.

    python benchmarks/counterfactual_costs.py --rankings 100000     # 20M rows: 100k queries x 100 x 2 arms
    python benchmarks/counterfactual_costs.py --rankings 2000 --depth 20   # a quick look

The log (``clicks.parquet``, written once per size): ``model`` (2 arms), ``query``, ``item``,
``position`` 1..depth, ``click`` from the position-based model (examination 1/p, attractiveness
0.05-0.85 per item), each query shown once per arm: ``rankings x depth x 2`` rows.  The
candidate (``candidate.parquet``): a third ranker over the same items (arm 1's ranking
reversed), ``rankings x depth`` rows; the examination curve: the true 1/p.

Measured, each in a fresh process reading the Parquet files: ``evaluate(log, ["rr"],
by="model", relevance="click")`` in each engine (the floors), and ``counterfactual(log, candidate,
["dcg@10", "ctr@10"], examination=..., by="model")`` in Polars and in DuckDB, without and with
a 95% bootstrap interval (1,000 resamples); reported: the call's wall clock, the process's CPU
time (user + system, all threads) and peak RSS (``os.wait4``).  The two engines' estimates are
checked to agree (1e-9) before times are printed.  Run it a second time once the data exists for
peak RSS: a child's peak RSS includes the parent's at fork, so a run that generated the data
reports the generator's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from measured import measured

CHUNK = 20_000  # queries generated per step (bounded memory)


def build(out: Path, rankings: int, depth: int, seed: int) -> None:
    import pyarrow.parquet as pq

    out.mkdir(parents=True, exist_ok=True)
    theta = 1.0 / np.arange(1, depth + 1)
    log_w = cand_w = None
    for q0 in range(0, rankings, CHUNK):
        rng = np.random.default_rng([seed, 20, q0])
        n = min(CHUNK, rankings - q0)
        attract = rng.choice([0.05, 0.2, 0.5, 0.85], size=(n, depth), p=[0.5, 0.25, 0.15, 0.1])
        queries = np.arange(q0, q0 + n)
        frames = []
        for arm, noise in ((1, 0.6), (2, 0.3)):
            order = np.argsort(-(attract + rng.normal(0, noise, attract.shape)), axis=1)
            shown = np.take_along_axis(attract, order, axis=1)
            clicks = rng.random(shown.shape) < theta * shown
            frames.append(pl.DataFrame({
                "model": np.full(n * depth, arm, np.int32), "query": np.repeat(queries, depth).astype(np.int64),
                "item": order.ravel().astype(np.int32), "position": np.tile(np.arange(1, depth + 1, dtype=np.int32), n),
                "click": clicks.ravel().astype(np.int8)}))
            if arm == 1:
                cand = pl.DataFrame({"query": np.repeat(queries, depth).astype(np.int64),
                                     "item": order[:, ::-1].ravel().astype(np.int32),
                                     "position": np.tile(np.arange(1, depth + 1, dtype=np.int32), n)})
        table = pl.concat(frames).to_arrow()
        log_w = log_w or pq.ParquetWriter(out / "clicks.parquet", table.schema, compression="zstd")
        log_w.write_table(table)
        ctable = cand.to_arrow()
        cand_w = cand_w or pq.ParquetWriter(out / "candidate.parquet", ctable.schema, compression="zstd")
        cand_w.write_table(ctable)
    log_w.close()
    cand_w.close()
    pl.DataFrame({"position": np.arange(1, depth + 1), "examination": theta}).write_parquet(out / "examination.parquet")


def work(task: str, folder: Path) -> dict[str, object]:
    """One measurement, in this process."""
    import warnings

    import rank_polars as rp

    warnings.simplefilter("ignore")
    log = pl.scan_parquet(folder / "clicks.parquet")
    t0 = time.perf_counter()
    if task.startswith("rr"):
        out = rp.evaluate(log, ["rr"], by="model", relevance="click", engine="duckdb" if "duckdb" in task else "polars")
        values = out["rr"].to_list()
    else:
        engine, _, ci = task.partition("+")
        res = rp.counterfactual(log, pl.scan_parquet(folder / "candidate.parquet"), ["dcg@10", "ctr@10"],
                                examination=pl.read_parquet(folder / "examination.parquet"), by="model",
                                engine=engine, ci=0.95 if ci else None)
        values = res["estimate"].to_list()
    return {"task": task, "seconds": time.perf_counter() - t0, "values": values}


def click_log_cli(script: str, description: str, prefix: str, work: Callable[[str, Path], dict[str, object]],
                  extra: Callable[[argparse.ArgumentParser], None] | None = None) -> tuple[argparse.Namespace, Path, int, Callable[[str], dict[str, object]]] | None:
    """The command line the click benchmarks share: ``--rankings --depth --seed`` (and the
    script's ``extra`` options); as a worker (``--worker TASK --folder F``) it prints
    ``work(TASK, F)`` and returns None; else the arguments, the log's folder (generated once,
    ``data/<prefix>_<rankings>x<depth>``), its rows, and a function timing one task in a fresh
    process (:func:`measured.measured`)."""
    parser = argparse.ArgumentParser(description=description.split("\n\n")[0])
    parser.add_argument("--rankings", type=int, default=100_000, help="queries (each shown once per arm)")
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    if extra is not None:
        extra(parser)
    parser.add_argument("--worker")
    parser.add_argument("--folder", type=Path)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(work(args.worker, args.folder)))
        return None
    folder = HERE / "data" / f"{prefix}_{args.rankings}x{args.depth}"
    if not (folder / "examination.parquet").exists():
        t0 = time.perf_counter()
        build(folder, args.rankings, args.depth, args.seed)
        print(f"generated {folder} in {time.perf_counter() - t0:.1f} s")
    rows = pl.scan_parquet(folder / "clicks.parquet").select(pl.len()).collect().item()

    def child(task: str) -> dict[str, object]:
        result = measured(script, ["--worker", task, "--folder", str(folder)])
        assert result is not None
        return result

    return args, folder, rows, child


def main() -> None:
    cli = click_log_cli(__file__, __doc__, "clicks", work)
    if cli is None:
        return
    args, _, rows, child = cli
    results = [child(task) for task in ("rr", "polars", "polars+ci", "rr-duckdb", "duckdb", "duckdb+ci")]
    est = {r["task"]: np.array(r["values"]) for r in results if not r["task"].startswith("rr")}
    for task, values in est.items():
        assert np.allclose(values, est["polars"], rtol=1e-9), task
    floors = {"polars": results[0], "duckdb": results[3]}
    print(f"{rows:,} rows ({args.rankings:,} queries x {args.depth} positions x 2 arms); load "
          f"{os.getloadavg()[0]:.1f}")
    print("| task | call s | x rr (wall) | CPU s | x rr (CPU) | peak RSS MiB |\n|---|---|---|---|---|---|")
    for r in results:
        floor = floors["duckdb" if "duckdb" in str(r["task"]) else "polars"]
        print(f"| {r['task']} | {r['seconds']:.2f} | {r['seconds'] / floor['seconds']:.2f} | {r['cpu']:.1f} | "
              f"{r['cpu'] / floor['cpu']:.2f} | {r['rss_mib']:.0f} |")


if __name__ == "__main__":
    main()
