"""trec_eval's measures, part B: infAP, G, binG, ndcg_rel, Rndcg, gain maps, rbp, rbp_resid.

References: trec_eval 10's own expected files (per query and 'all', printed to 4 decimals,
so compared within 5e-5) and pytrec_eval (trec_eval 9.0.8) on generated collections at 1e-9.
Both engines, and ``to_sql`` run in DuckDB, give the same numbers.
"""

from __future__ import annotations

import duckdb
import polars as pl
import pytest
import pytrec_eval
from hypothesis import given, settings

import rank_polars as rp
from rank_polars.io import read_trec_qrels, read_trec_run
from rank_polars.measures import parse

from .sql_cases import sql_frame
from .test_reference_pytrec_eval import assert_agrees, batches, to_frames
from .trec_eval_files import TEST_DIR, read_expected

# trec_eval's printed name -> our spelling ({rel}: ", rel=2"-style suffix for -l2 where -l applies)
NAMES = {
    "infAP": "infap{rel}",
    "binG": "bing{rel}",
    "G": "g",
    "ndcg_rel": "ndcg_rel",
    "Rndcg": "rndcg{rel}",
    "rbp": "rbp(p=0.9, gain=graded)",
    "rbp_resid": "rbp_resid",
}

# expected file -> (qrels, run, relevance level, -c, -M)
FILES = {
    "out.test.aq": ("qrels.test", "results.test", None, False, None),
    "out.test.aqc": ("qrels.test", "results.trunc", None, True, None),
    "out.test.aqcM": ("qrels.test", "results.trunc", None, True, 100),
    "out.test.aql": ("qrels.rel_level", "results.test", 2, False, None),
}
ENGINES = ["polars", "duckdb"]


def _inputs(qrels: str, run: str, max_docs: int | None) -> tuple[pl.DataFrame, pl.DataFrame]:
    ranked = read_trec_run(TEST_DIR / run).lazy().collect()
    if max_docs is not None:  # -M: the first N documents in trec_eval's order (score, then docno, descending)
        ranked = (
            ranked.sort(["query", "score", "item"], descending=[False, True, True])
            .group_by("query", maintain_order=True)
            .head(max_docs)
        )
    return ranked, read_trec_qrels(TEST_DIR / qrels).lazy().collect()


def _spelling(trec: str, level: int | None) -> str:
    return NAMES[trec].format(rel="" if level is None else f"(rel={level})")


def _check(expected: pl.DataFrame, got_per_query: pl.DataFrame, got_all: pl.DataFrame, names: dict[str, str]) -> int:
    checked = 0
    for trec, ours in names.items():
        rows = expected.filter(pl.col("measure") == trec)
        assert rows.height > 0, trec
        for query, value in rows.select("query", "value").iter_rows():
            if query == "all":
                mine = got_all[ours][0]
            else:
                mine = got_per_query.filter(pl.col("query") == query)[ours][0]
            assert mine == pytest.approx(value, abs=5e-5), (trec, query, mine, value)
            checked += 1
    return checked


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", list(FILES))
def test_expected_files(name: str, engine: str) -> None:
    qrels_file, run_file, level, zero, max_docs = FILES[name]
    run, qrels = _inputs(qrels_file, run_file, max_docs)
    names = {trec: _spelling(trec, level) for trec in NAMES}
    missing = "zero" if zero else "skip"
    args = dict(qrels=qrels, missing=missing, engine=engine)
    per_query = rp.evaluate(run, list(names.values()), per_query=True, **args)
    overall = rp.evaluate(run, list(names.values()), **args)
    expected = read_expected(name)
    assert _check(expected, per_query, overall, names) == 4 * len(names)


@pytest.mark.parametrize("engine", ENGINES)
def test_gain_map_meas_params(engine: str) -> None:
    """``-mndcg.1=3,2=9,4=4.5`` (out.test.meas_params prints it as ``ndcg_1=3,2=9,4=4.5``)."""
    run, qrels = _inputs("qrels.test", "results.test", None)
    name = "ndcg(gains=1:3;2:9;4:4.5)"
    args = dict(qrels=qrels, missing="skip", engine=engine)
    per_query = rp.evaluate(run, [name], per_query=True, **args)
    overall = rp.evaluate(run, [name], **args)
    expected = read_expected("out.test.meas_params")
    assert _check(expected, per_query, overall, {"ndcg_1=3,2=9,4=4.5": name}) == 4


def test_gain_map_spelling_round_trips() -> None:
    spec = parse("nDCG(gains=4=4.5;1:3;2:9)")
    assert spec.name == "ndcg(gains=1:3;2:9;4:4.5)"
    assert parse(spec.name) == spec == rp.measures.dcg.NDCG(gains={1: 3, 2: 9, 4: 4.5})
    for name in ("infAP", "G", "binG", "ndcg_rel", "Rndcg", "rbp_resid"):
        assert parse(parse(name).name) == parse(name)
    assert {parse("G").name, parse("binG").name} == {"g", "bing"}


@pytest.mark.parametrize(
    "bad",
    ["ndcg(gains=1)", "ndcg(gains=-1:2)", "ndcg(gains=1:x)", "ndcg(gains=1:2;1:3)", "ndcg(gains=1:2, gain=exp)",
     "rbp(gain=graded, rel=2)", "rbp_resid(p=1)", "g@10"],
)
def test_bad_parameters_are_refused(bad: str) -> None:
    with pytest.raises(rp.RankPolarsError):
        parse(bad)


# pytrec_eval (trec_eval 9.0.8) has infAP, G, binG, ndcg_rel and Rndcg but neither rbp nor rbp_resid; its
# parameter parser refuses gain maps ('malformed pair parameters'), so those are checked against
# out.test.meas_params only.  These four measures are the same code in 9.0.8 and 10.
PYTREC = {"infAP": "infap{rel}", "binG": "bing{rel}", "G": "g", "ndcg_rel": "ndcg_rel", "Rndcg": "rndcg{rel}"}


# two levels per example: 35 batches of 2-5 collections (~120) instead of 120 single ones
@settings(max_examples=35, deadline=None)
@given(data=batches())
def test_agrees_with_pytrec_eval(data) -> None:
    run, qrels = data
    for level in (1, 2):
        expected = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC), relevance_level=level).evaluate(run)
        names = {m: t.format(rel="" if level == 1 else "(rel=2)") for m, t in PYTREC.items()}
        assert_agrees(run, qrels, names, expected)


# three plans of every name per example: 12 batches of 2-5 collections (~42) instead of 40
@settings(max_examples=12, deadline=None)
@given(data=batches())
def test_engines_and_to_sql_agree(data) -> None:
    run, qrels = data
    run_df, qrels_df = to_frames(run, qrels)
    names = [*(_spelling(t, None) for t in NAMES), "ndcg(gains=0:1;1:3;2:0.5)", "rbp_resid(p=0.5)",
             *(_spelling(t, 2) for t in ("infAP", "binG"))]
    polars_side = rp.evaluate(run_df, names, qrels=qrels_df, per_query=True).sort("query")
    duck_side = rp.evaluate(run_df, names, qrels=qrels_df, per_query=True, engine="duckdb").sort("query")
    con = duckdb.connect()
    con.register("run", run_df.to_arrow())
    con.register("qrels", qrels_df.to_arrow())
    sql = rp.to_sql(names, table="run", qrels="qrels", per_query=True, order="score")
    from_sql = sql_frame(con, sql).sort("query")
    for other in (duck_side, from_sql):
        assert other["query"].to_list() == polars_side["query"].to_list()
        for name in names:
            assert other[name].to_list() == pytest.approx(polars_side[name].to_list(), abs=1e-12), name
