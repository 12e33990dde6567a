"""Compatibility (``compat``) against ir_measures' own Compat provider (Clarke, Vtyurina and
Smucker's rank-biased overlap with the ideal ranking), per query to 1e-9.

The provider is called by name (``ir_measures.providers.registry["compat"]``), on generated runs
and judgments: several versions and queries, distinct positive scores (the provider breaks ties
in score by docno ascending where the engines follow trec_eval, item id descending; and it
gives an unretrieved ideal item the score 0.0, which a negative score would put below it:
``docs/conventions.md``), grades 0-3, unjudged retrieved items, unretrieved relevant ones, a
query without a relevant judgment.  Each is compared in the Polars and DuckDB engines and in
``to_sql``'s statement run by DuckDB; the run's own labels (no qrels) against the provider given
those labels as its judgments; Spark, lazy Parquet inputs and the refusals on fixed cases.
"""

from __future__ import annotations

import warnings

import duckdb
import ir_measures
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rank_polars as rp
from rank_polars.errors import MetricNameError
from rank_polars.measures import parse

from .test_spark import spark  # noqa: F401  (the module's session fixture)

PROVIDER = ir_measures.providers.registry["compat"]

# ours -> ir_measures' measure
NAMES = {
    "compat": ir_measures.Compat(),
    "Compat(p=0.8)": ir_measures.Compat(p=0.8),
    "compat(p=0.5, normalize=false)": ir_measures.Compat(p=0.5, normalize=False),
    "compat(p=0.99)": ir_measures.Compat(p=0.99),
    "compat(p=0.9, normalize=false)": ir_measures.Compat(p=0.9, normalize=False),
}


def reference(run: pl.DataFrame, qrels: pl.DataFrame) -> dict[tuple[str, str], dict[str, float]]:
    """``{(model, query): {our name: the provider's value}}``, one provider call per model."""
    judged = [ir_measures.Qrel(q, d, int(g)) for q, d, g in qrels.select("query", "item", "relevance").iter_rows()]
    out: dict[tuple[str, str], dict[str, float]] = {}
    by_measure = {str(m): name for name, m in NAMES.items()}
    for (model,), rows in run.partition_by("model", as_dict=True).items():
        scored = [ir_measures.ScoredDoc(q, d, s) for q, d, s in rows.select("query", "item", "score").iter_rows()]
        for metric in PROVIDER.iter_calc(list(NAMES.values()), judged, scored):
            out.setdefault((model, metric.query_id), {})[by_measure[str(metric.measure)]] = metric.value
    return out


def own_labels(run: pl.DataFrame, qrels: pl.DataFrame) -> dict[tuple[str, str], dict[str, float]]:
    """The provider's values when each version's shown items, labelled with the judgments' grades
    (0 unjudged), are all its judgments (the ideal: that version's own list sorted by label)."""
    labelled = run.join(qrels, on=["query", "item"], how="left").with_columns(pl.col("relevance").fill_null(0))
    want: dict = {}
    for rows in labelled.partition_by("model"):
        want |= reference(rows, rows.select("query", "item", "relevance"))
    return want


def table_values(table: pl.DataFrame) -> dict[tuple[str, str], dict[str, float]]:
    return {(row["model"], row["query"]): {name: row[name] for name in NAMES} for row in table.iter_rows(named=True)}


def ours(run: pl.DataFrame, qrels: pl.DataFrame | None, **kwargs) -> dict[str, dict]:
    got = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # queries of the run without judgments are reported
        for engine in ("polars", "duckdb"):
            table = rp.evaluate(run, list(NAMES), qrels=qrels, by="model", per_query=True, engine=engine, **kwargs)
            got[engine] = table_values(table)
    con = duckdb.connect()
    con.register("run", run.to_arrow())
    if qrels is not None:
        con.register("qrels", qrels.to_arrow())
    order = "score" if "score" in run.columns else "position"
    sql = rp.to_sql(list(NAMES), table="run", qrels="qrels" if qrels is not None else None, by="model",
                    per_query=True, order=order)
    got["to_sql"] = table_values(pl.from_arrow(con.sql(sql).to_arrow_table()))
    return got


def assert_close(got: dict, want: dict, where: str = "") -> None:
    assert set(got) == set(want), where
    for key, values in want.items():
        for name, value in values.items():
            assert got[key][name] == pytest.approx(value, abs=1e-9, rel=0), (where, key, name, got[key][name], value)


grades = st.sampled_from([None, None, 0, 0, 1, 2, 3])  # None: unjudged


@st.composite
def collections(draw) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Two versions' runs (distinct positive scores) and graded judgments over a few queries; the
    query ``none`` has judgments but no relevant one."""
    runs, judged = [], []
    for q in [f"q{i}" for i in range(draw(st.integers(1, 3)))] + ["none"]:
        pool = [f"d{i}" for i in range(draw(st.integers(1, 9)))]
        for item in pool:
            grade = draw(grades)
            if grade is not None:
                judged.append((q, item, 0 if q == "none" else grade))
        if q == "none":
            judged.append((q, "d0", 0))
        for model in ("a", "b"):
            shown = draw(st.permutations(pool))[: draw(st.integers(0, len(pool)))]
            # distinct scores, not in id order: the order the permutation drew
            runs += [(model, q, item, float(len(shown) - i) + 0.5) for i, item in enumerate(shown)]
    run = pl.DataFrame(runs, schema={"model": pl.String, "query": pl.String, "item": pl.String, "score": pl.Float64},
                       orient="row")
    qrels = pl.DataFrame(judged, schema={"query": pl.String, "item": pl.String, "relevance": pl.Int64}, orient="row")
    return run, qrels.unique(["query", "item"], keep="first", maintain_order=True)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections())
def test_compat_equals_ir_measures_provider_per_query(data):
    run, qrels = data
    want = reference(run, qrels)
    for engine, got in ours(run, qrels).items():
        assert_close(got, want, engine)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections())
def test_compat_without_qrels_reads_the_runs_labels_as_the_judgments(data):
    """Without qrels, each ranking's own labels are its judgments: the provider given those labels
    (the shown items' grades, nothing unretrieved) as the qrels of that ranking."""
    run, qrels = data
    labelled = run.join(qrels, on=["query", "item"], how="left").with_columns(pl.col("relevance").fill_null(0))
    want = own_labels(run, qrels)
    for engine, got in ours(labelled, None).items():
        assert_close(got, want, engine)


def test_compat_hand_case_from_the_definition():
    """ranking a, b, c; judgments a: 1, b: 2, x: 1, so the ideal is b, a, x (a before x: retrieved)
    and D = 3.  Overlaps at depths 1..3: 0, 2/2, 2/3; the ideal's with itself 1, 1, 1.
    p = 0.95: (0.95 + 0.95^2 * 2/3) / (1 + 0.95 + 0.95^2); p = 0.5 unnormalised:
    (0.5 + 0.25 * 2/3) / (1 + 0.5 + 0.25) = 8/21."""
    run = pl.DataFrame({"model": ["a"] * 3, "query": ["q"] * 3, "item": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    qrels = pl.DataFrame({"query": ["q"] * 3, "item": ["a", "b", "x"], "relevance": [1, 2, 1]})
    literal = {"compat": (0.95 + 0.95 ** 2 * 2 / 3) / (1 + 0.95 + 0.95 ** 2), "compat(p=0.5, normalize=false)": 8 / 21}
    provider = reference(run, qrels)[("a", "q")]
    assert provider["compat"] == pytest.approx(literal["compat"], abs=1e-12)
    assert provider["compat(p=0.5, normalize=false)"] == pytest.approx(8 / 21, abs=1e-12)
    for got in ours(run, qrels).values():
        for name, value in literal.items():
            assert got[("a", "q")][name] == pytest.approx(value, abs=1e-12)


def test_compat_reads_lazy_parquet_and_positions(tmp_path):
    """Parquet paths (scanned lazily by Polars, read by DuckDB) and a run ordered by position:
    the provider's values; a judged query the version did not rank scores 0 in both (ir_measures
    fills in the queries of its judgments that a run lacks, as ``missing="zero"``)."""
    run = pl.DataFrame({"model": ["a"] * 5 + ["b"] * 2, "query": ["1", "1", "1", "2", "2", "1", "1"],
                        "item": ["x", "y", "z", "u", "v", "z", "x"], "position": [1, 2, 3, 1, 2, 1, 2]})
    qrels = pl.DataFrame({"query": ["1", "1", "1", "2", "2"], "item": ["x", "z", "w", "v", "t"],
                          "relevance": [2, 1, 3, 1, 0]})
    run.write_parquet(tmp_path / "run.parquet")
    qrels.write_parquet(tmp_path / "qrels.parquet")
    scored = run.with_columns((10.0 - pl.col("position")).alias("score"))
    want = reference(scored, qrels)
    for engine in ("polars", "duckdb"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table = rp.evaluate(str(tmp_path / "run.parquet"), list(NAMES), qrels=str(tmp_path / "qrels.parquet"),
                                by="model", per_query=True, engine=engine)
        assert_close(table_values(table), want, engine)
    assert want[("b", "2")] == {name: 0.0 for name in NAMES}  # judged, not ranked by b: 0 in both


def test_compat_in_spark_equals_the_provider(spark):  # noqa: F811
    run = pl.DataFrame({"model": ["a"] * 5 + ["b"] * 3, "query": ["1", "1", "1", "2", "2", "1", "1", "2"],
                        "item": ["x", "y", "z", "u", "v", "z", "x", "t"], "score": [5.0, 4.0, 3.0, 2.0, 1.0, 9.0, 8.0, 1.0]})
    qrels = pl.DataFrame({"query": ["1", "1", "1", "2", "2", "2"], "item": ["x", "z", "w", "v", "t", "u"],
                          "relevance": [2, 1, 3, 1, 2, 0]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = rp.evaluate(run, list(NAMES), qrels=qrels, by="model", per_query=True, engine="spark", spark=spark)
        unlabelled = rp.evaluate(run.join(qrels, on=["query", "item"], how="left").fill_null(0), ["compat"],
                                 by="model", per_query=True, engine="spark", spark=spark)
    assert_close(table_values(table), reference(run, qrels))
    want = {key: values["compat"] for key, values in own_labels(run, qrels).items()}
    assert {(r["model"], r["query"]): r["compat"] for r in unlabelled.iter_rows(named=True)} == pytest.approx(want, abs=1e-9)


@pytest.mark.parametrize("name", ["compat(p=0)", "compat(p=1)", "compat(p=1.5)", "compat(p=-0.2)", "Compat(p=nan)"])
def test_compat_refuses_a_persistence_outside_0_1(name):
    with pytest.raises(MetricNameError, match=r"compat: parameter p"):
        parse(name)


def test_compat_refuses_a_cutoff_and_parses_ir_measures_names():
    with pytest.raises(MetricNameError, match=r"compat takes no cutoff \(@k\)"):
        parse("compat@10")
    with pytest.raises(MetricNameError, match=r"normalize"):
        parse("compat(normalize=maybe)")
    assert parse("Compat(p=0.8,normalize=False)") == parse("compat(p=0.8, normalize=false)")
    assert parse(str(ir_measures.Compat(p=0.8))) == parse("compat(p=0.8)")
    assert repr(parse("Compat(normalize=True, p=0.95)")) == "compat"
