"""rank-polars sql."""

from __future__ import annotations

import polars as pl
from polars.testing import assert_frame_equal

from tests.cli.helpers import M_ARGS, METRICS, expected, invoke, one_line_error


def test_sql() -> None:
    out = invoke("sql", "-m", "ndcg@10", "-m", "mrr", "--table", "logs", "--by", "model", "--dialect", "spark").stdout
    assert "SELECT" in out and "logs" in out and "`ndcg@10`" in out
    per_query = invoke("sql", "-m", "map", "--table", "logs", "--qrels", "judgments", "--per-query").stdout
    assert "judgments" in per_query
    one_line_error(invoke("sql", "-m", "ndcg@10", "--table", "logs", "--dialect", "no-such-dialect", code=None))


def test_sql_runs_in_duckdb(log: pl.DataFrame) -> None:
    import duckdb

    text = invoke("sql", *M_ARGS, "--table", "logs", "--by", "model").stdout
    con = duckdb.connect()
    con.register("logs", log.to_arrow())
    got = pl.from_arrow(con.sql(text).arrow())
    assert_frame_equal(got, expected(log), check_dtypes=False)


def test_sql_refuses_a_table_name_that_is_more_than_a_table() -> None:
    line = one_line_error(invoke("sql", "-m", "ndcg@10", "--table", "logs; DROP TABLE t", code=1))
    assert "table" in line.lower()  # the library's refusal, printed as one line; nothing on stdout


def test_sql_is_pretty_printed_by_default_and_compact_on_request(log: pl.DataFrame) -> None:
    import duckdb

    import rank_polars as rp

    pretty = invoke("sql", *M_ARGS, "--table", "logs", "--by", "model").stdout
    compact = invoke("sql", *M_ARGS, "--table", "logs", "--by", "model", "--compact").stdout
    lines = pretty.splitlines()
    assert len(lines) > 100 and max(map(len, lines)) < 200  # one clause or column a line
    assert compact.count("\n") == 1 and len(compact) > 2000  # the whole query on one line
    con = duckdb.connect()
    con.register("logs", log.to_arrow())
    want = con.sql(rp.to_sql(METRICS, table="logs", by="model")).pl()  # the library's own text
    for text in (pretty, compact):
        assert_frame_equal(con.sql(text).pl(), want)
    spark = invoke("sql", *M_ARGS, "--table", "logs", "--by", "model", "--dialect", "spark").stdout
    assert "`ndcg@10`" in spark and len(spark.splitlines()) > 100
