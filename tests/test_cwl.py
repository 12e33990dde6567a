"""The C/W/L family against ``cwl_eval`` itself (the ``cwl-eval`` package), on generated TREC files.

``cwl-eval`` 1.0.12 is installed for the tests without its dependency tree (``pip --no-deps``,
as :func:`tests.system_deps.ensure_reference` does; it pulls in nothing it needs beyond NumPy).
Each example writes a TREC run (in the rank order it means) and a qrels file of gains in [0, 1],
reads them as ``cwl_eval``'s ``main`` does (its ``TrecQrelHandler``, ``RankingMaker`` and
``CWLRuler`` over a metrics file), and compares each measure's expected rate of gain per query,
unrounded (``cwl_eval`` prints 4 decimals), with ours in the Polars engine, DuckDB and ``to_sql``.
ir_measures' names parse to the same specs (its provider hands ``cwl_eval`` the grades scaled by
``max_rel``, which ``max_rel`` here reproduces).
"""

from __future__ import annotations

import os
import sys

import duckdb
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rank_polars as rp
from tests import system_deps

# cwl_eval's class and arguments -> our name
METRICS = {
    "INSTCWLMetric(1.0)": "inst", "INSTCWLMetric(2.5)": "inst(t=2.5)", "INSQCWLMetric(0.3)": "insq(t=0.3)",
    "BPMCWLMetric(1.0,5)": "bpm@5", "BPMCWLMetric(2.0,10)": "bpm(t=2)@10", "NDCGCWLMetric(5)": "sdcg@5",
    "NERReq8CWLMetric(5)": "nerr8@5", "NERReq9CWLMetric(12)": "nerr9@12", "NERReq10CWLMetric(0.5)": "nerr10(p=0.5)",
    "NERReq11CWLMetric(2.5)": "nerr11(t=2.5)",
}


@pytest.fixture(scope="module")
def cwl_ruler():
    system_deps.ensure_reference("cwl", "cwl-eval==1.0.12", "the C/W/L family's reference (cwl_eval)")
    import cwl

    # cwl_eval's ruler imports its measures as ``ruler.measures.*``: its folder goes on the path
    sys.path.append(os.path.dirname(cwl.__file__))  # last: its own "tests" package must not shadow ours
    from cwl.ruler.cwl_ruler import CWLRuler
    from cwl.ruler.ranking import RankingMaker
    from cwl.seeker.trec_qrel_handler import TrecQrelHandler

    return CWLRuler, RankingMaker, TrecQrelHandler


def reference(tools, folder, rankings: dict, qrels: dict) -> dict[str, dict[str, float]]:
    """cwl_eval's per-query values, unrounded, from TREC files written in ``folder``."""
    CWLRuler, RankingMaker, TrecQrelHandler = tools
    run_file, qrels_file, metrics_file = (os.path.join(folder, n) for n in ("run.txt", "qrels.txt", "metrics.txt"))
    with open(run_file, "w") as f:
        f.writelines(f"{q} Q0 {doc} {i} {1000 - i} r\n" for q, docs in rankings.items() for i, doc in enumerate(docs, 1))
    with open(qrels_file, "w") as f:
        f.writelines(f"{q} 0 {doc} {gain}\n" for q, docs in qrels.items() for doc, gain in docs.items())
    with open(metrics_file, "w") as f:
        f.write("\n".join(METRICS) + "\n")
    handler, ruler = TrecQrelHandler(qrels_file), CWLRuler(metrics_file)
    out: dict[str, dict[str, float]] = {}
    with open(run_file) as f:  # cwl_eval's main: the run file's lines in order, one ranking per topic
        lines = [line.split() for line in f]
    for q in dict.fromkeys(line[0] for line in lines):
        maker = RankingMaker(q, handler, None, max_gain=1.0, max_cost=1.0, min_cost=1.0, max_n=1000)
        for topic, element_type, doc, *_ in lines:
            if topic == q:
                maker.add(doc, element_type)
        ruler.measure(maker.get_ranking())
        out[q] = {ours: metric.expected_utility for metric, ours in zip(ruler.metrics, METRICS.values())}
    return out


def ours(rankings: dict, qrels: dict) -> dict[str, dict[str, dict]]:
    run = pl.DataFrame([(q, doc, i) for q, docs in rankings.items() for i, doc in enumerate(docs, 1)],
                       schema={"query": pl.String, "item": pl.String, "position": pl.Int64}, orient="row")
    judged = pl.DataFrame([(q, doc, g) for q, docs in qrels.items() for doc, g in docs.items()],
                          schema={"query": pl.String, "item": pl.String, "relevance": pl.Float64}, orient="row")
    metrics = list(METRICS.values())
    got = {}
    for engine in ("polars", "duckdb"):
        table = rp.evaluate(run, metrics, qrels=judged, per_query=True, missing="skip", engine=engine)
        got[engine] = {row["query"]: row for row in table.iter_rows(named=True)}
    con = duckdb.connect()
    con.register("run", run.to_arrow())
    con.register("qrels", judged.to_arrow())
    sql = rp.to_sql(metrics, table="run", qrels="qrels", per_query=True, missing="skip")
    got["to_sql"] = {row["query"]: row for row in pl.from_arrow(con.sql(sql).to_arrow_table()).iter_rows(named=True)}
    return got


gains = st.sampled_from([0.0, 0.0, 0.25, 0.5, 0.75, 1.0, None])  # None: unjudged


@st.composite
def collections(draw):
    rankings, qrels = {}, {}
    for q in range(draw(st.integers(1, 4))):
        docs = [f"d{i}" for i in range(draw(st.integers(1, 25)))]
        rankings[f"q{q}"] = docs
        judged = {doc: g for doc in docs if (g := draw(gains)) is not None}
        judged["never_ranked"] = draw(st.sampled_from([0.0, 1.0]))  # a judgment off the list changes nothing
        qrels[f"q{q}"] = judged
    return rankings, qrels


@settings(max_examples=10, deadline=None)  # DuckDB plans C/W/L's long formulas in ~1 s: 10 collections of 1-4 rankings
@given(data=collections())
def test_agrees_with_cwl_eval(cwl_ruler, tmp_path_factory, data):
    rankings, qrels = data
    expected = reference(cwl_ruler, tmp_path_factory.mktemp("cwl"), rankings, qrels)
    for way, values in ours(rankings, qrels).items():
        for q, want in expected.items():
            for name, value in want.items():
                assert values[q][name] == pytest.approx(value, rel=1e-9, abs=1e-12), (way, q, name)


def test_a_list_longer_than_cwl_eval_reads(cwl_ruler, tmp_path):
    """cwl_eval reads 1000 ranks: the gains below are cut, the weights run to rank 1000."""
    docs = [f"d{i}" for i in range(1010)]
    rankings = {"q": docs}
    qrels = {"q": {docs[0]: 0.5, docs[3]: 1.0, docs[998]: 0.25, docs[999]: 1.0, docs[1004]: 1.0}}
    expected = reference(cwl_ruler, tmp_path, rankings, qrels)["q"]
    got = ours(rankings, qrels)
    for way, values in got.items():
        for name, value in expected.items():
            assert values["q"][name] == pytest.approx(value, rel=1e-9, abs=1e-12), (way, name)


def test_the_stop_is_not_read_past_by_rounding(cwl_ruler, tmp_path):
    """Gains 1.0 then 0.88 at T = 1: the user stops at rank 1.  The gain before rank 2 taken as
    1.88 - 0.88 rounds below 1, which read rank 2 too (BPM 1.88, past its bound of 1)."""
    rankings, qrels = {"q": ["a", "b", "c"]}, {"q": {"a": 1.0, "b": 0.88, "c": 0.5}}
    expected = reference(cwl_ruler, tmp_path, rankings, qrels)["q"]
    for way, values in ours(rankings, qrels).items():
        for name, value in expected.items():
            assert values["q"][name] == pytest.approx(value, rel=1e-9, abs=1e-12), (way, name)
    assert expected["bpm@5"] <= 1.0


def test_ir_measures_names_parse():
    assert rp.parse("INST(T=2, max_rel=3)") == rp.parse("inst(t=2, max_rel=3)")
    assert rp.parse("BPM(T=1, max_rel=3)@10").name == "bpm(max_rel=3)@10"
    assert rp.parse("SDCG(dcg='log2', max_rel=3)@10").name == "sdcg(max_rel=3)@10"
    assert [rp.parse(f"NERR{n}(max_rel=4)@5").NAME for n in (8, 9)] == ["nerr8", "nerr9"]
    assert rp.parse("NERR10(p=0.8, max_rel=4)").name == "nerr10(max_rel=4, p=0.8)"
    assert rp.parse("NERR11(T=2, max_rel=4)").name == "nerr11(max_rel=4, t=2)"
    assert rp.parse("INSQ(T=3, min_rel=1, max_rel=4)").name == "insq(min_rel=1, max_rel=4, t=3)"


def test_scaled_grades_are_ir_measures_gains():
    """ir_measures hands cwl_eval (min(max(grade, min_rel), max_rel) - min_rel) / (max_rel - min_rel)."""
    run = pl.DataFrame({"query": ["q"] * 4, "item": list("abcd"), "position": [1, 2, 3, 4]})
    qrels = pl.DataFrame({"query": ["q"] * 4, "item": list("abcd"), "relevance": [4.0, 1.0, 2.0, -1.0]})
    scaled = qrels.with_columns(relevance=((pl.col("relevance").clip(1, 3) - 1) / 2))
    for name in ("inst", "sdcg@3", "nerr8@3", "bpm(t=0.5)@4"):
        scaled_name = name.replace("(", "(min_rel=1, max_rel=3, ") if "(" in name else name.replace(
            name.split("@")[0], name.split("@")[0] + "(min_rel=1, max_rel=3)")
        a = rp.evaluate(run, [scaled_name], qrels=qrels).item(0, 1)
        b = rp.evaluate(run, [name], qrels=scaled).item(0, 1)
        assert a == pytest.approx(b, abs=1e-12), name


def test_refusals():
    with pytest.raises(rp.errors.MetricNameError, match="needs a cutoff"):
        rp.evaluate(pl.DataFrame({"query": ["q"], "item": ["a"], "position": [1], "relevance": [1]}), ["sdcg"])
    with pytest.raises(rp.errors.MetricNameError, match="min_rel < max_rel"):
        rp.parse("inst(min_rel=3, max_rel=3)")
    with pytest.raises(rp.errors.MetricNameError, match="above 0.5"):
        rp.parse("inst(t=0.5)")
