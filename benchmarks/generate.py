"""Generate realistic ranking logs for the benchmarks (deterministic by seed).

    python benchmarks/generate.py --rows 20M                 # 100k queries x 100 results x 2 versions
    python benchmarks/generate.py --queries 2000 --results 20 --versions 2 --out /tmp/tiny

Writes, under ``--out`` (default ``benchmarks/data/<size>``):

* ``run.parquet``      one file, columns model, query, item, position, score, relevance
* ``run_hive/model=<v>/part.parquet``  the same rows partitioned by version (hive layout)
* ``qrels.parquet``    judgments query, item, relevance
* ``meta.json``        what was generated (sizes, seed, counts)

What the data looks like (per query): a pool of ``results + 50`` candidate items from a
catalog; ~10% of queries have no relevant item at all, the others have each candidate
relevant with probability ~4.5% (grades 1/2/3 at 60/30/10%).  Each version scores the pool
(grade signal + version-specific noise, rounded to 2 decimals so scores tie) and shows its
top ``results``; ``position`` follows trec_eval's order (score descending, ties broken by
item id descending), so position order and score order give the same numbers.  Judgments
hold every relevant candidate (also those no version retrieved), extra relevant items that
are in no pool, and the non-relevant candidates any version showed in its top 20.  Some
rankings are absent (1% of queries have no ranking from the second version) and 0.5% of
queries have no judgments.  The run's ``relevance`` is the judged grade joined in (0 when
unjudged), for the label-carrying mode.

Generation is vectorised (numpy + Polars) and chunked by queries: each chunk is written as
row groups, so 200M rows generate in a few GiB of memory.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
CATALOG = 9_999_991  # prime: (a + j*b) mod CATALOG is distinct over a query's pool
POOL_EXTRA = 50  # candidates beyond the shown depth
UNRETRIEVED_MAX = 2  # judged relevant items outside every pool, per query
P_NO_RELEVANT = 0.10
P_RELEVANT = 0.045
GRADE_P = (0.6, 0.3, 0.1)
P_MISSING_RANKING = 0.01  # of queries without a ranking from the last version
P_UNJUDGED = 0.005
JUDGE_DEPTH = 20
ROW_GROUP = 500_000

RUN_SCHEMA = pa.schema(
    [
        ("model", pa.string()),
        ("query", pa.string()),
        ("item", pa.string()),
        ("position", pa.int32()),
        ("score", pa.float64()),
        ("relevance", pa.int32()),
    ]
)
QRELS_SCHEMA = pa.schema([("query", pa.string()), ("item", pa.string()), ("relevance", pa.int32())])


def parse_size(text: str) -> int:
    text = text.strip().upper()
    mult = {"K": 1_000, "M": 1_000_000, "G": 1_000_000_000, "B": 1_000_000_000}.get(text[-1:], 1)
    return int(float(text.rstrip("KMGB")) * mult)


def size_label(rows: int) -> str:
    for unit, div in (("G", 1_000_000_000), ("M", 1_000_000), ("k", 1_000)):
        if rows >= div and rows % div == 0:
            return f"{rows // div}{unit}"
    return str(rows)


def model_names(versions: int) -> list[str]:
    return [f"v{i + 1}" for i in range(versions)]


def _ids(prefix: str, numbers: np.ndarray, width: int) -> pl.Series:
    """Fixed-width ids ("q00000042") so string order is numeric order."""
    s = pl.Series("id", numbers.astype(np.int64))
    return pl.select(pl.concat_str(pl.lit(prefix), s.cast(pl.String).str.zfill(width))).to_series()


def chunk(q0: int, nq: int, results: int, versions: int, seed: int) -> tuple[pa.Table, pa.Table]:
    """Rows of queries q0 .. q0+nq-1 (every version), and their judgments."""
    rng = np.random.default_rng([seed, q0])
    pool = results + POOL_EXTRA
    qidx = np.arange(q0, q0 + nq)
    # candidate item numbers: distinct within a query, shared catalog across queries
    a = rng.integers(0, CATALOG, nq)
    b = rng.integers(1, CATALOG, nq)
    j = np.arange(pool + UNRETRIEVED_MAX)
    items = (a[:, None] + j[None, :] * b[:, None]) % CATALOG  # (nq, pool + extra)

    # true grades of the pool
    has_rel = rng.random(nq) >= P_NO_RELEVANT
    rel = (rng.random((nq, pool)) < P_RELEVANT) & has_rel[:, None]
    grade = np.where(rel, rng.choice([1, 2, 3], size=(nq, pool), p=GRADE_P), 0).astype(np.int32)

    # each version ranks the pool; shown = its top `results`, in trec_eval order
    shown_pos = np.zeros((versions, nq, pool), dtype=np.int32)  # 0 = not shown
    order_by_version = []
    for v in range(versions):
        noise = rng.normal(0.0, 1.5 - 0.2 * v, (nq, pool))
        score = np.round(1.2 * grade + noise + 5.0, 2)
        # lexsort: last key is primary -> score desc, then item id desc
        order = np.lexsort((-items[:, :pool], -score), axis=1)[:, :results]
        rows = np.arange(nq)[:, None]
        shown_pos[v, rows, order] = np.arange(1, results + 1)[None, :]
        order_by_version.append((order, score[rows, order]))

    missing_last = rng.random(nq) < P_MISSING_RANKING
    unjudged = rng.random(nq) < P_UNJUDGED
    qnames = _ids("q", qidx, 8)
    names = model_names(versions)

    parts = []
    for v, (order, score) in enumerate(order_by_version):
        keep = ~missing_last if v == versions - 1 and versions > 1 else np.ones(nq, bool)
        qi = np.repeat(np.nonzero(keep)[0], results)
        it = np.take_along_axis(items[:, :pool], order, axis=1)[keep].ravel()
        gr = np.take_along_axis(grade, order, axis=1)[keep].ravel()
        parts.append(
            pl.DataFrame(
                {
                    "model": pl.Series([names[v]]).new_from_index(0, len(qi)),
                    "query": qnames.gather(qi),
                    "item": _ids("d", it, 8),
                    "position": np.tile(np.arange(1, results + 1, dtype=np.int32), int(keep.sum())),
                    "score": score[keep].ravel(),
                    "relevance": gr,
                }
            )
        )
    run = pl.concat(parts)

    # judgments: relevant candidates (shown or not), extra unretrieved relevant items,
    # and non-relevant candidates shown in some version's top JUDGE_DEPTH
    best = np.where(shown_pos > 0, shown_pos, 10**9).min(axis=0)
    judged = (grade > 0) | (best <= JUDGE_DEPTH)
    extra_n = np.where(has_rel, rng.integers(0, UNRETRIEVED_MAX + 1, nq), 0)
    extra = j[None, pool:] < (pool + extra_n[:, None])
    judged_all = np.concatenate([judged, extra], axis=1) & ~unjudged[:, None]
    grade_all = np.concatenate([grade, rng.choice([1, 2, 3], size=(nq, UNRETRIEVED_MAX), p=GRADE_P)], axis=1)
    qi, ji = np.nonzero(judged_all)
    qrels = pl.DataFrame(
        {
            "query": qnames.gather(qi),
            "item": _ids("d", items[qi, ji], 8),
            "relevance": grade_all[qi, ji].astype(np.int32),
        }
    )
    # the run's label is the judged grade (0 when unjudged); every relevant candidate is judged
    # except in unjudged queries, whose labels are 0 as a labeller would leave them
    run = run.with_columns(
        pl.when(pl.col("query").is_in(qnames.filter(pl.Series(unjudged)).implode()))
        .then(0)
        .otherwise(pl.col("relevance"))
        .cast(pl.Int32)
        .alias("relevance")
    )
    return _arrow(run, RUN_SCHEMA), _arrow(qrels, QRELS_SCHEMA)


def _arrow(df: pl.DataFrame, schema: pa.Schema) -> pa.Table:
    return df.to_arrow().cast(schema)


def generate(out: Path, queries: int, results: int, versions: int, seed: int, chunk_queries: int) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    names = model_names(versions)
    hive = {m: out / "run_hive" / f"model={m}" for m in names}
    for d in hive.values():
        d.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    single = pq.ParquetWriter(out / "run.parquet", RUN_SCHEMA, compression="zstd")
    hive_schema = RUN_SCHEMA.remove(0)
    parts = {m: pq.ParquetWriter(d / "part.parquet", hive_schema, compression="zstd") for m, d in hive.items()}
    qwriter = pq.ParquetWriter(out / "qrels.parquet", QRELS_SCHEMA, compression="zstd")
    rows = judgments = relevant_rows = 0
    try:
        for q0 in range(0, queries, chunk_queries):
            run, qrels = chunk(q0, min(chunk_queries, queries - q0), results, versions, seed)
            single.write_table(run, row_group_size=ROW_GROUP)
            model = run.column("model")
            for m, w in parts.items():
                w.write_table(run.filter(pa.compute.equal(model, m)).drop(["model"]), row_group_size=ROW_GROUP)
            qwriter.write_table(qrels, row_group_size=ROW_GROUP)
            rows += run.num_rows
            judgments += qrels.num_rows
            relevant_rows += int(pa.compute.sum(pa.compute.greater(run.column("relevance"), 0)).as_py())
    finally:
        single.close()
        qwriter.close()
        for w in parts.values():
            w.close()
    meta = {
        "queries": queries,
        "results": results,
        "versions": versions,
        "models": names,
        "seed": seed,
        "rows": rows,
        "judgments": judgments,
        "relevant_row_share": relevant_rows / max(rows, 1),
        "seconds": round(time.perf_counter() - t0, 2),
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=2))
    return meta


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", help="total rows, e.g. 2M, 20M, 200M (sets --queries from --results and --versions)")
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--results", type=int, default=100)
    ap.add_argument("--versions", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--chunk-queries", type=int, default=20_000, help="queries generated and written per chunk")
    ap.add_argument("--out", type=Path, help="output folder (default benchmarks/data/<size>)")
    args = ap.parse_args(argv)
    if args.rows:
        args.queries = math.ceil(parse_size(args.rows) / (args.results * args.versions))
    out = args.out or HERE / "data" / size_label(args.queries * args.results * args.versions)
    meta = generate(out, args.queries, args.results, args.versions, args.seed, args.chunk_queries)
    print(json.dumps({"out": str(out), **meta}))
    return meta


if __name__ == "__main__":
    main()
