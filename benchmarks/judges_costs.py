"""The judges' performance goals: ``rp.agreement`` and ``rp.leaderboard_agreement`` at most 2x
``evaluate`` on the same log, ``evaluate(..., bounds=True)`` at most 1.3x ``evaluate``.

    python benchmarks/judges_costs.py --queries 50000      # 10M shown rows, 3 judges x 5M judgments
    python benchmarks/judges_costs.py --queries 500 --only evaluate,bounds   # a quick look

The data (deterministic, seed ``--seed``), under ``benchmarks/data/judges-<queries>``:

* ``log.parquet``: ``--versions`` (10) versions each showing ``--depth`` (20) items per query,
  drawn from the query's ``--candidates`` (100) by their true grade plus a version's noise
  (``model, query, item, position``);
* ``judgments.parquet``: three judges (``people``, ``llm-a``, ``llm-b``), each judging a random
  90% of every query's candidates (so 90% x 100 judgments per query and judge: 4.5M each at 50k
  queries), their grade the true 0-3 grade moved one step with probability 0.1 / 0.2 / 0.3
  (``query, item, relevance, judge``);
* ``people.parquet``: the people's judgments alone, without the judge column (the floor).

Measured, each in a fresh process reading the Parquet files: ``evaluate(["ndcg@10", "ap"],
by="model")`` on ``people.parquet`` (the floor), the same with ``judge="people"`` on the three
judges' file, with ``bounds=True``, ``by_judge=True``, ``agreement``, ``leaderboard_agreement``
and the judging queue (``pool(depth=10, judgments=..., judge="people")``); in Polars, and the
evaluate calls in DuckDB too; and beside them the plans an expert would write by hand for the
same means (``judges_hand.py``: one judge, the three judges in one pass, the bounds in one pass),
each held against the engine's to 1e-9.  Reported: the call's wall clock and its ratios to
``evaluate`` in its engine and to its hand-written plan, the process's CPU time (user + system,
all threads) and peak RSS (``os.wait4``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from measured import measured

JUDGES = {"people": 0.1, "llm-a": 0.2, "llm-b": 0.3}  # each judge's chance of a grade one step off
METRICS = ["ndcg@10", "ap"]
TASKS = ("evaluate", "judge", "bounds", "by_judge", "agreement", "leaderboard", "queue",
         "duckdb:evaluate", "duckdb:judge", "duckdb:bounds", "hand:evaluate", "hand:by_judge", "hand:bounds")
#: the engine's task each hand-written plan (``judges_hand.py``) computes the same means as
HAND = {"evaluate": "hand:evaluate", "by_judge": "hand:by_judge", "bounds": "hand:bounds"}


def generate(out: Path, queries: int, versions: int, depth: int, candidates: int, seed: int) -> None:
    """Write the three tables (see the module docstring), in chunks of queries."""
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng([seed, 31])
    logs, judged = [], []
    chunk = max(1, 2_000_000 // (candidates * versions))
    for q0 in range(0, queries, chunk):
        n = min(chunk, queries - q0)
        truth = np.minimum(rng.geometric(0.6, (n, candidates)) - 1, 3)  # mostly 0, some 1-3
        qids = np.arange(q0, q0 + n, dtype=np.int64)
        for v in range(versions):
            noisy = truth + rng.normal(0.0, 1.5 * 0.9**v, truth.shape)
            top = np.argsort(-noisy, axis=1, kind="stable")[:, :depth]
            logs.append(pl.DataFrame({
                "model": np.full(n * depth, v, dtype=np.int32),
                "query": np.repeat(qids, depth),
                "item": top.ravel().astype(np.int64),
                "position": np.tile(np.arange(1, depth + 1, dtype=np.int64), n),
            }))
        for judge, off in JUDGES.items():
            keep = rng.random((n, candidates)) < 0.9
            step = np.where(rng.random(truth.shape) < off, rng.choice([-1, 1], truth.shape), 0)
            grade = np.clip(truth + step, 0, 3)
            rows, cols = np.nonzero(keep)
            judged.append(pl.DataFrame({"query": qids[rows], "item": cols.astype(np.int64),
                                        "relevance": grade[rows, cols].astype(np.int64),
                                        "judge": pl.Series([judge] * rows.size, dtype=pl.Categorical)}))
    pl.concat(logs).with_columns(pl.col("model").cast(pl.String).str.pad_start(2, "0")).write_parquet(out / "log.parquet")
    judgments = pl.concat(judged).with_columns(pl.col("judge").cast(pl.String))
    judgments.write_parquet(out / "judgments.parquet")
    judgments.filter(pl.col("judge") == "people").drop("judge").write_parquet(out / "people.parquet")


def work(task: str, folder: Path) -> dict[str, object]:
    """One measurement, in this process."""
    import warnings

    import rank_polars as rp

    warnings.simplefilter("ignore")
    log, judgments = str(folder / "log.parquet"), str(folder / "judgments.parquet")
    engine, _, name = task.rpartition(":")
    engine = engine or "polars"
    t0 = time.perf_counter()
    if engine == "hand":
        from judges_hand import hand

        out = hand(folder, list(JUDGES) if name == "by_judge" else ["people"], bounds=name == "bounds")
    elif name == "evaluate":
        out = rp.evaluate(log, METRICS, qrels=str(folder / "people.parquet"), by="model", engine=engine)
    elif name == "judge":
        out = rp.evaluate(log, METRICS, qrels=judgments, judge="people", by="model", engine=engine)
    elif name == "bounds":
        out = rp.evaluate(log, METRICS, qrels=judgments, judge="people", by="model", engine=engine, bounds=True)
    elif name == "by_judge":
        out = rp.evaluate(log, METRICS, qrels=judgments, by="model", by_judge=True)
    elif name == "agreement":
        out = rp.agreement(judgments)
    elif name == "leaderboard":
        out = rp.leaderboard_agreement(log, METRICS, judgments, judges=list(JUDGES)).correlations
    elif name == "queue":
        out = rp.pool(log, depth=10, judgments=judgments, judge="people", budget=1000)
    else:
        raise SystemExit(f"unknown task {task!r}")
    seconds = time.perf_counter() - t0
    means = None
    if name in HAND:  # the means, to hold the engine's and the hand plan's against each other
        keys = [c for c in ("judge", "model") if c in out.columns] if engine != "hand" else ["judge", "model"]
        if "judge" not in out.columns:
            out = out.with_columns(pl.lit("people").alias("judge"))
        values = [c for c in out.columns if c.split("_")[0] in METRICS and not c.endswith("_low")]
        means = out.select("judge", "model", *values).sort("judge", "model").to_dicts()
    return {"task": task, "seconds": seconds, "rows": out.height, "means": means}


def _agree(ours: list[dict[str, object]], theirs: list[dict[str, object]]) -> float:
    """The largest difference between two tables of means (the same rows, sorted)."""
    assert [(r["judge"], r["model"]) for r in ours] == [(r["judge"], r["model"]) for r in theirs]
    return max(abs(float(a[c]) - float(b[c])) for a, b in zip(ours, theirs) for c in b if c not in ("judge", "model"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=50_000)
    parser.add_argument("--versions", type=int, default=10)
    parser.add_argument("--depth", type=int, default=20)
    parser.add_argument("--candidates", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", default=",".join(TASKS))
    parser.add_argument("--task")  # internal: one measurement in this process
    parser.add_argument("--folder")
    args = parser.parse_args()
    if args.task:
        print(json.dumps(work(args.task, Path(args.folder))))
        return
    folder = HERE / "data" / f"judges-{args.queries}"
    if not (folder / "people.parquet").exists():
        generate(folder, args.queries, args.versions, args.depth, args.candidates, args.seed)
    rows = pl.scan_parquet(folder / "log.parquet").select(pl.len()).collect().item()
    judged = pl.scan_parquet(folder / "judgments.parquet").select(pl.len()).collect().item()
    results = {}
    for task in args.only.split(","):
        result = measured(__file__, ["--task", task, "--folder", str(folder)])
        assert result is not None
        results[task] = result
    print(f"{rows:,} shown rows ({args.queries:,} queries x {args.versions} versions x {args.depth}), {judged:,} "
          f"judgments of {len(JUDGES)} judges; load {os.getloadavg()[0]:.1f}")
    print("| task | call s | x evaluate | x hand plan | CPU s | peak RSS MiB |\n|---|---|---|---|---|---|")
    notes = []
    for task, r in results.items():
        engine = task.rpartition(":")[0]
        floor = results.get(f"{engine}:evaluate" if engine else "evaluate")
        ratio = f"{r['seconds'] / floor['seconds']:.2f}" if floor else "-"
        hand = results.get(HAND.get(task, ""))
        against = f"{r['seconds'] / hand['seconds']:.2f}" if hand else "-"
        print(f"| {task} | {r['seconds']:.2f} | {ratio} | {against} | {r['cpu']:.1f} | {r['rss_mib']:.0f} |")
        if hand:
            diff = _agree(r["means"], hand["means"])  # type: ignore[arg-type]
            assert diff <= 1e-9, f"{task} and its hand plan differ by {diff}"
            notes.append(f"{task} = {HAND[task]} on {len(hand['means'])} means (max |diff| {diff:.1e})")  # type: ignore[arg-type]
    print("\n".join(notes))


if __name__ == "__main__":
    main()
