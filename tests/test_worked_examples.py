"""The worked examples the product is introduced with, reproduced to the last digit.

Expected values come from the source material (the issue's examples and Kaggle's
``apk``/``mapk``), not from this code.
"""

from __future__ import annotations

import polars as pl
import pytest

import rank_polars as rp


def log(*lists: list[float]) -> pl.DataFrame:
    """One ranking per list, labels carried by the run (the support-chatbot case)."""
    rows = [
        {"query": f"q{i}", "item": f"v{j}", "position": j + 1, "relevance": float(g)}
        for i, grades in enumerate(lists)
        for j, g in enumerate(grades)
    ]
    return pl.DataFrame(rows)


def one(metric: str, *lists: list[float]) -> float:
    return rp.evaluate(log(*lists), [metric])[metric].item()


def test_cumulative_gain():
    assert one("cg", [0.99, 0.91, 0.83]) == pytest.approx(2.73, abs=1e-12)
    assert one("cg", [0.99, 0.94, 0.88]) == pytest.approx(2.81, abs=1e-12)


def test_dcg_linear_and_exponential():
    assert one("dcg@3", [0.99, 0.94, 0.88]) == pytest.approx(2.02307396835717, abs=1e-12)
    grades = [0.99, 0.95, 0.8, 0.98, 0.97]
    assert one("dcg(gain=exp)", grades) == pytest.approx(2.7344299716685585, abs=1e-12)
    assert one("dcg", grades) == pytest.approx(2.786693515822315, abs=1e-12)


def test_ndcg_and_mean_ndcg():
    assert one("ndcg@5", [0.99, 0.94, 0.74, 0.88, 0.71, 0.68]) == pytest.approx(0.9962906539247512, abs=1e-12)
    lists = [
        [0.99, 0.94, 0.88, 0.89, 0.72, 0.65],
        [0.99, 0.92, 0.93, 0.74, 0.61, 0.68],
        [0.99, 0.96, 0.81, 0.73, 0.76, 0.69],
    ]
    assert one("ndcg@5", *lists) == pytest.approx(0.9961322104432755, abs=1e-12)


def test_mrr():
    assert one("mrr", [0, 0, 1], [0, 1, 0], [1, 0, 0]) == pytest.approx(0.6111, abs=5e-5)


def test_kaggle_apk_and_mapk():
    # apk(actual=['A','B','C'], predicted=['A','B','E'], k=3) and mapk over that and
    # (['A','B'], ['A','B']): Kaggle divides by min(len(actual), k).
    run = pl.DataFrame({
        "query": ["1", "1", "1", "2", "2"], "item": ["A", "B", "E", "A", "B"], "position": [1, 2, 3, 1, 2],
    })
    qrels = pl.DataFrame({"query": ["1", "1", "1", "2", "2"], "item": ["A", "B", "C", "A", "B"], "relevance": [1] * 5})
    per_query = rp.evaluate(run, ["ap(denom=min)@3"], qrels=qrels, per_query=True)
    assert per_query["ap(denom=min)@3"][0] == pytest.approx(0.6667, abs=5e-5)
    mean = rp.evaluate(run, ["ap(denom=min)@3"], qrels=qrels)["ap(denom=min)@3"].item()
    assert mean == pytest.approx(0.8333, abs=5e-5)


def test_binary_metrics_on_one_list():
    r = [1, 0, 1, 1, 0, 1, 0, 0]
    assert one("p@1", r) == 1.0
    assert one("p@8", r) == 0.5
    assert one("r@1", r) == 0.25
    assert one("f1@8", r) == pytest.approx(0.6667, abs=5e-5)
    assert one("ap@8", r) == pytest.approx(0.7708333333333333, abs=1e-12)


def test_exp_gain_graded_list():
    grades = [3, 2, 3, 0, 0, 1, 2, 2, 3, 0]
    assert one("dcg(gain=exp)@10", grades) == pytest.approx(16.80260104782745, abs=1e-12)
    assert one("ndcg(gain=exp)@10", grades) == pytest.approx(0.8951337253357088, abs=1e-12)


@pytest.fixture
def judged_example():
    judgments = {"A": 0.1, "B": 0.5, "C": 0.7, "D": 0.5, "E": 0.1}
    qrels = pl.DataFrame(
        [{"query": q, "item": i, "relevance": g} for q in ("q1", "q2") for i, g in judgments.items()]
    )
    rankings = {"q1": ["A", "B", "C"], "q2": ["D", "A", "C", "B", "E"]}
    run = pl.DataFrame(
        [{"query": q, "item": i, "position": p + 1} for q, items in rankings.items() for p, i in enumerate(items)]
    )
    return run, qrels


def test_ideal_from_all_judgments(judged_example):
    run, qrels = judged_example
    got = rp.evaluate(run.filter(pl.col("query") == "q1"), ["ndcg@3", "ndcg"], qrels=qrels, missing="skip")
    assert got["ndcg@3"].item() == pytest.approx(0.6048882832133625, abs=1e-12)
    # trec_eval's ndcg without a cutoff keeps the ideal over all five judgments
    assert got["ndcg"].item() == pytest.approx(0.5682, abs=5e-5)


def test_ideal_cut_at_each_lists_length(judged_example):
    run, qrels = judged_example
    got = rp.evaluate(run, ["ndcg(ideal_cut=list)"], qrels=qrels)
    assert got["ndcg(ideal_cut=list)"].item() == pytest.approx(0.7356022113638424, abs=1e-12)


def test_namespace_reproduces_the_examples():
    df = pl.DataFrame({"relevance": [3, 2, 3, 0, 0, 1, 2, 2, 3, 0], "position": range(10, 0, -1)})
    got = df.select(pl.col("relevance").sort_by("position", descending=True).ranking.ndcg(10, gain="exp"))
    assert got.item() == pytest.approx(0.8951337253357088, abs=1e-12)
