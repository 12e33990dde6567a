"""Run every implementation in its own process on the same Parquet files; check, then time.

    python benchmarks/run.py --size 20M --repeat 3             # generates benchmarks/data/20M if needed
    python benchmarks/run.py --data /tmp/tiny --label tiny --impls rank_polars-polars-streaming,pytrec_eval

For each implementation a child process (``worker.py``) reads the Parquet files and
computes the means per model version.  Measured per run: wall-clock of the whole child
(interpreter start, imports, reading Parquet, computing; ``time.perf_counter`` around the
child) and its peak RSS (``os.wait4`` rusage ``ru_maxrss``).  Medians over ``--repeat``.

Before any time is reported every implementation's means are checked against rank_polars
under the semantics that implementation has (``worker.py`` says which; the reference is
computed per query by rank_polars in a separate process), to 1e-9.  A mismatch prints a
loud report and the run exits 1 without writing timings.  An implementation whose peak RSS
at a smaller size, scaled linearly by rows, exceeds the memory budget is reported as "does
not fit (estimated)"; one that is OOM-killed or raises MemoryError as "does not fit".

Writes ``benchmarks/results/<label>.md`` (Markdown table) and ``<label>.json`` (raw numbers).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORKER = HERE / "worker.py"
BASELINE = "rank_polars-polars-streaming"
RANK_POLARS = [
    BASELINE, "rank_polars-polars-memory", "rank_polars-duckdb", "rank_polars-duckdb-2GB",
    "rank_polars-polars-streaming-fastchecks", "rank_polars-duckdb-fastchecks",
    "rank_polars-polars-streaming-runlabels", "rank_polars-duckdb-runlabels",
]
PEERS = ["pytrec_eval", "ranx", "ir_measures", "sklearn-ndcg"]
FLOORS = ["floor-polars-streaming", "floor-duckdb"]
# the best plan an expert writes by hand for the same numbers (worker.hand_polars / hand_duckdb)
HAND = ["hand-polars", "hand-duckdb", "hand-polars-runlabels", "hand-duckdb-runlabels"]
DEFAULT_IMPLS = [*RANK_POLARS, *HAND, *FLOORS, *PEERS]
TOLERANCE = 1e-9
OOM_CODES = {-9, 137, 3}  # SIGKILL (OOM killer), shell-style 128+9, MemoryError in the worker


def floor_of(impl: str) -> str | None:
    if impl.startswith(("rank_polars-polars", "hand-polars")):
        return "floor-polars-streaming"
    if impl.startswith(("rank_polars-duckdb", "hand-duckdb")):
        return "floor-duckdb"
    return None


def hand_of(impl: str) -> str | None:
    """The hand-written plan an engine run is measured against (same engine, same labels)."""
    if not impl.startswith("rank_polars-"):
        return None
    engine = "polars" if impl.startswith("rank_polars-polars") else "duckdb"
    return f"hand-{engine}" + ("-runlabels" if "-runlabels" in impl else "")


def machine() -> dict:
    def sh(cmd: str) -> str:
        try:
            return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=10).stdout.strip()
        except Exception:  # pragma: no cover - informational only
            return "?"

    cpu = sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2").strip()
    return {
        "nproc": sh("nproc"),
        "cpu": cpu,
        "free_g": sh("free -g | sed -n 2p"),
        "python": platform.python_version(),
        "versions": versions(),
    }


def versions() -> str:
    import importlib.metadata as md

    found = []
    for dist in ("polars", "duckdb", "pyarrow", "numpy", "pytrec-eval-terrier", "ranx", "ir-measures", "scikit-learn"):
        try:
            found.append(f"{dist} {md.version(dist)}")
        except md.PackageNotFoundError:
            found.append(f"{dist} (not installed)")
    return ", ".join(found)


def mem_available_gib() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 2**20
    return float("inf")


def run_child(impl: str, data: Path, run_path: Path, out: Path, timeout: float | None, temp: Path) -> dict:
    """One child process: wall seconds, peak RSS and its result (or why it failed)."""
    cmd = [sys.executable, str(WORKER), impl, "--run", str(run_path), "--qrels", str(data / "qrels.parquet"),
           "--out", str(out), "--temp", str(temp)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = None if timeout is None else t0 + timeout
    status = rusage = None
    while status is None:
        pid, st, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            status, rusage = st, ru
            break
        if deadline is not None and time.perf_counter() > deadline:
            proc.kill()
            _, status, rusage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - t0
            return {"ok": False, "why": f"timeout after {timeout:.0f} s", "wall": wall, "rss_gib": rusage.ru_maxrss / 2**20}
        time.sleep(0.02)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    stderr = proc.stderr.read() if proc.stderr else ""
    rss = rusage.ru_maxrss / 2**20  # KiB -> GiB
    if proc.returncode != 0:
        why = "does not fit (OOM-killed or MemoryError)" if proc.returncode in OOM_CODES else f"exit {proc.returncode}"
        return {"ok": False, "why": why, "wall": wall, "rss_gib": rss, "stderr": stderr[-3000:]}
    return {"ok": True, "wall": wall, "rss_gib": rss, "result": json.loads(out.read_text())}


def check(impl: str, result: dict, expected: dict) -> list[str]:
    """Differences between an implementation's means and rank_polars's, under its semantics."""
    sem = result["semantics"]
    if sem == "floor":
        want = sum(expected["rankings"].values())
        return [] if result["groups"] == want else [f"{result['groups']} groups, expected {want} rankings"]
    if sem in ("compare", "unavailable"):
        return []
    ref = expected[sem]
    problems = []
    if sorted(result["means"]) != sorted(ref):
        return [f"model versions {sorted(result['means'])} != {sorted(ref)}"]
    for model, values in result["means"].items():
        for name, value in values.items():
            if name == "queries":
                if not result.get("ignore_queries") and value != ref[model]["queries"]:
                    problems.append(f"{model}: {value} queries, rank_polars ({sem}) averages {ref[model]['queries']}")
                continue
            if abs(value - ref[model][name]) > TOLERANCE:
                problems.append(f"{model} {name}: {value!r} != rank_polars ({sem}) {ref[model][name]!r}")
    return problems


def estimate_from_smaller(impl: str, rows: int, results_dir: Path, layout: str) -> tuple[float, str] | None:
    """Peak RSS scaled linearly from the largest smaller run of the same implementation."""
    best = None
    for path in results_dir.glob("*.json"):
        try:
            raw = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        entry = raw.get("impls", {}).get(impl)
        # other scripts' results (a list of rows per input, no rows at all) are not run.py's
        if not isinstance(raw.get("rows"), int) or raw["rows"] >= rows or raw.get("layout", "file") != layout or not entry:
            continue
        rss = entry.get("rss_gib_median")
        if rss and (best is None or raw["rows"] > best[1]):
            best = (rss, raw["rows"], path.name)
    if best is None:
        return None
    rss, small_rows, name = best
    return rss * rows / small_rows, f"{rss:.2f} GiB at {small_rows:,} rows ({name}) x {rows / small_rows:.0f}"


def fmt(x: float | None, digits: int = 2) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def markdown(report: dict) -> str:
    rows = report["impls"]
    base = rows.get(BASELINE, {}).get("wall_median")
    lines = [
        f"### {report['label']}: {report['rows']:,} rows ({report['meta'].get('queries', '?'):,} queries x "
        f"{report['meta'].get('results', '?')} results x {report['meta'].get('versions', '?')} versions), "
        f"layout `{report['layout']}`, median of {report['repeat']}",
        "",
        "| implementation | wall s | peak RSS GiB | × rank_polars polars-streaming | × own floor | × own hand-written plan "
        "| checked against rank_polars |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for impl, r in rows.items():
        if impl == "compare":
            continue
        if r.get("status") != "ok":
            lines.append(f"| {impl} | {r.get('status')} | {fmt(r.get('rss_gib_median'))} | — | — | — | — |")
            continue
        wall = r["wall_median"]
        floor = floor_of(impl)
        fwall = rows.get(floor, {}).get("wall_median") if floor else None
        ratio = f"{wall / base:.2f}" if base else "—"
        fratio = f"{wall / fwall:.2f}" if fwall else "—"
        hwall = rows.get(hand_of(impl) or "", {}).get("wall_median")
        hratio = f"{wall / hwall:.2f}" if hwall else "—"
        reps = "" if r["n"] == report["repeat"] else f" (n={r['n']})"
        lines.append(
            f"| {impl} | {wall:.2f}{reps} | {r['rss_gib_median']:.2f} | {ratio} | {fratio} | {hratio} | {r.get('semantics', '')} |"
        )
    comp = rows.get("compare")
    if comp:
        lines += ["", f"compare: {comp.get('status')}" + (
            f", wall {comp['wall_median']:.2f} s, peak RSS {comp['rss_gib_median']:.2f} GiB" if comp.get("status") == "ok" else "")]
        if comp.get("note"):
            lines.append(f"({comp['note']})")
        if comp.get("status") == "ok":
            lines.append(f"paired queries: {comp.get('paired_queries')}; seconds inside the process:")
            lines += [f"- {phase}: {sec:.2f} s" for phase, sec in comp.get("phases", {}).items()]
    load = report.get("loadavg")
    if load:
        lines += ["", f"Load average (1 min) at start / end: {load['start']} / {load['end']} on {report['machine']['nproc']} cores."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", help="2M, 20M, 200M: data in benchmarks/data/<size> (generated if missing)")
    ap.add_argument("--data", type=Path, help="a folder written by generate.py (instead of --size)")
    ap.add_argument("--label", help="results name (default: the size)")
    ap.add_argument("--layout", choices=["file", "hive"], default="file", help="run.parquet or the run_hive folder")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--peer-repeat", type=int, help="repetitions for the peers (default --repeat)")
    ap.add_argument("--impls", help="comma-separated subset (default: all but compare)")
    ap.add_argument("--compare", action="store_true", help="also time rank_polars.stats.compare (n_resamples=10_000)")
    ap.add_argument("--timeout", type=float, help="seconds per child before it is killed")
    ap.add_argument("--mem-budget-gib", type=float, help="skip implementations estimated above this (default: 90%% of MemAvailable)")
    ap.add_argument("--results", type=Path, default=HERE / "results")
    args = ap.parse_args(argv)

    if args.data is None:
        if not args.size:
            ap.error("give --size or --data")
        args.data = HERE / "data" / args.size
        if not (args.data / "meta.json").exists():
            subprocess.run([sys.executable, str(HERE / "generate.py"), "--rows", args.size, "--out", str(args.data)], check=True)
    label = args.label or args.size or args.data.name
    meta = json.loads((args.data / "meta.json").read_text())
    run_path = args.data / ("run.parquet" if args.layout == "file" else "run_hive")
    impls = args.impls.split(",") if args.impls else list(DEFAULT_IMPLS)
    if args.compare and "compare" not in impls:
        impls.append("compare")
    budget = args.mem_budget_gib or 0.9 * mem_available_gib()
    args.results.mkdir(parents=True, exist_ok=True)
    report = {"label": label, "rows": meta["rows"], "meta": meta, "layout": args.layout, "repeat": args.repeat,
              "machine": machine(), "mem_budget_gib": budget, "loadavg": {"start": os.getloadavg()[0]}, "impls": {}}

    with tempfile.TemporaryDirectory(prefix="rp-bench-", dir=args.data) as tmp:
        tmp = Path(tmp)
        ref = run_child("reference", args.data, run_path, tmp / "reference.json", None, tmp)
        if not ref["ok"]:
            print(f"reference (rank_polars per query) failed: {ref['why']}\n{ref.get('stderr', '')}", file=sys.stderr)
            return 1
        expected = ref["result"]["expected"]
        mismatches = {}
        for impl in impls:
            entry = report["impls"][impl] = {"walls": [], "rss": []}
            est = estimate_from_smaller(impl, meta["rows"], args.results, args.layout)
            if est and est[0] > budget and impl != BASELINE:
                entry.update(status=f"does not fit (estimated {est[0]:.1f} GiB > budget {budget:.1f} GiB: {est[1]})")
                print(f"{impl}: {entry['status']}", flush=True)
                continue
            reps = args.peer_repeat if (args.peer_repeat and impl in PEERS) else args.repeat
            for i in range(1 if impl == "compare" else reps):
                res = run_child(impl, args.data, run_path, tmp / f"{impl}.json", args.timeout, tmp)
                if not res["ok"]:
                    entry.update(status=res["why"], rss_gib_median=res["rss_gib"], stderr=res.get("stderr"))
                    print(f"{impl}: {res['why']}\n{res.get('stderr', '')[-1500:]}", flush=True)
                    break
                if i == 0:
                    problems = check(impl, res["result"], expected)
                    entry["semantics"] = res["result"]["semantics"]
                    entry["means"] = res["result"].get("means")
                    for key in ("note", "result", "phases", "paired_queries"):
                        if impl == "compare" and key in res["result"]:
                            entry[key] = res["result"][key]
                    if problems:
                        mismatches[impl] = problems
                        entry["status"] = "MISMATCH"
                        print(f"\n!!!!! {impl} DISAGREES WITH rank_polars !!!!!\n  " + "\n  ".join(problems[:20]), flush=True)
                        break
                entry["walls"].append(res["wall"])
                entry["rss"].append(res["rss_gib"])
                print(f"{impl} #{i + 1}: {res['wall']:.2f} s, {res['rss_gib']:.2f} GiB", flush=True)
            else:
                entry.update(status="ok", n=len(entry["walls"]), wall_median=statistics.median(entry["walls"]),
                             rss_gib_median=statistics.median(entry["rss"]))
                if impl == "compare" and entry.get("semantics") == "unavailable":
                    entry["status"] = "unavailable"
    report["loadavg"]["end"] = os.getloadavg()[0]
    report["expected"] = expected

    if mismatches:
        bad = args.results / f"{label}.MISMATCH.json"
        bad.write_text(json.dumps({"mismatches": mismatches, "expected": expected, "impls": report["impls"]}, indent=2))
        print("\n" + "=" * 72 + f"\nEQUALITY CHECK FAILED for {', '.join(mismatches)}; no timings written. See {bad}\n" + "=" * 72)
        return 1
    (args.results / f"{label}.json").write_text(json.dumps(report, indent=2))
    table = markdown(report)
    (args.results / f"{label}.md").write_text(table)
    print("\n" + table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
