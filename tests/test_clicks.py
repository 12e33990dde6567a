"""Online click metrics (rank_polars.measures.clicks) by name in Polars, DuckDB and to_sql,
against a plain Python reference written from the definitions (docs/clicks.md), on
hypothesis-generated click logs (1-5 arms, zero-click rankings, single impressions, deep
positions); the click column as labels of the existing metrics when the call says so
(relevance="click"); bad click values refused with the same message in every engine."""

from __future__ import annotations

import math

import duckdb
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polars.testing import assert_frame_equal

import rank_polars as rp
from rank_polars.measures import parse
from rank_polars.measures.clicks import CTR, Abandonment, ClickRR, Clicks, LastClickRR

from .sql_cases import sql_frame
from .test_spark import spark  # noqa: F401  (the module's session fixture)

NAMES = ["ctr", "ctr(agg=ratio)", "clicks", "impressions", "abandonment", "click_rr", "last_click_rr"]


def reference(rows: list[dict], k: int | None) -> dict[str, dict[str, float]]:
    """Each metric per arm from the definitions: means over rankings (arm, query); the ratio
    CTR as Σ clicks / Σ rows shown over the arm's rankings."""
    rankings: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for r in rows:
        rankings.setdefault((r["arm"], r["query"]), []).append((r["position"], r["click"]))
    per: dict[str, dict[str, list[float]]] = {}
    sums: dict[str, list[float]] = {}
    at = "" if k is None else f"@{k}"
    for (arm, _), shown in rankings.items():
        top = [(p, c) for p, c in sorted(shown) if k is None or p <= k]
        clicked = [p for p, c in top if c > 0]
        x, y = sum(c for _, c in top), len(top)
        vals = {
            "ctr": x / y, "clicks": float(x), "impressions": float(y), "abandonment": float(not clicked),
            "click_rr": 1 / clicked[0] if clicked else 0.0, "last_click_rr": 1 / clicked[-1] if clicked else 0.0,
        }
        for name, v in vals.items():
            per.setdefault(arm, {}).setdefault(name + at, []).append(v)
        s = sums.setdefault(arm, [0.0, 0.0])
        s[0] += x
        s[1] += y
    out = {arm: {n: sum(v) / len(v) for n, v in m.items()} for arm, m in per.items()}
    for arm, (x, y) in sums.items():
        out[arm][f"ctr(agg=ratio){at}"] = x / y
    return out


@st.composite
def logs(draw: st.DrawFn) -> list[dict]:
    """Rankings shown from position 1 (every ranking has an impression at 1), 0/1 clicks."""
    rows = []
    for arm in ["a", "b", "c", "d", "e"][: draw(st.integers(1, 5))]:
        for q in range(draw(st.integers(1, 3))):
            depth = draw(st.sampled_from([1, 2, 3, 7, 30]))  # single impressions to deep positions
            clicky = draw(st.booleans())  # some rankings without any click
            for pos in range(1, depth + 1):
                rows.append({"arm": arm, "query": f"q{q}", "item": f"i{pos}", "position": pos,
                             "click": int(clicky and draw(st.booleans()))})
    return rows


def _check(got: pl.DataFrame, want: dict[str, dict[str, float]], names: list[str]) -> None:
    assert sorted(got["arm"]) == sorted(want)
    for row in got.iter_rows(named=True):
        for name in names:
            assert math.isclose(row[name], want[row["arm"]][name], rel_tol=1e-9, abs_tol=1e-12), (name, row)


@settings(max_examples=5, deadline=None)
@given(rows=logs(), k=st.sampled_from([None, 1, 3, 10]))
def test_click_metrics_by_name_match_definitions_in_both_engines_and_sql(rows: list[dict], k: int | None) -> None:
    log = pl.DataFrame(rows)
    names = [n if k is None else f"{n}@{k}" for n in NAMES]
    want = reference(rows, k)
    for engine in ("polars", "duckdb"):
        _check(rp.evaluate(log, names, by="arm", engine=engine), want, names)
    # ranked by score, Polars computes the click metrics in a pass of their own (by position,
    # in its checking pass): both paths against the reference
    by_score = log.with_columns((-pl.col("position")).alias("score")).drop("position")
    _check(rp.evaluate(by_score, names, by="arm", order="score"), want, names)
    con = duckdb.connect()
    con.register("log", log.to_arrow())
    _check(sql_frame(con, rp.to_sql(names, table="log", by="arm")), want, names)


def test_click_counts_in_the_count_metrics() -> None:
    """clicks@k, click_rr and abandonment read a count (2 clicks on one row) as it is."""
    log = pl.DataFrame({"query": ["a", "a", "a", "b"], "item": ["x", "y", "z", "x"],
                        "position": [1, 2, 3, 1], "click": [0, 2, 1, 0]})
    for engine in ("polars", "duckdb"):
        got = rp.evaluate(log, ["clicks@2", "click_rr", "last_click_rr", "abandonment@1"], engine=engine)
        assert got.row(0, named=True) == {"queries": 2, "clicks@2": 1.0, "click_rr": 0.25, "last_click_rr": 1 / 6,
                                          "abandonment@1": 1.0}


def test_names_parse_round_trip_and_direction() -> None:
    assert [parse(n) for n in ("ctr@10", "abandonment", "click_rr", "clicks@10", "last_click_rr", "impressions@5")] == [
        CTR(10), Abandonment(), ClickRR(), Clicks(10), LastClickRR(), parse("impressions@5")]
    spec = parse("ctr(agg=ratio, click=clicked)@10")
    assert parse(repr(spec)) == spec and spec.click == "clicked" and spec.is_ratio
    assert not parse("ctr@10").is_ratio
    assert parse("abandonment").HIGHER_IS_BETTER is False
    assert all(parse(n).HIGHER_IS_BETTER for n in ("ctr@10", "click_rr", "clicks", "ndcg@10"))
    with pytest.raises(rp.MetricNameError, match="agg"):
        parse("ctr(agg=median)")


LOG = pl.DataFrame({"model": ["a", "a", "a", "b", "b", "b"], "query": ["q1", "q1", "q2", "q1", "q1", "q3"],
                    "item": ["x", "y", "x", "y", "x", "z"], "position": [1, 2, 1, 1, 2, 1], "click": [0, 1, 1, 1, 0, 0]})


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_clicks_as_labels_of_the_existing_metrics(engine: str) -> None:
    """relevance="click" makes the click column the labels too: rr on clicks is click_rr, success@1
    is one minus abandonment@1, p@2 is ctr@2 where every ranking shows two rows.  (Before, a click
    metric in the call did so unasked, relabelling the whole call: tests/test_clicks_one_reading.py.)"""
    got = rp.evaluate(LOG, ["rr", "click_rr", "success@1", "abandonment@1", "p@2", "ctr@2"], by="model",
                      relevance="click", engine=engine).to_dicts()
    for row in got:
        assert row["rr"] == row["click_rr"]
        assert row["success@1"] == 1 - row["abandonment@1"]
    # model a: q1 shows 2 rows with 1 click, q2 one row with 1 click: p@2 divides by 2, ctr@2 by the rows shown
    assert (got[0]["p@2"], got[0]["ctr@2"]) == ((1 / 2 + 1 / 2) / 2, (1 / 2 + 1 / 1) / 2)
    # another column name: the schema's click= for the click metrics, relevance= for the labels
    renamed = LOG.rename({"click": "clicked"})
    assert rp.evaluate(renamed, ["rr", "ctr@2"], by="model", schema=rp.Schema(relevance="clicked", click="clicked"),
                       engine=engine).to_dicts() == \
        rp.evaluate(renamed, ["rr", "ctr(click=clicked)@2"], by="model", relevance="clicked", engine=engine).rename(
            {"ctr(click=clicked)@2": "ctr@2"}).to_dicts()


def test_conflicting_click_columns_are_refused() -> None:
    with pytest.raises(rp.RankPolarsError, match="different click columns"):
        rp.evaluate(LOG, ["ctr(click=a)", "ctr(click=b)@2"])
    with pytest.raises(rp.RankPolarsError, match="different click columns"):
        rp.to_sql(["ctr(click=a)", "ctr(click=b)@2"], table="logs")
    # a click column and a label column are read apart: no conflict, the missing one is named
    # (before: "names another label column", when one call read one column as both)
    with pytest.raises(rp.RankPolarsError, match=r"run: no click column 'other' for ctr\(click=other\)@2"):
        rp.evaluate(LOG, ["ctr(click=other)@2"], relevance="click", by="model")


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_clicks_from_a_qrels_table_are_refused_and_judgments_leave_the_clicks_alone(engine: str) -> None:
    """The click metrics read the log's click column whatever qrels= say: clicks given as qrels
    (they were the clicks, joined to the shown rows) are refused with the join that makes them a
    column; judgments beside a log with clicks choose the queries, not the clicks."""
    log = pl.DataFrame({"query": ["a", "a", "a", "b", "b"], "item": ["x", "y", "z", "x", "y"],
                        "position": [1, 2, 3, 1, 2], "click": [0, 1, 1, 0, 0]})
    qrels = log.filter((pl.col("click") > 0) | (pl.col("query") == "b")).select("query", "item", relevance="click")
    names = ["ctr@3", "ctr(agg=ratio)@3", "clicks@2", "abandonment@3", "click_rr@3", "last_click_rr@3"]
    with pytest.raises(rp.RankPolarsError, match="clicks given as qrels= are not read as clicks: join them to the log "
                                                 "as its 'click' column"):
        rp.evaluate(log.drop("click"), names, qrels=qrels, missing="zero", engine=engine)
    # judgments that disagree with the clicks (every shown row relevant) do not change them
    judged = log.select("query", "item", relevance=pl.lit(1))
    got = rp.evaluate(log, names, qrels=judged, engine=engine)
    want = rp.evaluate(log, names, engine=engine)
    assert got.to_dicts() == want.to_dicts()


BAD = [
    ({"click": [0, -1, 1, 0, 0, 0]}, ["clicks@3"],
     "clicks@3: 1 row with a negative click count (column 'click'), e.g. in query 'q1'"),
    ({"click": [0.0, 0.5, 1.0, 0.0, 0.5, 0.0]}, ["click_rr"],
     "click_rr: 2 rows with a click count that is not a whole number (column 'click'), e.g. in query 'q1'"),
    ({"click": [0, 2, 3, 0, 0, 4]}, ["clicks", "ctr@2"],
     "ctr@2: 3 rows with more clicks than impressions (a count above 1 in column 'click' on one shown row; "
     "a CTR is a rate of 0/1 clicks: use clicks@k for counts), e.g. in query 'q1', 'q2', 'q3'"),
    # the engines' run checks see a bad position first (every row, as a CTR counts them all);
    # to_sql's statement has only the family's own checks
    ({"position": [1, None, 1, 1, 2, None]}, ["abandonment"],
     "abandonment: 2 rows with a null 'position' (the rank of a shown row is unknown), e.g. in query 'q1', 'q3'"),
    # the click family's own check in every engine (before, the engines' label check said
    # "null or NaN relevance labels": the click column was the call's labels)
    ({"click": [0, None, 1, 1, 0, None]}, ["clicks@3"],
     "clicks@3: 2 rows with a null click count (column 'click'), e.g. in query 'q1', 'q3'"),
    ({"position": [1, 0, 1, -5, 2, 3]}, ["click_rr", "ctr@2"],
     "click_rr: 2 rows with a 'position' below 1 (1 = shown first), e.g. in query 'q1'"),
]
IN_THE_ENGINES = {
    "abandonment: 2 rows with a null 'position' (the rank of a shown row is unknown), e.g. in query 'q1', 'q3'":
        "run: column 'position': null positions (2 rows in 2 rankings, counting the rows that can change a value; "
        "checks='strict' counts every row), e.g. query 'q1' (model='a'), 'q3' (model='b')",
    "click_rr: 2 rows with a 'position' below 1 (1 = shown first), e.g. in query 'q1'":
        "run: column 'position': positions must be >= 1 (1 = shown first) (2 rows in 2 rankings, counting the rows "
        "that can change a value; checks='strict' counts every row), e.g. query 'q1' (model='a'), 'q1' (model='b')",
}


@pytest.mark.parametrize(("change", "names", "text"), BAD)
def test_bad_clicks_are_refused_alike_in_every_engine_and_to_sql(spark, change: dict, names: list,  # noqa: F811
                                                                  text: str) -> None:
    """The same DataError (message, row count, first queries) in Polars, DuckDB and Spark (one
    Spark evaluate per case: the check rides in the family's one statement), and to_sql's SQL run
    by DuckDB stops with the same text after DuckDB's error prefix."""
    log = LOG.with_columns(**{c: pl.Series(v) for c, v in change.items()})
    for engine in ("polars", "duckdb", "spark"):
        with pytest.raises(rp.DataError) as err:
            rp.evaluate(log, names, by="model", engine=engine, **({"spark": spark} if engine == "spark" else {}))
        assert str(err.value) == IN_THE_ENGINES.get(text, text), engine
    con = duckdb.connect()
    con.register("logs", log.to_arrow())
    with pytest.raises(duckdb.InvalidInputException) as failed:
        con.sql(rp.to_sql(names, table="logs", by="model")).fetchall()
    assert str(failed.value) == f"Invalid Input Error: rank_polars: {text}"


@pytest.mark.parametrize("dialect, stop", [("spark", "RAISE_ERROR("), ("databricks", "RAISE_ERROR("), ("trino", "FAIL("),
                                           ("presto", "FAIL("), ("bigquery", "ERROR("),
                                           ("postgres", "AS DOUBLE PRECISION)"), ("snowflake", "AS DOUBLE)")])
def test_to_sql_keeps_the_click_checks_in_every_dialect(dialect: str, stop: str) -> None:
    """A negative click stops the translated statement with the check's message (Spark's
    ``raise_error``, Trino's ``fail``; elsewhere the message cast to a number, which fails with
    it quoted: its count and text, "..." for the examples); good clicks give the values.  Run
    here in DuckDB, which reads the PostgreSQL/Snowflake/Trino forms (``fail`` spelt as DuckDB's
    ``error``).  Before, those dialects computed unchecked."""
    sql = rp.to_sql(["clicks", "ctr@2"], table="logs", by="model", dialect=dialect)
    assert stop in sql and "error(" not in sql.lower().replace(stop.lower(), "")
    if dialect not in ("postgres", "snowflake", "trino"):
        return  # the text is all this machine can check of them
    # Snowflake escapes a quote in a string with a backslash, DuckDB by doubling it
    sql = sql.replace("FAIL(", "error(").replace("\\'", "''")
    want = rp.evaluate(LOG, ["clicks", "ctr@2"], by="model").drop("queries").sort("model")
    con = duckdb.connect()
    con.register("logs", LOG.to_arrow())
    assert_frame_equal(sql_frame(con, sql).drop("queries").sort("model"), want, check_dtypes=False)
    con.register("logs", LOG.with_columns(click=pl.Series([0, -1, 1, 0, 0, 0])).to_arrow())
    with pytest.raises(duckdb.Error, match=r"rank_polars: clicks: 1 row with a negative click count \(column 'click'\), "
                                           r"e\.g\. in query \.\.\."):
        sql_frame(con, sql)


def test_null_clicks_are_refused_by_the_click_check() -> None:
    """By the family's check (the click column is not the labels), also with clicks as labels."""
    log = LOG.with_columns(click=pl.Series([0, None, 1, 0, 0, 0]))
    for engine in ("polars", "duckdb"):
        with pytest.raises(rp.DataError, match=r"ctr@2: 1 row with a null click count \(column 'click'\)"):
            rp.evaluate(log, ["ctr@2"], by="model", engine=engine)
        with pytest.raises(rp.DataError, match="column 'click': null or NaN relevance labels"):
            rp.evaluate(log, ["ctr@2", "rr"], by="model", relevance="click", engine=engine)


def test_click_metrics_in_spark_equal_polars(spark_session) -> None:
    """Spark runs the family's translated statement (its check as raise_error): the same values."""
    names = [f"{n}@2" for n in NAMES] + ["click_rr", "rr"]
    want = rp.evaluate(LOG, names, by="model", relevance="click").to_dicts()
    got = rp.evaluate(LOG, names, by="model", relevance="click", engine="spark", spark=spark_session).to_dicts()
    assert [row["rr"] for row in got] == [row["click_rr"] for row in got]
    assert [row["model"] for row in got] == [row["model"] for row in want]
    for g, w in zip(got, want):
        assert {k: v for k, v in g.items() if k != "model"} == pytest.approx(
            {k: v for k, v in w.items() if k != "model"}, rel=1e-9)


@pytest.mark.parametrize("engine", ["polars", "duckdb", "to_sql"])
def test_a_ranking_without_a_row_in_its_top_k_has_no_ctr(engine: str) -> None:
    """0 clicks over 0 rows shown is no CTR: null for that ranking and left out of the mean
    (it was NaN, and so was the mean); a group with no row in any top k has no ratio CTR."""
    log = pl.DataFrame({"model": ["a", "a", "a", "b"], "query": ["q1", "q1", "q2", "q1"], "item": ["x", "y", "x", "x"],
                        "position": [1, 2, 3, 4], "click": [1, 0, 1, 1]})
    names = ["ctr@2", "ctr(agg=ratio)@2", "clicks@2", "impressions@2"]
    if engine == "to_sql":
        con = duckdb.connect()
        con.register("logs", log.to_arrow())
        per = pl.from_arrow(con.sql(rp.to_sql(names, table="logs", by="model", per_query=True)).arrow())
        means = pl.from_arrow(con.sql(rp.to_sql(names, table="logs", by="model")).arrow())
    else:
        per = rp.evaluate(log, names, by="model", engine=engine, per_query=True)
        means = rp.evaluate(log, names, by="model", engine=engine)
    per = per.sort("model", "query").select("model", "query", *(pl.col(n).cast(pl.Float64) for n in names))
    assert per.rows() == [("a", "q1", 0.5, 0.5, 1.0, 2.0), ("a", "q2", None, 0.5, 0.0, 0.0),
                          ("b", "q1", None, None, 0.0, 0.0)]
    assert means.sort("model").select("ctr@2", "ctr(agg=ratio)@2").rows() == [(0.5, 0.5), (None, None)]


def test_to_sql_per_query_values_are_doubles() -> None:
    """abandonment and impressions came back as DECIMAL (DuckDB's type of the literal 1.0)."""
    con = duckdb.connect()
    con.register("logs", LOG.to_arrow())
    names = ["abandonment", "abandonment@1", "impressions@2", "ctr@2", "clicks"]
    got = pl.from_arrow(con.sql(rp.to_sql(names, table="logs", by="model", per_query=True)).arrow())
    assert all(got.schema[n] == pl.Float64 for n in names), got.schema
    want = rp.evaluate(LOG, names, by="model", per_query=True)
    assert got.sort("model", "query").rows() == want.sort("model", "query").select(got.columns).rows()
