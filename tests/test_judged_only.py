"""``judged_only=True`` (trec_eval's ``-J``) against pytrec_eval's ``judged_docs_only_flag``.

Hypothesis draws runs with tied scores, graded, 0 and negative (unjudged) judgments, items
never judged and rankings of unjudged items alone (pytrec_eval keeps those at 0, as a ranking
of length 0: ``num_ret`` 0, ``num_rel`` still counted).  Every measure of pytrec_eval's set is
compared per query to 1e-9, in the Polars engine, the DuckDB engine and ``to_sql`` run in
DuckDB, by score and by position (the run's scores turned into trec_eval's positions first:
by position the judged rows are numbered anew).
"""

from __future__ import annotations

import duckdb
import polars as pl
import pytest
import pytrec_eval
from hypothesis import given, settings

import rank_polars as rp
from rank_polars.errors import MetricNameError, RankPolarsError
from tests.test_reference_pytrec_eval import MEASURES, PRINTED, TREC, batches, to_frames

NAMES = {m: t.format(rel="") for m, t in MEASURES.items()} | {p: p for p in PRINTED if not p.startswith("gm_")}


def positions(run: pl.DataFrame) -> pl.DataFrame:
    """trec_eval's ranks (score descending, ties by item id descending) as a position column."""
    ranked = run.sort(["query", "score", "item"], descending=[False, True, True])
    return ranked.with_columns(pl.int_range(1, pl.len() + 1).over("query").alias("position")).drop("score")


def per_query(run: pl.DataFrame, qrels: pl.DataFrame, way: str) -> dict[str, dict[str, float]]:
    metrics = list(NAMES.values())
    if way == "to_sql":
        con = duckdb.connect()
        con.register("run", run.to_arrow())
        con.register("qrels", qrels.to_arrow())
        order = "position" if "position" in run.columns else "score"
        sql = rp.to_sql(metrics, table="run", qrels="qrels", per_query=True, missing="skip", judged_only=True,
                        order=order)
        table = pl.from_arrow(con.sql(sql).to_arrow_table())
    else:
        table = rp.evaluate(run, metrics, qrels=qrels, per_query=True, missing="skip", judged_only=True, engine=way)
    return {row["query"]: row for row in table.iter_rows(named=True)}


@settings(max_examples=30, deadline=None)
@given(data=batches())
def test_judged_only_agrees_with_pytrec_eval(data):
    run, qrels = data
    expected = pytrec_eval.RelevanceEvaluator(qrels, TREC, judged_docs_only_flag=True).evaluate(run)
    run_df, qrels_df = to_frames(run, qrels)
    for shape, frame in (("score", run_df), ("position", positions(run_df))):
        for way in ("polars", "duckdb", "to_sql"):
            got = per_query(frame, qrels_df, way)
            assert sorted(got) == sorted(expected), (shape, way)
            for query, values in expected.items():
                for measure, name in NAMES.items():
                    want = values[measure]
                    assert got[query][name] == pytest.approx(want, abs=1e-9), (shape, way, query, measure)


def test_a_ranking_of_unjudged_items_alone_has_length_zero():
    run = {"q1": {"x": 3.0, "a": 2.0, "y": 1.0, "b": 0.5}, "q2": {"z": 1.0}}
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}}
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"P.1", "map", "num_ret", "num_rel"},
                                              judged_docs_only_flag=True).evaluate(run)
    assert expected["q2"] == {"P_1": 0.0, "map": 0.0, "num_ret": 0.0, "num_rel": 1.0}
    for engine in ("polars", "duckdb"):
        got = rp.evaluate(run, ["p@1", "ap", "num_ret", "num_rel"], qrels=qrels, judged_only=True,
                          per_query=True, missing="skip", engine=engine)
        assert got.rows() == [("q1", 1.0, 1.0, 2.0, 1.0), ("q2", 0.0, 0.0, 0.0, 1.0)]


def test_without_judgments_the_run_labels_judge():
    log = pl.DataFrame({"query": ["q"] * 3, "item": ["a", "b", "c"], "position": [1, 2, 3], "relevance": [-1, 0, 1]})
    for engine in ("polars", "duckdb"):
        got = rp.evaluate(log, ["rr", "num_ret"], judged_only=True, engine=engine)
        assert got.select("rr", "num_ret").row(0) == (0.5, 2.0)  # "a" (-1, unjudged) removed: "c" ranks 2nd
    con = duckdb.connect()
    con.register("logs", log.to_arrow())
    assert con.sql(rp.to_sql(["rr"], table="logs", judged_only=True)).fetchall() == [(1, 0.5)]


def test_by_groups_keep_their_emptied_rankings():
    log = pl.DataFrame({"model": ["a", "a", "b"], "query": ["q1", "q2", "q1"], "item": ["x", "y", "x"],
                        "position": [1, 1, 1]})
    qrels = pl.DataFrame({"query": ["q1", "q2"], "item": ["x", "z"], "relevance": [1, 1]})
    for engine in ("polars", "duckdb"):
        got = rp.evaluate(log, ["p@1", "num_rel"], qrels=qrels, by="model", judged_only=True, missing="skip",
                          per_query=True, engine=engine)
        assert got.rows() == [("a", "q1", 1.0, 1.0), ("a", "q2", 0.0, 1.0), ("b", "q1", 1.0, 1.0)]


def test_refusals():
    with pytest.raises(MetricNameError, match=r"evaluate\(\.\.\., judged_only=True\)"):
        rp.parse("P(judged_only=True)@5")
    log = pl.DataFrame({"query": ["q"], "item": ["a"], "position": [1], "relevance": [1]})
    with pytest.raises(RankPolarsError, match="not 'spark'"):
        rp.evaluate(log, "p@1", judged_only=True, engine="spark")
