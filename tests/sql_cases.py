"""Generated runs and judgments shared by the SQL-engine and Spark tests."""

from __future__ import annotations

import polars as pl
from hypothesis import strategies as st

from rank_polars.engines.duckdb_engine import fetch as sql_frame  # noqa: F401  (to_sql's text, run as the engine runs its own)
from rank_polars.measures import MEASURES
from rank_polars.measures.base import FamilyMeasure


# Every metric of the registry, with the options that change its SQL (cutoffs, gains,
# discounts, ideal from the run, ideal cut at the list, denominators, thresholds, p, max).
ALL_METRICS = [
    "cg", "cg(gain=exp)@3", "dcg@3", "dcg(discount=jarvelin)", "idcg", "idcg(ideal=run, ideal_cut=list)@3",
    "ndcg", "ndcg@3", "ndcg(gain=exp, discount=jarvelin)@5", "ndcg(ideal=run)@2", "ndcg(ideal_cut=list)@4",
    "ap", "ap@3", "ap(denom=min)@2", "ap(rel=2)", "ap(denom=found)@2", "ap(denom=found)",
    "hits@3", "hits(rel=2)", "fallout@3", "fallout(rel=2)", "rr", "rr@2", "rr(rel=2)", "p", "p@3", "p(rel=2)@5",
    "r", "r@3", "f1@3", "f1", "success@1", "success(rel=2)@3", "rprec", "rprec(rel=2)", "bpref",
    "bpref(rel=2)@4", "err", "err@3", "err(max=4)@5", "rbp", "rbp(p=0.5)@3", "rbp(rel=2)", "judged", "judged@3",
    # trec_eval's set, part A
    "num_q", "num_ret", "num_rel", "num_rel(rel=2)", "num_rel_ret", "num_nonrel_judged_ret", "gm_map", "gm_bpref",
    "iprec(recall=0.3)", "iprec(recall=0, rel=2)", "11pt_avg", "11pt_avg(levels=0.2;0.5)", "p(relative=true)@3",
    "set_p", "set_p(relative=true)", "set_r", "set_f(beta=0.5)", "set_ap", "utility",
    "utility(a=2, c=-1, d=0.5, docs=100)", "rprec(mult=0.6)", "rprec(mult=2)", "unj", "unj@3",
    # trec_eval's set, part B
    "infap", "infap(rel=2)@4", "bing", "g", "g(gains=0:1;1:3;2:0.5)", "ndcg_rel", "ndcg_rel(gains=1:2;3:-1)",
    "rndcg", "rndcg(rel=2, gains=0:0.5;1:4)", "ndcg(gains=0:1;1:3;2:0.5)@3", "rbp(p=0.9, gain=graded)", "rbp_resid",
    # scikit-learn's per-row ranking metrics (ties read through the scores) and the C/W/L family
    "auc", "coverage_error", "label_ranking_loss(rel=2)", "inst", "inst(t=2, max_rel=3)", "insq", "bpm@3",
    "bpm(t=2, max_rel=3)@5", "sdcg@3", "nerr8@3", "nerr9(max_rel=3)@4", "nerr10", "nerr11(max_rel=3)",
]
# What the Spark tests compare: every metric but the C/W/L family's longest formulas.  Spark's
# analysis grows much faster than a statement (tests/test_spark.py): INST's and NERR's nested
# running sums and logarithms kept one batch planning for over ten minutes, where DuckDB plans
# them in about a second.  Their SQL is the same text (to_sql's), compared with Polars in DuckDB by
# tests/test_cwl.py and tests/test_sql_engine.py; SDCG, INSQ and BPM stay here for the family.
SPARK_SLOW = {"inst", "inst(t=2, max_rel=3)", "nerr8@3", "nerr9(max_rel=3)@4", "nerr10", "nerr11(max_rel=3)"}
SPARK_METRICS = [m for m in ALL_METRICS if m not in SPARK_SLOW]
# The C/W/L family: compared with cwl_eval itself, per query, in Polars, DuckDB and to_sql by
# tests/test_cwl.py.  Out of tests/test_sql_engine.py's generated cases (their statement of every
# metric was 43% C/W/L text, and each example plans it three times), which keep one fixed case of it.
CWL_METRICS = [m for m in ALL_METRICS if m.startswith(("inst", "insq", "bpm", "sdcg", "nerr"))]
SQL_METRICS = [m for m in ALL_METRICS if m not in CWL_METRICS]

# Only cutoff metrics: the plan then cuts the run at the deepest k before anything else.
CUT_METRICS = ["ndcg@3", "ap@2", "p@2", "rr@3", "err@2", "bpref@3", "judged@2", "idcg(ideal_cut=list)@2", "f1@2"]

# families (FamilyMeasure: subtopic judgments, auxiliary tables) have engine tests of their own
# (tests/test_diversity.py, tests/test_beyond_*.py) on the inputs they need
PLAN_MEASURES = {cls.NAME for cls in MEASURES if not issubclass(cls, FamilyMeasure)}
assert {m.split("(")[0].split("@")[0] for m in ALL_METRICS} >= PLAN_MEASURES

LABELS = st.sampled_from([-1.0, 0.0, 0.0, 1.0, 1.0, 2.0, 0.5, 3.0])


@st.composite
def runs(draw: st.DrawFn) -> pl.DataFrame:
    """1-3 models, a few queries, rankings of varying length (possibly absent), tied scores."""
    rows = []
    models = [f"m{i}" for i in range(draw(st.integers(1, 3)))]
    for model in models:
        for q in range(draw(st.integers(1, 4))):
            items = draw(st.permutations([f"d{i}" for i in range(7)]))[: draw(st.integers(0, 7))]
            for pos, item in enumerate(items, start=1):
                score = draw(st.integers(0, 3)) / 2  # few values: many ties, broken by item id
                rows.append((model, f"q{q}", item, pos, score, draw(LABELS)))
    if not rows:  # an empty log still needs one ranking to have a schema worth testing
        rows.append((models[0], "q0", "d0", 1, 1.0, 1.0))
    return pl.DataFrame(
        rows, schema=["model", "query", "item", "position", "score", "relevance"], orient="row"
    )


@st.composite
def qrels(draw: st.DrawFn) -> pl.DataFrame:
    """Judgments of some queries (q0..q4: some unjudged by the run, some absent from it)."""
    rows = []
    for q in draw(st.sets(st.integers(0, 4), min_size=1)):
        items = draw(st.sets(st.sampled_from([f"d{i}" for i in range(9)]), min_size=1))
        rows += [(f"q{q}", item, draw(LABELS)) for item in sorted(items)]
    return pl.DataFrame(rows, schema=["query", "item", "relevance"], orient="row")



@st.composite
def batched_cases(draw: st.DrawFn, size: tuple[int, int] = (2, 4)) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """Several (:func:`runs`, :func:`qrels`) cases in one log, their query ids prefixed apart
    (judged or not alike, drawn once): one ``evaluate`` or SQL statement checks them all, where
    each call's cost is the plan of every metric, not the data."""
    judged = draw(st.booleans())
    parts, judgments = [], []
    for b in range(draw(st.integers(*size))):
        parts.append(draw(runs()).with_columns(pl.format("b{}{}", pl.lit(b), "query").alias("query")))
        if judged:
            judgments.append(draw(qrels()).with_columns(pl.format("b{}{}", pl.lit(b), "query").alias("query")))
    return pl.concat(parts), pl.concat(judgments) if judged else None
