"""scikit-learn's ranking metrics per query: ``auc`` (``roc_auc_score``), ``coverage_error`` and ``label_ranking_loss``.

Each ranking is one row of scikit-learn's matrices.  Hypothesis draws lists with many tied
scores and compares each query with scikit-learn, in the Polars engine, DuckDB and ``to_sql``;
scikit-learn's own literal ``coverage_error`` and ``label_ranking_loss`` cases
(``tests/data/peers/sklearn_*.json``, read from its test suite with their provenance) pass; a run ordered by position (no ties) gives
scikit-learn's value for the scores that order.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import coverage_error, label_ranking_loss, roc_auc_score

import rank_polars as rp
from tests.test_ties_average import evaluated, frame

PEERS = Path(__file__).parent / "data" / "peers"
CASES = [{**case, "metric": metric} for metric in ("coverage_error", "label_ranking_loss")
         for case in json.loads((PEERS / f"sklearn_{metric}.json").read_text())["cases"]]

lists = st.lists(st.tuples(st.sampled_from([0.0, 0.25, 0.5, 1.0, 3.0]), st.sampled_from([0, 0, 1, 2, -1])),
                 min_size=2, max_size=8)  # scikit-learn reads one column as binary, not multilabel


@settings(max_examples=80, deadline=None)
@given(queries=st.lists(lists, min_size=1, max_size=4))
def test_agree_with_scikit_learn(queries):
    got = evaluated(frame(queries), ["auc", "coverage_error", "label_ranking_loss"])
    for q, rows in enumerate(queries):
        y_true, y_score = [int(g > 0) for _, g in rows], [s for s, _ in rows]
        # scikit-learn refuses a list of one class; here such a list scores 0 (0/0)
        auc = roc_auc_score(y_true, y_score) if 0 < sum(y_true) < len(y_true) else 0.0
        coverage = coverage_error([y_true], [y_score])
        loss = label_ranking_loss([y_true], [y_score])
        for way, values in got.items():
            assert values[f"q{q}"]["label_ranking_loss"] == pytest.approx(loss, abs=1e-12), (way, q)
            assert values[f"q{q}"]["auc"] == pytest.approx(auc, abs=1e-12), (way, q)
            assert values[f"q{q}"]["coverage_error"] == coverage, (way, q)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['test']}-{c['y_true']}-{c['y_score']}")
def test_scikit_learn_literal_cases(case):
    log = frame([list(zip(s, g)) for s, g in zip(case["y_score"], case["y_true"])])
    for engine in ("polars", "duckdb"):
        got = rp.evaluate(log, [case["metric"]], engine=engine)
        assert got[case["metric"]].item() == pytest.approx(case["expected"], abs=1e-12), engine


def test_by_position_every_row_is_its_own_tie():
    log = pl.DataFrame({"query": ["q"] * 4, "item": list("abcd"), "position": [1, 2, 3, 4], "relevance": [0, 1, 0, 1]})
    got = rp.evaluate(log, ["auc", "coverage_error", "label_ranking_loss"]).row(0)[1:]
    assert got == (roc_auc_score([0, 1, 0, 1], [4, 3, 2, 1]), 4.0, label_ranking_loss([[0, 1, 0, 1]], [[4, 3, 2, 1]]))


def test_names_and_direction():
    assert rp.parse("roc_auc") == rp.parse("AUC") and not rp.parse("coverage_error").HIGHER_IS_BETTER
    assert not rp.parse("label_ranking_loss").HIGHER_IS_BETTER


@settings(max_examples=20, deadline=None)
@given(queries=st.lists(lists, min_size=1, max_size=4))
def test_judgments_apart_give_the_same_values(queries):
    """The labels as judgments (qrels=, the join of the contributing rows): the same numbers."""
    log = frame(queries)
    metrics = ["auc", "coverage_error", "label_ranking_loss"]
    qrels = log.select("query", "item", "relevance").filter(pl.col("relevance") != 0)  # 0: judged or not, alike
    for engine in ("polars", "duckdb"):
        labelled = rp.evaluate(log, metrics, per_query=True, engine=engine)
        judged = rp.evaluate(log.drop("relevance"), metrics, qrels=qrels, per_query=True, engine=engine, missing="skip")
        both = labelled.join(judged, on="query", suffix="_judged")
        for name in metrics:
            assert both[name].to_list() == pytest.approx(both[f"{name}_judged"].to_list(), abs=1e-12), (engine, name)
