"""Output formats, tested without click."""

from __future__ import annotations

import io
import json

import polars as pl

from rank_polars.cli.formatters import FORMATTERS, to_json, to_latex, to_markdown


def test_markdown_escapes_pipes_and_keeps_the_table_shape() -> None:
    df = pl.DataFrame({"model": ["a|b", "c"], "ndcg@10": [0.5, 1.0]})
    lines = to_markdown(df).splitlines()
    assert lines[2].startswith("| a\\|b ")
    # every row has the same number of unescaped cell separators as the header
    assert {len([p for i, p in enumerate(line) if p == "|" and line[i - 1] != "\\"]) for line in lines} == {3}


def test_json_has_null_for_nan_and_latex_escapes() -> None:
    df = pl.DataFrame({"model": ["a_b&c"], "x": [float("nan")]})
    assert json.loads(to_json(df)) == [{"model": "a_b&c", "x": None}]
    assert r"a\_b\&c & nan \\" in to_latex(df)


def test_parquet_round_trips_and_every_format_is_registered() -> None:
    df = pl.DataFrame({"model": ["a"], "x": [0.25]})
    assert pl.read_parquet(io.BytesIO(FORMATTERS["parquet"](df))).equals(df)
    assert set(FORMATTERS) == {"table", "csv", "tsv", "json", "jsonl", "parquet", "markdown", "latex", "html"}
