"""Every trec_eval 10 measure we own, per query and 'all', against trec_eval's own expected files.

The files are those of trec_eval's Makefile ``test`` target (``tests/trec_eval_files.py``
says which qrels, run and options wrote each).  Each printed measure name parses as it is
(``parse("iprec_at_recall_0.10")``); ``-l2`` is ``spec.replace(rel=2)`` where the spec has
``rel``; ``-c`` is ``missing="zero"``; ``-M100`` keeps each query's first 100 documents in
trec_eval's order (score descending, docno descending).  Values are printed with ``%6.4f``,
so they agree to half a unit of the 4th decimal; the counts exactly.  Both engines.
"""

from __future__ import annotations

import polars as pl
import pytest

import rank_polars as rp
from rank_polars.io import read_trec_qrels, read_trec_run
from rank_polars.measures import parse

from .trec_eval_files import COMMANDS, TEST_DIR, read_expected

# Measures of the all_trec set computed by other specs (infAP, G, ..., gain maps such as
# ndcg_1=3,2=9: tests of their own), or text (runid, relstring_20): not checked here.
OTHERS = ("runid", "relstring", "infAP", "G", "binG", "Rndcg", "ndcg_rel", "rbp", "rbp_resid")


def ours(measure: str) -> bool:
    return measure.split("_")[0] not in OTHERS and measure not in OTHERS and "=" not in measure
FILES = ["out.test.aq", "out.test.aqc", "out.test.aqcM", "out.test.aql", "out.test.meas_params"]
TOL = 5e-5 + 1e-12


def trec_order(run: pl.DataFrame) -> pl.DataFrame:
    """Position by trec_eval's order: score descending, ties by docno descending (byte-wise)."""
    return run.sort(["query", "score", "item"], descending=[False, True, True]).with_columns(
        position=pl.int_range(1, pl.len() + 1).over("query")
    )


def spec_of(name: str, params: list[str]) -> rp.measures.Measure:
    """The spec of one printed measure name under trec_eval's options."""
    spec = parse(name)
    if "-l2" in params and "rel" in spec.PARAMS:
        spec = spec.replace(rel=2)
    return spec


CASES = []
for _file in FILES:
    _params, _qrels, _run = COMMANDS[_file]
    for _engine in ("polars", "duckdb"):
        CASES.append(pytest.param(_file, _engine, id=f"{_file}-{_engine}"))


@pytest.fixture(scope="module")
def computed():
    cache: dict[tuple[str, str], tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, dict]] = {}

    def compute(name: str, engine: str):
        if (name, engine) in cache:
            return cache[(name, engine)]
        params, qrels_file, run_file = COMMANDS[name]
        expected = read_expected(name)
        expected = expected.filter(pl.col("measure").is_in([m for m in expected["measure"].unique() if ours(m)]))
        run = trec_order(read_trec_run(TEST_DIR / run_file))
        if "-M100" in params:
            run = run.filter(pl.col("position") <= 100)
        qrels = read_trec_qrels(TEST_DIR / qrels_file)
        specs = {}
        for printed in expected["measure"].unique().to_list():
            specs[printed] = spec_of(printed, params)
        missing = "zero" if "-c" in params else "skip"
        kwargs = dict(qrels=qrels, metrics=list(dict.fromkeys(specs.values())), missing=missing, engine=engine)
        per_query = rp.evaluate(run.drop("score"), per_query=True, **kwargs)
        overall = rp.evaluate(run.drop("score"), **kwargs)
        cache[(name, engine)] = (expected, per_query, overall, specs)
        return cache[(name, engine)]

    return compute


@pytest.mark.parametrize(("name", "engine"), CASES)
def test_matches_trec_eval_expected_file(computed, name, engine):
    expected, per_query, overall, specs = computed(name, engine)
    assert expected.height > 0
    wrong = []
    for row in expected.iter_rows(named=True):
        spec = specs[row["measure"]]
        if row["query"] == "all":
            got = overall[spec.name].item()
        else:
            got = per_query.filter(pl.col("query") == row["query"])[spec.name]
            assert got.len() == 1, (row["measure"], row["query"])
            got = got.item()
        if abs(got - row["value"]) > TOL:
            wrong.append((row["measure"], row["query"], row["text"], got))
    assert not wrong, wrong


def test_every_printed_measure_we_own_is_checked():
    """The files name each measure of ours (the cutoffs and levels of all_trec's defaults)."""
    names = set()
    for name in FILES:
        names |= set(read_expected(name)["measure"].to_list())
    owned = {parse(n).NAME for n in names if ours(n)}
    assert owned >= {
        "num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret", "ap", "gm_map", "rprec", "bpref",
        "gm_bpref", "rr", "iprec", "p", "r", "utility", "11pt_avg", "ndcg", "success", "set_p", "set_r", "set_f",
        "set_ap", "unj",
    }
