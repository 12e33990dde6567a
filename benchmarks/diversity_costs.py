"""The diversity performance goals: ``alpha_ndcg@20`` against ``ndcg@20`` on the same log, in the
Polars and DuckDB engines, and against pyndeval (and ndeval 4.5 itself) as whole processes.

    python benchmarks/diversity_costs.py --rows 20M            # generate if missing, time, print the table
    python benchmarks/diversity_costs.py --rows 2M --only polars-alpha_ndcg@20

The log is :mod:`generate`'s (same seed, same rows) with 20 results per ranking and two
versions, so ``--rows 20M`` is 500,000 queries x 2 versions = 1M rankings.  The subtopic
judgments are derived from its judgments, deterministically (seed ``[seed, 18, first query]``
per chunk):

* each query has 1-5 subtopics (uniform: 3 on average);
* a relevant judged item (grade g > 0) is relevant to each of its query's subtopics with
  probability 1/2 (to one subtopic drawn at random when that leaves none), with grade g;
* a non-relevant judged item gets one row, grade 0, for one subtopic drawn at random.

So the flat judgments of ``ndcg@20`` (``qrels.parquet``: one grade per query and item, the
highest) are exactly :mod:`generate`'s, and both measures read the same log and judgments.
For pyndeval and ndeval the same data is written in their formats (``subtopics.txt``:
``topic subtopic docno judgment``; ``run_<v>.txt``: TREC run lines, one file per version, as
ndeval takes one run) and each tool runs in a fresh process per version, reading the files.
Generation is chunked by 25,000 queries, each chunk seeded by its first query, so the log of
``--rows 2M`` is exactly the first 50,000 queries of ``--rows 20M``'s: a slice to time a tool
too slow for the whole log on (``--rows 2M --only pyndeval-v1,pyndeval-v2``, then x10).

Each measurement is a fresh Python process; reported: the whole process's wall clock
(interpreter, imports, reading, computing), the ``evaluate`` call alone, and peak RSS
(``os.wait4``).  Every process's numbers are checked: the per-query values of pyndeval and
of both engines agree (1e-9) on a sample of queries before any time is reported.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import generate  # noqa: E402

RESULTS, VERSIONS, MAX_SUBTOPICS = 20, 2, 5
CHUNK = 25_000


def subtopics_of(qrels: pl.DataFrame, q0: int, seed: int) -> pl.DataFrame:
    """Subtopic judgments ``query, subtopic, item, relevance`` for one chunk's judgments."""
    rng = np.random.default_rng([seed, 18, q0])
    queries = qrels["query"].unique(maintain_order=True)
    n_sub = pl.DataFrame({"query": queries, "__n": rng.integers(1, MAX_SUBTOPICS + 1, len(queries))})
    q = qrels.join(n_sub, on="query", how="left", maintain_order="left")
    n = q["__n"].to_numpy()
    grade = q["relevance"].to_numpy()
    slot = np.arange(MAX_SUBTOPICS)[None, :]
    member = (rng.random((q.height, MAX_SUBTOPICS)) < 0.5) & (slot < n[:, None])
    one = rng.integers(0, n)  # the subtopic of a non-relevant item, or of a relevant one left without any
    lonely = ~member.any(axis=1) | (grade <= 0)
    member[lonely] = False
    member[np.flatnonzero(lonely), one[lonely]] = True
    row, sub = np.nonzero(member)
    return pl.DataFrame({
        "query": q["query"].gather(row),
        "subtopic": sub.astype(np.int32) + 1,
        "item": q["item"].gather(row),
        "relevance": grade[row].astype(np.int32),
    })


def build(out: Path, queries: int, seed: int) -> dict:
    """The log (``run.parquet``), flat and subtopic judgments, and the text files of pyndeval / ndeval."""
    import pyarrow.parquet as pq

    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    names = generate.model_names(VERSIONS)
    run_w = pq.ParquetWriter(out / "run.parquet", generate.RUN_SCHEMA, compression="zstd")
    qrels_w = pq.ParquetWriter(out / "qrels.parquet", generate.QRELS_SCHEMA, compression="zstd")
    sub_w = None
    texts = {m: open(out / f"run_{m}.txt", "w") for m in names}
    sub_txt = open(out / "subtopics.txt", "w")
    rows = judgments = 0
    try:
        for q0 in range(0, queries, CHUNK):
            run, qrels = generate.chunk(q0, min(CHUNK, queries - q0), RESULTS, VERSIONS, seed)
            run_w.write_table(run, row_group_size=generate.ROW_GROUP)
            qrels_w.write_table(qrels, row_group_size=generate.ROW_GROUP)
            subs = subtopics_of(pl.from_arrow(qrels), q0, seed)
            table = subs.to_arrow()
            if sub_w is None:
                sub_w = pq.ParquetWriter(out / "subtopics.parquet", table.schema, compression="zstd")
            sub_w.write_table(table, row_group_size=generate.ROW_GROUP)
            sub_txt.write(subs.select(pl.concat_str(pl.all().cast(pl.String), separator=" "))
                          .to_series().str.join("\n").item() + "\n")
            frame = pl.from_arrow(run)
            for m in names:
                part = frame.filter(pl.col("model") == m)
                line = pl.concat_str(pl.col("query"), pl.lit("Q0"), pl.col("item"), pl.col("position").cast(pl.String),
                                     pl.col("score").cast(pl.String), pl.lit(m), separator=" ")
                texts[m].write(part.select(line).to_series().str.join("\n").item() + "\n")
            rows += run.num_rows
            judgments += subs.height
    finally:
        run_w.close()
        qrels_w.close()
        if sub_w is not None:
            sub_w.close()
        sub_txt.close()
        for f in texts.values():
            f.close()
    meta = {"queries": queries, "results": RESULTS, "versions": VERSIONS, "seed": seed, "rows": rows,
            "subtopic_judgments": judgments, "seconds": round(time.perf_counter() - t0, 1)}
    (out / "meta.json").write_text(json.dumps(meta, indent=2))
    return meta


# -- one measurement per process -------------------------------------------------------------


def child_engine(data: Path, engine: str, metric: str, values: Path | None) -> None:
    """``rp.evaluate`` from the Parquet files: ``ndcg@20`` reads the flat judgments, the
    diversity measures the subtopic judgments; prints the call's time (JSON)."""
    import rank_polars as rp

    qrels = data / ("qrels.parquet" if metric.startswith("ndcg") else "subtopics.parquet")
    t0 = time.perf_counter()
    table = rp.evaluate(str(data / "run.parquet"), [metric], qrels=str(qrels), by="model", engine=engine,
                        per_query=values is not None)
    seconds = time.perf_counter() - t0
    if values is not None:
        table.write_parquet(values)
    print(json.dumps({"evaluate_s": seconds}))


def child_pyndeval(data: Path, model: str, metric: str, values: Path | None) -> None:
    """pyndeval over the text files, as a caller of it would: read ndeval's qrels and the TREC
    run line by line, build its evaluator, evaluate (the reading is part of the time)."""
    import pyndeval

    t0 = time.perf_counter()
    qrels = []
    with open(data / "subtopics.txt") as f:
        for line in f:
            q, s, d, r = line.split()
            qrels.append((q, s, d, int(r)))
    run = []
    with open(data / f"run_{model}.txt") as f:
        for line in f:
            q, _, d, rank, _, _ = line.split()
            # ndeval ranks a run by its rank column; pyndeval by score (ties: docno ascending),
            # so the rank goes in as the score, as ndeval would read the file
            run.append((q, d, -float(rank)))
    name = {"alpha_ndcg@20": "alpha-nDCG@20"}[metric]
    got = pyndeval.ndeval(qrels, run, [name])
    seconds = time.perf_counter() - t0
    if values is not None:
        pl.DataFrame({"query": list(got), "value": [v[name] for v in got.values()]}).write_parquet(values)
    print(json.dumps({"evaluate_s": seconds}))


def child_hand(data: Path, values: Path | None) -> None:
    """The plan an expert would write by hand for ``alpha_ndcg@20`` by model, without any of
    ``evaluate``'s checks (the floor the checks and the engine's bookkeeping add to): the
    relevant subtopic judgments in memory, the run's top 20 joined with them (streaming), each
    row's count of earlier rows relevant to its subtopic from one sort, its discounted gain
    summed per ranking; the ideal by the engine's greedy step (``ideal_gains``: there
    is no simpler exact way to ndeval's ideal, and a hand-written one would be the same array
    steps); the mean per version over the judged queries."""
    from rank_polars.families.diversity import ideal_gains
    from rank_polars.families.diversity.names import POS, SUB, G
    from rank_polars.plan import ITEM, Q

    alpha, k = 0.5, 20
    t0 = time.perf_counter()
    pairs = (pl.scan_parquet(data / "subtopics.parquet").filter(pl.col("relevance") > 0)
             .select("query", "subtopic", "item").collect())
    shown = (pl.scan_parquet(data / "run.parquet").filter(pl.col("position") <= k)
             .select("model", "query", "item", "position")
             .join(pairs.lazy(), on=["query", "item"]).collect(engine="streaming"))
    # sorted, a row's count of earlier rows of its (ranking, subtopic) is its distance from the
    # run's first row (a window over the groups: 1.6 s against 0.8 s at 3.4M rows); the
    # discount is the row's, so one sum per ranking
    row = pl.int_range(pl.len(), dtype=pl.Int64)
    first = pl.any_horizontal(pl.col(c).ne_missing(pl.col(c).shift()) for c in ("model", "query", "subtopic"))
    seen = row - pl.when(first).then(row).forward_fill()
    dcg = (shown.sort("model", "query", "subtopic", "position").with_columns(seen.alias("seen"))
           .group_by("model", "query")
           .agg((pl.lit(1.0 - alpha).pow(pl.col("seen")) / (pl.col("position") + 1).log(2)).sum().alias("dcg")))
    ideal = ideal_gains(pairs.rename({"query": Q, "subtopic": SUB, "item": ITEM}), alpha, k)
    idcg = ideal.group_by(Q).agg((pl.col(G) / (pl.col(POS) + 1).log(2)).sum().alias("idcg")).rename({Q: "query"})
    per_ranking = dcg.join(idcg, on="query").select("model", "query", (pl.col("dcg") / pl.col("idcg")).alias("value"))
    # ndeval's mean is over the judged queries, a version's missing ones scoring 0
    judged = pl.scan_parquet(data / "subtopics.parquet").select(pl.col("query").n_unique()).collect().item()
    means = per_ranking.group_by("model").agg((pl.col("value").sum() / judged).alias("mean"))
    seconds = time.perf_counter() - t0
    if values is not None:
        per_ranking.write_parquet(values)
        means.write_parquet(values.with_name(values.stem + "_means.parquet"))
    print(json.dumps({"evaluate_s": seconds}))


def launch(argv: list[str]) -> None:
    """Run ``argv`` as a child and print its wall clock and peak RSS (ru_maxrss of wait4)."""
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.execvp(argv[0], argv)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    print(json.dumps({"status": os.waitstatus_to_exitcode(status), "wall_s": wall,
                      "cpu_s": usage.ru_utime + usage.ru_stime, "rss_gib": usage.ru_maxrss / 2**20}), file=sys.stderr)


def timed(child: list[str], timeout: float) -> dict:
    """One child process under :func:`launch`: its own output and its wall and peak RSS."""
    proc = subprocess.run([sys.executable, __file__, "--launch", *child], capture_output=True, text=True,
                          timeout=timeout)
    usage = json.loads([line for line in proc.stderr.splitlines() if line.startswith("{")][-1])
    if usage["status"] != 0:
        tail = [line for line in proc.stderr.splitlines() if not line.startswith("{")]
        return {"error": tail[-1] if tail else f"exit {usage['status']}", **usage}
    printed = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    return {**usage, **(json.loads(printed[-1]) if printed else {})}


def check(data: Path, files: dict[str, Path], sample: int = 2000) -> str:
    """The per-query values of the engines and pyndeval agree (1e-9) on every query of one
    version, and the two engines on all rows."""
    frames = {name: pl.read_parquet(p) for name, p in files.items() if p.exists()}
    notes = []
    engines = [n for n in frames if not n.startswith(("pyndeval", "hand"))]
    metric = "alpha_ndcg@20"
    if len(engines) == 2:
        a, b = (frames[n].sort("model", "query") for n in engines)
        diff = (a[metric] - b[metric]).abs().max()
        assert diff <= 1e-9, f"{engines}: values differ by {diff}"
        notes.append(f"{engines[0]} = {engines[1]} on {a.height:,} rankings (max |diff| {diff:.1e})")
    for name in [n for n in frames if n.startswith("pyndeval")]:
        model = name.split("-")[-1]
        ref = frames[name].rename({"value": "ref"})
        for engine in engines:
            ours = frames[engine].filter(pl.col("model") == model).select("query", metric)
            joined = ref.join(ours, on="query", how="left")
            diff = (joined["ref"] - joined[metric].fill_null(0.0)).abs().max()
            assert diff <= 1e-9, f"{engine} vs pyndeval ({model}): values differ by {diff}"
            notes.append(f"{engine} = pyndeval on {model}'s {ref.height:,} queries (max |diff| {diff:.1e})")
    if "hand-alpha_ndcg@20" in frames:
        hand = frames["hand-alpha_ndcg@20"]
        means = pl.read_parquet(files["hand-alpha_ndcg@20"].with_name("values_hand_means.parquet"))
        for engine in engines:
            ours = frames[engine].select("model", "query", metric)
            joined = ours.join(hand, on=["model", "query"], how="left")
            diff = (joined[metric] - joined["value"].fill_null(0.0)).abs().max()
            theirs = ours.group_by("model").agg(pl.col(metric).mean()).join(means, on="model")
            diff = max(diff, (theirs[metric] - theirs["mean"]).abs().max())
            assert diff <= 1e-9 and theirs.height == means.height, f"{engine} vs the hand plan: values differ by {diff}"
            notes.append(f"{engine} = the hand plan on {ours.height:,} rankings and the means (max |diff| {diff:.1e})")
    return "; ".join(notes)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--launch":
        return launch(argv[1:])
    if argv and argv[0] == "--child":
        kind, data, who, metric, values = argv[1:6]
        out = Path(values) if values != "-" else None
        if kind == "hand":
            return child_hand(Path(data), out)
        return (child_pyndeval if kind == "pyndeval" else child_engine)(Path(data), who, metric, out)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", default="20M", help="run rows: 20M = 500k queries x 20 results x 2 versions")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", type=Path, help="folder (default benchmarks/data/diversity_<rows>)")
    ap.add_argument("--only", help="comma-separated measurements, e.g. polars-ndcg@20,pyndeval-v1")
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--rounds", type=int, default=1,
                    help="run the measurements this many times, one round after the other (the host's speed drifts: "
                         "ratios are taken within a round, and the medians reported)")
    args = ap.parse_args(argv)
    queries = generate.parse_size(args.rows) // (RESULTS * VERSIONS)
    data = args.data or HERE / "data" / f"diversity_{generate.size_label(queries * RESULTS * VERSIONS)}"
    if not (data / "meta.json").exists():
        print("generating", json.dumps(build(data, queries, args.seed)), flush=True)
    meta = json.loads((data / "meta.json").read_text())
    me = [sys.executable, __file__, "--child"]
    plan = {}
    for engine in ("polars", "duckdb"):
        for metric in ("ndcg@20", "alpha_ndcg@20"):
            keep = data / f"values_{engine}.parquet" if metric.startswith("alpha") else None
            plan[f"{engine}-{metric}"] = (me + ["engine", str(data), engine, metric, str(keep or "-")], keep)
    keep = data / "values_hand.parquet"
    plan["hand-alpha_ndcg@20"] = (me + ["hand", str(data), "-", "alpha_ndcg@20", str(keep)], keep)
    for model in generate.model_names(VERSIONS):
        keep = data / f"values_pyndeval-{model}.parquet"
        plan[f"pyndeval-{model}"] = (me + ["pyndeval", str(data), model, "alpha_ndcg@20", str(keep)], keep)
    chosen = args.only.split(",") if args.only else list(plan)
    rounds: list[dict] = []
    for i in range(args.rounds):
        rounds.append({})
        for name in chosen:
            rounds[-1][name] = timed(plan[name][0], args.timeout)
            print(f"round {i + 1}", name, json.dumps(rounds[-1][name]), flush=True)
    files = {name: plan[name][1] for name in chosen if plan[name][1] is not None}
    print("check:", check(data, files))
    report(meta, rounds, os.getloadavg())


def ratios(rounds: list[dict], ours: str = "polars-alpha_ndcg@20") -> list[float]:
    """Each round's pyndeval (both versions, whole processes) over ``ours`` (a measurement's
    name: Polars' ``alpha_ndcg@20``, or the hand-written plan's, the ratio a check-free plan gets
    in the same round)."""
    out = []
    for r in rounds:
        theirs = [v["wall_s"] for k, v in r.items() if k.startswith("pyndeval") and "error" not in v]
        mine = r.get(ours)
        if len(theirs) == VERSIONS and mine and "error" not in mine:
            out.append(sum(theirs) / mine["wall_s"])
    return out


def report(meta: dict, rounds: list[dict], load: tuple[float, float, float]) -> None:
    import statistics

    def cell(name: str, key: str, fmt: str) -> str:
        runs = [r[name] for r in rounds if name in r]
        if not runs:
            return "—"
        if any("error" in r for r in runs):
            return next(r["error"] for r in runs if "error" in r)
        values = [r[key] for r in runs]
        text = fmt % statistics.median(values)
        return text if len(values) == 1 else f"{text} ({fmt % min(values)}-{fmt % max(values)})"

    print(f"\n{meta['rows']:,} run rows ({meta['queries']:,} queries x {meta['results']} x {meta['versions']} versions), "
          f"{meta['subtopic_judgments']:,} subtopic judgments; load average at the end {load[0]:.1f}\n")
    print("| measurement | whole process: wall | whole process: CPU | evaluate / pyndeval call: wall | peak RSS |")
    print("|---|---|---|---|---|")
    for name in rounds[0]:
        print(f"| {name} | {cell(name, 'wall_s', '%.1f s')} | {cell(name, 'cpu_s', '%.1f s')} | "
              f"{cell(name, 'evaluate_s', '%.1f s')} | "
              f"{cell(name, 'rss_gib', '%.2f GiB')} |")
    if len(rounds) > 1:
        print(f"\n(the median of {len(rounds)} rounds, then the smallest and largest)")
    for name, what in (("polars-alpha_ndcg@20", "Polars alpha_ndcg@20"), ("hand-alpha_ndcg@20", "the hand-written plan")):
        within = ratios(rounds, name)
        if within:
            print(f"\npyndeval (both versions) / {what}, whole processes, in each round: "
                  + ", ".join(f"{x:.1f}x" for x in within) + f" (median {statistics.median(within):.1f}x)")


if __name__ == "__main__":
    main()
