"""A missing list never scores best: with ``missing="zero"`` a judged query that a version never
ranked counts 0 on the higher-is-better measures (trec_eval ``-c``), but 0 is the best value of a
lower-is-better one (fall-out, abandonment, ILS, popularity), so there it is left out (null per
query, out of the mean) with a CoverageWarning, in every engine and in ``to_sql``."""

from __future__ import annotations

import warnings

import duckdb
import polars as pl
import pytest

import rank_polars as rp

# version b never ranked q2; both versions ranked q1
LOG = pl.DataFrame({
    "model": ["a", "a", "a", "a", "b", "b"],
    "query": ["q1", "q1", "q2", "q2", "q1", "q1"],
    "item": ["x", "y", "y", "z", "y", "x"],
    "position": [1, 2, 1, 2, 1, 2],
    "relevance": [0, 1, 1, 0, 1, 0],
    "click": [0, 0, 0, 1, 0, 0],
})
JUDGMENTS = pl.DataFrame({"query": ["q1", "q1", "q2", "q2"], "item": ["x", "y", "y", "z"], "relevance": [0, 1, 1, 0]})
HISTORY = pl.DataFrame({"query": ["u1", "u2", "u3"], "item": ["x", "x", "y"]})
FEATURES = pl.DataFrame({"item": ["x", "y", "z"], "vec": [[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]]})


def specs() -> list:
    return ["fallout@2", "abandonment@2", rp.arp(k=2, history=HISTORY), rp.ils(k=2, features=FEATURES), "p@2"]


LOWER = ["fallout@2", "abandonment@2", "arp@2", "ils@2"]


def run(engine: str, **kwargs) -> tuple[pl.DataFrame, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = rp.evaluate(LOG, specs(), qrels=JUDGMENTS, by="model", engine=engine, **kwargs)
    return out, [str(w.message) for w in caught]


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_the_missing_ranking_is_left_out_of_lower_is_better_measures(engine: str) -> None:
    per, said = run(engine, per_query=True)
    b_q2 = per.filter((pl.col("model") == "b") & (pl.col("query") == "q2"))
    assert b_q2.height == 1
    for label in LOWER:
        assert b_q2[label][0] is None, label
    assert b_q2["p@2"][0] == 0.0  # a higher-is-better measure keeps missing="zero"'s 0
    assert any("left out of these lower-is-better measures" in s for s in said), said
    means, _ = run(engine)
    b = means.filter(pl.col("model") == "b")
    b_q1 = per.filter((pl.col("model") == "b") & (pl.col("query") == "q1"))
    for label in LOWER:  # b's mean is over the one list it showed
        assert b[label][0] == pytest.approx(b_q1[label][0], abs=1e-12), label
    assert b["p@2"][0] == pytest.approx(b_q1["p@2"][0] / 2, abs=1e-12)
    assert b["queries"][0] == 2


def test_missing_skip_and_complete_runs_are_unchanged() -> None:
    skipped, _ = run("polars", missing="skip")
    zero, _ = run("polars")
    a_skip, a_zero = skipped.filter(pl.col("model") == "a"), zero.filter(pl.col("model") == "a")
    assert a_skip.equals(a_zero)  # a ranked every judged query: nothing missing, nothing left out


def test_to_sql_leaves_them_out_too() -> None:
    con = duckdb.connect()
    con.register("logs", LOG.to_arrow())
    con.register("judgments", JUDGMENTS.to_arrow())
    plan_only = ["fallout@2", "abandonment@2", "p@2"]  # to_sql's families read tables by name
    got = con.sql(rp.to_sql(plan_only, table="logs", qrels="judgments", by="model")).pl()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = rp.evaluate(LOG, plan_only, qrels=JUDGMENTS, by="model")
    for label in plan_only:
        assert got[label].to_list() == pytest.approx(want[label].to_list(), abs=1e-12), label
