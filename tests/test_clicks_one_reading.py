"""One reading per call: the click metrics (ctr, clicks, impressions, abandonment, click_rr,
last_click_rr) read the run's click column, every other metric reads the labels (the run's
relevance column) or the judgments, whatever else the call asks for, in Polars, DuckDB, Spark and
``to_sql`` (docs/clicks.md, "What the click metrics read").

Before: a click metric without qrels made the click column the labels of the whole call (ndcg@2
0.815 alone, 0.5 beside ctr@2, without a word), and with ``labels="run"`` and qrels Polars read
the click metrics off the run's relevance labels where DuckDB and ``to_sql`` read the judgments."""

from __future__ import annotations

import re
from typing import Any

import duckdb
import polars as pl
import pytest

import rank_polars as rp

from .sql_cases import sql_frame

ENGINES = ("polars", "duckdb", "to_sql")

# a log with both: its relevance labels and its clicks tell different stories
LOG = pl.DataFrame({
    "model": ["a", "a", "a", "a", "b", "b", "b"],
    "query": ["q1", "q1", "q2", "q2", "q1", "q1", "q2"],
    "item": ["x", "y", "z", "w", "y", "x", "z"],
    "position": [1, 2, 1, 2, 1, 2, 1],
    "relevance": [0, 1, 1, 0, 1, 0, 1],
    "click": [1, 0, 0, 1, 0, 0, 1],
})
QRELS = pl.DataFrame({"query": ["q1", "q1", "q2", "q2"], "item": ["x", "y", "z", "w"], "relevance": [0, 1, 1, 0]})


def run(engine: str, log: pl.DataFrame, metrics: list, qrels: pl.DataFrame | None = None, **kwargs: Any) -> pl.DataFrame:
    """``evaluate`` in an engine, or ``to_sql``'s statement run in DuckDB (the same columns)."""
    if engine != "to_sql":
        return rp.evaluate(log, metrics, qrels=qrels, engine=engine, **kwargs)
    con = duckdb.connect()
    con.register("logs", log.to_arrow())
    if qrels is not None:
        con.register("judgments", qrels.to_arrow())
    return sql_frame(con, rp.to_sql(metrics, table="logs", qrels="judgments" if qrels is not None else None, **kwargs))


def values(frame: pl.DataFrame, name: str) -> list[float]:
    return frame.sort("model")[name].to_list()


@pytest.mark.parametrize("engine", ENGINES)
def test_ndcg_is_the_same_alone_and_beside_a_click_metric(engine: str) -> None:
    alone = run(engine, LOG, ["ndcg@2"], by="model")
    beside = run(engine, LOG, ["ndcg@2", "ctr@2", "click_rr"], by="model")
    assert values(beside, "ndcg@2") == pytest.approx(values(alone, "ndcg@2"), rel=1e-12)
    # and the ndcg of the relevance labels: a: q1 1/log2(3), q2 1; b: q1 1, q2 1
    assert values(alone, "ndcg@2") == pytest.approx([(1 / 1.584962500721156 + 1) / 2, 1.0], rel=1e-12)
    # the click metrics beside it read the clicks: a: q1 clicked at 1, q2 at 2; b: q1 none, q2 at 1
    assert values(beside, "ctr@2") == pytest.approx([0.5, 0.5], rel=1e-12)
    assert values(beside, "click_rr") == pytest.approx([0.75, 0.5], rel=1e-12)


@pytest.mark.parametrize("engine", ENGINES)
def test_rr_and_p_beside_click_metrics_read_the_labels(engine: str) -> None:
    """Every metric of the plan, not only ndcg: rr and p@1 beside ctr are rr and p@1 alone."""
    alone = run(engine, LOG, ["rr", "p@1"], by="model")
    beside = run(engine, LOG, ["ctr", "rr", "abandonment", "p@1", "last_click_rr"], by="model")
    for name in ("rr", "p@1"):
        assert values(beside, name) == pytest.approx(values(alone, name), rel=1e-12), name


def test_labels_run_with_qrels_reads_the_clicks_in_every_engine() -> None:
    """labels='run' and qrels=: Polars read the click metrics off the run's relevance labels
    (0.25 / 0.5 / 0.5 here), DuckDB and to_sql off the judgments (0.5 / 1.0 / 1.0); all three read
    the clicks, and click_rr is rr over the clicks as labels (relevance='click')."""
    names = ["ctr@2", "click_rr", "clicks@2"]
    got = {engine: run(engine, LOG, names, QRELS, labels="run", by="model") for engine in ENGINES}
    for engine, frame in got.items():
        for name in names:
            assert values(frame, name) == pytest.approx(values(got["polars"], name), rel=1e-12), (engine, name)
    assert values(got["polars"], "ctr@2") == pytest.approx([0.5, 0.5], rel=1e-12)
    assert values(got["polars"], "clicks@2") == pytest.approx([1.0, 0.5], rel=1e-12)
    as_labels = rp.evaluate(LOG, ["rr"], relevance="click", by="model")
    assert values(got["polars"], "click_rr") == pytest.approx(values(as_labels, "rr"), rel=1e-12)
    # labels="qrels" (the default) reads the same clicks
    for engine in ENGINES:
        default = run(engine, LOG, names, QRELS, by="model")
        for name in names:
            assert values(default, name) == pytest.approx(values(got["polars"], name), rel=1e-12), (engine, name)


def test_labels_run_with_qrels_in_spark(spark_session) -> None:
    names = ["ctr@2", "click_rr", "clicks@2", "ndcg@2"]
    want = rp.evaluate(LOG, names, qrels=QRELS, labels="run", by="model")
    got = rp.evaluate(LOG, names, qrels=QRELS, labels="run", by="model", engine="spark", spark=spark_session)
    for name in names:
        assert values(got, name) == pytest.approx(values(want, name), rel=1e-12), name
    alone = rp.evaluate(LOG, ["ndcg@2"], by="model", engine="spark", spark=spark_session)
    beside = rp.evaluate(LOG, ["ndcg@2", "ctr@2"], by="model", engine="spark", spark=spark_session)
    assert values(beside, "ndcg@2") == pytest.approx(values(alone, "ndcg@2"), rel=1e-12)


CLICK_LOG = LOG.drop("relevance")


@pytest.mark.parametrize("engine", ENGINES)
def test_a_click_log_without_relevance(engine: str) -> None:
    """Click metrics alone need no relevance column; rr beside them without relevance='click' is
    an error naming that fix; with it (or Schema(relevance='click')), rr is click_rr."""
    got = run(engine, CLICK_LOG, ["ctr@2", "click_rr", "abandonment"], by="model")
    assert values(got, "click_rr") == pytest.approx([0.75, 0.5], rel=1e-12)
    if engine != "to_sql":  # to_sql cannot see the table's columns: the database names the one missing
        with pytest.raises(rp.RankPolarsError, match=re.escape(
                "run: no relevance column 'relevance' for rr; a click log's clicks are read as labels only when "
                "asked: relevance='click'")):
            run(engine, CLICK_LOG, ["click_rr", "rr"], by="model")
    for kwargs in ({"relevance": "click"}, {"schema": rp.Schema(relevance="click")}):
        both = run(engine, CLICK_LOG, ["click_rr", "rr", "success@1", "abandonment@1"], by="model", **kwargs)
        assert values(both, "rr") == pytest.approx(values(both, "click_rr"), rel=1e-12)
        assert values(both, "success@1") == pytest.approx([1 - v for v in values(both, "abandonment@1")], rel=1e-12)


def test_the_missing_relevance_message_names_the_schema_click_column() -> None:
    log = CLICK_LOG.rename({"click": "clicked"})
    with pytest.raises(rp.RankPolarsError, match=re.escape("relevance='clicked'")):
        rp.evaluate(log, ["ctr@2", "ndcg@2"], by="model", schema=rp.Schema(click="clicked"))
    got = rp.evaluate(log, ["ctr@2", "ndcg@2"], by="model", schema=rp.Schema(click="clicked", relevance="clicked"))
    assert values(got, "ctr@2") == pytest.approx([0.5, 0.5])


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_clicks_given_as_qrels_are_refused_with_the_fix(engine: str) -> None:
    """The click metrics read the run's click column whatever qrels= say: a log without one and
    its clicks as qrels is refused, naming the join that gives the log its click column."""
    shown = CLICK_LOG.drop("click")
    clicks = CLICK_LOG.filter(pl.col("click") > 0).select("query", "item", relevance="click")
    with pytest.raises(rp.RankPolarsError, match=re.escape(
            "run: no click column 'click' for ctr@2 (the click metrics read the run's clicks, whatever qrels= "
            "say); clicks given as qrels= are not read as clicks: join them to the log as its 'click' column "
            "(0 where absent)")):
        rp.evaluate(shown, ["ctr@2", "ndcg@2"], qrels=clicks, by="model", engine=engine)
    # the join docs/clicks.md gives (one arm's clicks): the clicks a column of the log, 0 where absent
    arm = CLICK_LOG.filter(pl.col("model") == "a")
    clicks = arm.filter(pl.col("click") > 0).select("query", "item", relevance="click")
    log = arm.drop("click").join(clicks.select("query", "item", click="relevance"), on=["query", "item"], how="left")
    log = log.with_columns(pl.col("click").fill_null(0))
    got = rp.evaluate(log, ["ctr@2", "click_rr"], engine=engine)
    assert got.rows() == rp.evaluate(arm, ["ctr@2", "click_rr"], engine=engine).rows()


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_a_click_spec_reading_another_column_than_the_labels(engine: str) -> None:
    """ctr(click=other) reads 'other' even where relevance='click' names the labels: no conflict
    (the two are read apart), and a missing 'other' is named."""
    log = LOG.with_columns(other=pl.col("relevance"))
    got = rp.evaluate(log, ["ctr(click=other)@2", "rr"], relevance="click", by="model", engine=engine)
    want = rp.evaluate(log.with_columns(click=pl.col("other")), ["ctr@2"], by="model", engine=engine)
    assert values(got, "ctr(click=other)@2") == pytest.approx(values(want, "ctr@2"), rel=1e-12)
    assert values(got, "rr") == pytest.approx(values(rp.evaluate(LOG, ["click_rr"], by="model"), "click_rr"))
    with pytest.raises(rp.RankPolarsError, match=r"run: no click column 'missing' for ctr\(click=missing\)@2"):
        rp.evaluate(LOG, ["ctr(click=missing)@2"], relevance="click", engine=engine)


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_click_metrics_alone_do_not_read_the_relevance_column(engine: str) -> None:
    """A log whose relevance labels have a null (a row never judged) still gives its click
    metrics: they do not read the labels, so no label is checked for them."""
    log = LOG.with_columns(relevance=pl.Series([0, None, 1, 0, 1, 0, 1]))
    got = rp.evaluate(log, ["ctr@2", "click_rr"], by="model", engine=engine)
    assert values(got, "click_rr") == pytest.approx([0.75, 0.5], rel=1e-12)
    with pytest.raises(rp.DataError, match="null or NaN relevance labels"):
        rp.evaluate(log, ["ctr@2", "rr"], by="model", engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_click_metrics_alone_with_judgments_read_no_label(engine: str) -> None:
    """With qrels, labels='run' or not, a call of click metrics alone reads no relevance column
    (a click log has none): the judgments choose the queries, the log gives the clicks."""
    judged = QRELS.filter(pl.col("query") == "q1")  # q2 not judged: not evaluated
    want = rp.evaluate(LOG.filter(pl.col("query") == "q1"), ["ctr@2", "click_rr"], by="model")
    for labels in ("qrels", "run"):
        got = run(engine, CLICK_LOG, ["ctr@2", "click_rr"], judged, labels=labels, by="model")
        for name in ("ctr@2", "click_rr"):
            assert values(got, name) == pytest.approx(values(want, name), rel=1e-12), (labels, name)


@pytest.mark.parametrize("engine", ENGINES)
def test_boolean_clicks_are_counts_and_text_clicks_are_refused(engine: str) -> None:
    log = CLICK_LOG.with_columns(pl.col("click").cast(pl.Boolean))
    got = run(engine, log, ["ctr@2", "click_rr", "clicks"], by="model")
    want = run(engine, CLICK_LOG, ["ctr@2", "click_rr", "clicks"], by="model")
    assert got.sort("model").rows() == want.sort("model").rows()
    if engine != "to_sql":
        with pytest.raises(rp.RankPolarsError, match="run: column 'click' must be numeric, got String"):
            run(engine, CLICK_LOG.with_columns(pl.col("click").cast(pl.String)), ["ctr@2"], by="model")
