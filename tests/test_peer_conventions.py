"""Conventions users bring from other tools, each against that tool or its documented definition.

* ``hits@k`` is ranx's ``hits``: the NUMBER of relevant items in the top k, averaged over queries
  (``success@k`` / ``hit@k`` stays 1 when there is one); checked against ranx itself.
* ``ap(denom=found)@k`` is torchmetrics' ``retrieval_average_precision(preds, target, top_k=k)``:
  the precisions at the relevant ranks of the top k over the relevant items found there (0 when
  none).  torchmetrics needs PyTorch, which the test extra does not pull: the reference is the
  definition written out below, scikit-learn's ``average_precision_score`` on the top k (the
  reference torchmetrics' own test uses, ``tests/unittests/retrieval/test_map.py``'s
  ``_average_precision_at_k``), and the literal values of torchmetrics' docstrings.
* ``fallout@k`` is torchmetrics' ``retrieval_fall_out``: judged non-relevant items in the top k
  over the query's judged non-relevant items, lower is better; a query without one scores 0
  (torchmetrics' functional form, ``empty_target_action="neg"``).

Every number is checked in the Polars engine, the DuckDB engine and ``rp.to_sql`` run in DuckDB.
Scores are distinct: ranx and torchmetrics leave the order of tied scores unspecified.
"""

from __future__ import annotations

import warnings

import duckdb
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rank_polars as rp
from rank_polars.engines.duckdb_engine import fetch as sql_frame
from tests.test_ir_measures_names import collections, frames

# collections(): runs with distinct scores and judgments as dicts, frames(): the same as frames
ENGINES = ("polars", "duckdb", "to_sql")


def means(run_df: pl.DataFrame, qrels_df: pl.DataFrame | None, names: list[str], engine: str) -> dict[str, float]:
    """The mean of each metric over the judged queries (a judged query not run scores 0)."""
    if engine == "to_sql":  # the text run as the DuckDB engine runs its own statements
        con = duckdb.connect()
        con.register("logs", run_df.to_arrow())
        if qrels_df is not None:
            con.register("qrels", qrels_df.to_arrow())
        sql = rp.to_sql(names, table="logs", qrels="qrels" if qrels_df is not None else None, order="score")
        got = sql_frame(con, sql)
    else:
        got = rp.evaluate(run_df, names, qrels=qrels_df, missing="zero", engine=engine)
    return {name: got[name].item() for name in names}


def ranked(docs: dict[str, float]) -> list[str]:
    return sorted(docs, key=docs.__getitem__, reverse=True)


# -- hits@k: ranx ---------------------------------------------------------------------------------
def ranx_means(run: dict, qrels: dict, names: list[str]) -> dict[str, float]:
    import ranx

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's type-safety warnings inside ranx
        # make_comparable: a judged query absent from the run scores 0, a run query without
        # judgments is dropped (rank_polars: missing="zero"; only judged queries are evaluated)
        out = ranx.evaluate(ranx.Qrels.from_dict(qrels), ranx.Run.from_dict(run), names, make_comparable=True)
    return out if isinstance(out, dict) else {names[0]: out}


HITS = ["hits@1", "hits@3", "hits@5", "hits"]


@settings(max_examples=40, deadline=None)
@given(data=collections(), engine=st.sampled_from(ENGINES))
def test_hits_is_ranx_hits_the_count_of_relevant_items(data, engine):
    run, qrels = data
    want = ranx_means(run, qrels, HITS)
    got = means(*frames(run, qrels), HITS, engine)
    for name in HITS:
        assert got[name] == pytest.approx(want[name], abs=1e-9), (name, got[name], want[name])


def test_hits_literal_of_ranx_own_test():
    # ranx tests/unit/ranx/metrics_test.py, test_hits: relevant {1, 4, 5, 6} and {1, 4, 6}, ranked
    # [1, 2, 3, 4, 5, 7] and [1, 2, 4, 3, 5, 7]; at k = 5 the hits are 3 and 2, mean 2.5
    run = {"q1": ["1", "2", "3", "4", "5", "7"], "q2": ["1", "2", "4", "3", "5", "7"]}
    qrels = {"q1": ["1", "4", "5", "6"], "q2": ["1", "4", "6"]}
    log = pl.DataFrame([(q, d, i + 1) for q, docs in run.items() for i, d in enumerate(docs)],
                       schema=["query", "item", "position"], orient="row")
    judged = pl.DataFrame([(q, d, 1) for q, docs in qrels.items() for d in docs],
                          schema=["query", "item", "relevance"], orient="row")
    per_query = rp.evaluate(log, ["hits@5", "success@5", "hit@5"], qrels=judged, per_query=True)
    assert per_query["hits@5"].to_list() == [3.0, 2.0]
    assert per_query["success@5"].to_list() == per_query["hit@5"].to_list() == [1.0, 1.0]
    assert rp.evaluate(log, ["hits@5"], qrels=judged)["hits@5"].item() == 2.5


# -- ap(denom=found)@k: torchmetrics' definition --------------------------------------------------
def ap_found(docs: dict[str, float], judgments: dict[str, int], k: int | None) -> float:
    """torchmetrics' ``retrieval_average_precision(preds, target, top_k=k)`` written out: the
    precision at each relevant rank of the top k, averaged over those ranks; 0 when there is none."""
    top = ranked(docs)[:k]
    precisions, found = [], 0
    for rank, item in enumerate(top, start=1):
        if judgments.get(item, 0) > 0:
            found += 1
            precisions.append(found / rank)
    return sum(precisions) / found if found else 0.0


def sklearn_ap_at_k(docs: dict[str, float], judgments: dict[str, int], k: int | None) -> float:
    """torchmetrics' own test reference: scikit-learn's AP over the top k (0 when no relevant one)."""
    from sklearn.metrics import average_precision_score

    top = ranked(docs)[:k]
    target = [judgments.get(item, 0) > 0 for item in top]
    if not any(target):
        return 0.0
    return float(average_precision_score(target, [docs[item] for item in top]))


AP_FOUND = {"ap(denom=found)@1": 1, "ap(denom=found)@3": 3, "ap(denom=found)@5": 5, "ap(denom=found)": None}


@settings(max_examples=40, deadline=None)
@given(data=collections(), engine=st.sampled_from(ENGINES))
def test_ap_found_divides_by_the_relevant_items_found_in_the_top_k(data, engine):
    run, qrels = data
    got = means(*frames(run, qrels), list(AP_FOUND), engine)
    for name, k in AP_FOUND.items():
        per_query = [ap_found(run.get(q, {}), judgments, k) for q, judgments in qrels.items()]
        sklearn = [sklearn_ap_at_k(run.get(q, {}), judgments, k) if q in run else 0.0 for q, judgments in qrels.items()]
        assert per_query == pytest.approx(sklearn, abs=1e-12)
        assert got[name] == pytest.approx(sum(per_query) / len(per_query), abs=1e-9), name


def torch_like(indexes: list[int], preds: list[float], target: list[bool]) -> pl.DataFrame:
    """torchmetrics' inputs as a log: one query per index, every item labelled (no judgments apart)."""
    return pl.DataFrame({"query": [f"q{i}" for i in indexes], "item": [f"d{j}" for j in range(len(preds))],
                         "score": preds, "relevance": [int(t) for t in target]})


@pytest.mark.parametrize("engine", ENGINES)
def test_ap_found_literals_of_torchmetrics_docstrings(engine):
    # retrieval_average_precision(tensor([0.2, 0.3, 0.5]), tensor([True, False, True])) -> tensor(0.8333)
    one = torch_like([0, 0, 0], [0.2, 0.3, 0.5], [True, False, True])
    assert means(one, None, ["ap(denom=found)"], engine)["ap(denom=found)"] == pytest.approx(5 / 6, abs=1e-9)
    # RetrievalMAP()(preds, target, indexes=...) -> tensor(0.7917) on its class example
    two = torch_like([0, 0, 0, 1, 1, 1, 1], [0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2],
                     [False, False, True, False, True, False, True])
    assert means(two, None, ["ap(denom=found)"], engine)["ap(denom=found)"] == pytest.approx(0.7917, abs=5e-5)
    # with top_k=2 the second query finds one relevant item at rank 2: 1/2 over 1 found (trec_eval's
    # map_cut_2 divides by R = 2): the mean is (1 + 0.5) / 2, where ap@2 gives (1 + 0.25) / 2
    got = means(two, None, ["ap(denom=found)@2", "ap@2"], engine)
    assert got == pytest.approx({"ap(denom=found)@2": 0.75, "ap@2": 0.625}, abs=1e-12)


# -- fallout@k: torchmetrics' definition ----------------------------------------------------------
def fallout(docs: dict[str, float], judgments: dict[str, int], k: int | None) -> float:
    """Judged non-relevant items (grade 0 here; a negative grade is unjudged) in the top k over the
    query's judged non-relevant items; 0 when it has none."""
    nonrel = {item for item, grade in judgments.items() if grade == 0}
    if not nonrel:
        return 0.0
    return sum(item in nonrel for item in ranked(docs)[:k]) / len(nonrel)


FALLOUT = {"fallout@1": 1, "fallout@3": 3, "fallout@5": 5, "fallout": None}


@settings(max_examples=40, deadline=None)
@given(data=collections(grades=(-1, 0, 0, 0, 1, 1, 2, 3)), engine=st.sampled_from(ENGINES))
def test_fallout_is_the_share_of_judged_non_relevant_items_retrieved(data, engine):
    run, qrels = data
    got = means(*frames(run, qrels), list(FALLOUT), engine)
    for name, k in FALLOUT.items():
        # a judged query the run never ranked is left out (a lower-is-better measure: its missing
        # list would score the best value, 0), not counted as 0 (docs/data-model.md)
        per_query = [fallout(run[q], judgments, k) for q, judgments in qrels.items() if q in run]
        if not per_query:
            assert got[name] is None, name
            continue
        assert got[name] == pytest.approx(sum(per_query) / len(per_query), abs=1e-9), name


@pytest.mark.parametrize("engine", ENGINES)
def test_fallout_literals_of_torchmetrics_docstrings(engine):
    # retrieval_fall_out(tensor([0.2, 0.3, 0.5]), tensor([True, False, True]), top_k=2) -> tensor(1.)
    one = torch_like([0, 0, 0], [0.2, 0.3, 0.5], [True, False, True])
    assert means(one, None, ["fallout@2"], engine)["fallout@2"] == 1.0
    # RetrievalFallOut(top_k=2)(preds, target, indexes=...) -> tensor(0.5000)
    two = torch_like([0, 0, 0, 1, 1, 1, 1], [0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2],
                     [False, False, True, False, True, False, True])
    assert means(two, None, ["fallout@2"], engine)["fallout@2"] == 0.5
    # a query without a non-relevant item scores 0 and is counted (empty_target_action="neg")
    three = torch_like([0, 0, 1], [0.2, 0.3, 0.5], [True, False, True])
    assert means(three, None, ["fallout@2"], engine)["fallout@2"] == 0.5


def test_fallout_is_lower_is_better():
    assert rp.parse("fallout@10").HIGHER_IS_BETTER is False
    assert rp.parse("fall_out@10") == rp.parse("fallout@10")
    assert rp.parse("hits@10").HIGHER_IS_BETTER is True
