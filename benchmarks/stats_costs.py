"""The two performance goals of the statistics, measured once: ``python benchmarks/stats_costs.py``.

1. ``rp.evaluate(..., ci=0.95)`` against the same call without it on the 20M-row log of
   ``benchmarks/generate.py --rows 20M`` (run.parquet + qrels.parquet, 2 versions x 100k
   queries x 100 results): goal <= 1.2x.  The calls alternate (plain, ci, plain, ci, ...) so
   that a change of load hits both; best and median of ``--repeat`` each.
2. ``compare_values(per, pairs="all", test="tukey")`` over 10 versions x 1M queries of per-query
   values already computed (generated here, seeded): goal < 10 s.  The first call pays SciPy's
   import; it is timed apart.

Prints a Markdown table and writes ``benchmarks/results/stats_costs.json`` (``--only ci`` or
``--only tukey`` re-measures one part and keeps the other's last figures).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np
import polars as pl

import rank_polars as rp
from rank_polars.stats.compare import compare_values

HERE = Path(__file__).resolve().parent
METRICS = ["ndcg@10", "map", "p@10", "recip_rank"]


def timed(f) -> float:
    start = time.perf_counter()
    f()
    return time.perf_counter() - start


def ci_cost(data: Path, repeat: int) -> dict:
    run, qrels = data / "run.parquet", data / "qrels.parquet"
    times: dict[str, list[float]] = {"plain": [], "ci": []}
    for _ in range(repeat):
        times["plain"].append(timed(lambda: rp.evaluate(str(run), METRICS, qrels=str(qrels), by="model")))
        times["ci"].append(timed(lambda: rp.evaluate(str(run), METRICS, qrels=str(qrels), by="model", ci=0.95)))
    return {k: {"best": min(v), "median": statistics.median(v), "all": v} for k, v in times.items()}


def interval_step(groups: int = 2, queries: int = 100_000, seed: int = 0) -> float:
    """The part ``ci=`` adds to evaluate: the t intervals from the per-query table (one row per
    group and query, as at 20M rows: 2 groups x 100k queries), best of 5."""
    from rank_polars.stats.intervals import intervals
    from rank_polars.measures import parse_all

    rng = np.random.default_rng(seed)
    per = pl.DataFrame({"model": np.repeat(["v1", "v2"][:groups], queries),
                        **{m: rng.random(groups * queries) for m in METRICS}})
    outputs = parse_all(METRICS)
    return min(timed(lambda: intervals(per, outputs, ["model"], 0.95)) for _ in range(5))


def tukey_cost(versions: int, queries: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    quality = rng.normal(0.5, 0.2, queries)  # a query effect shared by every version
    per = pl.DataFrame({
        "model": np.repeat([f"v{i:02d}" for i in range(versions)], queries),
        "query": np.tile(np.arange(queries), versions),
        "ndcg@10": np.concatenate([np.clip(quality + 0.002 * i + rng.normal(0, 0.1, queries), 0, 1)
                                   for i in range(versions)]),
    })
    first = timed(lambda: compare_values(per, pairs="all", test="tukey"))
    warm = [timed(lambda: compare_values(per, pairs="all", test="tukey")) for _ in range(2)]
    return {"rows": per.height, "first_call": first, "warm_best": min(warm), "warm": warm}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=HERE / "data" / "20M")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--versions", type=int, default=10)
    ap.add_argument("--queries", type=int, default=1_000_000)
    ap.add_argument("--only", choices=["ci", "tukey"], help="measure one part, keep the other's last figures")
    args = ap.parse_args()
    target = HERE / "results" / "stats_costs.json"
    out = json.loads(target.read_text()) if args.only and target.exists() else {}
    load = os.getloadavg()
    if args.only != "ci":
        out["tukey"] = tukey_cost(args.versions, args.queries)
        out["tukey"]["load"] = [load, os.getloadavg()]
    if args.only != "tukey":
        out["ci"] = ci_cost(args.data, args.repeat)
        out["ci"]["interval_step"] = interval_step()
        out["ci"]["load"] = [load, os.getloadavg()]
    out.update({"cores": os.cpu_count(), "metrics": METRICS, "data": str(args.data)})
    out.setdefault("load_before", load)
    out["load_after"] = os.getloadavg()
    ci, tukey = out["ci"], out["tukey"]
    target.parent.mkdir(exist_ok=True)
    target.write_text(json.dumps(out, indent=1) + "\n")
    ratio_best = ci["ci"]["best"] / ci["plain"]["best"]
    ratio_median = ci["ci"]["median"] / ci["plain"]["median"]
    print(f"load average (1 min) over the ci runs {ci['load'][0][0]:.1f} -> {ci['load'][1][0]:.1f}, over the Tukey runs "
          f"{tukey['load'][0][0]:.1f} -> {tukey['load'][1][0]:.1f}, on {os.cpu_count()} cores\n")
    print("| measurement | time | goal |\n|---|---|---|")
    print(f"| evaluate {', '.join(METRICS)} at {args.data.name}, without ci (best / median of {args.repeat}) | "
          f"{ci['plain']['best']:.1f} / {ci['plain']['median']:.1f} s | |")
    print(f"| the same with ci=0.95 | {ci['ci']['best']:.1f} / {ci['ci']['median']:.1f} s | "
          f"{ratio_best:.2f}x / {ratio_median:.2f}x (goal <= 1.2x) |")
    if "interval_step" in ci:
        print(f"| the interval step alone (t intervals of {len(METRICS)} metrics from a 2 x 100k per-query table, best of 5) | "
              f"{ci['interval_step'] * 1000:.0f} ms | |")
    print(f"| compare_values pairs='all' tukey, {args.versions} versions x {args.queries:,} queries, warm (best of 2) | "
          f"{tukey['warm_best']:.1f} s | < 10 s |")
    print(f"| the same, first call (SciPy's import included) | {tukey['first_call']:.1f} s | |")


if __name__ == "__main__":
    main()
