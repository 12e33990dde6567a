"""The diversity goals at small scale: alpha_ndcg@20 against ndcg@20 on the same 1M-row log (2 models x 25k
queries x 20, subtopic judgments: 1-5 subtopics per query, 6 relevant items each), in Polars and
DuckDB, and pyndeval on one model's run in-process.  `python benchmarks/diversity_small.py`."""
import time, numpy as np, polars as pl, rank_polars as rp, pyndeval
rng=np.random.default_rng(0)
nq, depth, models = 25_000, 20, 2
pool=40
# judgments: per query 3 subtopics on average (1..5), each relevant to ~6 of 40 pool docs
ns = rng.integers(1, 6, nq)
rows_q, rows_s, rows_d = [], [], []
for q in range(nq):
    for s in range(ns[q]):
        d = rng.choice(pool, 6, replace=False)
        rows_q += [q]*6; rows_s += [s]*6; rows_d += d.tolist()
sub = pl.DataFrame({"query": rows_q, "subtopic": rows_s, "item": rows_d, "relevance": 1})
run = pl.DataFrame({"model": np.repeat(np.arange(models), nq*depth), "query": np.tile(np.repeat(np.arange(nq), depth), models),
                    "item": np.concatenate([rng.permuted(np.tile(np.arange(pool), (nq,1)), axis=1)[:, :depth].ravel() for _ in range(models)]),
                    "position": np.tile(np.arange(1, depth+1), nq*models)})
flat = sub.group_by("query","item").agg(pl.col("relevance").max())
print("run rows", run.height, "judgments", sub.height)
def t(f, n=2):
    best=1e9
    for _ in range(n):
        s=time.perf_counter(); f(); best=min(best, time.perf_counter()-s)
    return best
print("polars ndcg@20       %.2fs" % t(lambda: rp.evaluate(run, ["ndcg@20"], qrels=flat, by="model")))
print("polars alpha_ndcg@20 %.2fs" % t(lambda: rp.evaluate(run, ["alpha_ndcg@20"], qrels=sub, by="model")))
print("duckdb ndcg@20       %.2fs" % t(lambda: rp.evaluate(run, ["ndcg@20"], qrels=flat, by="model", engine="duckdb"), 1))
print("duckdb alpha_ndcg@20 %.2fs" % t(lambda: rp.evaluate(run, ["alpha_ndcg@20"], qrels=sub, by="model", engine="duckdb"), 1))

# pyndeval on one model's run (in-process)
qr=[(str(q),str(s),str(d),1) for q,s,d in zip(rows_q,rows_s,rows_d)]
r0=run.filter(pl.col("model")==0)
rr=[(str(q),str(d),float(-p)) for q,d,p in r0.select("query","item","position").iter_rows()]
s=time.perf_counter(); pyndeval.ndeval(qr, rr, ["alpha-nDCG@20"]); print("pyndeval one model %.2fs" % (time.perf_counter()-s))
