"""What the same bits every run cost: ``evaluate`` as shipped (sums of fractions in fixed point)
against the same code with plain floating-point sums (whose last bits change with the threads),
whole processes, interleaved.

    python benchmarks/sums_cost.py --data benchmarks/data/20M --rounds 5

Each round runs one child process per (engine, sums) pair, the order rotating from round to
round so that a machine's changing load falls on all of them alike.  A child imports
rank_polars, evaluates the five core metrics by model once and exits; ``--sums plain`` replaces
the fixed-point sum by a plain sum before the call (Polars: ``polars_engine.fixed_sum``; DuckDB:
the fixed-point ``SUM`` of ``sql_engine._aggregate``), which is what the determinism tests fail
on.  Reported: the median wall time and CPU time (user + system, from ``os.wait4``) of the whole
process, peak RSS, and the ratio fixed / plain per engine.
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

METRICS = ["ndcg@10", "ap@100", "rr", "p@10", "r@100"]


def child(data: Path, engine: str, sums: str) -> None:
    import warnings

    import polars as pl

    if sums == "plain":
        from rank_polars.engines import polars_engine, sql_engine

        polars_engine.fixed_sum = lambda values: values.sum()  # type: ignore[assignment]
        plain_sql = sql_engine._aggregate

        def aggregate(agg, name, order=None, fixed=False):  # type: ignore[no-untyped-def]
            text = plain_sql(agg, name, order, fixed)
            start = f"CAST(SUM(TRY_CAST(FLOOR(("
            if text.startswith(start):  # the fixed-point sum, said as a plain SUM of its term
                term = text[len(start):text.index(f") * {sql_engine.FIXED_SCALE}")]
                text = f"SUM({term})" + text[text.index(f" AS {sql_engine.quote(name)}"):]
            return text

        sql_engine._aggregate = aggregate  # type: ignore[assignment]
    import rank_polars as rp

    warnings.simplefilter("ignore")
    out = rp.evaluate(str(data / "run.parquet"), METRICS, qrels=str(data / "qrels.parquet"), by="model", engine=engine)
    print(json.dumps(out.select(pl.exclude("model")).to_dicts()))


def run_child(data: Path, engine: str, sums: str) -> dict:
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, __file__, "--child", "--data", str(data), "--engine", engine,
                             "--sums", sums], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    if status != 0:
        raise SystemExit(f"{engine} {sums} failed:\n{err}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mib": usage.ru_maxrss / 1024,
            "means": json.loads(out)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path(__file__).parent / "data" / "20M")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--engines", default="polars,duckdb")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--engine", help=argparse.SUPPRESS)
    parser.add_argument("--sums", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.data, args.engine, args.sums)
        return
    pairs = [(e, s) for e in args.engines.split(",") for s in ("fixed", "plain")]
    runs: dict[tuple[str, str], list[dict]] = {p: [] for p in pairs}
    for r in range(args.rounds):
        for pair in pairs[r % len(pairs):] + pairs[:r % len(pairs)]:
            runs[pair].append(run_child(args.data, *pair))
    print(f"| engine | sums | wall s (median of {args.rounds}) | CPU s | peak RSS MiB | fixed / plain (wall, CPU) |")
    print("|---|---|---|---|---|---|")
    for engine in args.engines.split(","):
        med = {s: {k: statistics.median(r[k] for r in runs[(engine, s)]) for k in ("wall", "cpu", "rss_mib")}
               for s in ("fixed", "plain")}
        for s in ("fixed", "plain"):
            m = med[s]
            ratio = (f"{med['fixed']['wall'] / med['plain']['wall']:.3f}, {med['fixed']['cpu'] / med['plain']['cpu']:.3f}"
                     if s == "fixed" else "")
            print(f"| {engine} | {s} | {m['wall']:.2f} | {m['cpu']:.2f} | {m['rss_mib']:.0f} | {ratio} |")
        # the two sums agree to the references' tolerance (the plain one only in its last bits)
        for a, b in zip(runs[(engine, "fixed")][0]["means"], runs[(engine, "plain")][0]["means"]):
            for k in a:
                assert abs(a[k] - b[k]) <= 1e-9 * max(1.0, abs(a[k])), (engine, k, a[k], b[k])


if __name__ == "__main__":
    main()
