"""Generated runs and judgments against pytrec_eval (trec_eval 9 semantics), to 1e-9.

Hypothesis draws rankings with tied scores, graded and negative judgments, relevant items
never retrieved, judged queries missing from the run and run queries without judgments.
pytrec_eval skips judged queries absent from the run: that is ``missing="skip"``.

Every measure pytrec_eval (trec_eval 9.0.8 inside) computes that we own is compared, per
query, except where 9.0.8 differs from trec_eval 10 on purpose: ``iprec_at_recall`` and
``11pt_avg`` map a recall level to a rank with ``(long)(x R + 0.9)`` in 9.0.8 and with
``lround(x R)`` in 10 (we follow 10; ``tests/test_all_trec_measures.py`` checks them against
trec_eval 10's own files).  ``gm_map`` / ``gm_bpref``: pytrec_eval returns ``ln(max(x, 1e-5))``
per query, we return x (the geometric mean is the aggregate), so the logarithm is compared.
pytrec_eval has no ``unj``.
"""

from __future__ import annotations

import math

import polars as pl
import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

import rank_polars as rp
from rank_polars.measures import parse

# pytrec_eval measure -> our name (the relevance level is added as rel=N where it applies)
MEASURES = {
    "ndcg": "ndcg", "ndcg_cut_3": "ndcg@3", "ndcg_cut_5": "ndcg@5", "map": "ap{rel}", "map_cut_3": "ap{rel}@3",
    "recip_rank": "rr{rel}", "P_3": "p{rel}@3", "P_5": "p{rel}@5", "recall_3": "r{rel}@3", "Rprec": "rprec{rel}",
    "bpref": "bpref{rel}", "success_1": "success{rel}@1", "success_3": "success{rel}@3", "set_P": "p{rel}",
    "set_recall": "r{rel}", "set_F": "f1{rel}",
}
TREC = {"ndcg", "ndcg_cut.3,5", "map", "map_cut.3", "recip_rank", "P.3,5", "recall.3", "Rprec", "bpref",
        "success.1,3", "set_P", "set_recall", "set_F"}
# trec_eval's names as printed, parsed as they are (the relevance level added with spec.replace)
PRINTED = ["num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret", "relative_P_3", "relative_P_5",
           "set_relative_P", "set_map", "utility", "Rprec_mult_0.20", "Rprec_mult_0.60", "Rprec_mult_2.00",
           "gm_map", "gm_bpref"]
TREC |= {"num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret", "relative_P.3,5", "set_relative_P",
         "set_map", "utility", "Rprec_mult.0.2,0.6,2.0", "gm_map", "gm_bpref"}
LOGGED = {"gm_map", "gm_bpref"}  # pytrec_eval's per-query value is ln(max(x, 1e-5))

items = st.sampled_from([f"d{i}" for i in range(12)] + ["D1", "d1a", "doc10", "doc9"])
scores = st.sampled_from([-1.0, 0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0])  # exact in float32: many ties
grades = st.sampled_from([-1, 0, 0, 1, 1, 2, 3])


@st.composite
def collections(draw):
    queries = [f"q{i}" for i in range(draw(st.integers(1, 6)))]
    run = {q: draw(st.dictionaries(items, scores, min_size=1, max_size=10)) for q in queries
           if draw(st.booleans()) or q == "q0"}
    judged = [q for q in queries if draw(st.integers(0, 4)) > 0]
    qrels = {q: draw(st.dictionaries(items, grades, min_size=1, max_size=10)) for q in judged}
    for judgments in qrels.values():
        # pytrec_eval (0.5.x) corrupts memory (segfault or hang) when every judgment of a
        # query is negative; that case is covered by trec_eval's own rel_level collection.
        if all(g < 0 for g in judgments.values()):
            judgments["zz"] = 0
    return run, qrels


@st.composite
def batches(draw, size: tuple[int, int] = (2, 5)):
    """Several :func:`collections` in one, their query ids prefixed apart: one ``evaluate`` call
    checks them all (per-query values do not depend on the other queries), so a test pays an
    engine's fixed cost per call once for several collections instead of once each."""
    run: dict = {}
    qrels: dict = {}
    for b in range(draw(st.integers(*size))):
        part_run, part_qrels = draw(collections())
        run |= {f"b{b}{q}": d for q, d in part_run.items()}
        qrels |= {f"b{b}{q}": d for q, d in part_qrels.items()}
    return run, qrels


def to_frames(run: dict, qrels: dict) -> tuple[pl.DataFrame, pl.DataFrame]:
    run_df = pl.DataFrame(
        [(q, i, s) for q, d in run.items() for i, s in d.items()],
        schema={"query": pl.String, "item": pl.String, "score": pl.Float64}, orient="row",
    )
    qrels_df = pl.DataFrame(
        [(q, i, g) for q, d in qrels.items() for i, g in d.items()],
        schema={"query": pl.String, "item": pl.String, "relevance": pl.Int64}, orient="row",
    )
    return run_df, qrels_df


def assert_agrees(run: dict, qrels: dict, names: dict[str, str], expected: dict, **kwargs) -> None:
    """Our per-query values (``names``: pytrec_eval measure -> our metric) equal pytrec_eval's
    ``expected`` to 1e-9, on the same queries (pytrec_eval skips judged queries absent from the run)."""
    run_df, qrels_df = to_frames(run, qrels)
    got = rp.evaluate(run_df, list(names.values()), qrels=qrels_df, per_query=True, missing="skip", **kwargs)
    assert sorted(got["query"].to_list()) == sorted(expected)
    for row in got.iter_rows(named=True):
        for measure, name in names.items():
            assert row[name] == pytest.approx(expected[row["query"]][measure], abs=1e-9), (row["query"], measure)


# 45 batches of 2-5 collections (~160) instead of 150 single ones: one evaluate call each
@settings(max_examples=45, deadline=None)
@given(data=batches(), level=st.sampled_from([1, 2]))
def test_agrees_with_pytrec_eval(data, level):
    run, qrels = data
    expected = pytrec_eval.RelevanceEvaluator(qrels, TREC, relevance_level=level).evaluate(run)
    names = {m: t.format(rel="(rel=2)" if level == 2 else "") for m, t in MEASURES.items()}
    assert_agrees(run, qrels, names, expected)


# both engines per example: 45 batches of 2-5 collections (~160) instead of 150 single ones
@settings(max_examples=45, deadline=None)
@given(data=batches(), level=st.sampled_from([1, 2]))
def test_trec_eval_printed_names_agree_with_pytrec_eval(data, level):
    run, qrels = data
    expected = pytrec_eval.RelevanceEvaluator(qrels, TREC, relevance_level=level).evaluate(run)
    specs = {}
    for printed in PRINTED:
        spec = parse(printed)
        specs[printed] = spec.replace(rel=2) if level == 2 and "rel" in spec.PARAMS else spec
    run_df, qrels_df = to_frames(run, qrels)
    for engine in ("polars", "duckdb"):
        got = rp.evaluate(run_df, list(specs.values()), qrels=qrels_df, per_query=True, missing="skip", engine=engine)
        assert sorted(got["query"].to_list()) == sorted(expected)
        for row in got.iter_rows(named=True):
            for printed, spec in specs.items():
                value = row[spec.name]
                if printed in LOGGED:
                    value = math.log(max(value, 1e-5))
                want = expected[row["query"]][printed]
                assert value == pytest.approx(want, abs=1e-9), (engine, row["query"], printed, value, want)
