"""A log larger than RAM, evaluated from a hive-partitioned folder on the streaming paths.

    python benchmarks/larger_than_ram.py --data benchmarks/data/200M --copies 3

Builds ``<data>/larger_than_ram/run_hive/model=v1..v2N/part.parquet`` as symbolic links to
the ``--data`` run's two version files (no new data is written: ``--copies 3`` of 200M rows
make 600M rows, ~38 GiB as Arrow/Polars columns, more than the machine's RAM).  Each
version copy must get exactly the means of the version it copies (checked, to 1e-12), and
the same means as ``rank_polars`` computed on the original files.  Then it times the Polars
engine (streaming; default checks, and ``labels="run"``), the DuckDB engine under a memory
limit, and both floors, each in its own process (wall clock, peak RSS), and writes
``results/larger-than-ram.md`` / ``.json``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from run import HERE, mem_available_gib, run_child

IMPLS = [
    "rank_polars-polars-streaming",
    "rank_polars-polars-streaming-runlabels",
    "rank_polars-duckdb-2GB",
    "floor-polars-streaming",
    "floor-duckdb",
]


def build(data: Path, copies: int) -> tuple[Path, dict[str, str]]:
    root = data / "larger_than_ram" / "run_hive"
    source = {}
    for c in range(copies):
        for j, original in enumerate(("v1", "v2")):
            model = f"v{2 * c + j + 1}"
            folder = root / f"model={model}"
            folder.mkdir(parents=True, exist_ok=True)
            link = folder / "part.parquet"
            if not link.exists():
                link.symlink_to((data / "run_hive" / f"model={original}" / "part.parquet").resolve())
            source[model] = original
    return root, source


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=HERE / "data" / "200M")
    ap.add_argument("--copies", type=int, default=3)
    ap.add_argument("--results", type=Path, default=HERE / "results")
    args = ap.parse_args()
    meta = json.loads((args.data / "meta.json").read_text())
    run_path, source = build(args.data, args.copies)
    rows = meta["rows"] * args.copies
    report = {"rows": rows, "copies": args.copies, "data": str(args.data), "mem_available_gib": mem_available_gib(),
              "arrow_gib_estimate": rows * 64 / 2**30, "impls": {}}
    lines = [
        f"### Larger than RAM: {rows:,} rows ({args.copies} x the {meta['rows']:,}-row log, hive folder of links)",
        "",
        f"In-memory size as Arrow/Polars columns ~{report['arrow_gib_estimate']:.0f} GiB (~64 bytes a row); "
        f"RAM available at start {report['mem_available_gib']:.1f} GiB.",
        "",
        "| implementation | wall s | peak RSS GiB | check |",
        "| --- | ---: | ---: | --- |",
    ]
    with tempfile.TemporaryDirectory(prefix="rp-big-", dir=args.data) as tmp:
        for impl in IMPLS:
            res = run_child(impl, args.data, run_path, Path(tmp) / f"{impl}.json", None, Path(tmp))
            entry = report["impls"][impl] = {k: res.get(k) for k in ("ok", "why", "wall", "rss_gib")}
            check = "floor" if impl.startswith("floor") else ""
            if not res["ok"]:
                check = f"FAILED: {res['why']} {res.get('stderr', '')[-300:]}"
            elif not impl.startswith("floor"):
                means = res["result"]["means"]
                bad = [
                    f"{model} {m}"
                    for model, original in source.items()
                    for m, value in means[model].items()
                    if abs(value - means[original][m]) > 1e-12
                ]
                check = "every copy = its original" if not bad else f"MISMATCH: {', '.join(bad[:5])}"
                entry["means"] = {k: means[k] for k in ("v1", "v2")}
            entry["check"] = check
            print(f"{impl}: {res['wall']:.1f} s, {res['rss_gib']:.2f} GiB, {check}", flush=True)
            lines.append(f"| {impl} | {res['wall']:.1f} | {res['rss_gib']:.2f} | {check} |")
    args.results.mkdir(exist_ok=True)
    (args.results / "larger-than-ram.json").write_text(json.dumps(report, indent=2))
    (args.results / "larger-than-ram.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
