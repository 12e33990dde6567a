"""``evaluate(..., engine="spark")`` / ``compare`` on a real local Spark session.

Equal to the Polars engine to 1e-9 on trec_eval's conformance data and on generated logs
with several versions, whatever the source (Spark frame, table name, Parquet, Polars);
bad input gives the Polars engine's errors; the physical plan never sorts the log.
One session for the module (its start-up, not the queries, is what costs).
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Callable

import duckdb
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import rank_polars as rp
from rank_polars.engines import spark_engine
from rank_polars.engines.spark_engine import to_spark_sql
from rank_polars.errors import RankPolarsError

from .sql_cases import SPARK_METRICS
from .test_spark import batches, log, share, spark  # noqa: F401  (the module's session fixture)

CONFORMANCE = Path(__file__).parent / "data" / "conformance" / "trec_eval"
TREC_METRICS = ["ndcg", "ndcg@10", "ap", "ap@100", "rr", "p@5", "r@100", "rprec", "bpref", "success@10"]


def both(run, metrics, spark, **kwargs) -> tuple[pl.DataFrame, pl.DataFrame]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = rp.evaluate(run, metrics, **kwargs)
        got = rp.evaluate(run, metrics, engine="spark", spark=spark, **kwargs)
    return want, got


def both_in_batches(run, metrics, spark, **kwargs) -> None:
    """:func:`both` and :func:`same` for every metric, the Spark calls in batches
    (:data:`tests.test_spark.BATCH`: Spark's planning of one very wide statement is what costs)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = rp.evaluate(run, metrics, **kwargs)
        keys = [c for c in want.columns if c not in metrics]
        for part in batches(metrics):
            got = rp.evaluate(run, part, engine="spark", spark=spark, **kwargs)
            same(got, want.select(*keys, *part))


def same(got: pl.DataFrame, want: pl.DataFrame) -> None:
    assert got.columns == want.columns
    assert_frame_equal(got, want, check_dtypes=False, abs_tol=1e-9, rel_tol=0)


@pytest.mark.parametrize("order", ["position", "score"])
def test_conformance_data_equals_polars(spark, order):
    run = pl.read_parquet(CONFORMANCE / "run_long.parquet").select("query", "item", order)
    qrels = CONFORMANCE / "qrels.parquet"  # Parquet path: read by Spark
    want, got = both(run, TREC_METRICS, spark, qrels=str(qrels), per_query=True, missing="skip")
    same(got, want)


CASES = [  # (with qrels, order, missing, per_query, labels, duplicates)
    (False, "position", "zero", False, "qrels", "error"),
    (True, "score", "skip", True, "qrels", "error"),
    (True, "position", "zero", True, "qrels", "first"),
    (True, "position", "zero", False, "run", "error"),
]


def _takes(case: tuple) -> Callable[[str], bool]:
    # infAP reads a negative label as "in the pool, not judged" (trec_eval's -1), which a row
    # absent from the qrels is not: with the run's labels every engine refuses that
    # disagreement (tested below), so that case takes no infAP
    return (lambda m: not m.startswith("infap")) if case[4] == "run" else (lambda m: True)


# every metric in one of the cases (tests/test_spark.py's share: why)
SHARES = dict(zip(CASES, share(SPARK_METRICS, [_takes(case) for case in CASES])))


@pytest.mark.parametrize("with_qrels, order, missing, per_query, labels, duplicates", CASES)
def test_generated_logs_equal_polars(spark, with_qrels, order, missing, per_query, labels, duplicates):
    run, qrels = log()
    if labels == "run":  # the run's labels copied from the judgments (-1, not judged, where unjudged)
        run = run.drop("relevance").join(qrels, on=["query", "item"], how="left").with_columns(
            pl.col("relevance").fill_null(-1.0))
    if duplicates == "first":
        run = pl.concat([run, run.filter(pl.col("position") == 2).with_columns(pl.col("position") + 20)])
    source = run.drop("score" if order == "position" else "position")
    kwargs = dict(by="model", missing=missing, per_query=per_query, labels=labels, duplicates=duplicates)
    metrics = SHARES[(with_qrels, order, missing, per_query, labels, duplicates)]
    both_in_batches(source, metrics, spark, qrels=qrels if with_qrels else None, **kwargs)


def test_every_metric_is_compared_in_spark():
    """The shares cover every metric, in this file's cases and in tests/test_spark.py's."""
    assert sorted(m for part in SHARES.values() for m in part) == sorted(SPARK_METRICS)
    assert all(len(part) >= len(SPARK_METRICS) // len(CASES) for part in SHARES.values())


def test_infap_with_run_labels_refuses_unjudged_rows_labelled_negative(spark):
    run, qrels = log()
    run = run.drop("relevance", "score").join(qrels, on=["query", "item"], how="left").with_columns(
        pl.col("relevance").fill_null(-1.0))
    for engine in ("polars", "spark"):
        with pytest.raises(rp.errors.DataError, match="labels disagree with the qrels"):
            rp.evaluate(run, ["infap"], qrels=qrels, by="model", labels="run", engine=engine, spark=spark)


def test_sources_spark_frame_table_name_and_hive_parquet(spark, tmp_path):
    run, qrels = log(5)
    metrics = ["ndcg@5", "ap", "rr", "err@3"]
    want = rp.evaluate(run.drop("score"), metrics, qrels=qrels, by="model")
    frame = spark.createDataFrame(run.drop("score").to_arrow())
    same(rp.evaluate(frame, metrics, qrels=qrels, by="model", engine="spark", spark=spark), want)
    spark.createDataFrame(qrels.to_arrow()).createOrReplaceTempView("rp_judgments")
    same(rp.evaluate(frame, metrics, qrels="rp_judgments", by="model", engine="spark"), want)
    for model, part in run.drop("score").partition_by("model", as_dict=True, include_key=False).items():
        (tmp_path / f"model={model[0]}").mkdir()
        part.with_columns(pl.col("position").cast(pl.Int32)).write_parquet(tmp_path / f"model={model[0]}" / "p.parquet")
    same(rp.evaluate(str(tmp_path), metrics, qrels="rp_judgments", by="model", engine="spark"), want)


def test_per_query_kept_in_spark(spark):
    run, qrels = log(6)
    metrics = ["ndcg@5", "ap"]
    want = rp.evaluate(run.drop("score"), metrics, qrels=qrels, by="model", per_query=True)
    kept = rp.evaluate(run.drop("score"), metrics, qrels=qrels, by="model", per_query="spark", engine="spark")
    assert type(kept).__name__ == "DataFrame" and type(kept).__module__.startswith("pyspark")
    got = pl.DataFrame(pl.from_arrow(kept.toArrow())).sort("model", "query")
    same(got, want)
    with pytest.raises(RankPolarsError, match="needs engine='spark'"):
        rp.evaluate(run, metrics, per_query="spark")


def test_compare_in_spark_equals_polars(spark):
    run, qrels = log(8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = rp.compare(run.drop("score"), ["ndcg@5", "ap"], qrels=qrels, by="model", baseline="m0")
        got = rp.compare(run.drop("score"), ["ndcg@5", "ap"], qrels=qrels, by="model", baseline="m0",
                         engine="spark", spark=spark)
    assert_frame_equal(got, want, abs_tol=1e-9, rel_tol=0)


def _bad_inputs() -> dict[str, tuple[pl.DataFrame, pl.DataFrame | None, dict]]:
    run, qrels = log(9)
    run = run.drop("score")
    first = pl.col("query") == pl.col("query").first()
    return {
        "duplicate item": (pl.concat([run, run.join(qrels, on=["query", "item"], how="semi").head(1)
                                      .with_columns(pl.col("position") + 50)]), qrels, {}),
        "duplicate position": (run.with_columns(pl.when(pl.col("position") == 2).then(1).otherwise(pl.col("position"))
                                                .alias("position")), qrels, {}),
        "null query": (run.with_columns(pl.when(first).then(None).otherwise(pl.col("query")).alias("query")), None, {}),
        "NaN label": (run.with_columns(pl.when(first).then(float("nan")).otherwise(pl.col("relevance"))
                                       .alias("relevance")), None, {}),
        "duplicate judgment": (run, pl.concat([qrels, qrels.head(1)]), {}),
        "labels disagree": (run, qrels, {"labels": "run"}),
        "missing column": (run.drop("item"), qrels, {}),
        "position not integer": (run.with_columns(pl.col("position").cast(pl.Float64)), qrels, {}),
    }


@pytest.mark.parametrize("case", list(_bad_inputs()))
def test_bad_input_errors_equal_polars(spark, case):
    run, qrels, kwargs = _bad_inputs()[case]
    messages = []
    for engine in ("polars", "spark"):
        with pytest.raises(RankPolarsError) as raised, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rp.evaluate(run, ["ndcg@5", "ap"], qrels=qrels, by="model", engine=engine, **kwargs)
        messages.append(str(raised.value))
    assert messages[1] == messages[0]


def _plan_nodes(plan: str) -> list[tuple[int, str]]:
    """(depth, text) of each operator of a Spark physical plan printed by ``toString``."""
    nodes = []
    for line in plan.splitlines():
        m = re.match(r"^([\s:|+-]*)(?:\*\(\d+\) )?(\S.*)$", line)
        if m and not line.lstrip().startswith(("Subquery", "ReusedSubquery")) and m.group(2)[0].isalpha():
            nodes.append((len(m.group(1)), m.group(2)))
    return nodes


def _subtree(nodes: list[tuple[int, str]], i: int) -> list[str]:
    depth, out = nodes[i][0], []
    for d, text in nodes[i + 1:]:
        if d <= depth:
            break
        out.append(text)
    return out


@pytest.mark.parametrize("with_qrels", [True, False])
def test_physical_plan_never_sorts_the_log(spark, tmp_path, with_qrels):
    """Every Sort and Window reads the contributing rows (the log after its join with the
    judgments, or after the filter on its labels), never the log itself: as at warehouse
    scale, broadcasts are off, so a sort-merge join would have to sort the log."""
    run, qrels = log(4)
    run.drop("score").write_parquet(tmp_path / "the_log.parquet")
    qrels.write_parquet(tmp_path / "judgments.parquet")
    settings = {"spark.sql.autoBroadcastJoinThreshold": "-1", "spark.sql.adaptive.enabled": "false"}
    before = {k: spark.conf.get(k) for k in settings}
    for k, v in settings.items():
        spark.conf.set(k, v)
    try:
        kept = rp.evaluate(str(tmp_path / "the_log.parquet"), ["ndcg@10", "ap@100", "rr", "p@10", "r@100"],
                           qrels=str(tmp_path / "judgments.parquet") if with_qrels else None, by="model",
                           per_query="spark", engine="spark", missing="skip")
        plan = kept._jdf.queryExecution().executedPlan().toString()
    finally:
        for k, v in before.items():
            spark.conf.set(k, v)
    nodes = _plan_nodes(plan)
    ordered = [i for i, (_, text) in enumerate(nodes) if text.startswith(("Sort ", "Window ", "SortAggregate"))]
    assert ordered, plan  # the running sums are there
    for i in ordered:
        below = _subtree(nodes, i)
        if not any("the_log.parquet" in text for text in below):
            continue
        narrowed = any(text.startswith(("ShuffledHashJoin", "BroadcastHashJoin", "SortMergeJoin")) and "LeftSemi" not in text
                       for text in below) or any(text.startswith("Filter") and "relevance" in text for text in below)
        assert narrowed, f"{nodes[i][1]} reads the whole log:\n{plan}"


def test_ordered_sums_give_duckdbs_bits_in_spark(spark):
    """``SUM(x ORDER BY k)`` (the engines' sums in rank order: the same bits every run) has no
    Spark spelling; its translation collects, sorts and folds.  One group spread over three
    partitions so that the order the partitions deliver it (k = 3, 1, 2) is not k's: a plain
    SUM gives (-1e16 + 1e16) + 1 = 1, the ordered one (1e16 + 1) - 1e16 = 0, as DuckDB's."""
    rows = [("g", 3, -1e16), ("g", 1, 1e16), ("g", 2, 1.0), ("h", 1, None)]
    spark.createDataFrame(rows, "g STRING, k INT, x DOUBLE").repartition(3).createOrReplaceTempView("rp_ordered")
    sql = "SELECT g, SUM(x ORDER BY k) AS s, SUM(x) AS plain FROM rp_ordered GROUP BY g ORDER BY g"
    con = duckdb.connect()
    con.register("rp_ordered", pl.DataFrame(rows, schema=["g", "k", "x"], orient="row").to_arrow())
    want = con.sql(sql).fetchall()
    got = [tuple(r) for r in spark.sql(to_spark_sql(sql)).collect()]
    assert [(g, s) for g, s, _ in got] == [(g, s) for g, s, _ in want] == [("g", 0.0), ("h", None)]


def test_the_spark_engine_adds_its_sums_in_rank_order(spark, monkeypatch):
    """The metric pass the Spark engine runs carries the ordered sums (as the DuckDB engine's)."""
    seen = []

    def spy(sql: str) -> str:
        seen.append(sql)
        return to_spark_sql(sql)

    monkeypatch.setattr(spark_engine, "to_spark_sql", spy)
    run, qrels = log()
    rp.evaluate(run.drop("score"), ["ap", "ndcg@5"], qrels=qrels, by="model", engine="spark", spark=spark)
    assert any("ORDER BY" in sql and "SUM(" in sql and spark_engine.PER_QUERY in sql for sql in seen)
    assert any("ARRAY_SORT(COLLECT_LIST" in to_spark_sql(sql) for sql in seen)
