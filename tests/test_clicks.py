"""Online click metrics (rank_polars.measures.clicks) in Polars and DuckDB, against a plain
Python reference written from the definitions (issue 20), on hypothesis-generated click logs
(1-3 arms, zero-click rankings, single impressions, deep positions)."""

from __future__ import annotations

import math

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rank_polars as rp
from rank_polars.measures.clicks import CTR, Abandonment, ClickRR, Clicks, LastClickRR


def reference(rows: list[dict], k: int) -> dict[str, dict[str, float]]:
    """Mean over rankings (arm, query) of each metric, from the definitions."""
    rankings: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for r in rows:
        rankings.setdefault((r["arm"], r["query"]), []).append((r["position"], r["click"]))
    per: dict[str, dict[str, list[float]]] = {}
    for (arm, _), shown in rankings.items():
        top = [(p, c) for p, c in sorted(shown) if p <= k]
        clicked = [p for p, c in top if c > 0]
        vals = {
            f"ctr@{k}": sum(c for _, c in top) / len(top) if top else math.nan,
            f"clicks@{k}": float(sum(c for _, c in top)),
            f"abandonment@{k}": float(not clicked),
            f"click_rr@{k}": 1 / clicked[0] if clicked else 0.0,
            f"last_click_rr@{k}": 1 / clicked[-1] if clicked else 0.0,
        }
        for name, v in vals.items():
            per.setdefault(arm, {}).setdefault(name, []).append(v)
    return {arm: {n: sum(v) / len(v) for n, v in m.items()} for arm, m in per.items()}


@st.composite
def logs(draw: st.DrawFn) -> list[dict]:
    rows = []
    for arm in ["a", "b", "c"][: draw(st.integers(1, 3))]:
        for q in range(draw(st.integers(1, 4))):
            depth = draw(st.integers(1, 12))
            for pos in range(1, depth + 1):
                rows.append({"arm": arm, "query": f"q{q}", "item": f"i{pos}", "position": pos,
                             "click": draw(st.integers(0, 2)) if draw(st.booleans()) else 0})
    return rows


SPECS = [Clicks, Abandonment, ClickRR, LastClickRR]


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@settings(max_examples=25, deadline=None)
@given(rows=logs(), k=st.integers(1, 10))
def test_click_metrics_match_definitions(engine: str, rows: list[dict], k: int) -> None:
    log = pl.DataFrame(rows)
    specs = [CTR(k=1), *(cls(k=k) for cls in SPECS)]  # ctr at 1: every ranking shows position 1
    got = rp.evaluate(log, specs, by="arm", relevance="click", engine=engine)
    want = reference(rows, k)
    want1 = reference(rows, 1)
    for row in got.iter_rows(named=True):
        ref = want[row["arm"]]
        assert math.isclose(row["ctr@1"], want1[row["arm"]]["ctr@1"], rel_tol=1e-9, abs_tol=1e-12)
        for cls in SPECS:
            name = f"{cls.NAME}@{k}"
            assert math.isclose(row[name], ref[name], rel_tol=1e-9, abs_tol=1e-12), name


def test_click_metrics_engines_agree() -> None:
    log = pl.DataFrame({"query": ["a", "a", "a", "b", "b", "c"], "item": ["x", "y", "z", "x", "y", "x"],
                        "position": [1, 2, 3, 1, 2, 1], "click": [0, 1, 1, 0, 0, 1]})
    names = [CTR(k=3), Clicks(k=3), Abandonment(k=3), ClickRR(k=3), LastClickRR(k=3)]
    polars = rp.evaluate(log, names, relevance="click")
    duck = rp.evaluate(log, names, relevance="click", engine="duckdb")
    assert polars.to_dicts() == duck.to_dicts()
    assert polars.row(0, named=True) == {
        "queries": 3, "ctr@3": (2 / 3 + 0 + 1) / 3, "clicks@3": 1.0, "abandonment@3": 1 / 3,
        "click_rr@3": (1 / 2 + 0 + 1) / 3, "last_click_rr@3": (1 / 3 + 0 + 1) / 3}


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_clicks_from_a_qrels_table(engine: str) -> None:
    """With qrels the clicks are their labels joined to the shown rows: the same values as the log's column."""
    log = pl.DataFrame({"query": ["a", "a", "a", "b", "b"], "item": ["x", "y", "z", "x", "y"],
                        "position": [1, 2, 3, 1, 2], "click": [0, 1, 1, 0, 0]})
    qrels = log.filter((pl.col("click") > 0) | (pl.col("query") == "b")).select("query", "item", relevance="click")
    names = [CTR(k=3), Clicks(k=2), Abandonment(k=3), ClickRR(k=3), LastClickRR(k=3)]
    got = rp.evaluate(log.drop("click"), names, qrels=qrels, missing="zero", engine=engine)
    want = rp.evaluate(log, names, relevance="click", engine=engine)
    assert got.to_dicts() == want.to_dicts()
