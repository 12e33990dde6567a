"""``labels="run"``: the shown rows' grades from the run's own labels, the ideal from qrels.

On logs whose labels were copied from the qrels it must give exactly the numbers of the
default (``labels="qrels"``, the run joined with the judgments) in both engines and in the
generated SQL; where the two disagree on a row that counts, it must refuse.
"""

from __future__ import annotations

import duckdb
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rank_polars as rp
from rank_polars.errors import DataError, RankPolarsError

from .test_reference_pytrec_eval import batches, to_frames

# every metric whose rows contribute by grade alone (judged-based ones are tested below)
METRICS = ["ndcg", "ndcg@3", "ndcg(gain=exp)@5", "ap", "ap(rel=2)@3", "rr", "p@3", "p", "r@3", "rprec",
           "success@1", "f1@3", "err(max=3)@5", "rbp(p=0.8)", "cg@3", "dcg@3", "idcg@3"]


def labelled(run: pl.DataFrame, qrels: pl.DataFrame) -> pl.DataFrame:
    """The run with each row's judged grade as its label (0 when unjudged), like a log."""
    return run.join(qrels, on=["query", "item"], how="left").with_columns(pl.col("relevance").fill_null(0))


def per_query(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.sort("query")


# 12 batches of 2-5 collections: ~42 collections, as many as 40 single ones, in 3x fewer calls
# (missing only changes which rankings are evaluated, the same for both sides: drawn, not looped)
@settings(max_examples=12, deadline=None)
@given(batches(), st.sampled_from(["zero", "skip"]))
def test_run_labels_give_the_numbers_of_the_join(data, missing):
    run, qrels = to_frames(*data)
    scored = labelled(run, qrels)
    # the same rankings by position (trec_eval's order: score desc, item desc), the path
    # on which the filter on the label reaches the reader
    by_position = scored.sort(["query", "score", "item"], descending=[False, True, True]).with_columns(
        position=pl.int_range(1, pl.len() + 1).over("query")
    ).drop("score")
    for log, engine in ((scored, "polars"), (scored, "duckdb"), (by_position, "polars"), (by_position, "duckdb")):
        kwargs = dict(qrels=qrels, per_query=True, engine=engine, missing=missing)
        want = per_query(rp.evaluate(log, METRICS, **kwargs))
        got = per_query(rp.evaluate(log, METRICS, labels="run", **kwargs))
        assert want["query"].to_list() == got["query"].to_list()
        for m in METRICS:
            assert got[m].to_list() == pytest.approx(want[m].to_list(), abs=1e-12), (engine, missing, m)


def test_generated_sql_with_run_labels_equals_evaluate():
    log = pl.DataFrame({
        "model": ["a", "a", "a", "b", "b"], "query": ["q1", "q1", "q2", "q1", "q2"],
        "item": ["x", "y", "z", "y", "w"], "position": [1, 2, 1, 1, 1], "relevance": [2, 0, 1, 0, 0],
    })
    judgments = pl.DataFrame({"query": ["q1", "q1", "q2", "q2"], "item": ["x", "v", "z", "w"], "relevance": [2, 1, 1, 0]})
    sql = rp.to_sql(["ndcg@10", "ap", "rr"], table="log", qrels="judgments", by="model", labels="run")
    got = duckdb.connect().sql(sql).pl().sort("model")
    want = rp.evaluate(log, ["ndcg@10", "ap", "rr"], qrels=judgments, by="model").sort("model")
    for m in ("ndcg@10", "ap", "rr"):
        assert got[m].to_list() == pytest.approx(want[m].to_list(), abs=1e-12)
    assert "JOIN" in sql and '"__rp_qrels_grade"' in sql  # the check column is computed, but not joined to the log


LOG = pl.DataFrame({
    "model": ["a", "a", "a", "b"], "query": ["q1", "q1", "q2", "q1"], "item": ["x", "y", "z", "x"],
    "position": [1, 2, 1, 1], "relevance": [1, 0, 2, 1],
})
QRELS = pl.DataFrame({"query": ["q1", "q2"], "item": ["x", "z"], "relevance": [1, 2]})


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize(
    ("log", "metrics", "fragments"),
    [
        # a relevant row whose label is not its judged grade
        (LOG.with_columns(relevance=pl.Series([1, 0, 1, 1])), ["ndcg@10"], ["'q2' (model='a')", "disagree with the qrels"]),
        # a row labelled relevant that the qrels never judged
        (LOG.with_columns(relevance=pl.Series([1, 3, 2, 1])), ["p@2"], ["'q1' (model='a')", "disagree with the qrels"]),
        # bpref counts judged rows: y is labelled 0 but is not judged in the qrels
        (LOG, ["bpref"], ["'q1' (model='a')", "labels='qrels'"]),
    ],
)
def test_disagreeing_labels_are_refused(engine, log, metrics, fragments):
    with pytest.raises(DataError) as info:
        rp.evaluate(log, metrics, qrels=QRELS, by="model", labels="run", engine=engine)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_agreeing_labels_evaluate():
    got = rp.evaluate(LOG, ["p@1", "ndcg@10"], qrels=QRELS, by="model", labels="run")
    want = rp.evaluate(LOG, ["p@1", "ndcg@10"], qrels=QRELS, by="model")
    assert got.equals(want)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"labels": "run"}, "labels='run' takes the shown rows' grades from the run and the ideal from qrels: pass qrels="),
        ({"labels": "both", "qrels": QRELS}, "labels must be 'qrels' or 'run'"),
    ],
)
def test_bad_labels_option(kwargs, fragment):
    with pytest.raises(RankPolarsError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        rp.evaluate(LOG, ["p@1"], **kwargs)


def test_run_labels_need_the_relevance_column():
    with pytest.raises(RankPolarsError, match="column 'relevance' \\(relevance label, for labels='run'\\) not found"):
        rp.evaluate(LOG.drop("relevance"), ["p@1"], qrels=QRELS, labels="run")
