"""What ``labels="run"`` costs against its floor, and what the cheapest exact plan with the
same guarantee costs.

    python benchmarks/labels_floor.py --data benchmarks/data/20M --rounds 3

``labels="run"`` reads the labels from the log.  Its floor (``worker.floor_*``) reads the log
and does one grouped sum.  Between the two sit, measured here side by side in one process per
engine and round (warm, interleaved, median over rounds; wall and process CPU seconds):

* ``floor+items``: the floor that also reads every row's item id (it decodes the string
  column; a check that items do not repeat within a ranking cannot read less);
* ``floor+distinct``: the floor plus the exact count of distinct items per ranking, the
  plainest exact repeat check an expert would write (a hash of every row's item, probed);
* ``hand``: the hand-written label plan of ``worker.py`` (the five metrics, no checks);
* ``hand+distinct``: that plan plus the distinct count: the best hand-written plan with the
  guarantee ``evaluate`` gives by default (an item shown twice in a ranking is refused);
* ``evaluate``, with ``checks="fast"`` and with the default checks: on the log alone (its labels
  give the grades and the ideal) and with ``labels="run"`` and judgments (the grades from the
  log, the ideal from the judgments, each label checked against them).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
METRICS = ["ndcg@10", "ap@100", "rr", "p@10", "r@100"]
ENGINES = ("polars", "duckdb")


def _cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def configs(engine: str, run: str, qrels: str) -> dict:
    """name -> a function running that configuration once."""
    sys.path.insert(0, str(HERE))
    import duckdb
    import polars as pl
    import worker

    import rank_polars as rp

    class Args:
        pass

    args = Args()
    args.run, args.qrels = run, qrels
    keys = ["model", "query"]

    def evaluate(checks: str, with_qrels: bool):
        # without judgments the log's labels give the ideal too; labels="run" takes it from qrels
        return lambda: rp.evaluate(run, METRICS, qrels=qrels if with_qrels else None, by="model", missing="skip",
                                   labels="run" if with_qrels else "qrels", checks=checks, engine=engine)

    if engine == "polars":
        scan = pl.scan_parquet(run)

        def floor_items():
            scan.group_by(keys).agg(pl.col("relevance").sum(), pl.col("item").str.len_bytes().max()).collect(engine="streaming")

        def floor_distinct():
            scan.group_by(keys).agg(pl.col("relevance").sum(), (pl.len() - pl.col("item").n_unique()).alias("repeats")).collect(engine="streaming")

        def hand_distinct():
            worker.hand_polars(args, labels=True)
            floor_distinct()

        own = {"floor": lambda: worker.floor_polars(args), "floor+items": floor_items, "floor+distinct": floor_distinct,
               "hand": lambda: worker.hand_polars(args, labels=True)}
    else:
        src = worker._duckdb_scan(run)

        def q(sql: str):
            con = duckdb.connect(config={"preserve_insertion_order": False})
            con.sql(sql).to_arrow_table()

        distinct = f"SELECT model, query, sum(relevance), count(*) - count(DISTINCT item) FROM {src} GROUP BY ALL"
        own = {"floor": lambda: worker.floor_duckdb(args),
               "floor+items": lambda: q(f"SELECT model, query, sum(relevance), max(length(item)) FROM {src} GROUP BY ALL"),
               "floor+distinct": lambda: q(distinct),
               "hand": lambda: worker.hand_duckdb(args, labels=True)}

        def hand_distinct():
            worker.hand_duckdb(args, labels=True)
            q(distinct)

    own["hand+distinct"] = hand_distinct
    for checks in ("fast", "full"):
        own[f"evaluate {checks}, the log alone"] = evaluate(checks, False)
        own[f'evaluate {checks}, labels="run" + qrels'] = evaluate(checks, True)
    return own


def child(engine: str, data: Path) -> None:
    import warnings

    warnings.simplefilter("ignore")
    todo = configs(engine, str(data / "run.parquet"), str(data / "qrels.parquet"))
    todo["floor"]()  # warm: first Parquet reads, lazy imports
    todo['evaluate full, labels="run" + qrels']()
    out = {}
    for name, fn in todo.items():
        w0, c0 = time.perf_counter(), _cpu()
        fn()
        out[name] = [time.perf_counter() - w0, _cpu() - c0]
    print(json.dumps(out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=HERE / "data" / "20M")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--child", choices=ENGINES, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.data)
        return
    times: dict[str, dict[str, list[list[float]]]] = {e: {} for e in ENGINES}
    loads = [os.getloadavg()[0]]
    for r in range(args.rounds):
        for engine in (ENGINES if r % 2 == 0 else ENGINES[::-1]):
            cmd = [sys.executable, __file__, "--child", engine, "--data", str(args.data)]
            env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
            result = json.loads(subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout)
            for name, pair in result.items():
                times[engine].setdefault(name, []).append(pair)
        loads.append(os.getloadavg()[0])
    print(f"{args.data.name}: median of {args.rounds} rounds, warm, in-process; load average (1 min) "
          f"{min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores\n")
    print("| plan | Polars wall s | CPU s | × floor | DuckDB wall s | CPU s | × floor |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    floor = {e: statistics.median(w for w, _ in times[e]["floor"]) for e in ENGINES}
    for name in times["polars"]:
        cells = []
        for e in ENGINES:
            wall = statistics.median(w for w, _ in times[e][name])
            cpu = statistics.median(c for _, c in times[e][name])
            cells += [f"{wall:.2f}", f"{cpu:.2f}", f"{wall / floor[e]:.1f}"]
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
