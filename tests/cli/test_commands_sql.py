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
