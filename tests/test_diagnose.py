"""rp.diagnose: findings on odd logs (the CLI's validate prints them)."""

from __future__ import annotations

import polars as pl

import rank_polars as rp

BASE = pl.DataFrame({"query": ["q1", "q1", "q1", "q2", "q2"], "item": list("abcde"),
                     "position": [1, 2, 3, 1, 2], "relevance": [1, 0, 2, 0, 1]})


def test_a_null_group_is_a_group_not_one_that_lacks_queries():
    log = pl.concat([BASE.with_columns(model=pl.lit("A")), BASE.with_columns(model=pl.lit(None, pl.String))])
    messages = rp.diagnose(log, by="model").to_frame()["message"].to_list()
    assert not any("lacks" in m for m in messages), messages
    assert any("null 'model'" in m for m in messages), messages


def test_a_group_that_lacks_a_query_is_named():
    log = pl.concat([BASE.with_columns(model=pl.lit("A")),
                     BASE.filter(pl.col("query") == "q1").with_columns(model=pl.lit("B"))])
    messages = rp.diagnose(log, by="model").to_frame()["message"].to_list()
    assert any("B lacks 1" in m for m in messages), messages
