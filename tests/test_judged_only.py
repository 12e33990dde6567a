"""``judged_only=True`` (trec_eval's ``-J``) against pytrec_eval's ``judged_docs_only_flag``.

Hypothesis draws runs with tied scores, graded, 0 and negative (unjudged) judgments, items
never judged and rankings of unjudged items alone (pytrec_eval keeps those at 0, as a ranking
of length 0: ``num_ret`` 0, ``num_rel`` still counted).  Every measure of pytrec_eval's set is
compared per query to 1e-9, in the Polars engine, the DuckDB engine and ``to_sql`` run in
DuckDB, by score and by position (the run's scores turned into trec_eval's positions first:
by position the judged rows are numbered anew).  The Spark engine on one fixed draw of the same
data (eight collections: Spark plans each call for seconds), and on the fixed cases below.
"""

from __future__ import annotations

import duckdb
import polars as pl
import pytest
import pytrec_eval
from hypothesis import Phase, assume, given, seed, settings

import rank_polars as rp
from rank_polars.errors import MetricNameError
from tests.test_reference_pytrec_eval import MEASURES, PRINTED, TREC, batches, to_frames

NAMES = {m: t.format(rel="") for m, t in MEASURES.items()} | {p: p for p in PRINTED if not p.startswith("gm_")}


def positions(run: pl.DataFrame) -> pl.DataFrame:
    """trec_eval's ranks (score descending, ties by item id descending) as a position column."""
    ranked = run.sort(["query", "score", "item"], descending=[False, True, True])
    return ranked.with_columns(pl.int_range(1, pl.len() + 1).over("query").alias("position")).drop("score")


def per_query(run: pl.DataFrame, qrels: pl.DataFrame, way: str, **kw: object) -> dict[str, dict[str, float]]:
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
        table = rp.evaluate(run, metrics, qrels=qrels, per_query=True, missing="skip", judged_only=True, engine=way, **kw)
    return {row["query"]: row for row in table.iter_rows(named=True)}


def assert_agrees(run: dict, qrels: dict, ways: tuple[str, ...], **kw: object) -> None:
    """Every way's per-query values of ``NAMES`` are pytrec_eval's with ``judged_docs_only_flag``,
    by score and by position."""
    expected = pytrec_eval.RelevanceEvaluator(qrels, TREC, judged_docs_only_flag=True).evaluate(run)
    run_df, qrels_df = to_frames(run, qrels)
    for shape, frame in (("score", run_df), ("position", positions(run_df))):
        for way in ways:
            got = per_query(frame, qrels_df, way, **kw)
            assert sorted(got) == sorted(expected), (shape, way)
            for query, values in expected.items():
                for measure, name in NAMES.items():
                    want = values[measure]
                    assert got[query][name] == pytest.approx(want, abs=1e-9), (shape, way, query, measure)


# 12 batches of 6-12 collections check as many as 30 of 2-5 did: an example's cost is its six
# calls' (to_sql's text the most), whatever the data
@settings(max_examples=12, deadline=None)
@given(data=batches(size=(6, 12)))
def test_judged_only_agrees_with_pytrec_eval(data):
    assert_agrees(*data, ("polars", "duckdb", "to_sql"))


# one draw of eight collections (fixed by the seed; hypothesis's first, minimal draw has no
# judgments and is passed over): rankings of unjudged items alone, negative judgments, ties,
# judged queries the run lacks, run queries nobody judged
@seed(20261128)
@settings(max_examples=1, phases=[Phase.generate], database=None, deadline=None)
@given(data=batches(size=(8, 8)))
def test_judged_only_in_spark_agrees_with_pytrec_eval(spark_session, data):
    assume(data[1])
    assert_agrees(*data, ("spark",), spark=spark_session)


def unjudged_alone(**engine: object) -> None:
    run = {"q1": {"x": 3.0, "a": 2.0, "y": 1.0, "b": 0.5}, "q2": {"z": 1.0}}
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}}
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"P.1", "map", "num_ret", "num_rel"},
                                              judged_docs_only_flag=True).evaluate(run)
    assert expected["q2"] == {"P_1": 0.0, "map": 0.0, "num_ret": 0.0, "num_rel": 1.0}
    got = rp.evaluate(run, ["p@1", "ap", "num_ret", "num_rel"], qrels=qrels, judged_only=True,
                      per_query=True, missing="skip", **engine)
    assert got.rows() == [("q1", 1.0, 1.0, 2.0, 1.0), ("q2", 0.0, 0.0, 0.0, 1.0)]


def run_labels_judge(**engine: object) -> None:
    log = pl.DataFrame({"query": ["q"] * 3, "item": ["a", "b", "c"], "position": [1, 2, 3], "relevance": [-1, 0, 1]})
    got = rp.evaluate(log, ["rr", "num_ret"], judged_only=True, **engine)
    assert got.select("rr", "num_ret").row(0) == (0.5, 2.0)  # "a" (-1, unjudged) removed: "c" ranks 2nd


def groups_keep_emptied(**engine: object) -> None:
    # the null group's ranking holds an unjudged item alone: emptied, kept at length 0 as the others
    log = pl.DataFrame({"model": ["a", "a", "b", None], "query": ["q1", "q2", "q1", "q2"], "item": ["x", "y", "x", "y"],
                        "position": [1, 1, 1, 1]})
    qrels = pl.DataFrame({"query": ["q1", "q2"], "item": ["x", "z"], "relevance": [1, 1]})
    got = rp.evaluate(log, ["p@1", "num_rel"], qrels=qrels, by="model", judged_only=True, missing="skip",
                      per_query=True, **engine)
    assert sorted(got.rows(), key=str) == sorted([("a", "q1", 1.0, 1.0), ("a", "q2", 0.0, 1.0), ("b", "q1", 1.0, 1.0),
                                                  (None, "q2", 0.0, 1.0)], key=str)


def names_to_quote(**engine: object) -> None:
    # columns named with a dot and a backtick (Spark reads "a.b" as a field of "a" unless quoted);
    # by position, so the judged rows are numbered anew; a judged query nobody ranked (q3)
    log = pl.DataFrame({"m.odel": ["a"] * 5 + ["b"] * 3, "q`id": ["q1"] * 3 + ["q2"] * 2 + ["q1"] * 3,
                        "it.em": ["x", "y", "z", "u", "v", "y", "x", "w"], "pos": [1, 2, 3, 1, 2, 1, 2, 3]})
    qrels = pl.DataFrame({"q`id": ["q1", "q1", "q2", "q3"], "it.em": ["y", "z", "zz", "k"], "grade": [1, 0, 2, 1]})
    got = rp.evaluate(log, ["p@2", "ap", "num_ret"], qrels=qrels, by="m.odel", query="q`id", item="it.em",
                      position="pos", relevance="grade", judged_only=True, per_query=True, **engine)
    assert got.rows() == [("a", "q1", 0.5, 1.0, 2.0), ("a", "q2", 0.0, 0.0, 0.0), ("a", "q3", 0.0, 0.0, 0.0),
                          ("b", "q1", 0.5, 1.0, 1.0), ("b", "q2", 0.0, 0.0, 0.0), ("b", "q3", 0.0, 0.0, 0.0)]


FIXED = [unjudged_alone, run_labels_judge, groups_keep_emptied, names_to_quote]


@pytest.mark.parametrize("case", FIXED)
@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_fixed_cases(case, engine):
    case(engine=engine)


def test_fixed_cases_in_spark(spark_session):
    for case in FIXED:
        case(engine="spark", spark=spark_session)


def test_to_sql_without_judgments_the_run_labels_judge():
    log = pl.DataFrame({"query": ["q"] * 3, "item": ["a", "b", "c"], "position": [1, 2, 3], "relevance": [-1, 0, 1]})
    con = duckdb.connect()
    con.register("logs", log.to_arrow())
    assert con.sql(rp.to_sql(["rr"], table="logs", judged_only=True)).fetchall() == [(1, 0.5)]


def test_refusals():
    with pytest.raises(MetricNameError, match=r"evaluate\(\.\.\., judged_only=True\)"):
        rp.parse("P(judged_only=True)@5")
