"""An adversarial pass over the click family, position_bias and counterfactual (November 2026):
inputs a real pipeline produces, each against an estimator written out here in plain Python from
its published definition, or engine against engine (Polars, DuckDB, the SQL of
counterfactual_sql run in DuckDB).  Every test here failed before its fix."""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest

import rank_polars as rp
from rank_polars.clicks.counterfactual import counterfactual, counterfactual_sql

ENGINES = ("polars", "duckdb")


def quiet(**kwargs: Any) -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # coverage and low-support warnings: expected on tiny logs
        return counterfactual(**kwargs)


def sql_estimates(metrics: list[str], tables: dict[str, pl.DataFrame], **kwargs: Any) -> pl.DataFrame:
    con = duckdb.connect()
    for name, frame in tables.items():
        con.register(name, frame)
    return con.sql(counterfactual_sql(metrics, **kwargs)).pl()


def ips(log: list[dict[str, Any]], ranks: dict[str, dict[str, int]], theta: dict[int, float], kind: str,
        k: int | None, keys: tuple[str, ...] = ("query",)) -> float:
    """Δ_IPS (Joachims, Swaminathan & Schnabel, WSDM 2017, eq. 5) averaged over the logged rankings:
    each click weighted by λ(its rank in the candidate) / θ(its logged position).  λ as in
    docs/counterfactual.md: dcg 1/log2(r+1); clicks θ(r); ctr θ(r) / the candidate's rows in its
    top k (a CTR is clicks over the rows shown, evaluate's ``ctr@k``: a ranking whose positions
    have gaps shows fewer than k rows in its top k)."""
    rankings = {tuple(row[c] for c in keys) for row in log}
    total = 0.0
    for row in log:
        r = ranks.get(row["query"], {}).get(row["item"])
        if not row["click"] or r is None or (k is not None and r > k):
            continue
        shown = sum(1 for rank in ranks[row["query"]].values() if k is None or rank <= k)
        lam = {"dcg": 1.0 / math.log2(r + 1), "clicks": theta[r], "ctr": theta[r] / shown}[kind]
        total += lam * row["click"] / theta[row["position"]]
    return total / len(rankings)


# -- clicks given as judgments ----------------------------------------------------------------------
# The click metrics read the run's click column whatever qrels= say (tests/test_clicks_one_reading.py):
# a click table given as qrels is refused with the join that makes it the log's column, and judgments
# beside a log with its clicks choose the evaluated queries (by the one id rule), never the clicks.
@pytest.mark.parametrize("engine", [*ENGINES, "spark", "to_sql"])
def test_clicks_given_as_qrels_are_refused_and_a_pair_judged_twice_changes_no_click(
        engine: str, request: pytest.FixtureRequest) -> None:
    """A click table given as qrels with one (query, item) twice was joined to the shown rows as it
    came: the shown row counted as two impressions (ctr@2 of arm a 0.833 instead of 0.75); then
    refused, with the clicks still read off the qrels.  Now the clicks are the log's: a click
    table as qrels is refused in every engine (to_sql reads the table's click column, which the
    database finds missing), and judgments with a pair twice beside a log carrying its clicks
    leave every click value as the log alone gives it."""
    log = pl.DataFrame({"model": ["a", "a", "a", "b", "b"], "query": ["q1", "q1", "q2", "q1", "q2"],
                        "item": ["x", "y", "x", "x", "x"], "position": [1, 2, 1, 1, 1]})
    clicks = pl.DataFrame({"query": ["q1", "q2", "q1"], "item": ["y", "x", "y"], "relevance": [1, 1, 0]})
    clicked = log.join(clicks.unique(["query", "item"], keep="first"), on=["query", "item"], how="left").select(
        "model", "query", "item", "position", click=pl.col("relevance").fill_null(0))
    names = ["ctr@2", "impressions@2", "click_rr"]
    want = rp.evaluate(clicked, names, by="model")
    if engine == "to_sql":
        con = duckdb.connect()
        con.register("logs", log.to_arrow())
        con.register("qrels", clicks.to_arrow())
        with pytest.raises(duckdb.BinderException, match='"click" not found'):
            con.sql(rp.to_sql(names, table="logs", qrels="qrels", by="model")).fetchall()
        con.register("logs", clicked.to_arrow())
        got = con.sql(rp.to_sql(names, table="logs", qrels="qrels", by="model")).pl()
        assert got.sort("model").rows() == want.sort("model").rows()
        return
    spark = {"spark": request.getfixturevalue("spark_session")} if engine == "spark" else {}
    with pytest.raises(rp.RankPolarsError, match=re.escape(
            "run: no click column 'click' for ctr@2 (the click metrics read the run's clicks, whatever qrels= say); "
            "clicks given as qrels= are not read as clicks: join them to the log as its 'click' column (0 where "
            "absent)")):
        rp.evaluate(log, names, qrels=clicks, by="model", engine=engine, **spark)
    got = rp.evaluate(clicked, names, qrels=clicks, by="model", engine=engine, **spark)
    assert got.sort("model").rows() == want.sort("model").rows()


@pytest.mark.parametrize("engine", ENGINES)
def test_judgments_beside_a_click_log_match_ids_by_the_one_rule(engine: str) -> None:
    """Integer ids in the log, text ids in the judgments: 7 is "7" and "008" is not 8
    (docs/data-model.md), for the queries the click metrics are evaluated on as for the others;
    the clicks are the log's.  The reference reads the definitions of docs/clicks.md."""
    log = pl.DataFrame({"model": ["a", "a", "a", "b", "b", "b"], "query": [7, 7, 8, 7, 8, 9], "item": [1, 2, 1, 1, 1, 1],
                        "position": [1, 2, 1, 1, 1, 1], "click": [0, 1, 1, 0, 0, 1]})
    qrels = pl.DataFrame({"query": ["7", "008", "8"], "item": ["2", "1", "01"], "relevance": [1, 1, 1]})
    judged = {"7", "8"}  # "008" judges no logged query: it is not 8; query 9 is not judged
    per: dict[str, list[tuple[float, float, float]]] = {}
    for (model, query), group in log.group_by("model", "query"):
        if str(query) not in judged:
            continue
        shown = sorted(zip(group["position"], group["click"]))
        top = [c for p, c in shown if p <= 2]
        first = next((p for p, c in shown if c), None)
        per.setdefault(str(model), []).append((sum(top) / len(top), float(sum(top)), 1 / first if first else 0.0))
    got = rp.evaluate(log, ["ctr@2", "clicks@2", "click_rr"], qrels=qrels, by="model", engine=engine,
                      missing="skip").sort("model")
    assert got["queries"].to_list() == [2, 2]
    for row in got.iter_rows(named=True):
        values = per[row["model"]]
        for j, name in enumerate(["ctr@2", "clicks@2", "click_rr"]):
            assert row[name] == pytest.approx(sum(v[j] for v in values) / len(values), rel=1e-12), (row, name)


# -- counterfactual ---------------------------------------------------------------------------------
GAPPED_LOG = pl.DataFrame({"query": ["a", "a", "b", "b"], "item": ["x", "y", "x", "y"], "position": [1, 2, 1, 2],
                           "click": [1, 1, 0, 1]})
# the candidate's positions have gaps (a re-ranker that dropped items, a list filtered afterwards)
GAPPED_CAND = pl.DataFrame({"query": ["a", "a", "a", "b", "b"], "item": ["y", "x", "z", "x", "y"],
                            "position": [1, 5, 9, 1, 3]})
THETA = {p: 1.0 / p for p in range(1, 11)}
EXAM = pl.DataFrame({"position": list(THETA), "examination": list(THETA.values())})


@pytest.mark.parametrize("companions", [[], ["dcg@10"], ["p"]])
def test_ctr_at_k_of_a_gapped_candidate_is_its_ctr_whatever_else_is_asked(companions: list[str]) -> None:
    """ctr@5 divided by min(5, n) with n the candidate's rows up to the deepest cutoff of the
    call: 2 rows of query a are in its top 5, but with dcg@10 beside it n was 3 (0.533 instead of
    0.717), and counterfactual_sql always read the whole list."""
    rows = list(GAPPED_LOG.iter_rows(named=True))
    ranks = {q: dict(zip(g["item"], g["position"])) for (q,), g in GAPPED_CAND.group_by("query")}
    want = {"ctr@5": ips(rows, ranks, THETA, "ctr", 5), "clicks@5": ips(rows, ranks, THETA, "clicks", 5)}
    metrics = ["ctr@5", "clicks@5", *companions]
    for engine in ENGINES:
        got = quiet(log=GAPPED_LOG, candidate=GAPPED_CAND, metrics=metrics, examination=EXAM, min_clicks=0,
                    engine=engine)
        values = dict(zip(got["metric"], got["estimate"]))
        for m, v in want.items():
            assert values[m] == pytest.approx(v, rel=1e-12), (engine, m)
    got_sql = sql_estimates(metrics, {"log": GAPPED_LOG, "candidate": GAPPED_CAND, "examination": EXAM})
    values = dict(zip(got_sql["metric"], got_sql["estimate"]))
    for m, v in want.items():
        assert values[m] == pytest.approx(v, rel=1e-12), ("sql", m)


def test_counterfactual_sql_keeps_a_null_by_group() -> None:
    """A null arm is a group like any other (as in evaluate, and in both engines of
    counterfactual); counterfactual_sql joined the totals to the counts USING the by columns,
    which dropped it."""
    log = GAPPED_LOG.with_columns(arm=pl.Series(["A", "A", None, None]))
    cand = GAPPED_CAND.filter(pl.col("position") <= 2)
    ranks = {q: dict(zip(g["item"], g["position"])) for (q,), g in cand.group_by("query")}
    want = {arm: ips([r for r in log.iter_rows(named=True) if r["arm"] == arm], ranks, THETA, "dcg", 2)
            for arm in ("A", None)}
    got = {engine: quiet(log=log, candidate=cand, metrics="dcg@2", examination=EXAM, by="arm", min_clicks=0,
                         engine=engine) for engine in ENGINES}
    got["sql"] = sql_estimates(["dcg@2"], {"log": log, "candidate": cand, "examination": EXAM}, by="arm")
    for name, frame in got.items():
        values = dict(zip(frame["arm"], frame["estimate"]))
        assert values.keys() == want.keys(), name
        for arm, v in want.items():
            assert values[arm] == pytest.approx(v, rel=1e-12), (name, arm)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_null_session_is_refused_not_merged_into_one_ranking(engine: str) -> None:
    """Two sessions of query a with a null session id were read as one logged ranking: the mean
    over rankings had one ranking too few (2.63 instead of the mean over the two sessions)."""
    log = pl.DataFrame({"query": ["a"] * 4 + ["b"] * 2, "item": ["x", "y", "x", "y", "x", "y"],
                        "position": [1, 2, 1, 2, 1, 2], "click": [1, 0, 0, 1, 0, 1],
                        "session": [None, None, None, None, 3, 3]}, schema_overrides={"session": pl.Int64})
    with pytest.raises(rp.DataError, match=r"null query, item or session \('query', 'item', 'session'\): 4 "
                                           r"\(queries 'a'\)"):
        counterfactual(log, GAPPED_CAND, "dcg@2", examination=EXAM, session="session", engine=engine, min_clicks=0)


@pytest.mark.parametrize("engine", ENGINES)
def test_an_examination_curve_whose_by_column_has_another_type_is_a_clear_error(engine: str) -> None:
    """An examination frame per arm whose arm column is Categorical (or integers) where the log's
    is text raised Polars' own SchemaError about a join."""
    log = GAPPED_LOG.with_columns(arm=pl.lit("A"))
    exam = EXAM.with_columns(arm=pl.lit("A", pl.Categorical))
    with pytest.raises(rp.RankPolarsError, match=r"the examination frame's 'arm' is Categorical and the log's is "
                                                 r"String: give both the same type"):
        counterfactual(log, GAPPED_CAND, "dcg@2", examination=exam, by="arm", engine=engine, min_clicks=0)


def test_a_parquet_log_is_read_and_a_truncated_one_is_named(tmp_path: Path) -> None:
    """A Parquet path was read by pl.DataFrame as a one-column frame of its text: 'the log has no
    column ... (it has 'column_0')'.  Now read as position_bias reads one; a file cut short is named."""
    path = tmp_path / "log.parquet"
    GAPPED_LOG.write_parquet(path)
    want = quiet(log=GAPPED_LOG, candidate=GAPPED_CAND, metrics="dcg@5", examination=EXAM, min_clicks=0)
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(path.read_bytes()[:-20])
    for engine in ENGINES:
        got = quiet(log=str(path), candidate=GAPPED_CAND, metrics="dcg@5", examination=EXAM, min_clicks=0,
                    engine=engine)
        assert got["estimate"].to_list() == pytest.approx(want["estimate"].to_list(), rel=1e-12)
        with pytest.raises(rp.RankPolarsError, match=r"cut\.parquet is a truncated Parquet file"):
            counterfactual(str(cut), GAPPED_CAND, "dcg@5", examination=EXAM, engine=engine)


def test_a_categorical_arm_keeps_its_type_in_duckdb_so_its_curve_joins_the_log() -> None:
    """position_bias and counterfactual gave a Categorical by column back as String from DuckDB
    (as Polars keeps it), so a curve estimated per arm with engine='duckdb' could not be joined
    to the log it came from: the chain broke on the very input it was made of."""
    log = pl.DataFrame({"arm": ["A"] * 4 + ["B"] * 4, "query": ["a"] * 8, "session": [0, 0, 1, 1] * 2,
                        "item": ["x", "y", "y", "x"] * 2, "position": [1, 2] * 4, "click": [1, 1, 1, 0, 1, 0, 0, 1]}
                       ).with_columns(pl.col("arm").cast(pl.Categorical))
    cand = pl.DataFrame({"query": ["a", "a"], "item": ["y", "x"], "position": [1, 2]})
    results = {}
    for engine in ENGINES:
        curve = rp.position_bias(log, "pivot", by="arm", engine=engine)
        assert curve.schema["arm"] == log.schema["arm"], engine
        got = quiet(log=log, candidate=cand, metrics="dcg@2", examination=curve, by="arm", session="session",
                    min_clicks=0, engine=engine)
        assert got.schema["arm"] == log.schema["arm"], engine
        results[engine] = got
    # the pivot per arm (rates at 1 and at 2 of a/x and a/y): A (1, 1) and (0, 1), B (1, 0) and (1, 0)
    theta = {"A": {1: 1.0, 2: 0.5}, "B": {1: 1.0, 2: 1.0}}
    ranks = {q: dict(zip(g["item"], g["position"])) for (q,), g in cand.group_by("query")}
    for arm, curve in theta.items():
        rows = [r for r in log.iter_rows(named=True) if r["arm"] == arm]
        for engine, got in results.items():
            value = got.filter(pl.col("arm").cast(pl.String) == arm)["estimate"].item()
            want = ips(rows, ranks, curve, "dcg", 2, keys=("query", "session"))
            assert value == pytest.approx(want, rel=1e-12), (engine, arm)
