"""The plug-in path of measure families (rank_polars.engines.base): a family defined outside
the library (tests/family_example.py) is computed by each engine, joined with the plan's
metrics, aggregated as its spec declares, and equal to a plain-Python reference."""

from __future__ import annotations

import math

import polars as pl
import pytest

import rank_polars as rp
from rank_polars.errors import RankPolarsError

from .family_example import CatalogCoverage, HistoryShare

LOG = pl.DataFrame({
    "model": ["a"] * 6 + ["b"] * 5,
    "user": ["u1", "u1", "u1", "u2", "u2", "u3", "u1", "u1", "u2", "u2", "u2"],
    "item": ["x", "y", "z", "x", "w", "v", "y", "x", "w", "v", "z"],
    "position": [1, 2, 3, 1, 2, 1, 1, 2, 1, 2, 3],
    "relevance": [1, 0, 1, 0, 1, 1, 0, 1, 1, 0, 0],
})
HISTORY = pl.DataFrame({"user": ["u1", "u1", "u2", "u3"], "item": ["x", "z", "v", "q"]})
CATALOG = pl.DataFrame({"item": ["x", "y", "z", "w", "v", "q", "r", "s"]})


def reference(k: int) -> dict[str, dict[str, object]]:
    """Per model: the mean over users of the history share, and the catalogue coverage."""
    history = {(u, i) for u, i in HISTORY.iter_rows()}
    out: dict[str, dict[str, object]] = {}
    for model in ("a", "b"):
        rows = [r for r in LOG.iter_rows(named=True) if r["model"] == model and r["position"] <= k]
        users = sorted({r["user"] for r in LOG.iter_rows(named=True) if r["model"] == model})
        shares = {u: sum((u, r["item"]) in history for r in rows if r["user"] == u) / k for u in users}
        out[model] = {"shares": shares, "coverage": len({r["item"] for r in rows}) / CATALOG.height}
    return out


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_family_measures_beside_plan_measures(engine: str) -> None:
    specs = [HistoryShare(k=2, history=HISTORY), CatalogCoverage(k=2, catalog=CATALOG)]
    got = rp.evaluate(LOG, ["mrr", *specs], by="model", query="user", engine=engine)
    want = reference(2)
    assert got.columns == ["model", "queries", "mrr", "history_share@2", "catalog_coverage@2"]
    for row in got.iter_rows(named=True):
        ref = want[row["model"]]
        shares = list(ref["shares"].values())  # type: ignore[union-attr]
        assert row["queries"] == len(shares)
        assert math.isclose(row["history_share@2"], sum(shares) / len(shares), rel_tol=1e-12)
        assert row["catalog_coverage@2"] == ref["coverage"]
    # the plan's metric is unchanged by the families beside it
    alone = rp.evaluate(LOG, ["mrr"], by="model", query="user", engine=engine)
    assert got["mrr"].to_list() == alone["mrr"].to_list()


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_family_per_query_and_missing(engine: str) -> None:
    qrels = pl.DataFrame({"user": ["u1", "u2", "u3", "u4"], "item": ["x", "w", "v", "x"], "relevance": [1, 1, 1, 1]})
    spec = HistoryShare(k=3, history=HISTORY)
    per = rp.evaluate(LOG, [spec], qrels=qrels, by="model", query="user", per_query=True, engine=engine)
    want = reference(3)
    # every judged user of every model, 0 where the model showed nothing (missing="zero")
    expected = {(m, u): want[m]["shares"].get(u, 0.0) for m in ("a", "b") for u in ("u1", "u2", "u3", "u4")}  # type: ignore[union-attr]
    assert {(m, u): v for m, u, v in per.iter_rows()} == expected
    skipped = rp.evaluate(LOG, [spec], qrels=qrels, by="model", query="user", per_query=True, missing="skip", engine=engine)
    assert {(m, u) for m, u, _ in skipped.iter_rows()} == {(m, u) for m in ("a", "b") for u in want[m]["shares"]}  # type: ignore[operator]


def test_family_measures_in_spark(spark_session: object) -> None:
    """The same statements, translated to Spark SQL, with the spec's table handed to Spark."""
    specs = [HistoryShare(k=2, history=HISTORY), CatalogCoverage(k=2, catalog=CATALOG)]
    got = rp.evaluate(LOG, ["mrr", *specs], by="model", query="user", engine="spark", spark=spark_session)
    want = rp.evaluate(LOG, ["mrr", *specs], by="model", query="user", engine="duckdb")
    assert got.to_dicts() == want.to_dicts()


def test_family_errors() -> None:
    with pytest.raises(RankPolarsError, match="catalog_coverage@2.*no per-query value"):
        rp.evaluate(LOG, [CatalogCoverage(k=2, catalog=CATALOG)], by="model", query="user", per_query=True)
    with pytest.raises(RankPolarsError, match=r"needs catalog="):
        rp.evaluate(LOG, [CatalogCoverage(k=2)], by="model", query="user")
    # the tables are not part of the name: the spec keeps them through replace()
    assert CatalogCoverage(k=2, catalog=CATALOG).replace(k=3).sources["catalog"] is CATALOG


def test_a_family_returning_a_query_twice_is_refused() -> None:
    """``attach`` proves a family's rows distinct by their keys' 64-bit hashes (a fraction of
    ``is_duplicated``'s memory at 10M rankings) and compares the rows only when hashes repeat:
    a ranking returned twice is refused, a null key is one key like any other."""
    from rank_polars.engines.base import attach

    table = pl.DataFrame({"m": ["a", "a", None], "q": ["1", "2", "1"], "ndcg": [0.5, 0.25, 1.0]})
    spec = HistoryShare(k=2, history=HISTORY)
    ok = pl.DataFrame({"m": ["a", None], "q": ["1", "1"], "share": [0.5, 0.75]})
    got = attach(table, [(False, [("share", spec)], ok)], ["m", "q"])
    assert sorted(got.select("m", "q", "share").rows(), key=repr) == [("a", "1", 0.5), ("a", "2", 0.0), (None, "1", 0.75)]
    twice = pl.concat([ok, ok.head(1)])
    with pytest.raises(RankPolarsError, match="returned more than one row per query"):
        attach(table, [(False, [("share", spec)], twice)], ["m", "q"])
    nulls = pl.concat([ok, ok.tail(1)])  # the null group's ranking twice
    with pytest.raises(RankPolarsError, match="returned more than one row per query"):
        attach(table, [(False, [("share", spec)], nulls)], ["m", "q"])
