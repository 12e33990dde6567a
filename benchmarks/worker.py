"""One implementation, one process: ``python benchmarks/worker.py IMPL --run R --qrels Q --out OUT.json``.

Started by ``run.py`` (which measures this process's wall-clock time and peak RSS); it
reads the Parquet files itself, as a user would, and writes the means per model version
(or, for the floors, the number of groups) to ``--out``.  Exit code 3 = MemoryError.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

# our metric name -> (pytrec_eval / trec_eval measure, ranx metric, ir_measures measure)
METRICS = {
    "ndcg@10": ("ndcg_cut_10", "ndcg@10", "nDCG@10"),
    "ap@100": ("map_cut_100", "map@100", "AP@100"),
    "rr": ("recip_rank", "mrr", "RR"),
    "p@10": ("P_10", "precision@10", "P@10"),
    "r@100": ("recall_100", "recall@100", "R@100"),
}
NAMES = list(METRICS)


def _scan(run: str):
    import polars as pl

    path = Path(run)
    if path.is_dir():
        return pl.scan_parquet(path / "**" / "*.parquet", hive_partitioning=True)
    return pl.scan_parquet(run)


def _duckdb_scan(run: str) -> str:
    path = Path(run)
    if path.is_dir():
        return f"read_parquet('{path}/**/*.parquet', hive_partitioning = true)"
    return f"read_parquet('{path}')"


def _frames(run: str, qrels: str):
    """The run and judgments in memory, as a user of an in-memory library would load them."""
    import polars as pl

    return _scan(run).collect(), pl.read_parquet(qrels)


def _table_means(table) -> dict:
    rows = table.sort("model").iter_rows(named=True)
    return {r["model"]: {"queries": r["queries"], **{m: r[m] for m in NAMES}} for r in rows}


# --- rank_polars -----------------------------------------------------------------------


def rank_polars_impl(
    args, *, engine: str, streaming: bool = True, memory_limit: str | None = None, checks: str = "full",
    labels: str = "qrels",
) -> dict:
    import rank_polars as rp

    warnings.simplefilter("ignore", rp.CoverageWarning)
    table = rp.evaluate(
        args.run,
        NAMES,
        qrels=args.qrels,
        by="model",
        missing="skip",
        engine=engine,
        streaming=streaming,
        duckdb_memory_limit=memory_limit,
        duckdb_temp_directory=args.temp if memory_limit else None,
        checks=checks,
        labels=labels,
    )
    return {"semantics": "skip", "means": _table_means(table)}


def reference(args) -> dict:
    """Expected means under every semantics a peer may have, from rank_polars per query."""
    import polars as pl
    import rank_polars as rp

    warnings.simplefilter("ignore", rp.CoverageWarning)
    qrels = pl.read_parquet(args.qrels)
    with_rel = qrels.filter(pl.col("relevance") > 0).select("query").unique()
    out = {}
    for missing in ("skip", "zero"):
        pq = rp.evaluate(args.run, NAMES, qrels=qrels, by="model", missing=missing, per_query=True, streaming=False)
        for suffix, table in (("", pq), ("_relevant_only", pq.join(with_rel, on="query", how="semi"))):
            agg = table.group_by("model").agg(pl.len().alias("queries"), *[pl.col(m).mean() for m in NAMES])
            out[missing + suffix] = _table_means(agg)
    labels = rp.evaluate(args.run, ["ndcg@10"], by="model", streaming=False)
    out["labels"] = {r["model"]: {"queries": r["queries"], "ndcg@10": r["ndcg@10"]} for r in labels.iter_rows(named=True)}
    stats = _scan(args.run).group_by("model").agg(pl.col("query").n_unique().alias("rankings"), pl.len().alias("rows"))
    out["rankings"] = {r["model"]: r["rankings"] for r in stats.collect().iter_rows(named=True)}
    out["rows"] = int(stats.collect()["rows"].sum())
    return {"semantics": "reference", "expected": out}


# --- peers -----------------------------------------------------------------------------


def pytrec_eval_impl(args) -> dict:
    """trec_eval 9 semantics: queries of the run that have judgments (missing = skip)."""
    import polars as pl
    import pytrec_eval

    run, qrels_df = _frames(args.run, args.qrels)
    qrels: dict[str, dict[str, int]] = {}
    for q, d, r in zip(*(qrels_df[c].to_list() for c in ("query", "item", "relevance"))):
        qrels.setdefault(q, {})[d] = r
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "map_cut.100", "recip_rank", "P.10", "recall.100"})
    means = {}
    for model in sorted(run["model"].unique().to_list()):
        part = run.filter(pl.col("model") == model)
        docs: dict[str, dict[str, float]] = {}
        for q, d, s in zip(*(part[c].to_list() for c in ("query", "item", "score"))):
            docs.setdefault(q, {})[d] = s
        del part
        per_query = evaluator.evaluate(docs)
        del docs
        n = len(per_query)
        means[model] = {"queries": n}
        for name, (trec, _, _) in METRICS.items():
            means[model][name] = sum(v[trec] for v in per_query.values()) / n
    return {"semantics": "skip", "means": means}


def ranx_impl(args) -> dict:
    """ranx with make_comparable=True: missing rankings scored 0, unjudged queries dropped
    (rank_polars missing="zero").

    ranx breaks score ties differently from trec_eval, so it is given the trec_eval order
    as its score (``-position``); see README.
    """
    import polars as pl
    from ranx import Qrels, Run, evaluate

    def pandas(df):  # ranx wants object-dtype string columns (pandas 3 defaults to "str")
        out = df.to_pandas()
        return out.astype({c: object for c in ("query", "item")})

    run, qrels_df = _frames(args.run, args.qrels)
    qrels = Qrels.from_df(pandas(qrels_df.with_columns(pl.col("relevance").cast(pl.Int64))), q_id_col="query", doc_id_col="item", score_col="relevance")
    means = {}
    for model in sorted(run["model"].unique().to_list()):
        part = run.filter(pl.col("model") == model).select("query", "item", (-pl.col("position")).cast(pl.Float64).alias("score"))
        r = Run.from_df(pandas(part), q_id_col="query", doc_id_col="item", score_col="score")
        del part
        values = evaluate(qrels, r, [m[1] for m in METRICS.values()], make_comparable=True)
        means[model] = {"queries": len(qrels.keys())}
        for name, (_, rx, _) in METRICS.items():
            means[model][name] = float(values[rx])
    return {"semantics": "zero", "means": means}


def ir_measures_impl(args) -> dict:
    """ir_measures (pytrec_eval provider): a judged query absent from the run scores 0."""
    import ir_measures
    import polars as pl

    run, qrels_df = _frames(args.run, args.qrels)
    qrels = qrels_df.rename({"query": "query_id", "item": "doc_id"}).to_pandas()
    measures = [ir_measures.parse_measure(m[2]) for m in METRICS.values()]
    means = {}
    for model in sorted(run["model"].unique().to_list()):
        part = run.filter(pl.col("model") == model).select(
            pl.col("query").alias("query_id"), pl.col("item").alias("doc_id"), "score"
        )
        agg = ir_measures.calc_aggregate(measures, qrels, part.to_pandas())
        means[model] = {"queries": None}
        for name, (_, _, irm) in METRICS.items():
            means[model][name] = float(agg[ir_measures.parse_measure(irm)])
    return {"semantics": "zero", "means": means, "ignore_queries": True}


def sklearn_impl(args) -> dict:
    """scikit-learn ndcg_score, nDCG@10 only, on the run's own labels.

    sklearn sees only the shown items (the ideal ranking comes from the run's labels, not
    from all judgments) and averages over tied scores; it is given ``-position`` as score
    (no ties) and compared with rank_polars in label-carrying mode (no qrels).
    """
    import numpy as np
    import polars as pl
    from sklearn.metrics import ndcg_score

    run = _scan(args.run).select("model", "query", "position", "relevance").collect()
    means = {}
    for model in sorted(run["model"].unique().to_list()):
        part = run.filter(pl.col("model") == model).sort("query", "position")
        depth = part.group_by("query").len()["len"]
        if depth.n_unique() != 1:
            raise SystemExit("sklearn runner needs rankings of equal length")
        k = int(depth[0])
        y_true = part["relevance"].to_numpy().reshape(-1, k).astype(np.float64)
        y_score = -part["position"].to_numpy().reshape(-1, k).astype(np.float64)
        means[model] = {"queries": y_true.shape[0], "ndcg@10": float(ndcg_score(y_true, y_score, k=10))}
    return {"semantics": "labels", "means": means}


# --- hand-written plans: what an expert writes for these five metrics, nothing else ----------
# trec_eval 9 semantics (missing="skip"): the rankings of judged queries; nDCG@10 with linear
# gains over the ideal of all judgments; AP@100 and R@100 over R = the relevant judgments.
# No checks.  ``labels``: the grades of the shown rows from the run's own relevance column
# (filtered at the reader) instead of the join with the positive judgments.


def _means_from_sums(rows) -> dict:
    means: dict = {}
    for r in rows:
        means[r["model"]] = {"queries": r["queries"], **{m: r[m] for m in NAMES}}
    return means


def hand_polars(args, labels: bool = False) -> dict:
    import polars as pl

    qrels = pl.scan_parquet(args.qrels)
    positive = qrels.filter(pl.col("relevance") > 0).select("query", "item", pl.col("relevance").cast(pl.Float64))
    run = _scan(args.run)
    if labels:  # a filter on the stored column reaches the Parquet reader
        hits = run.filter(pl.col("relevance") > 0).select("model", "query", "position", pl.col("relevance").cast(pl.Float64))
    else:
        hits = run.select("model", "query", "item", "position").join(positive, on=["query", "item"])
    pos = pl.col("position")
    # one window over the hits: the running count of relevant rows (AP's precision at each hit)
    hits = hits.with_columns(k=pl.int_range(1, pl.len() + 1).over("model", "query", order_by="position"))
    sums = hits.group_by("model", "query").agg(
        dcg=pl.when(pos <= 10).then(pl.col("relevance") / (pos + 1).log(2)).sum(),
        ap=pl.when(pos <= 100).then(pl.col("k") / pos).sum(),
        rr=1 / pos.min(),
        p10=(pos <= 10).sum(),
        r100=(pos <= 100).sum(),
    )
    i = pl.int_range(1, pl.len() + 1)
    ideal = positive.sort("query", "relevance", descending=[False, True]).group_by("query").agg(
        pl.col("relevance").head(10).dot(1 / (i.head(10) + 1).log(2)).alias("idcg"), pl.len().alias("R"))
    judged = qrels.select("query").unique()
    rankings = run.select("model", "query").unique().join(judged, on="query", how="semi")
    per = rankings.join(sums, on=["model", "query"], how="left").join(ideal, on="query", how="left").fill_null(0)
    out = per.group_by("model").agg(
        pl.len().alias("queries"),
        pl.when(pl.col("idcg") > 0).then(pl.col("dcg") / pl.col("idcg")).otherwise(0.0).mean().alias("ndcg@10"),
        pl.when(pl.col("R") > 0).then(pl.col("ap") / pl.col("R")).otherwise(0.0).mean().alias("ap@100"),
        pl.col("rr").mean().alias("rr"),
        (pl.col("p10") / 10).mean().alias("p@10"),
        pl.when(pl.col("R") > 0).then(pl.col("r100") / pl.col("R")).otherwise(0.0).mean().alias("r@100"),
    ).collect(engine="streaming")
    return {"semantics": "skip", "means": _means_from_sums(out.sort("model").iter_rows(named=True))}


def hand_duckdb_sql(run: str, qrels: str, labels: bool = False) -> str:
    """The same plan in SQL (``run``, ``qrels``: table expressions)."""
    hits = (f"SELECT model, query, position, CAST(relevance AS DOUBLE) AS rel FROM {run} WHERE relevance > 0" if labels
            else f"SELECT r.model, r.query, r.position, p.rel FROM {run} AS r JOIN positive AS p USING (query, item)")
    return f"""
WITH positive AS (SELECT query, item, CAST(relevance AS DOUBLE) AS rel FROM {qrels} WHERE relevance > 0),
hits AS ({hits}),
counted AS (SELECT *, row_number() OVER (PARTITION BY model, query ORDER BY position) AS k FROM hits),
sums AS (
  SELECT model, query,
    SUM(CASE WHEN position <= 10 THEN rel / log2(position + 1) ELSE 0 END) AS dcg,
    SUM(CASE WHEN position <= 100 THEN k / position ELSE 0 END) AS ap,
    1.0 / MIN(position) AS rr,
    COUNT_IF(position <= 10) AS p10,
    COUNT_IF(position <= 100) AS r100
  FROM counted GROUP BY ALL),
ideal AS (
  SELECT query, SUM(CASE WHEN i <= 10 THEN rel / log2(i + 1) ELSE 0 END) AS idcg, COUNT(*) AS "R"
  FROM (SELECT query, rel, row_number() OVER (PARTITION BY query ORDER BY rel DESC) AS i FROM positive) GROUP BY ALL),
rankings AS (SELECT DISTINCT model, query FROM {run} WHERE query IN (SELECT query FROM {qrels}))
SELECT model, COUNT(*) AS queries,
  AVG(CASE WHEN idcg > 0 THEN COALESCE(dcg, 0) / idcg ELSE 0 END) AS "ndcg@10",
  AVG(CASE WHEN "R" > 0 THEN COALESCE(ap, 0) / "R" ELSE 0 END) AS "ap@100",
  AVG(COALESCE(rr, 0)) AS rr,
  AVG(COALESCE(p10, 0) / 10) AS "p@10",
  AVG(CASE WHEN "R" > 0 THEN COALESCE(r100, 0) / "R" ELSE 0 END) AS "r@100"
FROM rankings LEFT JOIN sums USING (model, query) LEFT JOIN ideal USING (query)
GROUP BY model ORDER BY model
"""


def hand_duckdb(args, labels: bool = False) -> dict:
    import duckdb

    con = duckdb.connect(config={"preserve_insertion_order": False})
    sql = hand_duckdb_sql(_duckdb_scan(args.run), f"read_parquet('{args.qrels}')", labels)
    rows = con.sql(sql).pl().iter_rows(named=True)
    return {"semantics": "skip", "means": _means_from_sums(rows)}


# --- floors: read the log and do one grouped sum, nothing else ----------------------------


def floor_polars(args) -> dict:
    import polars as pl

    out = _scan(args.run).group_by("model", "query").agg(pl.col("relevance").sum()).collect(engine="streaming")
    return {"semantics": "floor", "groups": out.height}


def floor_duckdb(args) -> dict:
    import duckdb

    con = duckdb.connect()
    out = con.sql(f"SELECT model, query, sum(relevance) FROM {_duckdb_scan(args.run)} GROUP BY ALL").to_arrow_table()
    return {"semantics": "floor", "groups": out.num_rows}


# --- compare ----------------------------------------------------------------------------


def compare_impl(args) -> dict:
    """rank_polars.stats.compare of the two versions on nDCG@10 and AP@100 over all judged queries
    (paired; missing="zero"), randomization and bootstrap tests with n_resamples=10_000.

    The process wall clock covers both calls; the seconds of each phase are reported too.
    """
    import polars as pl
    import rank_polars as rp

    if not hasattr(rp, "compare"):
        return {"semantics": "unavailable", "note": "rank_polars.stats.compare does not exist yet"}
    warnings.simplefilter("ignore", rp.CoverageWarning)
    metrics = ["ndcg@10", "ap@100"]
    phases = {}
    t0 = time.perf_counter()
    per_query = rp.evaluate(args.run, metrics, qrels=args.qrels, by="model", per_query=True)
    phases["evaluate per query (for reference)"] = time.perf_counter() - t0
    paired = per_query.group_by("query").len().filter(pl.col("len") == per_query["model"].n_unique()).height
    tables = []
    for test in ("randomization", "bootstrap"):
        t0 = time.perf_counter()
        tables.append(rp.compare(args.run, metrics, qrels=args.qrels, by="model", test=test, n_resamples=10_000))
        phases[f"compare(test={test!r}, n_resamples=10_000)"] = time.perf_counter() - t0
    return {"semantics": "compare", "paired_queries": paired, "phases": phases, "result": "\n".join(map(str, tables))}


IMPLS = {
    "rank_polars-polars-streaming": lambda a: rank_polars_impl(a, engine="polars", streaming=True),
    "rank_polars-polars-memory": lambda a: rank_polars_impl(a, engine="polars", streaming=False),
    "rank_polars-duckdb": lambda a: rank_polars_impl(a, engine="duckdb"),
    "rank_polars-duckdb-2GB": lambda a: rank_polars_impl(a, engine="duckdb", memory_limit="2GB"),
    # checks="fast": without the per-ranking distinct counts (duplicate positions/items)
    "rank_polars-polars-streaming-fastchecks": lambda a: rank_polars_impl(a, engine="polars", checks="fast"),
    "rank_polars-duckdb-fastchecks": lambda a: rank_polars_impl(a, engine="duckdb", checks="fast"),
    # labels="run": the shown rows' grades from the run's relevance column (checked against
    # the qrels on the contributing rows), so the log is never joined with the judgments
    "rank_polars-polars-streaming-runlabels": lambda a: rank_polars_impl(a, engine="polars", labels="run"),
    "rank_polars-duckdb-runlabels": lambda a: rank_polars_impl(a, engine="duckdb", labels="run"),
    # the cost of the checks (benchmarks/README.md, "What the checks cost"): every label mode
    # with checks="fast" / "strict" beside the default "full"
    **{f"rank_polars-{engine}{lab}-{checks}checks": (
        lambda a, e=engine.split("-")[0], c=checks, l=lab: rank_polars_impl(a, engine=e, checks=c, labels="run" if l else "qrels"))
       for engine in ("polars-streaming", "duckdb") for lab in ("", "-runlabels") for checks in ("fast", "strict")
       if (lab, checks) != ("", "fast")},
    "hand-polars": hand_polars,
    "hand-duckdb": hand_duckdb,
    "hand-polars-runlabels": lambda a: hand_polars(a, labels=True),
    "hand-duckdb-runlabels": lambda a: hand_duckdb(a, labels=True),
    "pytrec_eval": pytrec_eval_impl,
    "ranx": ranx_impl,
    "ir_measures": ir_measures_impl,
    "sklearn-ndcg": sklearn_impl,
    "floor-polars-streaming": floor_polars,
    "floor-duckdb": floor_duckdb,
    "compare": compare_impl,
    "reference": reference,
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("impl", choices=sorted(IMPLS))
    ap.add_argument("--run", required=True)
    ap.add_argument("--qrels", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--temp", default=None, help="spill folder for the memory-limited DuckDB run")
    args = ap.parse_args()
    t0 = time.perf_counter()
    try:
        result = IMPLS[args.impl](args)
    except MemoryError:
        print(f"{args.impl}: MemoryError", file=sys.stderr)
        sys.exit(3)
    result["seconds_inside"] = result.get("seconds_inside", time.perf_counter() - t0)
    Path(args.out).write_text(json.dumps(result))


if __name__ == "__main__":
    main()
