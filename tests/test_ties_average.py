"""``ties=average``: tied scores averaged over the tie's orders, against scikit-learn and torchmetrics.

* scikit-learn's ``dcg_score`` / ``ndcg_score`` with ``ignore_ties=False`` (``_tie_averaged_dcg``: a
  tie's mean gain times the discounts of its positions in the top k), on hypothesis-generated
  lists with many ties, per query, in the Polars engine, DuckDB and ``to_sql``;
* the literal tie cases of scikit-learn's tests and doctests (``tests/data/conformance/peer_cases.json``)
  and torchmetrics' ``test_corner_case_with_tied_scores`` (``tests/data/peers/tied_scores.json``);
* P@k, R@k, hits@k and RBP against their definition, the mean over every order of the ties
  (enumerated here by brute force), and DCG@k against the same enumeration.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import duckdb
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import dcg_score, ndcg_score

import rank_polars as rp
from rank_polars.errors import MetricNameError
from tests.conftest import CONFORMANCE

PEERS = Path(__file__).parent / "data" / "peers" / "tied_scores.json"

lists = st.lists(st.tuples(st.sampled_from([0.0, 0.5, 1.0, 2.0, -0.0]), st.sampled_from([0, 0, 1, 2, 3])),
                 min_size=2, max_size=7)


def frame(queries: list[list[tuple[float, int]]]) -> pl.DataFrame:
    return pl.DataFrame(
        [(f"q{q}", f"d{i}", s, g) for q, rows in enumerate(queries) for i, (s, g) in enumerate(rows)],
        schema={"query": pl.String, "item": pl.String, "score": pl.Float64, "relevance": pl.Int64}, orient="row",
    )


def evaluated(log: pl.DataFrame, metrics: list[str]) -> dict[str, dict[str, dict[str, float]]]:
    """Per query values of ``metrics`` in each way: the two engines and to_sql run in DuckDB."""
    out = {}
    for engine in ("polars", "duckdb"):
        table = rp.evaluate(log, metrics, per_query=True, engine=engine)
        out[engine] = {row["query"]: row for row in table.iter_rows(named=True)}
    con = duckdb.connect()
    con.register("logs", log.to_arrow())
    table = pl.from_arrow(con.sql(rp.to_sql(metrics, table="logs", order="score", per_query=True)).to_arrow_table())
    out["to_sql"] = {row["query"]: row for row in table.iter_rows(named=True)}
    return out


@settings(max_examples=60, deadline=None)
@given(queries=st.lists(lists, min_size=1, max_size=4), k=st.integers(1, 8))
def test_dcg_and_ndcg_agree_with_scikit_learn(queries, k):
    metrics = [f"dcg(ties=average)@{k}", f"ndcg(ties=average, ideal=run)@{k}"]
    got = evaluated(frame(queries), metrics)
    for q, rows in enumerate(queries):
        y_score, y_true = [[s for s, _ in rows]], [[g for _, g in rows]]
        want = {metrics[0]: dcg_score(y_true, y_score, k=k, ignore_ties=False),
                metrics[1]: ndcg_score(y_true, y_score, k=k, ignore_ties=False)}
        for way, values in got.items():
            for name, expected in want.items():
                assert values[f"q{q}"][name] == pytest.approx(expected, rel=1e-12, abs=1e-12), (way, q, name)


def orders(rows: list[tuple[float, int]]) -> list[list[int]]:
    """The grades in every order the scores allow (ties in any order), each order once per permutation."""
    groups = [[g for s, g in rows if s == score] for score in sorted({s for s, _ in rows}, reverse=True)]
    return [list(itertools.chain(*perm)) for perm in itertools.product(*(itertools.permutations(g) for g in groups))]


def mean_over_orders(rows: list[tuple[float, int]], value) -> float:
    values = [value(order) for order in orders(rows)]
    return math.fsum(values) / len(values)


@settings(max_examples=60, deadline=None)
@given(queries=st.lists(lists, min_size=1, max_size=3), k=st.integers(1, 8))
def test_precision_recall_hits_and_dcg_are_the_mean_over_the_ties_orders(queries, k):
    metrics = [f"p(ties=average)@{k}", f"r(ties=average)@{k}", f"hits(ties=average)@{k}", f"dcg(ties=average)@{k}",
               f"rbp(p=0.5, ties=average)@{k}", "rbp(gain=graded, ties=average)"]
    got = evaluated(frame(queries), metrics)
    for q, rows in enumerate(queries):
        relevant = sum(g > 0 for _, g in rows)
        want = {
            metrics[0]: mean_over_orders(rows, lambda o: sum(g > 0 for g in o[:k]) / k),
            metrics[1]: mean_over_orders(rows, lambda o, r=relevant: sum(g > 0 for g in o[:k]) / r) if relevant else 0.0,
            metrics[2]: mean_over_orders(rows, lambda o: sum(g > 0 for g in o[:k])),
            metrics[3]: mean_over_orders(rows, lambda o: math.fsum(g / math.log2(i + 2) for i, g in enumerate(o[:k]))),
            metrics[4]: mean_over_orders(rows, lambda o: 0.5 * math.fsum(0.5**i for i, g in enumerate(o[:k]) if g > 0)),
            # trec_eval's graded RBP: grade / top grade when that is above 1, p = 0.8
            metrics[5]: mean_over_orders(rows, lambda o: 0.2 * math.fsum(
                0.8**i * g / max(max(o), 1) for i, g in enumerate(o) if g > 0)),
        }
        for way, values in got.items():
            for name, expected in want.items():
                assert values[f"q{q}"][name] == pytest.approx(expected, rel=1e-12, abs=1e-12), (way, q, name)


def sklearn_tie_cases() -> list[dict]:
    cases = json.loads((CONFORMANCE / "peer_cases.json").read_text())
    return [c for c in cases if "scikit-learn" in c["source"]["repo"] and c["params"].get("ignore_ties") is False]


@pytest.mark.parametrize("case", sklearn_tie_cases(), ids=lambda c: c["id"])
def test_scikit_learn_literal_tie_cases(case):
    k = case["params"].get("k")
    name = {"dcg": "dcg(ties=average)", "ndcg": "ndcg(ties=average, ideal=run)"}[case["metric"].split("@")[0]]
    metric = name + (f"@{k}" if k else "")
    rows = [list(zip(s, g)) for s, g in zip(case["input"]["y_score"], case["input"]["y_true"])]
    expected = case["expected"].get("per_query", {}).get("row0", case["expected"].get("aggregate"))
    written = len(repr(expected).partition(".")[2])
    for way, values in evaluated(frame(rows), [metric]).items():
        assert values["q0"][metric] == pytest.approx(expected, abs=0.5 * 10**-written + 1e-12), way


def test_torchmetrics_tied_scores_case():
    (case,) = json.loads(PEERS.read_text())
    rows = [list(zip(case["input"]["preds"], case["input"]["target"]))]
    for k, expected in case["expected"].items():
        metric = f"ndcg(ties=average, ideal=run)@{k}"
        for way, values in evaluated(frame(rows), [metric]).items():
            assert values["q0"][metric] == pytest.approx(expected, abs=0.5 * 10 ** -case["places"]), (way, k)


def test_the_ideal_is_unaffected_and_the_default_breaks_ties_by_item():
    log = frame([[(1.0, 0), (1.0, 3)]])  # d1 (grade 3) ranks first by item id descending
    got = rp.evaluate(log, ["ndcg@1", "ndcg(ties=average)@1", "idcg@1"]).row(0)[1:]
    assert got == (1.0, 0.5, 3.0)


def test_position_ordered_runs_are_refused():
    log = pl.DataFrame({"query": ["q", "q"], "item": ["a", "b"], "position": [1, 2], "score": [1.0, 1.0],
                        "relevance": [1, 0]})
    with pytest.raises(MetricNameError, match="ordered by position, which has no ties"):
        rp.evaluate(log, ["ndcg(ties=average)@1"])
    assert rp.evaluate(log, ["p(ties=average)@1"], order="score").item(0, 1) == 0.5
    with pytest.raises(MetricNameError, match="order by score"):
        rp.to_sql(["p(ties=average)@1"], table="logs")
