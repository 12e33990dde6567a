"""The measure families (diversity, beyond accuracy, clicks) with ``engine="spark"``: each family
runs once in Spark with many measures per call, equal to the Polars engine to 1e-9 (itself tested
against pyndeval, recommenders / RecBole / Elliot / LensKit and the click definitions in the
family tests); a family's own check stops the Spark statement with the Polars engine's message.

Spark computes everything the DuckDB SQL does, translated, except diversity's greedy ideal: Spark's
``WITH RECURSIVE`` refuses the window or aggregate each step needs, so the ideal is computed once
from the relevant judgments by the Polars engine's code and joined (``SqlRunner.on_driver``).
"""

from __future__ import annotations

import warnings

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import rank_polars as rp
from rank_polars.errors import DataError
from rank_polars.measures.clicks import CTR, Abandonment, ClickRR, Clicks, LastClickRR

from .test_spark import spark  # noqa: F401  (the module's session fixture)


def both(run: pl.DataFrame, metrics: list, spark, **kwargs) -> None:  # noqa: F811
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = rp.evaluate(run, metrics, **kwargs)
        got = rp.evaluate(run, metrics, engine="spark", spark=spark, **kwargs)
    assert got.columns == want.columns
    assert_frame_equal(got, want, check_dtypes=False, abs_tol=1e-9, rel_tol=0)


def test_diversity_in_spark_equals_polars(spark):  # noqa: F811
    """ndeval's nine measures at several depths and two (alpha, beta, rel) settings in one call:
    ties in the ideal (d1/d2 under query 1), a subtopic without a relevant item, grades above 1,
    a query judged but not shown, a query shown but not judged."""
    qrels = pl.DataFrame(
        [("1", "s0", "d1", 1), ("1", "s1", "d2", 2), ("1", "s1", "d1", 1), ("1", "s2", "d3", 0), ("1", "s0", "d4", 3),
         ("1", "s2", "d2", 1), ("2", "s0", "d3", 1), ("2", "s1", "d1", 0), ("3", "s0", "d9", 1)],
        schema={"query": pl.String, "subtopic": pl.String, "item": pl.String, "relevance": pl.Int64}, orient="row")
    run = pl.DataFrame(
        [("a", "1", "d2", 1), ("a", "1", "d1", 2), ("a", "1", "x", 3), ("a", "1", "d4", 4), ("a", "2", "d1", 1),
         ("a", "2", "d3", 2), ("b", "1", "d1", 1), ("b", "1", "d4", 2), ("b", "1", "d2", 3), ("b", "4", "d1", 1)],
        schema={"model": pl.String, "query": pl.String, "item": pl.String, "position": pl.Int64}, orient="row")
    names = [f"{m}@{k}" for m in ("alpha_dcg", "alpha_ndcg", "err_ia", "nerr_ia", "p_ia", "strec") for k in (1, 3, 20)]
    names += ["nrbp", "nnrbp", "map_ia", "alpha_ndcg(alpha=0.3, rel=2)@3", "nnrbp(alpha=0.3, beta=0.8, rel=2)",
              "nerr_ia(alpha=0.3, rel=2)@20"]
    both(run, names, spark, qrels=qrels, by="model", per_query=True)


def test_diversity_repeats_in_spark_as_polars(spark):  # noqa: F811
    """A call of diversity measures alone counts the items repeated among the rows relevant to a
    subtopic (the family's statement returns the count): a relevant item shown twice within the
    cutoff stops Spark with the Polars engine's message; an item relevant to nothing shown twice,
    a null item and a grade-0 judgment repeated pass, with the Polars engine's values.
    (tests/test_diversity_check_scope.py covers Polars and DuckDB against pyndeval.)"""
    qrels = pl.DataFrame(
        [("1", "s0", "d1", 1), ("1", "s1", "d2", 2), ("1", "s1", "d3", 0), ("1", "s1", "d3", 0), ("2", "s0", "d1", 1)],
        schema={"query": pl.String, "subtopic": pl.String, "item": pl.String, "relevance": pl.Int64}, orient="row")
    run = pl.DataFrame(
        [("a", "1", "d2", 1), ("a", "1", "x", 2), ("a", "1", "x", 3), ("a", "1", None, 4), ("a", "1", "d3", 5),
         ("a", "1", "d3", 6), ("a", "2", "d1", 1)],
        schema={"model": pl.String, "query": pl.String, "item": pl.String, "position": pl.Int64}, orient="row")
    names = ["alpha_ndcg@5", "nrbp", "map_ia", "strec@3"]
    both(run, names, spark, qrels=qrels, by="model", per_query=True)
    repeated = run.with_columns(pl.when(pl.col("position") == 3).then(pl.lit("d2")).otherwise(pl.col("item")).alias("item"))
    messages = []
    for engine in ("polars", "spark"):
        with pytest.raises(DataError) as raised:
            rp.evaluate(repeated, names, qrels=qrels, by="model", engine=engine, spark=spark)
        messages.append(str(raised.value))
    assert "duplicate items within a ranking" in messages[0] and messages[1] == messages[0]


def _beyond_data() -> dict[str, pl.DataFrame]:
    items = list(range(1, 8))
    return {
        "log": pl.DataFrame({"model": ["m1"] * 6 + ["m2"] * 6, "user": [1, 1, 2, 2, 3, 3, 1, 2, 2, 3, 3, 3],
                             "item": [3, 4, 1, 5, 2, 6, 5, 4, 6, 2, 3, 7], "position": [1, 2, 1, 2, 1, 2, 1, 1, 2, 1, 2, 3],
                             "relevance": [1, 0, 0, 1, 1, 0, 1, 0, 1, 1, 0, 1]}),
        "history": pl.DataFrame({"user": [1, 1, 2, 2, 3, 3, 3, 2], "item": [1, 2, 2, 3, 1, 4, 5, 7]}),
        "vectors": pl.DataFrame({"item": items, "vec": [[1.0, 0.0], [0.5, 1.0], [1.0, 2.0], [-1.0, 1.0], [0.0, 3.0],
                                                        [2.0, 2.0], [1.0, -1.0]]}),
        "categories": pl.DataFrame({"item": items, "cat": [["a"], ["a", "b"], ["c"], ["b"], ["a", "c"], ["d"], ["b"]]}),
        "catalog": pl.DataFrame({"item": [*items, 8, 9]}),
    }


def test_beyond_accuracy_in_spark_equals_polars(spark):  # noqa: F811
    """All fifteen beyond-accuracy measures (per list and per catalogue) in one call: similarity
    by vectors, by categories and by history co-occurrence; items outside the history."""
    d = _beyond_data()
    hist, cat = d["history"], d["catalog"]
    specs = [
        "ndcg@3", rp.catalog_coverage(k=2, catalog=cat), rp.entropy(k=3), rp.gini(k=3, catalog=cat),
        rp.exposure_gini(k=3, catalog=cat), rp.novelty(k=3, history=hist, unseen="zero"),
        rp.pop_reo(k=3, history=hist, catalog=cat), rp.pop_rsp(k=3, history=hist, catalog=cat),
        rp.arp(k=3, history=hist), rp.aplt(k=3, history=hist), rp.aclt(k=2, history=hist, head=0.5),
        rp.epc(k=3, history=hist), rp.efd(k=3, history=hist), rp.ils(k=3, features=d["vectors"]),
        rp.ils(k=2, features=d["categories"]), rp.diversity(k=3, history=hist, sim="cooccurrence"),
        rp.serendipity(k=3, history=hist, sim="cooccurrence"),
    ]
    both(d["log"], specs, spark, by="model", query="user")


def test_beyond_accuracy_check_stops_spark_with_the_polars_message(spark):  # noqa: F811
    d = _beyond_data()
    spec = rp.catalog_coverage(k=3, catalog=d["catalog"].filter(pl.col("item") > 2))
    messages = []
    for engine in ("polars", "spark"):
        with pytest.raises(DataError) as raised:
            rp.evaluate(d["log"], [spec], by="model", query="user", engine=engine, spark=spark)
        messages.append(str(raised.value))
    assert messages[1] == messages[0]


def test_a_family_alone_refuses_a_repeat_within_its_cutoff_in_spark(spark):  # noqa: F811
    """The ranking checks of a family-only call (every row, repeats to the deepest cutoff:
    ``sql_engine.stat_sql``) stop Spark with the Polars engine's message; a repeat below the
    cutoff passes.  (tests/test_family_run_checks.py covers Polars and DuckDB.)"""
    log = pl.DataFrame({"model": ["m"] * 5, "query": ["q1"] * 5, "item": ["a", "b", "a", "d", "b"],
                        "position": [1, 2, 3, 4, 6], "click": [1, 0, 0, 0, 0]})
    messages = []
    for engine in ("polars", "spark"):
        with pytest.raises(DataError) as raised:
            rp.evaluate(log, ["ctr@3"], by="model", engine=engine, spark=spark)
        messages.append(str(raised.value))
    assert "duplicate items within a ranking" in messages[0] and messages[1] == messages[0]
    fine = log.filter(pl.col("position") != 3)  # "b" again at 6, below the cutoff
    assert (rp.evaluate(fine, ["ctr@3"], by="model", engine="spark", spark=spark).rows()
            == rp.evaluate(fine, ["ctr@3"], by="model").rows())


def test_clicks_in_spark_equal_polars(spark):  # noqa: F811
    """The five online metrics at two depths in one call; zero-click and single-row rankings."""
    log = pl.DataFrame({"arm": ["a"] * 6 + ["b"] * 4, "query": ["q1", "q1", "q1", "q2", "q2", "q3", "q1", "q1", "q2", "q2"],
                        "item": ["x", "y", "z", "x", "y", "x", "x", "z", "y", "w"], "position": [1, 2, 3, 1, 2, 1, 1, 2, 1, 2],
                        "click": [0, 1, 1, 0, 0, 0, 1, 0, 1, 1]})
    specs = [cls(k=k) for cls in (CTR, Clicks, Abandonment, ClickRR, LastClickRR) for k in (1, 3)]
    both(log, specs, spark, by="arm", relevance="click", per_query=True)
