"""The Spark engine as a user meets it: a session it starts keeps the
console quiet and is reused; ``progress=`` shows our phases inside Spark; a LazyFrame over
files reaches Spark as streamed Parquet."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import warnings
from typing import Callable, Iterator

import polars as pl
from polars.testing import assert_frame_equal

import rank_polars as rp
from rank_polars.engines.spark_engine import spark_frame

from . import system_deps

# Two evaluations in a fresh process with no session: the first starts Spark, the second
# must find it; stdout carries only our lines.
_CHILD = """
import contextlib, polars as pl, rank_polars as rp
from pyspark.sql import SparkSession
run = pl.DataFrame({"query": ["q1", "q1", "q2"], "item": ["a", "b", "a"], "position": [1, 2, 1]})
qrels = pl.DataFrame({"query": ["q1", "q2"], "item": ["b", "a"], "relevance": [1, 1]})
class Phases:
    names = []
    @contextlib.contextmanager
    def phase(self, description, total=None, unit=""):
        self.names.append(description)
        yield lambda n: None
first = rp.evaluate(run, ["ndcg@10", "map"], qrels=qrels, engine="spark", progress=Phases())
jvm = id(SparkSession.getActiveSession().sparkContext)
second = rp.evaluate(run, ["p@1"], qrels=qrels, engine="spark")
print(first["map"][0], second["p@1"][0], jvm == id(SparkSession.getActiveSession().sparkContext))
print("|".join(Phases.names))
"""


def test_a_session_started_here_is_quiet_and_reused():
    """No log4j lines, no JVM warnings, no PySpark pandas warning, no ``[Stage N:>`` bars
    (the console showed all four before), and one session for both calls."""
    system_deps.ensure("java")
    # the test session's JVM settings (tests/conftest.py: C1 only, serial collector, few shuffle
    # partitions for tiny frames), given the way a user gives spark-submit's: they change the
    # JVM's cost (24.6 -> 18.8 s alone), not what it prints or which session rank-polars finds
    submit = ("--conf spark.sql.shuffle.partitions=2 "
              "--driver-java-options '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC' pyspark-shell")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_SUBMIT_ARGS": submit}
    child = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, env=env, timeout=600)
    assert child.returncode == 0, child.stderr
    values, phases = child.stdout.splitlines()
    assert values.split() == ["0.75", "0.5", "True"]  # (1/2 + 1)/2 by hand; q2's first is relevant
    # with progress=, the JVM's start is a phase of its own, before ours
    assert phases.split("|") == ["starting Spark", "reading the run and judgments into Spark",
                                 "checking the run and judgments", "metric pass and fetching (2 metrics)"]
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


class _Phases:
    """A :class:`rank_polars.progress.Progress` that records the phases it is asked to show."""

    def __init__(self) -> None:
        self.names: list[str] = []

    @contextlib.contextmanager
    def phase(self, description: str, total: int | None = None, unit: str = "") -> Iterator[Callable[[int], None]]:
        self.names.append(description)
        yield lambda n: None


def test_progress_shows_our_phases_inside_spark(spark_session):
    """``progress=`` (and ``--progress``) shows the Spark engine's own phases, as the Polars
    engine does: reading, checks, the metric pass with its fetch, the families;
    a session given (or already running) has no start-up phase."""
    from rank_polars.measures.clicks import Clicks

    run = pl.DataFrame({"query": ["q1", "q1", "q2"], "item": ["a", "b", "a"], "position": [1, 2, 1], "click": [0, 1, 1]})
    qrels = pl.DataFrame({"query": ["q1", "q2"], "item": ["b", "a"], "relevance": [1, 1]})
    shown = _Phases()
    got = rp.evaluate(run, ["ndcg@10", "map"], qrels=qrels, engine="spark", spark=spark_session, progress=shown)
    assert got["map"][0] == 0.75  # (1/2 + 1)/2 by hand
    assert shown.names == ["reading the run and judgments into Spark", "checking the run and judgments",
                           "metric pass and fetching (2 metrics)"]
    shown = _Phases()
    rp.evaluate(run, ["p@1", Clicks(k=2)], relevance="click", engine="spark", spark=spark_session, progress=shown)
    assert shown.names == ["reading the run into Spark", "checking the run", "metric pass and fetching (1 metrics)",
                           "measure families (1 metrics)"]
