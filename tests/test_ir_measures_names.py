"""ir_measures' spellings parse to our specs and give ir_measures' own numbers.

Each name is passed exactly as an ir_measures user writes it; the output column keeps that
spelling.  Scores are distinct (ir_measures' providers break ties differently).  ir_measures scores a judged query missing from the run 0 and averages over the
judged queries: ``missing="zero"``.  Where its semantics differ, the case says so: ``Judged``
counts negative judgments as judged (we do not, as trec_eval), so judgments here are >= 0
for it; a judged query absent from the run has ``NumRel`` 0 in ir_measures and its R here.  Two are only parsed here, as ir_measures computes them with providers that do not run
in this environment: ``RBP`` (cwl_eval, not installed) and ``nDCG(dcg='exp-log2')`` (gdeval,
a Perl script that exits with an error here); the exp gain is checked against other
references in ``tests/test_peer_cases.py``.

trec_eval's own spelling, the ``-m`` names (``P.5``, ``ndcg_cut.10``, ``iprec_at_recall.0.10``,
``ndcg.1=3,2=9``), parses to the spec the ``trec-eval`` command computes for the same option (its
table, ``rank_polars.dropins.trec_eval.measures``, is the reference), and gives the numbers of
ir_measures' own reading of those names (``ir_measures.parse_trec_measure``).
"""

from __future__ import annotations

import math

import ir_measures
import polars as pl
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import rank_polars as rp
from rank_polars.dropins.trec_eval.measures import TABLE, Selection
from rank_polars.errors import MetricNameError
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
    # a custom gain per level: ir_measures maps the judgments' grades, trec_eval's gain map is ours
    "nDCG(gains={0:1,1:4})@10": "ndcg(gains=0:1;1:4)@10", "nDCG(gains={0: 1, 1: 4})": "ndcg(gains=0:1;1:4)",
    "nDCG(gains={1:3,2:9,3:2})@5": "ndcg(gains=1:3;2:9;3:2)@5",
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
def collections(draw, grades=(0, 0, 1, 1, 2, 3)):
    """A run and judgments as dicts (queries judged and not run, run and not judged)."""
    queries = [f"q{i}" for i in range(draw(st.integers(1, 5)))]
    # distinct scores: ir_measures' providers break ties in different ways (trec_eval: docno descending)
    run = {}
    for q in queries:
        if draw(st.booleans()) or q == "q0":
            docs = draw(st.lists(items, min_size=1, max_size=9, unique=True))
            run[q] = dict(zip(docs, map(float, draw(st.permutations(range(len(docs)))))))
    qrels = {q: draw(st.dictionaries(items, st.sampled_from(grades), min_size=1, max_size=9))
             for q in queries if draw(st.integers(0, 3)) > 0}
    if not qrels:
        qrels = {"q0": {"d0": 1}}
    return run, qrels


def frames(run: dict, qrels: dict) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The dicts as a run (query, item, score) and judgments (query, item, relevance)."""
    run_df = pl.DataFrame([(q, i, s) for q, d in run.items() for i, s in d.items()],
                          schema={"query": pl.String, "item": pl.String, "score": pl.Float64}, orient="row")
    qrels_df = pl.DataFrame([(q, i, g) for q, d in qrels.items() for i, g in d.items()],
                            schema={"query": pl.String, "item": pl.String, "relevance": pl.Int64}, orient="row")
    return run_df, qrels_df


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
@example(data=({"q0": {"d0": 0.0}}, {"q0": {"d0": 1}}), engine="polars")  # CI's case (see below)
def test_same_numbers_as_ir_measures(data, engine):
    run, qrels = data
    names = [name for name in NAMES if name not in NOT_COMPUTED]
    measures = [ir_measures.parse_measure(name) for name in names]
    # one provider per measure, pytrec_eval's where it has it: in a combined call ir_measures picks
    # providers by what is installed, and on a fresh machine the gain-map nDCG came from another
    # provider, which gave 0.0 for one relevant document ranked first (pytrec_eval: 1.0)
    want = {}
    for measure in measures:
        provider = ir_measures.pytrec_eval if ir_measures.pytrec_eval.supports(measure) else ir_measures
        want.update(provider.calc_aggregate([measure], qrels, run))
    run_df, qrels_df = frames(run, qrels)
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


# -- trec_eval's -m names --------------------------------------------------------------------------


def trec_command_spelling(option: str) -> list[str]:
    """The specs ``rank-polars trec-eval -m OPTION`` computes (its own reading of trec_eval's syntax)."""
    selection = Selection()
    selection.mark(option)
    name = option.partition(".")[0]
    return [c.spelling for c in selection.columns() if c.measure.name == name]


def one_value_options() -> list[str]:
    """``-m NAME.VALUE`` for every trec_eval measure that takes parameters, each value of its
    default list alone (the measures of judgment groups, ``*_avgjg``, are the command's only)."""
    out = []
    for m in TABLE:
        if m.spelling is None or m.needs != "qrels" or m.params == "none":
            continue
        if m.params in ("long_cuts", "double_cuts"):
            out += [f"{m.name}.{v}" for v in m.default]
        elif m.params == "doubles":
            out.append(f"{m.name}.{','.join(repr(float(v)) for v in m.default)}")
    return out


OPTIONS = [*one_value_options(), "P.7", "ndcg_cut.3", "iprec_at_recall..25", "Rprec_mult.0.35", "utility.2,-1,0,0",
           "set_F.0.5", "11pt_avg.0.25,0.5,0.75", "relative_P.2",
           # trec_eval's gain maps, ndcg.1=3,2=9 (name=value pairs of levels)
           "ndcg.1=3,2=9,4=4.5", "ndcg.0=1", "G.1=0.5,3=7", "dcg.2=5", "ideal_dcg.1=2", "ndcg_rel.1=2,3=-1",
           "Rndcg.0=0.5,1=4"]


def test_every_one_value_trec_eval_measure_is_covered():
    kinds = {m.params for m in TABLE if m.needs == "qrels" and m.spelling}
    assert kinds == {"none", "long_cuts", "double_cuts", "doubles", "pairs"}
    names = {o.partition(".")[0] for o in OPTIONS}
    assert names == {m.name for m in TABLE if m.needs == "qrels" and m.spelling and m.params != "none"} - {
        "rbp", "rbp_resid"}  # refused below: our rbp's defaults are not trec_eval's


@pytest.mark.parametrize("option", OPTIONS)
def test_trec_eval_dotted_names_parse_as_the_trec_eval_command_reads_them(option):
    (spelling,) = trec_command_spelling(option)
    assert parse(option) == parse(spelling)
    printed = option.replace(".", "_", 1)  # what trec_eval prints for a cutoff or a list of numbers
    if "=" not in option:
        assert parse(printed) == parse(option)


@pytest.mark.parametrize("option", ["P.5,10", "ndcg_cut.10,5,20", "recall.5,100", "map_cut.5,10", "success.1,5,10",
                                    "iprec_at_recall.0.1,0.2", "Rprec_mult.0.2,0.4", "relative_P.5,10", "unj.5,10"])
def test_a_trec_eval_list_is_refused_with_one_name_per_value(option):
    name, _, values = option.partition(".")
    assert len(trec_command_spelling(option)) == len(values.split(","))  # the command expands it
    with pytest.raises(MetricNameError) as caught:
        parse(option)
    for value in values.split(","):
        assert repr(f"{name}.{value}") in str(caught.value)
        parse(f"{name}.{value}")  # each alone parses


@pytest.mark.parametrize("option", ["rbp.p=0.8", "rbp_resid.p=0.5", "ndcg.a=1"])
def test_trec_eval_pairs_other_than_a_gain_map_are_refused(option):
    with pytest.raises(MetricNameError, match="gain map"):
        parse(option)


def test_the_output_column_keeps_the_trec_eval_spelling():
    run = pl.DataFrame({"query": ["q"], "item": ["a"], "position": [1], "relevance": [1]})
    out = rp.evaluate(run, ["P.5", "ndcg_cut.10", "ndcg.0=1"])
    assert out.columns == ["queries", "P.5", "ndcg_cut.10", "ndcg.0=1"]
    assert out.row(0) == (1, 0.2, 1.0, 1.0)


# ir_measures reads these trec_eval names itself (parse_trec_measure); the rest it does not support
TREC_NAMES = ["P.5", "P.1", "ndcg_cut.10", "ndcg_cut.3", "recall.100", "recall.2", "map_cut.10", "map_cut.3",
              "success.1", "success.5", "set_F.0.5", "iprec_at_recall.0.10", "iprec_at_recall.0.50"]


@settings(max_examples=40, deadline=None)
@given(data=collections(), engine=st.sampled_from(["polars", "duckdb"]))
def test_trec_eval_dotted_names_give_ir_measures_numbers(data, engine):
    run, qrels = data
    measures = {name: ir_measures.parse_trec_measure(name) for name in TREC_NAMES}
    assert all(len(m) == 1 for m in measures.values())
    want = ir_measures.calc_aggregate([m for (m,) in measures.values()], qrels, run)
    run_df, qrels_df = frames(run, qrels)
    got = rp.evaluate(run_df, TREC_NAMES, qrels=qrels_df, missing="zero", engine=engine)
    for name, (measure,) in measures.items():
        if name.startswith("iprec") and not same_level_rule(float(name.partition(".")[2]), qrels):
            continue  # ir_measures runs trec_eval 9.0.8's level rule (see same_level_rule)
        assert got[name].item() == pytest.approx(want[measure], abs=1e-9), (name, got[name].item(), want[measure])
