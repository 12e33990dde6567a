"""The DuckDB engine's time and peak memory by input form: Parquet paths against the same
files as a ``pl.scan_parquet`` LazyFrame, default labels and ``labels="run"``.

    python benchmarks/lazy_inputs.py --data /tmp/rp_bench/200M --label 200M-lazy

Each case runs in its own child process (wall time of the whole child, peak RSS from
``os.wait4``), once: memory is what this measures, and load does not skew it.
Writes ``benchmarks/results/<label>.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHILD = """
import sys, polars as pl, rank_polars as rp
form, labels, run, qrels = sys.argv[1:5]
source = pl.scan_parquet(run) if form == "lazyframe" else run
rp.evaluate(source, ["ndcg@10", "map", "p@10", "recall@100", "mrr"], qrels=qrels, by="model", engine="duckdb",
            labels=labels)
"""


def measure(form: str, labels: str, data: Path) -> dict:
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", CHILD, form, labels, str(data / "run.parquet"), str(data / "qrels.parquet")])
    _, status, usage = os.wait4(child.pid, 0)
    return {"form": form, "labels": labels, "seconds": round(time.perf_counter() - start, 2),
            "peak_gib": round(usage.ru_maxrss / 2**20, 2), "status": os.waitstatus_to_exitcode(status)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--label", required=True)
    args = ap.parse_args()
    rows: list[dict] = []
    out = HERE / "results" / args.label
    # the LazyFrame first, and the files rewritten after each case: a long run stopped early keeps its figures
    for labels in ("qrels", "run"):
        for form in ("lazyframe", "paths"):
            rows.append({**measure(form, labels, args.data), "loadavg_1min": round(os.getloadavg()[0], 1)})
            out.with_suffix(".json").write_text(json.dumps({"data": str(args.data), "rows": rows}, indent=1))
            lines = [f"DuckDB engine by input form ({args.data}), {os.cpu_count()} cores", "",
                     "| input | labels | seconds | peak RSS GiB | exit | load average after |", "|---|---|---|---|---|---|"]
            lines += [f"| {r['form']} | {r['labels']} | {r['seconds']} | {r['peak_gib']} | {r['status']} | {r['loadavg_1min']} |"
                      for r in rows]
            out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
