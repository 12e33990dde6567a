"""Cases from other libraries' test suites (``tests/data/conformance/peer_cases.json``, vendored).

Two kinds of reference are checked:

* every case with a ``trec_eval_view``: trec_eval semantics as computed by pytrec_eval on the
  peer's input, per query, to 1e-9 — our defaults must reproduce it;
* literal values written in peers' tests for metrics trec_eval lacks (ERR from gdeval,
  RBP from ranx/cwl_eval, Judged from ir_measures, ranx's hits, the count of relevant items in
  the top k, and ranx's and torchmetrics' hit rate, success@k), mapped to our explicit options.
"""

from __future__ import annotations

import json
import math

import polars as pl
import pytest

import rank_polars as rp
from tests.conftest import CONFORMANCE


def load_cases() -> list[dict]:
    path = CONFORMANCE / "peer_cases.json"
    return json.loads(path.read_text()) if path.exists() else []


CASES = load_cases()


def frames(case: dict) -> tuple[pl.DataFrame, pl.DataFrame]:
    run = pl.DataFrame(
        [{"query": q, "item": i, "score": float(s)} for q, docs in case["run"].items() for i, s in docs.items()],
        schema={"query": pl.String, "item": pl.String, "score": pl.Float64},
    )
    qrels = pl.DataFrame(
        [{"query": q, "item": i, "relevance": int(g)} for q, docs in case["qrels"].items() for i, g in docs.items()],
        schema={"query": pl.String, "item": pl.String, "relevance": pl.Int64},
    )
    return run, qrels


def trec_name(case: dict) -> str:
    name = case["trec_eval_view"]["trec_eval_measure"]
    level = case["params"].get("relevance_level", 1)
    metric = rp.parse(name)
    if level != 1 and "rel" in metric.params:
        metric = type(metric)(metric.k, **{**metric.params, "rel": level})
    return metric.name


TREC_CASES = [c for c in CASES if c.get("trec_eval_view") and c["trec_eval_view"].get("per_query")]


def test_cases_are_there():
    assert len(TREC_CASES) >= 100


@pytest.mark.parametrize("case", TREC_CASES, ids=[c["id"] for c in TREC_CASES])
def test_trec_eval_view_per_query(case):
    run, qrels = frames(case)
    if "recommenders" in case["source"]["repo"]:
        # its trec_eval view judges every listed item relevant (grade 1), as recommenders does
        qrels = qrels.with_columns(relevance=pl.lit(1, pl.Int64))
    metric = trec_name(case)
    got = rp.evaluate(run, [metric], qrels=qrels, per_query=True, missing="zero")
    values = dict(zip(got["query"], got[metric]))
    for query, expected in case["trec_eval_view"]["per_query"].items():
        assert values[query] == pytest.approx(expected, abs=1e-9), (query, metric)


# Literal values from peers' tests, with the options that express the peer's convention.
LITERAL = {
    "err@k": lambda c: f"err(max=4)@{c['params']['k']}",  # gdeval: max grade 4
    "rbp": lambda c: f"rbp(p={c['params']['p']})",
    "judged@k": lambda c: f"judged@{c['params']['k']}" if "k" in c["params"] else "judged",
    "hits@k": lambda c: f"hits@{c['params']['k']}",  # ranx: a count (3 relevant in the top 5 is 3.0)
    "hit_rate@k": lambda c: f"hit_rate@{c['params']['k']}",  # ranx, torchmetrics: success@k
}
LITERAL_CASES = [c for c in CASES if c["metric"] in LITERAL and c["expected"].get("per_query")]


@pytest.mark.parametrize("case", LITERAL_CASES, ids=[c["id"] for c in LITERAL_CASES])
def test_literal_peer_values(case):
    run, qrels = frames(case)
    metric = LITERAL[case["metric"]](case)
    got = rp.evaluate(run, [metric], qrels=qrels, per_query=True, missing="zero")
    values = dict(zip(got["query"], got[metric]))
    places = (case.get("tolerance") or {}).get("places")

    written = case["expected"]["per_query"].values()
    # literal values were written rounded: allow half a unit of their last written digit
    # (an aggregate is the mean of rounded values, so it gets the same allowance)
    digits = places if places is not None else max(len(repr(v).partition(".")[2]) for v in written)

    def close(got: float, expected: float) -> bool:
        return math.isclose(got, expected, abs_tol=0.5 * 10**-digits + 1e-12)

    for query, expected in case["expected"]["per_query"].items():
        assert close(values[query], expected), (query, metric, values[query])
    if "aggregate" in case["expected"]:
        mean = rp.evaluate(run, [metric], qrels=qrels, missing="zero")[metric].item()
        assert close(mean, case["expected"]["aggregate"])
