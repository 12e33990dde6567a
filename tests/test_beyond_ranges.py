"""Serendipity over feature vectors in the SQL engines, past ``beyond_sql.SERENDIPITY_CELLS``
shown components (top-k rows x dimensions): one statement per range of users, each reading
the shown rows and the history of its users alone (at 20M shown rows with 64-dimensional
vectors the one statement ran out of DuckDB's default memory limit), the checks over every
item in the first."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl
import pytest

import rank_polars as rp
from rank_polars.engines.duckdb_engine import DuckDBEngine
from rank_polars.errors import DataError
from rank_polars.families.beyond import polars as beyond_polars
from rank_polars.families.beyond import polars_serendipity
from rank_polars.families.beyond import sql as beyond_sql

USERS, SHOWN, ITEMS = 120, 8, 60


def _data() -> dict[str, pl.DataFrame]:
    rng = np.random.default_rng(27)
    user = np.repeat(np.arange(USERS), SHOWN)
    item = np.concatenate([rng.choice(ITEMS, SHOWN, replace=False) for _ in range(USERS)])
    log = pl.DataFrame({"user": user, "item": item, "position": np.tile(np.arange(1, SHOWN + 1), USERS),
                        "relevance": (rng.random(user.size) < 0.4).astype(np.int64)})
    history = pl.DataFrame({"user": np.repeat(np.arange(USERS), 4), "item": rng.integers(0, ITEMS, USERS * 4)}).unique()
    features = pl.DataFrame({"item": np.arange(ITEMS), "vec": rng.standard_normal((ITEMS, 5)).tolist()})
    return {"log": log, "history": history, "features": features}


def _specs(d: dict[str, pl.DataFrame]) -> list[Any]:
    return [rp.serendipity(k=5, history=d["history"], features=d["features"]),
            rp.ils(k=5, features=d["features"]), rp.epc(k=5, history=d["history"])]


def _evaluate(d: dict[str, pl.DataFrame], engine: str, alone: bool = False) -> pl.DataFrame:
    specs = _specs(d)[:1] if alone else _specs(d)
    return rp.evaluate(d["log"], specs, query="user", per_query=True, engine=engine).sort("user")


def _close(reference: pl.DataFrame, got: pl.DataFrame, keys: list[str]) -> None:
    """``got`` has ``reference``'s rows (``keys``) and values at 1e-12."""
    assert reference.select(keys).equals(got.select(keys))
    for column in reference.columns[len(keys):]:
        for x, y in zip(reference[column].to_list(), got[column].to_list()):
            assert (x is None and y is None) or math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-15), (column, x, y)


def _statements(monkeypatch: pytest.MonkeyPatch, label: str = '"serendipity@5"') -> list[str]:
    """The family statements the DuckDB engine runs from now on (those naming ``label``)."""
    seen: list[str] = []
    query = DuckDBEngine.query

    def counted(self: DuckDBEngine, sql: str) -> pl.DataFrame:
        if label in sql:
            seen.append(sql)
        return query(self, sql)

    monkeypatch.setattr(DuckDBEngine, "query", counted)
    return seen


def test_ranges_of_users_give_the_one_statements_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Five ranges of users: the values of the one statement, bit for bit (and the Polars
    engine's), the checks in the first statement only, and still over every item."""
    d = _data()
    whole = _statements(monkeypatch)
    one = _evaluate(d, "duckdb")
    assert len(whole) == 1
    # 600 shown rows in the top 5 of 5 dimensions: five statements of about 600 components
    monkeypatch.setattr(beyond_sql, "SERENDIPITY_CELLS", 600, raising=False)
    split = _statements(monkeypatch)
    parts = _evaluate(d, "duckdb")
    assert len(split) == 5
    assert parts.equals(one)  # the same bits, every list once
    # the checks of the shown items (serendipity's and ILS's) and of the history items run
    # once, over every item, in the first statement
    assert [s.count("have no row in the features table") for s in split] == [3, 0, 0, 0, 0]
    _close(_evaluate(d, "polars"), parts, ["user"])

    # a vector missing for an item of the last range only (ITEMS: no item has one), shown to
    # the last user or in its history: the message of the Polars engine
    for where in ("shown", "history"):
        broken = dict(d)
        if where == "shown":
            first = (pl.col("user") == USERS - 1) & (pl.col("position") == 1)
            broken["log"] = d["log"].with_columns(pl.when(first).then(ITEMS).otherwise(pl.col("item")).alias("item"))
        else:
            broken["history"] = pl.concat([d["history"], pl.DataFrame({"user": [USERS - 1], "item": [ITEMS]})])
        # serendipity alone: with ILS too, which of their checks stops DuckDB first varies
        with pytest.raises(DataError) as expected:
            _evaluate(broken, "polars", alone=True)
        with pytest.raises(DataError) as got:
            _evaluate(broken, "duckdb", alone=True)
        assert str(got.value) == str(expected.value), where


def test_polars_ranges_of_users_give_the_one_passs_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Polars engine's serendipity over vectors past ``polars_serendipity.SERENDIPITY_CELLS``
    shown components: one streaming pass per range of users (five here), whose rows are the
    one pass's, bit for bit, with ILS and EPC beside it and with the lists grouped by model."""
    d = _data()
    two = pl.concat([d["log"].with_columns(model=pl.lit(m)) for m in ("a", "b")])
    two = two.with_columns(pl.when(pl.col("model") == "b").then(pl.col("position").reverse().over("user", "model"))
                           .otherwise(pl.col("position")).alias("position"))
    passes: list[int] = []
    collect = pl.LazyFrame.collect

    def counted(self: pl.LazyFrame, *args: Any, **kwargs: Any) -> pl.DataFrame:
        passes.append(kwargs.get("engine") == "streaming")
        return collect(self, *args, **kwargs)

    def evaluate(log: pl.DataFrame, by: str | None = None) -> tuple[pl.DataFrame, int]:
        passes.clear()
        with monkeypatch.context() as m:
            m.setattr(pl.LazyFrame, "collect", counted)
            out = rp.evaluate(log, _specs(d), query="user", by=by, per_query=True, engine="polars")
        return out.sort(*([by] if by else []), "user"), sum(passes)

    for log, by in ((d["log"], None), (two, "model")):
        one, whole = evaluate(log, by)
        # 600 shown rows per model in the top 5 (1200 over two models) of 5 dimensions: 5 ranges
        monkeypatch.setattr(polars_serendipity, "SERENDIPITY_CELLS", 600 * (2 if by else 1))
        parts, split = evaluate(log, by)
        monkeypatch.undo()
        assert split - whole == 5, by  # the ranges' passes (the one pass is collected with the call's)
        assert parts.equals(one), by  # the same bits, every list once


def _in_ranges(monkeypatch: pytest.MonkeyPatch, run: Callable[[str], pl.DataFrame], label: str, budget: str,
               value: int, statements: int) -> pl.DataFrame:
    """DuckDB's values with ``beyond_sql.<budget>`` set to ``value``: ``statements`` statements
    naming ``label`` (one before), whose rows are the one statement's, bit for bit."""
    seen = _statements(monkeypatch, label)
    one = run("duckdb")
    assert len(seen) == 1
    monkeypatch.setattr(beyond_sql, budget, value)
    seen = _statements(monkeypatch, label)
    parts = run("duckdb")
    assert len(seen) == statements
    assert parts.equals(one)
    return parts


def test_cooccurrence_ranges_of_users_give_the_one_statements_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Co-occurrence ILS past ``beyond_sql.COOCCURRENCE_PAIRS`` pairs of shown items: one
    statement per range of users (each keeps the history's pairs its own lists hold), the one
    statement's bits, and the Polars engine's values (1e-12); the id check runs once."""
    d = _data()
    specs = [rp.diversity(k=5, history=d["history"], sim="cooccurrence"), rp.ils(k=4, history=d["history"], sim="cooccurrence")]
    def run(engine: str) -> pl.DataFrame:
        return rp.evaluate(d["log"], specs, query="user", per_query=True, engine=engine).sort("user")

    # 120 lists of 5 in the top 5: 10 pairs each, 1,200 in all: four statements of ~300
    parts = _in_ranges(monkeypatch, run, '"diversity(sim=cooccurrence)@5"', "COOCCURRENCE_PAIRS", 300, 4)
    _close(run("polars"), parts, ["user"])


def test_serendipity_by_cooccurrence_in_ranges_gives_the_one_statements_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Serendipity by co-occurrence past ``beyond_sql.DOTS_ROWS`` (shown item, history row)
    pairs: one statement per range of users, the one statement's bits, and the Polars engine's
    values (the same sums: pair counts over the whole history, each shown item's dot summed exactly).
    The history leaves users out (no value) and misses shown items (a dot of 0); with ILS
    beside it, grouped by model."""
    d = _data()
    rng = np.random.default_rng(5)
    history = d["history"].filter(pl.col("user") % 7 != 3,  # users without history
                                  pl.col("item") < ITEMS - 5)  # shown items the history never saw
    log = pl.concat([d["log"].with_columns(model=pl.lit(m)) for m in ("a", "b")])
    log = log.with_columns(pl.when(pl.col("model") == "b").then(pl.Series(rng.permutation(log.height) % ITEMS))
                           .otherwise(pl.col("item")).alias("item")).unique(["model", "user", "item"], keep="first")
    specs = [rp.serendipity(k=5, history=history, sim="cooccurrence"), rp.ils(k=4, history=history, sim="cooccurrence")]

    def run(engine: str) -> pl.DataFrame:
        return rp.evaluate(log, specs, query="user", by="model", per_query=True, engine=engine).sort("model", "user")

    # per user and model about 5 shown rows x 4 history rows: ~4,000 pairs, four statements of ~1,000
    parts = _in_ranges(monkeypatch, run, '"serendipity(sim=cooccurrence)@5"', "DOTS_ROWS", 1000, 4)
    # (the engines round a term to Decimal(18, 16) each their own way: a few values 1 ulp apart)
    _close(run("polars"), parts, ["model", "user"])
    column = "serendipity(sim=cooccurrence)@5"
    assert parts[column].null_count() > 0 and parts[column].drop_nulls().n_unique() > 50
