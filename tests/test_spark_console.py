"""The Spark engine as a user meets it (issue 17 §6, §7b): a session it starts keeps the
console quiet and is reused; a LazyFrame over files reaches Spark as streamed Parquet."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import polars as pl
from polars.testing import assert_frame_equal

import rank_polars as rp
from rank_polars.engines.spark_engine import spark_frame

from . import system_deps

# Two evaluations in a fresh process with no session: the first starts Spark, the second
# must find it; stdout carries only our lines.
_CHILD = """
import polars as pl, rank_polars as rp
from pyspark.sql import SparkSession
run = pl.DataFrame({"query": ["q1", "q1", "q2"], "item": ["a", "b", "a"], "position": [1, 2, 1]})
qrels = pl.DataFrame({"query": ["q1", "q2"], "item": ["b", "a"], "relevance": [1, 1]})
first = rp.evaluate(run, ["ndcg@10", "map"], qrels=qrels, engine="spark")
jvm = id(SparkSession.getActiveSession().sparkContext)
second = rp.evaluate(run, ["p@1"], qrels=qrels, engine="spark")
print(first["map"][0], second["p@1"][0], jvm == id(SparkSession.getActiveSession().sparkContext))
"""


def test_a_session_started_here_is_quiet_and_reused():
    """No log4j lines, no JVM warnings, no PySpark pandas warning, no ``[Stage N:>`` bars
    (the console showed all four before), and one session for both calls."""
    system_deps.ensure("java")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    child = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, env=env, timeout=600)
    assert child.returncode == 0, child.stderr
    assert child.stdout.split() == ["0.75", "0.5", "True"]  # (1/2 + 1)/2 by hand; q2's first is relevant
    assert child.stderr == ""


def test_a_lazyframe_over_files_reaches_spark_as_parquet(spark_session, tmp_path):
    """A ``pl.scan_parquet`` LazyFrame is streamed to Parquet and read by Spark (not
    collected into the driver), with the Polars engine's numbers."""
    run = pl.DataFrame({"model": ["a"] * 5 + ["b"] * 4, "query": ["q1", "q1", "q1", "q2", "q2", "q1", "q1", "q2", "q2"],
                        "item": ["x", "y", "z", "x", "w", "y", "x", "w", "v"], "position": [1, 2, 3, 1, 2, 1, 2, 1, 2]})
    qrels = pl.DataFrame({"query": ["q1", "q1", "q2"], "item": ["y", "z", "w"], "relevance": [2, 1, 1]})
    run.write_parquet(tmp_path / "run.parquet")
    lazy = pl.scan_parquet(tmp_path / "run.parquet")
    frame = spark_frame(spark_session, lazy, "run")
    assert [f.endswith(".parquet") for f in frame.inputFiles()] == [True]
    metrics = ["ndcg@10", "map", "p@2"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = rp.evaluate(run, metrics, qrels=qrels, by="model", per_query=True)
        got = rp.evaluate(lazy, metrics, qrels=qrels, by="model", per_query=True, engine="spark", spark=spark_session)
    assert_frame_equal(got.sort("model", "query"), want.sort("model", "query"), check_dtypes=False, abs_tol=1e-12)
