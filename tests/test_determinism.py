"""Every value of ``evaluate`` is the same double on every run, whatever the number of threads,
in the Polars and the DuckDB engine; and the two engines agree bit for bit on
every metric that takes no logarithm.

Each run is a fresh process (``POLARS_MAX_THREADS`` is read once, at import; DuckDB's
``threads`` is set on the engine's connection), over a log large enough for both engines to
split it across threads (400k rows, in several row groups).  Before the fix, four runs of the
same evaluation gave four different last bits in every mean.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import polars as pl
import pytest

METRICS = ["ndcg@10", "ndcg", "ap", "rbp(p=0.8)", "err@20", "bpref", "p@5", "rr", "r@100"]

# Both workers' start: the data's folder and the thread count from the command line, DuckDB's
# connections given that many threads (Polars reads POLARS_MAX_THREADS from the environment)
PRELUDE = textwrap.dedent('''
    import json, sys, warnings
    warnings.simplefilter("ignore")
    import polars as pl
    import rank_polars as rp
    from rank_polars.engines.duckdb_engine import DuckDBEngine

    folder, threads = sys.argv[1], int(sys.argv[2])
    connect = DuckDBEngine.connect

    def with_threads(self):
        con = connect(self)
        con.execute(f"SET threads = {threads}")
        return con

    DuckDBEngine.connect = with_threads
''')

WORKER = PRELUDE + textwrap.dedent('''
    metrics = json.loads(sys.argv[3])
    out = {}
    for engine in ("polars", "duckdb"):
        for per_query in (False, True):
            table = rp.evaluate(f"{folder}/run.parquet", metrics, qrels=f"{folder}/qrels.parquet", by="model",
                                per_query=per_query, engine=engine)
            table = table.sort(["model", "query"] if per_query else ["model"])
            out[f"{engine} {per_query}"] = {m: [v.hex() for v in table[m]] for m in metrics}
    print(json.dumps(out))
''')


def write_log(folder: Path, queries: int = 2_000, depth: int = 100, seed: int = 7) -> None:
    """Two versions ranking ``depth`` items per query, graded judgments (0..3) for ~6% of the
    shown items and a few unshown ones: irrational discounts, ties of scores, long sums."""
    rng = np.random.default_rng(seed)
    frames = []
    for v, model in enumerate(("v1", "v2")):
        q = np.repeat(np.arange(queries), depth)
        item = rng.integers(0, 400, size=q.size)
        frames.append(pl.DataFrame({"model": model, "query": [f"q{x:05d}" for x in q], "item": [f"d{x}" for x in item],
                                    "score": np.round(rng.random(q.size), 2) + v}))
    run = pl.concat(frames).unique(["model", "query", "item"], keep="first", maintain_order=True)
    run = run.with_columns(pl.col("score").rank("ordinal", descending=True).over("model", "query").alias("position"))
    judged = run.select("query", "item").unique().sample(fraction=0.08, seed=seed)
    grades = rng.choice([0, 1, 2, 3], size=judged.height, p=[0.3, 0.4, 0.2, 0.1])
    qrels = judged.with_columns(relevance=pl.Series(grades))
    run.sort("model", "query", "position").write_parquet(folder / "run.parquet", row_group_size=50_000)
    qrels.write_parquet(folder / "qrels.parquet", row_group_size=20_000)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    folder = tmp_path_factory.mktemp("determinism")
    write_log(folder)
    assert pl.scan_parquet(folder / "run.parquet").select(pl.len()).collect().item() > 350_000
    # 4 twice: the same settings, run again
    return [run_worker(WORKER, folder, threads, json.dumps(METRICS)) for threads in (1, 2, 4, 4)]


def run_worker(worker: str, folder: Path, threads: int, *args: str) -> dict:
    """``worker``'s JSON output, run as a fresh process with ``threads`` threads."""
    env = {**os.environ, "POLARS_MAX_THREADS": str(threads)}
    done = subprocess.run([sys.executable, "-c", worker, str(folder), str(threads), *args],
                          capture_output=True, text=True, env=env, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_every_run_gives_the_same_bits(runs: list[dict]) -> None:
    first = runs[0]
    for threads, other in zip((2, 4, 4), runs[1:]):
        for key, values in first.items():
            for metric in METRICS:
                assert other[key][metric] == values[metric], f"{key} {metric}: threads=1 and threads={threads} differ"


def test_polars_and_duckdb_agree_bit_for_bit(runs: list[dict]) -> None:
    for per_query in (False, True):
        polars, duckdb = runs[0][f"polars {per_query}"], runs[0][f"duckdb {per_query}"]
        for metric in METRICS:
            # nDCG too: the SQL's log2 is Polars' ln(x) / ln(2) (_dsl.sql_log2), not the C library's log2
            assert polars[metric] == duckdb[metric], f"{metric} (per_query={per_query})"


def test_ordered_sum_adds_in_rank_order_one_by_one() -> None:
    """``ordered_sum`` leans on a list's sum adding its values one by one from the first (Polars
    does not document the order; a pairwise sum would give other bits): groups of 1 to 3,000
    rows, values of magnitudes 1e-8 to 1e8 arriving shuffled, each sum equal to Python's loop
    in rank order, with nulls skipped and an empty group 0."""
    from rank_polars.engines.polars_engine import ordered_sum

    rng = np.random.default_rng(34)
    sizes = [1, 2, 7, 20, 127, 128, 129, 1000, 3000]
    group = np.repeat(np.arange(len(sizes)), sizes)
    rank = np.concatenate([rng.permutation(n) + 1 for n in sizes])
    x = rng.random(len(group)) * 10.0 ** rng.integers(-8, 9, len(group))
    frame = pl.DataFrame({"g": group, "rank": rank, "x": x}).with_columns(
        pl.when(pl.col("rank") % 11 == 5).then(None).otherwise(pl.col("x")).alias("x"))
    empty = pl.DataFrame({"g": [99], "rank": [1], "x": [None]}, schema=frame.schema)
    got = dict(pl.concat([frame, empty]).sample(fraction=1.0, shuffle=True, seed=1)
               .group_by("g").agg(ordered_sum(pl.col("x"), "rank")).iter_rows())
    for g in range(len(sizes)):
        total = 0.0
        for value in frame.filter(pl.col("g") == g).sort("rank")["x"]:
            if value is not None:
                total += value
        assert got[g] == total, (sizes[g], got[g], total)
    assert got[99] == 0.0


@pytest.mark.parametrize("p", [0.5, 0.8, 0.95])
def test_rbp_of_a_log_of_one_row_is_the_same_in_both_engines(p: float) -> None:
    """RBP's p^(rank-1) over a log of one row: Polars' pow over a column of one value multiplies
    for the exponents 2..9 (0.08192 where DuckDB's pow gives 0.08191999999999999 for p=0.8 at
    rank 5, before commit e904a39), so the formula tree's pow takes the C library's value there."""
    import rank_polars as rp

    for position in range(1, 13):  # the shortcuts are ranks 3..10
        run = pl.DataFrame({"query": ["q"], "item": ["d1"], "position": [position], "relevance": [1]})
        many = pl.DataFrame({"query": ["q", "r"], "item": ["d1", "d1"], "position": [position, 1], "relevance": [1, 1]})
        polars, duckdb = (rp.evaluate(run, [f"rbp(p={p})"], engine=e, per_query=True).row(0)[-1] for e in ("polars", "duckdb"))
        beside = rp.evaluate(many, [f"rbp(p={p})"], per_query=True).filter(pl.col("query") == "q").row(0)[-1]
        assert polars == duckdb == beside, (position, polars, duckdb, beside)


def test_diversity_measures_give_the_same_bits_every_run(tmp_path: Path) -> None:
    """The diversity family's sums (each rank's subtopic gains, the per-list sums, MAP-IA's sum
    over subtopics) are added in a fixed order in both engines; before, three runs over this
    log gave three different last bits in Polars and in DuckDB."""
    import rank_polars as rp

    rng = np.random.default_rng(11)
    queries, depth = 6_000, 30
    q = np.repeat(np.arange(queries), depth)
    item = rng.integers(0, 60, size=q.size)
    run = pl.DataFrame({"query": [f"q{x:05d}" for x in q], "item": [f"d{x}" for x in item],
                        "score": rng.random(q.size)}).unique(["query", "item"], keep="first", maintain_order=True)
    judged = run.select("query", "item").sample(fraction=0.3, seed=11)
    subtopics = pl.concat([judged.with_columns(subtopic=pl.lit(s), relevance=pl.Series(rng.integers(0, 2, judged.height)))
                           for s in (1, 2, 3)]).sample(fraction=0.6, seed=12)
    run.write_parquet(tmp_path / "run.parquet", row_group_size=20_000)
    subtopics.write_parquet(tmp_path / "subtopics.parquet", row_group_size=20_000)
    metrics = ["alpha_ndcg@20", "err_ia@20", "map_ia", "alpha_dcg@10"]
    for engine in ("polars", "duckdb"):
        bits = []
        for _ in range(3):
            table = rp.evaluate(str(tmp_path / "run.parquet"), metrics, qrels=str(tmp_path / "subtopics.parquet"),
                                per_query=True, engine=engine).sort("query")
            bits.append({m: [v.hex() for v in table[m]] for m in metrics})
        for other in bits[1:]:
            for m in metrics:
                assert other[m] == bits[0][m], f"{engine} {m}"


BEYOND_WORKER = PRELUDE + textwrap.dedent('''
    history, sparse, vectors, cats = (f"{folder}/{name}.parquet" for name in ("history", "sparse", "vectors", "categories"))
    per_list = [rp.arp(k=10, history=history), rp.aplt(k=10, history=history), rp.epc(k=10, history=history),
                rp.efd(k=10, history=history), rp.ils(k=10, features=vectors),
                rp.diversity(k=10, history=sparse, sim="cooccurrence"), rp.serendipity(k=10, history=history, features=vectors)]
    by_category = [rp.ils(k=10, features=cats), rp.serendipity(k=10, history=history, features=cats)]
    per_group = [rp.novelty(k=10, history=history, unseen="zero"), rp.entropy(k=10), rp.gini(k=10),
                 rp.exposure_gini(k=10), rp.catalog_coverage(k=10), rp.pop_reo(k=10, history=history),
                 rp.pop_rsp(k=10, history=history)]
    # per list (the means over lists are evaluate's, added in a fixed order for every family)
    calls = [("lists", per_list, True), ("categories", by_category, True), ("groups", per_group, False)]
    out = {}
    for engine in ("polars", "duckdb"):
        for name, metrics, per_query in calls:
            table = rp.evaluate(f"{folder}/log.parquet", metrics, by="model", query="user", per_query=per_query, engine=engine)
            table = table.sort(["model", "user"] if per_query else ["model"])
            for m in table.columns[2:]:  # after (model, user) or (model, queries)
                out[f"{engine} {name} {per_query} {m}"] = [None if v is None else v.hex() for v in table[m]]
    print(json.dumps(out))
''')


def write_beyond_log(folder: Path, users: int = 12_000, depth: int = 12, items: int = 3_000, seed: int = 5) -> None:
    """Two models showing ``depth`` items to each of ``users`` users (items drawn with a long
    tail of popularity, 5% relevant), a history of 20 items per user (and a sparser one of 3,
    drawn uniformly, for the co-occurrence: DuckDB's join of each shown item with its users
    grows with the popular items' users), 16-dimensional vectors and one to three categories
    per item: 288k shown rows, 240k of them in the top 10."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / (np.arange(items) + 5.0) ** 0.9
    p = weights / weights.sum()
    frames = []
    for model in ("v1", "v2"):
        u = np.repeat(np.arange(users), depth + 4)
        frames.append(pl.DataFrame({"model": model, "user": u, "item": rng.choice(items, size=u.size, p=p)}))
    log = pl.concat(frames).unique(["model", "user", "item"], keep="first", maintain_order=True)
    log = log.with_columns(pl.int_range(1, pl.len() + 1).over("model", "user").alias("position")).filter(pl.col("position") <= depth)
    log = log.with_columns(relevance=pl.Series((rng.random(log.height) < 0.05).astype(np.int8)))
    log.write_parquet(folder / "log.parquet", row_group_size=40_000)
    history = pl.DataFrame({"user": np.repeat(np.arange(users), 20), "item": rng.choice(items, size=users * 20, p=p)}).unique()
    history.write_parquet(folder / "history.parquet", row_group_size=40_000)
    sparse = pl.DataFrame({"user": np.repeat(np.arange(users), 3), "item": rng.integers(0, items, size=users * 3)}).unique()
    sparse.write_parquet(folder / "sparse.parquet")
    pl.DataFrame({"item": np.arange(items), "vec": rng.standard_normal((items, 16)).tolist()}).write_parquet(folder / "vectors.parquet")
    cats = [sorted({f"c{c}" for c in rng.integers(0, 40, size=rng.integers(1, 4))}) for _ in range(items)]
    pl.DataFrame({"item": np.arange(items), "cat": cats}).write_parquet(folder / "categories.parquet")


@pytest.fixture(scope="module")
def beyond_runs(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    folder = tmp_path_factory.mktemp("beyond")
    write_beyond_log(folder)
    assert pl.scan_parquet(folder / "log.parquet").select(pl.len()).collect().item() > 250_000
    return [run_worker(BEYOND_WORKER, folder, threads) for threads in (1, 4)]


def test_beyond_accuracy_measures_give_the_same_bits_every_run(beyond_runs: list[dict]) -> None:
    """The beyond-accuracy family's float sums (novelty's and entropy's over the shown items,
    the Gini indices', EPC / EFD's and serendipity's over a list's rows, the similarities'
    over a list's vectors or categories, a user's profile) are added in a fixed order in both
    engines: fresh processes with 1 and 4 threads give the same bits, per list and per group."""
    results = beyond_runs
    differ = sorted({key for other in results[1:] for key, values in results[0].items() if other[key] != values})
    assert not differ, f"{len(differ)} outputs differ between thread counts: {differ}"


# Computed by other arithmetic in each engine, so equal at 1e-9 (tests/test_beyond_sql.py) and
# not bit for bit: DuckDB sums the normalised vectors' components, the categories' and the
# co-occurrence cosines exactly (DECIMAL), the Polars engine in doubles in NumPy, each list in
# a fixed order (docs/how-it-works.md)
SIMILARITIES = ("ils@10", "diversity(sim=cooccurrence)@10", "serendipity@10")


def test_beyond_accuracy_measures_agree_bit_for_bit_across_engines(beyond_runs: list[dict]) -> None:
    """Every other beyond-accuracy value is the same double in Polars and DuckDB: the same
    operations in the same order (EPC's pop / users and EFD's pop / rows were 1 ulp off in 1% of
    the lists before commit e904a39, Polars dividing by a constant as a product with its reciprocal)."""
    out = beyond_runs[0]
    compared = [key for key in out if key.startswith("polars ") and not key.endswith(SIMILARITIES)]
    assert any(key.endswith("epc@10") for key in compared) and len(compared) == 11
    differ = {key: sum(a != b for a, b in zip(out[key], out["duckdb" + key[len("polars"):]])) for key in compared}
    assert not any(differ.values()), {key: n for key, n in differ.items() if n}
