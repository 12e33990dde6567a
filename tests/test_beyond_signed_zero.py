"""No "-0.0": the beyond-accuracy values whose arithmetic ends in a zero product or log (the novelty
of an item every user had, EFD when every novelty is 0, the entropy of one item) are +0.0 in the
Polars engine, as in DuckDB: the same bits, the same printed value."""

from __future__ import annotations

import math
import warnings

import polars as pl
import pytest

import rank_polars as rp

LOG = pl.DataFrame({"query": ["u1", "u2"], "item": ["a", "a"], "position": [1, 1], "relevance": [1, 1]})
HISTORY = pl.DataFrame({"query": ["u1", "u2"], "item": ["a", "a"]})  # every user had the one item


def specs(per_query: bool) -> list:
    per_list = [rp.efd(k=10, history=HISTORY), rp.epc(k=10, history=HISTORY)]
    catalog = [rp.novelty(k=10, history=HISTORY), rp.entropy(k=10), rp.gini(k=10)]  # one value per group
    return per_list if per_query else [*per_list, *catalog]


@pytest.mark.parametrize("per_query", [False, True])
def test_zero_values_are_positive_zero_in_every_engine(per_query: bool) -> None:
    outs = {}
    for engine in ("polars", "duckdb"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outs[engine] = rp.evaluate(LOG, specs(per_query), engine=engine, per_query=per_query)
    for column in outs["polars"].columns:
        if outs["polars"][column].dtype != pl.Float64:
            continue
        for got, expected in zip(outs["polars"][column], outs["duckdb"][column]):
            assert got == expected, column
            if got == 0:
                assert math.copysign(1.0, got) == math.copysign(1.0, expected) == 1.0, f"{column}: {got!r}"
