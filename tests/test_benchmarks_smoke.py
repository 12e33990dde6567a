"""The benchmark suite still works: generate a tiny log, run it, the equality check passes.

Uses rank_polars (polars engine, and duckdb when it is importable), the Polars floor and
pytrec_eval (in the test extra); the other peers only when they are installed.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def test_generate_and_run_tiny(tmp_path):
    if not _available("pytrec_eval"):
        pytest.skip("pytrec_eval (test extra) is not installed")
    data = tmp_path / "data"
    subprocess.run(
        [sys.executable, str(BENCH / "generate.py"), "--queries", "2000", "--results", "20", "--out", str(data)],
        check=True,
        timeout=60,
    )
    meta = json.loads((data / "meta.json").read_text())
    assert meta["rows"] > 70_000 and (data / "run_hive" / "model=v1" / "part.parquet").exists()

    impls = ["rank_polars-polars-streaming", "rank_polars-polars-memory", "floor-polars-streaming", "pytrec_eval"]
    if (Path(__file__).resolve().parents[1] / "rank_polars" / "engines" / "duckdb_engine.py").exists():
        impls += ["rank_polars-duckdb", "floor-duckdb"]
    results = tmp_path / "results"
    proc = subprocess.run(
        [sys.executable, str(BENCH / "run.py"), "--data", str(data), "--label", "smoke", "--repeat", "1",
         "--impls", ",".join(impls), "--results", str(results)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads((results / "smoke.json").read_text())
    for impl in impls:
        assert report["impls"][impl]["status"] == "ok", (impl, report["impls"][impl])
    assert "| pytrec_eval |" in (results / "smoke.md").read_text()
