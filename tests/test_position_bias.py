"""rp.position_bias against ultr-bias-toolkit's estimators, reproduced in pandas from its source
(github.com/philipphager/ultr-bias-toolkit, commit ba62bcbb: ``ultr_bias_toolkit/bias/naive.py``
NaiveCtrEstimator, ``bias/intervention_harvesting/pivot.py`` PivotEstimator and ``util.py``
build_intervention_sets / normalize_bias; the package itself pulls torch), in both engines."""

from __future__ import annotations

import math

import pandas as pd
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rank_polars.errors import RankPolarsError
from rank_polars.position_bias import position_bias


def normalize_bias(examination: pd.Series) -> pd.Series:
    examination /= examination.values[0]
    return examination.fillna(0)


def naive(df: pd.DataFrame) -> pd.DataFrame:
    df = df.groupby("position").agg(examination=("click", "mean")).reset_index()
    df.examination = normalize_bias(df.examination)
    return df


def pivot(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    df["no_click"] = 1 - df["click"]
    df = df.groupby(["query", "item", "position"]).agg(
        clicks=("click", "sum"), no_clicks=("no_click", "sum"), impressions=("item", "count")).reset_index()
    df["c"] = df["clicks"] / df["impressions"]
    df["not_c"] = df["no_clicks"] / df["impressions"]
    df = df.merge(df, on=["query", "item"], suffixes=["_0", "_1"])
    df = df.groupby(["position_0", "position_1"]).agg(c_0=("c_0", "sum"), c_1=("c_1", "sum")).reset_index()
    df = df[df.position_0 == 1].copy()
    df["examination"] = (df["c_1"] / df["c_0"]).fillna(0)
    df.examination = normalize_bias(df.examination)
    df = df.rename(columns={"position_1": "position"})
    return df[["position", "examination"]]


@st.composite
def logs(draw: st.DrawFn) -> pl.DataFrame:
    rows = []
    for q in range(draw(st.integers(1, 3))):
        items = [f"d{j}" for j in range(draw(st.integers(1, 5)))]
        for _ in range(draw(st.integers(1, 6))):  # sessions: permutations of the items
            order = draw(st.permutations(items))
            for pos, it in enumerate(order, 1):
                rows.append({"query": f"q{q}", "item": it, "position": pos, "click": draw(st.integers(0, 1))})
    return pl.DataFrame(rows)


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize("method", ["ctr", "pivot"])
@settings(max_examples=30, deadline=None)
@given(log=logs())
def test_matches_ultr_bias_toolkit(engine: str, method: str, log: pl.DataFrame) -> None:
    want = (naive if method == "ctr" else pivot)(log.to_pandas())
    got = position_bias(log, method, engine=engine)
    assert got["position"].to_list() == want["position"].tolist()
    for a, b in zip(got["examination"].to_list(), want["examination"].tolist()):
        if math.isinf(b):  # the toolkit's x/0: undefined here, null in every engine (never inf)
            assert a is None
        else:
            assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def test_bad_input() -> None:
    log = pl.DataFrame({"query": ["q"], "item": ["a"], "position": [1], "click": [-1]})
    with pytest.raises(RankPolarsError, match="negative 'click'"):
        position_bias(log)
    with pytest.raises(RankPolarsError, match="method"):
        position_bias(log.with_columns(click=pl.lit(1)), "em")
