"""``to_sql`` with beyond-accuracy measures: the statement, run in DuckDB over tables named in
the specs, equals ``evaluate`` (itself tested against the peers in test_beyond_reference.py),
and it translates to the other dialects where sqlglot can express it."""

from __future__ import annotations

import math
from typing import Any

import duckdb
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rank_polars as rp
from rank_polars.errors import RankPolarsError

from .sql_cases import sql_frame
from .test_beyond_reference import SETTINGS, logs

FEW = settings(SETTINGS, max_examples=4)


def _specs(k: int, tables: dict[str, Any]) -> list[Any]:
    history = tables["history"]
    return [rp.arp(k=k, history=history), rp.aplt(k=k, history=history), rp.aclt(k=k, history=history, head=0.5),
            rp.epc(k=k, history=history), rp.efd(k=k, history=history),
            rp.ils(k=k, history=history, sim="cooccurrence"), rp.serendipity(k=k, history=history, sim="cooccurrence")]


def _catalog_specs(k: int, tables: dict[str, Any]) -> list[Any]:
    history, catalog = tables["history"], tables["catalog"]
    return [rp.catalog_coverage(k=k, catalog=catalog), rp.entropy(k=k), rp.gini(k=k, catalog=catalog),
            rp.exposure_gini(k=k, catalog=catalog), rp.novelty(k=k, history=history, unseen="zero"),
            rp.pop_reo(k=k, history=history, catalog=catalog), rp.pop_rsp(k=k, history=history, catalog=catalog)]


def _same(a: pl.DataFrame, b: pl.DataFrame) -> None:
    assert a.columns == b.columns
    for column in a.columns:
        for x, y in zip(a[column].to_list(), b[column].to_list()):
            if isinstance(x, float) or isinstance(y, float):
                assert (x is None and y is None) or math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12), (column, x, y)
            else:
                assert x == y, (column, x, y)


@FEW
@given(data=logs(fresh=False), k=st.integers(1, 5), per_query=st.booleans())
def test_to_sql_equals_evaluate(data: dict[str, Any], k: int, per_query: bool) -> None:
    catalog = pl.DataFrame({"item": data["items"]})
    con = duckdb.connect()
    for name, frame in (("logs", data["log"]), ("train", data["history"]), ("items", catalog)):
        con.register(name, frame.to_arrow())
    named = {"history": "train", "catalog": "items"}
    frames = {"history": data["history"], "catalog": catalog}
    for make in (_specs, _catalog_specs):
        if per_query and make is _catalog_specs:
            continue
        sql = rp.to_sql(["ndcg@3", *make(k, named)], table="logs", by="model", query="user", per_query=per_query)
        got = sql_frame(con, sql)
        want = rp.evaluate(data["log"], ["ndcg@3", *make(k, frames)], by="model", query="user", per_query=per_query)
        _same(got.cast({"queries": pl.UInt32} if "queries" in got.columns else {}), want)


def test_to_sql_checks_and_limits() -> None:
    log = pl.DataFrame({"model": ["a", "a"], "user": [1, 1], "item": ["x", "y"], "position": [1, 2], "relevance": [1, 0]})
    con = duckdb.connect()
    con.register("logs", log.to_arrow())
    con.register("items", pl.DataFrame({"item": ["x"]}).to_arrow())
    # the statement itself refuses a shown item outside the catalogue, with the engines' message
    sql = rp.to_sql([rp.catalog_coverage(k=2, catalog="items")], table="logs", by="model", query="user")
    with pytest.raises(duckdb.InvalidInputException, match=r"catalog_coverage@2: 1 shown items have no row in the catalog "
                                                           r"table, e\.g\. 'y'"):
        con.sql(sql).fetchall()
    # feature vectors: their kind and length are read from the table, which to_sql does not read
    with pytest.raises(RankPolarsError, match=r"to_sql cannot write 'ils@2'"):
        rp.to_sql([rp.ils(k=2, features="items")], table="logs", query="user")
    with pytest.raises(RankPolarsError, match=r"one table name or table function"):
        rp.to_sql([rp.arp(k=2, history="train; DROP TABLE logs")], table="logs", query="user")
    with pytest.raises(RankPolarsError, match=r"no per-query value"):
        rp.to_sql([rp.entropy(k=2)], table="logs", query="user", per_query=True)


def test_to_sql_by_name_reads_the_catalogue_from_the_log() -> None:
    log = pl.DataFrame({"model": ["a", "a", "a", "b", "b", "b"], "user": [1, 1, 2, 1, 2, 2],
                        "item": ["x", "y", "z", "x", "w", "x"], "position": [1, 2, 1, 1, 1, 2], "relevance": [1, 0, 1, 0, 1, 1]})
    con = duckdb.connect()
    con.register("logs", log.to_arrow())
    names = ["ndcg@3", "catalog_coverage@1", "gini@2", "exposure_gini@2", "entropy@2"]
    got = sql_frame(con, rp.to_sql(names, table="logs", by="model", query="user"))
    want = rp.evaluate(log, names, by="model", query="user")
    _same(got.cast({"queries": pl.UInt32}), want)
    # 4 items in the log (w, x, y, z): version a shows x, z at rank 1, b shows x, w
    assert want["catalog_coverage@1"].to_list() == [0.5, 0.5]


@pytest.mark.parametrize("dialect", ["spark", "trino", "snowflake", "postgres"])
def test_to_sql_translates(dialect: str) -> None:
    """Every per-list measure in one statement, every catalogue-level one in another."""
    named = {"history": "train", "catalog": "items"}
    for specs in (_specs(10, named), _catalog_specs(10, named)):
        assert rp.to_sql(["ndcg@10", *specs], table="logs", by="model", query="user", dialect=dialect).startswith("WITH")


@pytest.mark.parametrize("dialect, stop", [("trino", "FAIL("), ("presto", "FAIL("), ("databricks", "RAISE_ERROR("),
                                           ("postgres", "AS DOUBLE PRECISION)"), ("snowflake", "AS DOUBLE)")])
def test_the_catalogue_check_stops_the_statement_in_every_dialect(dialect: str, stop: str) -> None:
    """An item shown but not in the catalogue stops the translated statement with the check's
    message (Trino's ``fail``, Spark's ``raise_error``; elsewhere the message cast to a number,
    which fails with it quoted); on good data the statement runs.  Before, DuckDB's ``error``
    was written as is, which those dialects refuse on any data.  Run here in DuckDB, which
    reads the PostgreSQL/Snowflake forms as they are (Trino's ``fail`` spelt as DuckDB's)."""
    logs = pl.DataFrame({"model": ["a"] * 3, "query": ["q"] * 3, "item": ["x", "y", "z"],
                         "position": [1, 2, 3], "relevance": [1.0, 0.0, 1.0]})
    sql = rp.to_sql([rp.catalog_coverage(k=10, catalog="catalog")], table="logs", by="model", dialect=dialect)
    assert stop in sql and "error(" not in sql.lower().replace("raise_error(", "")
    if dialect not in ("postgres", "snowflake", "trino"):
        return  # the text is all this machine can check of them
    sql = sql.replace("FAIL(", "error(")
    for catalog, want in ((["x", "y", "z", "w"], 0.75), (["x"], None)):
        con = duckdb.connect()
        con.register("logs", logs.to_arrow())
        con.register("catalog", pl.DataFrame({"item": catalog}).to_arrow())
        if want is not None:
            assert sql_frame(con, sql).rows() == [("a", 1, want)]
            continue
        with pytest.raises(duckdb.Error, match="rank_polars: catalog_coverage@10: 2 shown items have no row in the catalog"):
            sql_frame(con, sql)


def test_exposure_gini_of_a_log_of_one_row_is_the_sql_engines_bits() -> None:
    """patience^rank over a log of one row: Polars' pow over a column of one row takes another
    path (0.9 where DuckDB's pow gives 0.8999999999999999 at rank 6, before commit ac100a2), so the
    weights come from a table made by the vectorised pow; every rank to 30 gives DuckDB's bits."""
    catalog = pl.DataFrame({"item": [f"d{i}" for i in range(10)]})
    metric = rp.exposure_gini(k=40, catalog=catalog)
    for position in range(1, 31):
        run = pl.DataFrame({"query": ["q"], "item": ["d1"], "position": [position], "relevance": [1]})
        polars, sql = (rp.evaluate(run, [metric], engine=e).row(0)[-1] for e in ("polars", "duckdb"))
        assert polars == sql, (position, polars, sql)
