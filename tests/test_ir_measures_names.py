"""ir_measures' spellings parse to our specs and give ir_measures' own numbers.

Each name is passed exactly as an ir_measures user writes it; the output column keeps that
spelling.  Scores are distinct (ir_measures' providers break ties differently).  ir_measures scores a judged query missing from the run 0 and averages over the
judged queries: ``missing="zero"``.  Where its semantics differ, the case says so: ``Judged``
counts negative judgments as judged (we do not, as trec_eval), so judgments here are >= 0
for it; a judged query absent from the run has ``NumRel`` 0 in ir_measures and its R here.  Two are only parsed here, as ir_measures computes them with providers that do not run
in this environment: ``RBP`` (cwl_eval, not installed) and ``nDCG(dcg='exp-log2')`` (gdeval,
a Perl script that exits with an error here); the exp gain is checked against other
references in ``tests/test_peer_cases.py``.
"""

from __future__ import annotations

import math

import ir_measures
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rank_polars as rp
from rank_polars.measures import parse

# ir_measures' spelling -> ours (canonical); the number must match ir_measures' own.
NAMES = {
    "nDCG@10": "ndcg@10", "nDCG(dcg='exp-log2')@10": "ndcg(gain=exp)@10", "nDCG": "ndcg", "P@5": "p@5",
    "P(rel=2)@5": "p(rel=2)@5", "AP": "ap", "AP(rel=2)": "ap(rel=2)", "AP@100": "ap@100", "R@100": "r@100",
    "RR": "rr", "RR(cutoff=10)": "rr@10", "Rprec": "rprec", "Bpref": "bpref", "Success@5": "success@5",
    "NumRet": "num_ret", "NumRel": "num_rel", "NumRelRet": "num_rel_ret", "NumRet(rel=1)": "num_rel_ret(rel=1)",
    "NumQ": "num_q", "SetP": "set_p", "SetR": "set_r", "SetF": "set_f", "SetAP": "set_ap",
    "SetP(relative=True)": "set_p(relative=true)", "IPrec@0.5": "iprec(recall=0.5)", "IPrec@0.25": "iprec(recall=0.25)",
    "Judged@10": "judged@10", "RBP(p=0.8,rel=1)": "rbp(rel=1)",
}


NOT_COMPUTED = {"RBP(p=0.8,rel=1)", "nDCG(dcg='exp-log2')@10"}


@pytest.mark.parametrize(("ir_name", "ours"), NAMES.items())
def test_names_parse_to_our_specs(ir_name, ours):
    assert parse(ir_name) == parse(ours)
    assert parse(repr(parse(ir_name))) == parse(ir_name)  # repr round-trips


def test_output_column_keeps_the_spelling():
    run = pl.DataFrame({"query": ["q"], "item": ["a"], "position": [1], "relevance": [1]})
    out = rp.evaluate(run, ["nDCG(dcg='exp-log2')@10", "IPrec@0.5", "NumRet"])
    assert out.columns == ["queries", "nDCG(dcg='exp-log2')@10", "IPrec@0.5", "NumRet"]


items = st.sampled_from([f"d{i}" for i in range(10)])


@st.composite
def collections(draw):
    queries = [f"q{i}" for i in range(draw(st.integers(1, 5)))]
    # distinct scores: ir_measures' providers break ties in different ways (trec_eval: docno descending)
    run = {}
    for q in queries:
        if draw(st.booleans()) or q == "q0":
            docs = draw(st.lists(items, min_size=1, max_size=9, unique=True))
            run[q] = dict(zip(docs, map(float, draw(st.permutations(range(len(docs)))))))
    qrels = {q: draw(st.dictionaries(items, st.sampled_from([0, 0, 1, 1, 2, 3]), min_size=1, max_size=9))
             for q in queries if draw(st.integers(0, 3)) > 0}
    if not qrels:
        qrels = {"q0": {"d0": 1}}
    return run, qrels


def same_level_rule(recall: float, qrels: dict) -> bool:
    """trec_eval 10 maps a recall level x to lround(x R) relevant documents, 9.0.8 (inside
    pytrec_eval, which ir_measures runs) to (long)(x R + 0.9): the values agree where these do."""
    for judgments in qrels.values():
        r = sum(g >= 1 for g in judgments.values())
        if math.floor(recall * r + 0.5) != math.floor(recall * r + 0.9):
            return False
    return True


@settings(max_examples=60, deadline=None)
@given(data=collections(), engine=st.sampled_from(["polars", "duckdb"]))
def test_same_numbers_as_ir_measures(data, engine):
    run, qrels = data
    names = [name for name in NAMES if name not in NOT_COMPUTED]
    measures = [ir_measures.parse_measure(name) for name in names]
    want = ir_measures.calc_aggregate(measures, qrels, run)
    run_df = pl.DataFrame([(q, i, s) for q, d in run.items() for i, s in d.items()],
                          schema={"query": pl.String, "item": pl.String, "score": pl.Float64}, orient="row")
    qrels_df = pl.DataFrame([(q, i, g) for q, d in qrels.items() for i, g in d.items()],
                            schema={"query": pl.String, "item": pl.String, "relevance": pl.Int64}, orient="row")
    got = rp.evaluate(run_df, names, qrels=qrels_df, missing="zero", engine=engine)
    for name, measure in zip(names, measures):
        expected = want[measure]
        if name == "NumQ":
            expected = len(qrels)  # ir_measures' NumQ aggregate is the number of judged queries
        if name.startswith("IPrec") and not same_level_rule(float(name.split("@")[1]), qrels):
            continue  # ir_measures runs trec_eval 9.0.8's level rule (see same_level_rule)
        if name == "NumRel":
            # ir_measures scores every measure of a judged query absent from the run 0; trec_eval
            # -c (and missing="zero") evaluates it as an empty ranking, whose num_rel is its R
            expected += sum(g >= 1 for q, d in qrels.items() if q not in run for g in d.values())
        assert got[name].item() == pytest.approx(expected, abs=1e-9), (name, got[name].item(), expected)
