"""One spec, two Polars forms: the ``ranking`` namespace over ranked lists and ``evaluate``'s
long-format plan give the same numbers; plus properties every metric must satisfy."""

from __future__ import annotations

import functools
import math

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rank_polars as rp
from rank_polars.formula.listform import list_expr
from rank_polars.formula.tree import Agg, TieMax, TieSum, walk
from rank_polars.errors import MetricNameError
from rank_polars.measures.base import FamilyMeasure
from rank_polars.measures import MEASURES, parse

# Every metric, with its options
SPECS = [
    "hits@3", "hits", "fallout@3", "fallout(rel=2)", "ap(denom=found)@3",
    "cg", "cg(gain=exp)@3", "dcg@5", "dcg(discount=jarvelin)", "idcg@3", "idcg(ideal_cut=list)@20",
    "ndcg", "ndcg@3", "ndcg(gain=exp, discount=jarvelin)@5", "ndcg(ideal_cut=list)", "ap", "ap@3",
    "ap(denom=min)@3", "ap(rel=2)", "rr", "rr@2", "rr(rel=2)", "p@3", "p", "r@3", "r(rel=0.5)", "f1@4",
    "success@1", "hit@3", "rprec", "bpref", "bpref(rel=2)", "err(max=4)@5", "err(max=3)", "rbp", "rbp(p=0.5)@4",
    "judged@3", "judged",
    # trec_eval's measure set: the list carries its own judgments, so each has a list form too
    "num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret", "gm_map", "gm_bpref",
    "iprec(recall=0.3)", "11pt_avg", "rprec(mult=0.4)", "p(relative=true)@5", "set_p", "set_p(relative=true)",
    "set_r", "set_f(beta=0.5)", "set_ap", "utility(a=2,b=-1,c=0,d=0)", "unj@5", "unj",
    "infap", "g", "bing", "ndcg_rel", "rndcg", "rbp_resid", "ndcg(gains=1:3;2:9)@5", "g(gains=1:0.5;3:7)",
    "rndcg(gains=2:1)", "rbp(p=0.9, gain=graded)",
    # cwl_eval's C/W/L family
    "inst", "insq(t=2)", "bpm@5", "sdcg@3", "nerr8@3", "nerr9@3", "nerr10", "nerr11(max_rel=3)",
]

grades = st.one_of(
    st.sampled_from([0, 0, 0, 1, 2, 3, -1]).map(float),
    st.floats(min_value=-1, max_value=3, allow_nan=False).map(lambda x: round(x, 2)),
)


@st.composite
def logs(draw, queries: int = 16) -> pl.DataFrame:
    """1 to ``queries`` queries, each a list of 1-12 grades (integers, fractions, -1)."""
    rows = []
    for q in range(draw(st.integers(1, queries))):
        labels = draw(st.lists(grades, min_size=1, max_size=12))
        rows += [(f"q{q}", f"i{j}", j + 1, g) for j, g in enumerate(labels)]
    return pl.DataFrame(rows, schema=["query", "item", "position", "relevance"], orient="row")


def _reads_score_ties(measure: type) -> bool:
    """A formula over the ties of the scores (auc, coverage_error, label_ranking_loss): no list of
    grades holds them, so it has no list form (refused, naming evaluate)."""
    try:
        spec = measure(5) if measure.SUPPORTS_CUTOFF else measure()
    except MetricNameError:  # a spec with a required parameter (iprec's recall): one of SPECS
        return False
    return any(isinstance(n, (TieSum, TieMax)) for n in walk(spec.value()))


def test_every_metric_is_covered():
    # families (FamilyMeasure: the diversity measures) have no list form and no plan formula
    covered = {m for m in MEASURES if not issubclass(m, FamilyMeasure) and not _reads_score_ties(m)}
    assert {type(parse(s)) for s in SPECS} == covered
    ties = [m for m in MEASURES if not issubclass(m, FamilyMeasure) and _reads_score_ties(m)]
    for measure in ties:
        with pytest.raises(rp.RankPolarsError, match=f"{measure.NAME} reads the ties of the scores"):
            list_expr(measure(5) if measure.SUPPORTS_CUTOFF else measure(), pl.col("relevance"))


# Each example is one evaluate call and one aggregation over every spec: their cost is the plan's
# (~1 s each, a third of it inst's formula alone), not the data's.  So few examples of many queries
# (each query a list of its own): 5 logs of up to 48 queries check as many lists as 15 of up to 16.
@functools.cache
def list_forms() -> list[pl.Expr]:
    """Every spec's list form over the grades in position order (built once: ~0.2 s)."""
    return [list_expr(parse(name), pl.col("relevance").sort_by("position")).alias(name) for name in SPECS]


@settings(max_examples=5, deadline=None)
@given(log=logs(48))
def test_namespace_equals_evaluate(log):
    lists = log.group_by("query").agg(list_forms())
    long = rp.evaluate(log, SPECS, per_query=True)
    joined = long.join(lists, on="query", suffix="_list")
    assert joined.height == log["query"].n_unique()
    for name in SPECS:
        for a, b in zip(joined[name], joined[f"{name}_list"]):
            assert a == pytest.approx(b, abs=1e-12), name


# the specs whose formula reads the top grade of every judgment (err without max=): no query's
# judgments hold it, so they take no ideal=
GLOBAL = {s for s in SPECS if any(isinstance(n, Agg) and n.level == "global" for n in walk(parse(s).value()))}


@functools.cache
def ideal_forms() -> list[pl.Expr]:
    """Every spec but :data:`GLOBAL` compiled with ``ideal=`` (and ``n=`` where the formula
    reads the grade-0 judgments), over the columns ``with_judgments`` attaches (built once)."""
    forms = []
    for name in SPECS:
        if name in GLOBAL:
            continue
        try:
            forms.append(list_expr(parse(name), pl.col("relevance").sort_by("position"), ideal="ideal").alias(name))
        except rp.RankPolarsError:  # it reads the grade-0 judgments, which the ideal ranking leaves out
            forms.append(list_expr(parse(name), pl.col("relevance").sort_by("position"), ideal="ideal",
                                   n="num_nonrel").alias(name))
    return forms


# as test_namespace_equals_evaluate: 5 logs of up to 48 queries, each query with judged items of
# its own that no ranking shows (15 logs of up to 16 queries, one such list per log, before)
@settings(max_examples=5, deadline=None)
@given(log=logs(48), extra=st.lists(st.lists(st.sampled_from([0.0, 0.0, 1.0, 2.0, 3.0]), max_size=3),
                                    min_size=48, max_size=48))
def test_every_formula_with_the_judgments_equals_evaluate_with_qrels(log, extra):
    """Every spec compiled with ``ideal=`` (and ``n=`` where the formula reads the grade-0
    judgments) over the rows ``with_judgments`` attaches gives ``evaluate(qrels=)``: the grades
    of the log read as judgments (a negative one unjudged), a null grade for every other shown
    item, and ``extra[q]`` judged items of query q that no ranking shows."""
    unshown = pl.DataFrame([(f"q{q}", f"x{j}", grade) for q, grades in enumerate(extra) for j, grade in enumerate(grades)],
                           schema={"query": pl.String, "item": pl.String, "relevance": pl.Float64}, orient="row")
    qrels = pl.concat([
        log.filter(pl.col("relevance") >= 0).select("query", "item", "relevance"),
        unshown.filter(pl.col("query").is_in(log["query"].implode())),
    ])
    if qrels.height == 0:
        return
    names = [s for s in SPECS if s not in GLOBAL]
    got = rp.with_judgments(log, qrels).group_by("query").agg(ideal_forms())
    want = rp.evaluate(log.drop("relevance"), names, qrels=qrels, per_query=True)
    joined = want.join(got, on="query", suffix="_list")
    assert joined.height == want.height == got.height
    for name in names:
        for a, b in zip(joined[name], joined[f"{name}_list"]):
            assert b == pytest.approx(a, abs=1e-12), name


def test_namespace_methods_match_functions():
    df = pl.DataFrame({"relevance": [3, 0, 2, 1, 0], "position": [1, 2, 3, 4, 5]})
    ranked = pl.col("relevance").sort_by("position")
    got = df.select(ranked.ranking.ndcg(3), ranked.ranking.ap(), ranked.ranking.err(3, max=3), ranked.ranking.rbp(p=0.5))
    want = df.select(rp.exprs.ndcg(ranked, 3), rp.exprs.ap(ranked), rp.exprs.err(ranked, 3, max=3), rp.exprs.rbp(ranked, p=0.5))
    assert got.rows() == want.rows()
    with pytest.raises(AttributeError, match="did you mean 'ndcg'"):
        ranked.ranking.ndgc(3)


def test_the_metric_strings_short_names_are_aliases():
    df = pl.DataFrame({"relevance": [3, 0, 2, 1, 0], "position": [1, 2, 3, 4, 5]})
    ranked = pl.col("relevance").sort_by("position")
    got = df.select(ranked.ranking.p(3), ranked.ranking.r(2), ranked.ranking.map(), ranked.ranking.mrr(),
                    ranked.ranking.hit(1))
    # the same columns and values as the metric strings in evaluate (its long-format plan)
    want = rp.evaluate(df.with_columns(query=pl.lit("q"), item=pl.format("i{}", "position")),
                       ["p@3", "r@2", "ap", "rr", "success@1"])
    assert got.columns == ["p@3", "r@2", "ap", "rr", "success@1"]
    assert got.row(0) == pytest.approx(want.drop("queries").row(0), abs=1e-12)


@pytest.mark.parametrize(("name", "hint"), [
    ("ndgc", "; did you mean 'ndcg'?"),  # spelling
    ("mean_average_precision", "; did you mean 'ap'?"),  # meaning: the words of a summary
    ("reciprocal_rank", "; did you mean 'rr'?"),
    ("expected_reciprocal_rank", "; did you mean 'err'?"),
    ("P_10", "; did you mean 'precision'?"),  # a trec_eval metric string
    ("gm_map", "; 'gm_map' needs judgments beyond the list or several queries: use rank_polars.evaluate(log, ['gm_map'])"),
    ("zzz", ""),
])
def test_an_unknown_method_gets_one_hint_by_meaning(name, hint):
    import traceback

    with pytest.raises(AttributeError) as caught:
        getattr(pl.col("relevance").ranking, name)
    assert str(caught.value) == f"'ranking' namespace has no metric {name!r}{hint}"
    # what a user sees: the message once, without Python's own "Did you mean" appended by spelling
    shown = "".join(traceback.format_exception_only(caught.type, caught.value))
    assert shown.strip() == f"AttributeError: {caught.value}"


# gains and counts are unbounded; utility is a weighted count (a*rel_ret + b*nonrel_ret + ...)
BOUNDED = [s for s in SPECS if not s.startswith(("cg", "dcg", "idcg", "num_", "utility", "hits"))]  # hits: a count


@settings(max_examples=8, deadline=None)  # logs of up to 48 queries: as many lists as 25 of up to 16
@given(log=logs(48))
def test_bounded_metrics_lie_in_0_1(log):
    got = rp.evaluate(log, BOUNDED, per_query=True)
    for name in BOUNDED:
        assert got[name].is_between(0.0, 1.0 + 1e-12).all(), name


@settings(max_examples=25, deadline=None)
@given(log=logs())
def test_the_ideal_order_scores_one(log):
    ideal = log.with_columns(
        pl.col("relevance").rank("ordinal", descending=True).over("query").cast(pl.Int64).alias("position")
    )
    got = rp.evaluate(ideal, ["ndcg", "ndcg@3", "ndcg(gain=exp)@5", "ap", "rprec"], per_query=True)
    has_gain = ideal.group_by("query").agg((pl.col("relevance") > 0).any().alias("any"))
    for row in got.join(has_gain, on="query").iter_rows(named=True):
        expected = 1.0 if row["any"] else 0.0
        for name in ("ndcg", "ndcg@3", "ndcg(gain=exp)@5", "ap", "rprec"):
            assert row[name] == pytest.approx(expected, abs=1e-12), name


@settings(max_examples=20, deadline=None)
@given(log=logs())
def test_cutoffs_are_monotone(log):
    got = rp.evaluate(log, ["r@1", "r@3", "r@10", "success@1", "success@5", "cg@2", "cg@6"], per_query=True)
    assert (got["r@1"] <= got["r@3"] + 1e-12).all() and (got["r@3"] <= got["r@10"] + 1e-12).all()
    assert (got["success@1"] <= got["success@5"]).all()
    assert (got["cg@2"] <= got["cg@6"] + 1e-12).all()


def test_names_round_trip_and_compare_equal():
    for text in SPECS:
        spec = parse(text)
        assert parse(spec.name) == spec and hash(parse(spec.name)) == hash(spec)
    assert parse("NDCG@10") == rp.ndcg(k=10)
    assert rp.ndcg(k=10, gain="exp").name == "ndcg(gain=exp)@10"
    assert parse("ndcg_cut_10") == parse("ndcg@10") and parse("map_cut_5") == parse("ap@5")
    assert parse("recip_rank") == parse("mrr") == parse("rr")
    with pytest.raises(AttributeError):
        rp.ndcg(k=3).gian  # noqa: B018


def test_idcg_zero_gives_ndcg_zero_not_nan():
    log = pl.DataFrame({"query": ["q"] * 3, "item": list("abc"), "position": [1, 2, 3], "relevance": [0, 0, 0]})
    got = rp.evaluate(log, ["ndcg", "ap", "rr", "bpref", "err"])
    assert all(got[c].item() == 0.0 and not math.isnan(got[c].item()) for c in ["ndcg", "ap", "rr", "bpref", "err"])
