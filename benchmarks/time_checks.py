"""What the checks cost: ``evaluate`` timed in-process for each engine, label mode and
``checks=``, interleaved across code versions so that a machine's changing load falls on
all of them alike.

    python benchmarks/time_checks.py --data benchmarks/data/2M --rounds 5 \\
        --version before=/path/to/old/checkout --version after=.

Each round starts one process per version (``PYTHONPATH`` = the checkout; the order of the
versions rotates from round to round), which imports that version's rank_polars, evaluates
once to warm up, then times every configuration once and prints the seconds as JSON; and
one process for the hand-written plans of ``worker.py``.  The table gives the median over
rounds.  Wall time of ``evaluate`` only (no interpreter start or imports: ``run.py``
measures whole processes).
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

HERE = Path(__file__).resolve().parent
METRICS = ["ndcg@10", "ap@100", "rr", "p@10", "r@100"]
CONFIGS = [f"{engine}-{labels}-{checks}" for engine in ("polars", "duckdb") for labels in ("qrels", "run")
           for checks in ("fast", "full", "strict")]
HAND = ["hand-polars", "hand-polars-runlabels", "hand-duckdb", "hand-duckdb-runlabels"]


def child(data: Path, hand: bool) -> None:
    """Time every configuration (or hand-written plan) once in this process; print {name: seconds}."""
    import warnings

    run, qrels = str(data / "run.parquet"), str(data / "qrels.parquet")
    if hand:
        sys.path.insert(0, str(HERE))
        import worker

        class Args:
            pass

        args = Args()
        args.run, args.qrels = run, qrels
        todo = {name: (lambda n=name: worker.IMPLS[n](args)) for name in HAND}
    else:
        import rank_polars as rp

        warnings.simplefilter("ignore")

        def config(name: str):
            engine, labels, checks = name.split("-")
            return lambda: rp.evaluate(run, METRICS, qrels=qrels, by="model", missing="skip", engine=engine,
                                       labels=labels, checks=checks)

        todo = {name: config(name) for name in CONFIGS}
    # warm up each engine once: first Parquet reads, lazy imports, DuckDB's first connection
    for name in (["hand-polars", "hand-duckdb"] if hand else ["polars-qrels-full", "duckdb-qrels-full"]):
        todo[name]()
    out = {}
    for name, fn in todo.items():
        t0 = time.perf_counter()
        fn()
        out[name] = time.perf_counter() - t0
    print(json.dumps(out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=HERE / "data" / "2M")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--version", action="append", default=[], help="NAME=CHECKOUT (repeatable; default: this one)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--hand", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.data, args.hand)
        return
    versions = dict(v.split("=", 1) for v in args.version) or {"this": str(HERE.parent)}
    names = list(versions)
    times: dict[str, dict[str, list[float]]] = {v: {} for v in [*names, "hand"]}
    loads = [os.getloadavg()[0]]
    for r in range(args.rounds):
        turn = names[r % len(names):] + names[:r % len(names)]
        for name in [*turn, "hand"]:
            root = versions.get(name, str(HERE.parent))
            env = {**os.environ, "PYTHONPATH": str(Path(root).resolve())}
            cmd = [sys.executable, __file__, "--child", "--data", str(args.data)] + (["--hand"] if name == "hand" else [])
            result = json.loads(subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout)
            for config, seconds in result.items():
                times[name].setdefault(config, []).append(seconds)
        loads.append(os.getloadavg()[0])
    print(f"median of {args.rounds} rounds, seconds inside evaluate(); load average (1 min) "
          f"{min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores\n")
    print("| engine-labels-checks | " + " | ".join(names) + " |")
    print("| --- |" + " ---: |" * len(names))
    for config in CONFIGS:
        cells = [f"{statistics.median(times[n][config]):.3f}" for n in names]
        print(f"| {config} | " + " | ".join(cells) + " |")
    for plan in HAND:
        print(f"| {plan} | {statistics.median(times['hand'][plan]):.3f} |" + " |" * (len(names) - 1))


if __name__ == "__main__":
    main()
