"""``-m`` takes a comma list as well as repeated options: ``-m 'ndcg@10,map'`` once said
"cutoff k must be a positive integer, got '10,map'"."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from .helpers import invoke


def test_a_comma_list_is_the_same_as_repeated_options(files: dict[str, Path]) -> None:
    listed = invoke("evaluate", files["parquet"], "-m", "ndcg@10,map", "-m", "mrr", "--by", "model", "--format", "csv")
    repeated = invoke("evaluate", files["parquet"], "-m", "ndcg@10", "-m", "map", "-m", "mrr", "--by", "model",
                      "--format", "csv")
    assert pl.read_csv(listed.stdout.encode()).columns == ["model", "queries", "ndcg@10", "map", "mrr"]
    assert listed.stdout == repeated.stdout


def test_commas_inside_a_name_stay_in_it(files: dict[str, Path]) -> None:
    out = invoke("sql", "-m", "utility(a=2, b=-1),p@5", "--table", "logs")
    assert '"utility(a=2, b=-1)"' in out.stdout and '"p@5"' in out.stdout
