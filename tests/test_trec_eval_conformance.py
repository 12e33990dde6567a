"""trec_eval's own test collection: every per-query value to 1e-9, in every scenario.

Expected values were written by trec_eval (and pytrec_eval for trec_eval 9 semantics); see
``tests/data/conformance/README.md`` (vendored).
"""

from __future__ import annotations

import re

import polars as pl
import pytest

import rank_polars as rp

# trec_eval measure -> our metric name; "{rel}" takes the -l threshold where it applies
MEASURES = {
    r"ndcg": "ndcg", r"ndcg_cut_(\d+)": "ndcg@{0}", r"map": "map{rel}", r"map_cut_(\d+)": "map{rel}@{0}",
    r"recip_rank": "mrr{rel}", r"P_(\d+)": "p{rel}@{0}", r"recall_(\d+)": "r{rel}@{0}",
    r"Rprec": "rprec{rel}", r"bpref": "bpref{rel}", r"success_(\d+)": "success{rel}@{0}",
}

SCENARIOS = {
    # name: (run file, qrels file, rel level, missing, max depth)
    "default": ("run_long.parquet", "qrels.parquet", None, "skip", None),
    "rel_level_l1": ("run_long.parquet", "qrels_rel_level.parquet", None, "skip", None),
    "rel_level_l2": ("run_long.parquet", "qrels_rel_level.parquet", 2, "skip", None),
    "trunc_c": ("run_long_trunc.parquet", "qrels.parquet", None, "zero", None),
    "trunc_c_M100": ("run_long_trunc.parquet", "qrels.parquet", None, "zero", 100),
    "trunc_noc_v9": ("run_long_trunc.parquet", "qrels.parquet", None, "skip", None),
    "ties_1dp": ("run_long_ties_1dp.parquet", "qrels.parquet", None, "skip", None),
    "ties_1dp_rel_level": ("run_long_ties_1dp_rel_level.parquet", "qrels_rel_level.parquet", None, "skip", None),
}


def metric_name(measure: str, rel: int | None) -> str | None:
    for pattern, template in MEASURES.items():
        m = re.fullmatch(pattern, measure)
        if m:
            return template.format(*m.groups(), rel=f"(rel={rel})" if rel else "")
    return None


def expected_for(conformance, scenario: str) -> pl.DataFrame:
    base = conformance / "trec_eval"
    if scenario == "default":
        return pl.read_parquet(base / "expected_per_query.parquet")
    table = pl.read_parquet(base / "expected_per_query_variants.parquet")
    return table.filter(pl.col("scenario") == scenario)


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize("order", ["score", "position"])
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_per_query_values_match_trec_eval(conformance, scenario, order, engine):
    run_file, qrels_file, rel, missing, depth = SCENARIOS[scenario]
    base = conformance / "trec_eval"
    run = pl.read_parquet(base / run_file).select("query", "item", order)
    if depth is not None:  # -M100: only the first 100 ranked documents
        ranked = pl.read_parquet(base / run_file).filter(pl.col("position") <= depth)
        run = ranked.select("query", "item", order)
    qrels = pl.read_parquet(base / qrels_file)
    expected = expected_for(conformance, scenario)
    names = {m: metric_name(m, rel) for m in expected["measure"].unique().to_list()}
    names = {m: n for m, n in names.items() if n is not None}
    assert len(names) >= 10, names
    got = rp.evaluate(run, list(names.values()), qrels=qrels, per_query=True, missing=missing, engine=engine)
    means = rp.evaluate(run, list(names.values()), qrels=qrels, missing=missing, engine=engine)
    checked = 0
    for row in expected.filter(pl.col("measure").is_in(list(names))).iter_rows(named=True):
        name = names[row["measure"]]
        if row["query"] == "all":
            value = means[name].item()
        else:
            match = got.filter(pl.col("query") == row["query"])
            assert match.height == 1, f"query {row['query']} missing from the output"
            value = match[name].item()
        assert value == pytest.approx(row["value"], abs=1e-9), (scenario, row["query"], row["measure"])
        checked += 1
    assert checked >= 30
