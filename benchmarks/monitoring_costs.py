"""The three performance goals of monitoring, measured once: ``python benchmarks/monitoring_costs.py``.

1. ``rp.track`` adding one day to a store of ``--days`` days (default 30 days, 60M rows: 3 versions x
   ~66,700 queries x 10 results a day) against ``rp.evaluate`` of that day alone: goal <= 1.3x, in
   both engines.  The store is filled once (not timed); each repetition removes the last day from
   the store's manifest and adds it again.
2. The series of the whole store (``monitor.track.series``: 30 days x 3 versions with t intervals):
   goal < 1 s.
3. ``rp.gate`` over 10 segment columns x 3 metrics on ``--gate-rows`` rows (default 20M: 2 versions x
   1M queries x 10 results, one day) against ``rp.compare`` of the same versions without segments:
   goal <= 1.5x.

The logs come from ``rp.datasets.monitoring_log`` (seeded), written as hive partitions under
``--data`` (default ``benchmarks/data/monitoring``); eight more segment columns are derived from the
query id.  Calls alternate (reference, measured, reference, ...) so that a change of load hits
both; best and median of ``--repeat``.  Prints a Markdown table and writes
``benchmarks/results/monitoring_costs.json``.  A tiny run to check the script:
``python benchmarks/monitoring_costs.py --days 3 --queries-per-day 200 --gate-queries 2000 --repeat 1``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import time
from pathlib import Path

import polars as pl

import rank_polars as rp
from rank_polars.monitor.store import MANIFEST
from rank_polars.monitor.track import series

HERE = Path(__file__).resolve().parent
METRICS = ["ndcg@10", "mrr", "p@10"]
SEGMENTS = ["country", "query_type", *(f"seg{i}" for i in range(8))]


def timed(f) -> float:
    start = time.perf_counter()
    f()
    return time.perf_counter() - start


def summary(times: list[float]) -> dict:
    return {"best": min(times), "median": statistics.median(times), "all": times}


def write_days(folder: Path, days: int, queries: int) -> list[Path]:
    """One hive partition per day, each day its own seeded log (query ids unique within a day)."""
    parts = []
    for d in range(days):
        day = (pl.date(2026, 11, 1) + pl.duration(days=d))
        log = rp.datasets.monitoring_log(days=1, queries_per_day=queries, regression=None, seed=d,
                                         start=str(pl.select(day).item()))
        target = folder / f"date={log['date'][0]}"
        if not target.exists():
            target.mkdir(parents=True)
            log.drop("date").write_parquet(target / "0.parquet")
        parts.append(target)
    return parts


def incremental(data: Path, days: int, queries: int, repeat: int, engine: str) -> dict:
    parts = write_days(data / "days", days, queries)
    store = data / f"store-{engine}"
    shutil.rmtree(store, ignore_errors=True)
    rp.track(data / "days", METRICS, store=store, engine=engine)  # fill the store (not timed)
    last = parts[-1].name.split("=", 1)[1]
    manifest = store / MANIFEST
    full = json.loads(manifest.read_text())

    def forget_last_day() -> None:
        held = json.loads(json.dumps(full))
        held["partitions"].pop(last)
        manifest.write_text(json.dumps(held))

    times: dict[str, list[float]] = {"evaluate": [], "track": []}
    for _ in range(repeat):
        times["evaluate"].append(timed(lambda: rp.evaluate([str(f) for f in parts[-1].iterdir()], METRICS,
                                                           by="model", engine=engine)))
        forget_last_day()
        times["track"].append(timed(lambda: rp.track(data / "days", METRICS, store=store, engine=engine)))
    rows = sum(pl.scan_parquet(p / "0.parquet").select(pl.len()).collect().item() for p in parts)
    return {"rows": rows, **{k: summary(v) for k, v in times.items()}}


def series_cost(data: Path, repeat: int) -> dict:
    store = data / "store-polars"
    return summary([timed(lambda: series(store)) for _ in range(max(repeat, 3))])


def gate_cost(data: Path, queries: int, repeat: int) -> dict:
    path = data / f"gate-{queries}.parquet"
    if not path.exists():
        log = rp.datasets.monitoring_log(days=1, versions=["v1", "v2"], queries_per_day=queries, seed=99,
                                         regression=None)
        h = pl.col("query").hash(seed=0)
        log = log.with_columns(((h // (7 ** i)) % (3 + i)).cast(pl.String).alias(f"seg{i}") for i in range(8))
        log.write_parquet(path)
    times: dict[str, list[float]] = {"compare": [], "gate": []}
    for _ in range(repeat):
        times["compare"].append(timed(lambda: rp.compare(str(path), METRICS, baseline="v1")))
        times["gate"].append(timed(lambda: rp.gate(str(path), METRICS, baseline="v1", candidate="v2", margin=0.005,
                                                   segments=SEGMENTS)))
    rows = pl.scan_parquet(path).select(pl.len()).collect().item()
    return {"rows": rows, **{k: summary(v) for k, v in times.items()}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=HERE / "data" / "monitoring")
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--queries-per-day", type=int, default=66_667, help="per day (x 3 versions x 10 results)")
    ap.add_argument("--gate-queries", type=int, default=1_000_000, help="of the gate's log (x 2 versions x 10 results)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    args.data.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()
    out: dict = {"cores": os.cpu_count(), "metrics": METRICS, "segments": SEGMENTS, "load_before": load}
    for engine in ("polars", "duckdb"):
        out[f"incremental_{engine}"] = incremental(args.data, args.days, args.queries_per_day, args.repeat, engine)
    out["series"] = series_cost(args.data, args.repeat)
    out["gate"] = gate_cost(args.data, args.gate_queries, args.repeat)
    out["load_after"] = os.getloadavg()
    target = HERE / "results" / "monitoring_costs.json"
    target.parent.mkdir(exist_ok=True)
    target.write_text(json.dumps(out, indent=1) + "\n")
    print(f"load average (1 min) {load[0]:.1f} -> {out['load_after'][0]:.1f} on {os.cpu_count()} cores\n")
    print("| measurement | time (best / median) | ratio | goal |\n|---|---|---|---|")
    for engine in ("polars", "duckdb"):
        inc = out[f"incremental_{engine}"]
        ratio = inc["track"]["best"] / inc["evaluate"]["best"]
        print(f"| {engine}: evaluate one day of a {args.days}-day store ({inc['rows']:,} rows in all) | "
              f"{inc['evaluate']['best']:.2f} / {inc['evaluate']['median']:.2f} s | | |")
        print(f"| {engine}: track adding that day | {inc['track']['best']:.2f} / {inc['track']['median']:.2f} s | "
              f"{ratio:.2f}x | <= 1.3x |")
    s = out["series"]
    print(f"| the series of the store ({args.days} days x 3 versions) | {s['best']:.3f} / {s['median']:.3f} s | | < 1 s |")
    g = out["gate"]
    print(f"| compare v1 / v2 without segments, {g['rows']:,} rows | {g['compare']['best']:.2f} / "
          f"{g['compare']['median']:.2f} s | | |")
    print(f"| gate over {len(SEGMENTS)} segments x {len(METRICS)} metrics | {g['gate']['best']:.2f} / "
          f"{g['gate']['median']:.2f} s | {g['gate']['best'] / g['compare']['best']:.2f}x | <= 1.5x |")


if __name__ == "__main__":
    main()
