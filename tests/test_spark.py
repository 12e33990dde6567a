"""``to_sql(..., dialect="spark")`` on a real local Spark session gives the Polars numbers.

One session for the test process (tests/conftest.py), a few cases each evaluating every metric, in batches
(:data:`BATCH`: Spark's planning of one very wide statement, not the data, is what costs here).
"""

from __future__ import annotations

import functools
import random
import warnings
from typing import Callable

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import rank_polars as rp
from rank_polars.sqlgen import to_sql

from .sql_cases import SPARK_METRICS


@pytest.fixture(scope="module")
def spark(spark_session):
    """The test process's one local Spark session (``spark_session`` in tests/conftest.py)."""
    return spark_session


def log(seed: int = 7) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Three models, 12 queries, ties in score, graded/negative/float labels, absent rankings."""
    rng = random.Random(seed)
    labels = [-1.0, 0.0, 0.0, 1.0, 1.0, 2.0, 0.5, 3.0]
    rows = []
    for model in ("m0", "m1", "m2"):
        for q in range(12):
            if rng.random() < 0.15:
                continue  # this model has no ranking for q
            items = rng.sample([f"d{i}" for i in range(15)], rng.randint(1, 12))
            for pos, item in enumerate(items, start=1):
                rows.append((model, f"q{q}", item, pos, rng.randint(0, 4) / 2, rng.choice(labels)))
    run = pl.DataFrame(rows, schema=["model", "query", "item", "position", "score", "relevance"], orient="row")
    judged = [(f"q{q}", f"d{i}", rng.choice(labels)) for q in range(14) for i in range(15) if rng.random() < 0.4]
    qrels = pl.DataFrame(judged, schema=["query", "item", "relevance"], orient="row")
    return run, qrels


def to_spark(spark, frame: pl.DataFrame, name: str) -> None:
    types = {pl.String: "STRING", pl.Int64: "BIGINT", pl.Float64: "DOUBLE"}
    schema = ", ".join(f"`{c.replace('`', '``')}` {types[t]}" for c, t in frame.schema.items())
    spark.createDataFrame(frame.rows(), schema=schema).createOrReplaceTempView(name)


# Spark's analysis and optimisation grow faster than the statement: the 75 metrics of
# ALL_METRICS in one evaluate took 230 s (one metric pass of 138k characters: 33 s analysis, 26 s
# optimisation), in four batches of 19 about 60 s in all (both measured on a loaded machine).  So
# every metric is still compared, in batches of at most BATCH_SQL characters of SQL each: a
# batch's cost is ~1 s plus its size's (quiet: a 12 KB batch of 19 metrics 2-3 s, the 86 KB
# batch holding both Rndcg 32 s, the same metrics one by one 30 s).
BATCH_SQL = 16_000


@functools.lru_cache(maxsize=None)
def _sql_size(metric: str) -> int:
    """The characters ``metric`` adds to a statement (its SQL alone, less one cheap metric's)."""
    def size(m: str) -> int:
        return len(to_sql([m], table="logs", by="model", qrels="judgments"))
    return max(size(metric) - size("p@5"), 0)


def batches(metrics: list[str]) -> list[list[str]]:
    """``metrics`` in order, cut into batches of at most :data:`BATCH_SQL` characters of SQL."""
    out: list[list[str]] = [[]]
    room = BATCH_SQL
    for metric in metrics:
        cost = _sql_size(metric) + 200  # its output column and the final select's share
        if out[-1] and cost > room:
            out.append([])
            room = BATCH_SQL
        out[-1].append(metric)
        room -= cost
    return out


def share(metrics: list[str], cases: list[Callable[[str], bool]]) -> list[list[str]]:
    """``metrics`` dealt over the cases (each metric to the case, among those that take it
    (``cases[i](metric)``), holding the fewest so far): every metric is compared once in Spark
    per test, every case with a share of them.

    Why not every metric in every case: each case changes the statement's shared parts (the
    ranking by score or position, missing rankings, per-query output, labels from the run,
    repeated rows), each metric its own formula; a Spark statement costs seconds of planning
    whatever its data, and every (metric, case) pair is compared in DuckDB and to_sql's SQL
    by tests/test_sql_engine.py's generated cases.  Dealt in order, so each case holds metrics
    of every family.

    >>> share(["a", "b", "c", "infap"], [lambda m: True, lambda m: m != "infap"])
    [['a', 'c', 'infap'], ['b']]
    """
    out: list[list[str]] = [[] for _ in cases]
    for metric in metrics:
        takers = [i for i, takes in enumerate(cases) if takes(metric)]
        out[min(takers, key=lambda i: len(out[i]))].append(metric)
    return out


def spark_result(spark, sql: str) -> pl.DataFrame:
    return pl.DataFrame([r.asDict() for r in spark.sql(sql).collect()])


# (with qrels, order, missing, per_query): each query evaluates every metric at once
CASES = [(False, "position", "zero", False), (True, "score", "skip", True), (True, "position", "zero", False)]


def test_spark_matches_polars(spark):
    run, qrels = log()
    to_spark(spark, run, "logs")
    to_spark(spark, qrels, "judgments")
    for (with_qrels, order, missing, per_query), metrics in zip(CASES, share(SPARK_METRICS, [lambda m: True] * len(CASES))):
        judgments = qrels if with_qrels else None
        source = run.drop("score" if order == "position" else "position")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = rp.evaluate(source, metrics, by="model", qrels=judgments, missing=missing, per_query=per_query)
        keys = [c for c in want.columns if c not in metrics]
        for part in batches(metrics):
            sql = to_sql(part, table="logs", by="model", qrels="judgments" if with_qrels else None,
                         missing=missing, per_query=per_query, order=order, dialect="spark")
            got = spark_result(spark, sql)
            assert got.columns == [*keys, *part]
            assert_frame_equal(got, want.select(*keys, *part), check_dtypes=False, abs_tol=1e-9, rel_tol=0)


def test_spark_hostile_names(spark):
    run, qrels = log(3)
    names = {"query": 'q"; DROP TABLE x; --', "item": "it`em' OR 1=1", "position": "pos ition", "relevance": "rél ☃"}
    to_spark(spark, run.drop("score").rename({**names, "model": "mo`del"}), "hostile_logs")
    want = rp.evaluate(run.drop("score"), ["ndcg@5", "ap", "err"], by="model")
    sql = to_sql(["ndcg@5", "ap", "err"], table="hostile_logs", by="mo`del", dialect="spark", **names)
    got = spark_result(spark, sql).rename({"mo`del": "model"})
    assert_frame_equal(got, want, check_dtypes=False, abs_tol=1e-9, rel_tol=0)
