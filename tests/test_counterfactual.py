"""rp.counterfactual against its references (tests/counterfactual_reference.py): the Open Bandit
Pipeline's slate estimators run as they are, and position-based IPS written from Joachims et al.
(WSDM 2017) as plain loops; the two engines and the SQL of counterfactual_sql against each other."""

from __future__ import annotations

import math
import warnings
from typing import Any

import duckdb
import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rank_polars as rp
from rank_polars.clicks.counterfactual import LowSupportWarning, counterfactual, counterfactual_sql

from .counterfactual_reference import ips_reference, obp_value

SETTINGS = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLATES = ["standard_ips", "independent_ips", "rips", "sn_standard_ips", "sn_independent_ips", "sn_rips"]


def quiet(**kwargs: Any) -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return counterfactual(**kwargs)


# -- slate estimators against OBP ---------------------------------------------------------------
@st.composite
def slate_logs(draw: st.DrawFn, stochastic: bool) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Logged slates of one length L (OBP's len_list), several sessions per query, clicks 0/1
    (or counts), the logging policy's three propensities (joint constant per slate, cascade
    non-increasing), and a deterministic candidate (a ranking per query) or the evaluation
    policy's propensities."""
    length = draw(st.integers(1, 4))
    n_queries = draw(st.integers(1, 3))
    pool = {q: [f"d{j}" for j in range(draw(st.integers(length, length + 2)))] for q in range(n_queries)}
    unit = st.floats(0.05, 1.0)
    rows, cand = [], []
    for q, items in pool.items():
        # the candidate's ranking: often the logged one, so that the 1/0 propensities are not all 0
        cand_order = draw(st.permutations(items))[:length]
        cand += [{"query": f"q{q}", "item": d, "position": r} for r, d in enumerate(cand_order, 1)]
        for s in range(draw(st.integers(1, 3))):
            order = cand_order if draw(st.booleans()) else draw(st.permutations(items))[:length]
            cascade = np.cumprod([draw(unit) for _ in range(length)])
            e_cascade = np.cumprod([draw(st.floats(0.0, 1.0)) for _ in range(length)])
            joint, e_joint = float(cascade[-1]), float(e_cascade[-1])
            for p, d in enumerate(order, 1):
                rows.append({"query": f"q{q}", "session": s, "item": d, "position": p,
                             "click": draw(st.sampled_from([0, 0, 1, 2])),
                             "pscore": joint, "pscore_item_position": draw(unit),
                             "pscore_cascade": float(cascade[p - 1]),
                             "evaluation_policy_pscore": e_joint,
                             "evaluation_policy_pscore_item_position": draw(st.floats(0.0, 1.0)),
                             "evaluation_policy_pscore_cascade": float(e_cascade[p - 1])})
    log = pl.DataFrame(rows)
    if not stochastic:
        log = log.drop(pl.selectors.starts_with("evaluation_policy"))
    return log, pl.DataFrame(cand)


def deterministic_propensities(log: pl.DataFrame, cand: pl.DataFrame) -> dict[str, np.ndarray]:
    """A deterministic candidate's evaluation propensities, from the definitions (plain loops):
    item-position: 1 when it shows the logged item at that position; cascade: at every
    position up to it; joint: at every logged position of the slate."""
    at = {(r["query"], r["position"]): r["item"] for r in cand.iter_rows(named=True)}
    rows = log.iter_rows(named=True)
    match = [at.get((r["query"], r["position"])) == r["item"] for r in rows]
    keys = list(zip(log["query"], log["session"]))
    item_pos = np.array(match, float)
    cascade, joint = np.zeros(len(keys)), np.zeros(len(keys))
    for i, key in enumerate(keys):
        same = [j for j, other in enumerate(keys) if other == key]
        joint[i] = float(all(match[j] for j in same))
        cascade[i] = float(all(match[j] for j in same if log["position"][j] <= log["position"][i]))
    return {"pscore": joint, "pscore_item_position": item_pos, "pscore_cascade": cascade}


def obp_reference(log: pl.DataFrame, estimator: str, evaluation: dict[str, np.ndarray] | None,
                  clip: float | None) -> float:
    from .counterfactual_reference import OBP_CLASSES

    _, b_col, e_col = OBP_CLASSES[estimator]
    slate = log.select(pl.struct("query", "session").rank("dense") - 1)[:, 0].to_numpy().astype(int)
    b = log[b_col].to_numpy()
    e = evaluation[b_col] if evaluation is not None else log[e_col].to_numpy()
    if clip is not None:
        # min(π_e / π_b, M) is OBP's weight with π_e replaced by min(π_e, M π_b), which keeps the
        # propensities' structure (constant per slate, non-increasing cascade)
        e = np.minimum(e, clip * b)
    length = int(log["position"].max())
    return obp_value(estimator, slate, log["position"].to_numpy().astype(int) - 1, log["click"].to_numpy(),
                     b, e, length)


@SETTINGS
@given(data=slate_logs(stochastic=False), estimator=st.sampled_from(SLATES),
       clip=st.sampled_from([None, None, 2.0, 10.0]))
def test_slate_deterministic_candidate_equals_obp(data: tuple[pl.DataFrame, pl.DataFrame], estimator: str,
                                                  clip: float | None) -> None:
    log, cand = data
    expected = obp_reference(log, estimator, deterministic_propensities(log, cand), clip)
    for engine in ("polars", "duckdb"):
        got = quiet(log=log, candidate=cand, estimator=estimator, session="session", clip=clip, engine=engine)
        assert got["estimate"][0] == pytest.approx(expected, rel=1e-9, abs=1e-12), engine
        assert got["logged_clicks"][0] == log["click"].sum()
    assert sql_estimate(log, cand, estimator=estimator, session="session", clip=clip) == pytest.approx(
        expected, rel=1e-9, abs=1e-12)


@SETTINGS
@given(data=slate_logs(stochastic=True), estimator=st.sampled_from(SLATES), clip=st.sampled_from([None, 3.0]))
def test_slate_stochastic_candidate_equals_obp(data: tuple[pl.DataFrame, pl.DataFrame], estimator: str,
                                               clip: float | None) -> None:
    log, _ = data
    expected = obp_reference(log, estimator, None, clip)
    for engine in ("polars", "duckdb"):
        got = quiet(log=log, candidate=None, estimator=estimator, session="session", clip=clip, engine=engine)
        assert got["estimate"][0] == pytest.approx(expected, rel=1e-9, abs=1e-12), engine
    assert sql_estimate(log, None, estimator=estimator, session="session", clip=clip, deterministic=False
                        ) == pytest.approx(expected, rel=1e-9, abs=1e-12)


def sql_estimate(log: pl.DataFrame, cand: pl.DataFrame | None, **kwargs: Any) -> float:
    """counterfactual_sql run by DuckDB over the user's tables (the IPS sums where the log lives)."""
    con = duckdb.connect()
    con.register("log", log)
    if cand is not None:
        con.register("candidate", cand)
    return float(con.sql(counterfactual_sql(**kwargs)).pl()["estimate"][0])


# -- position-based IPS against the formula -------------------------------------------------------
METRICS = {"cg@3": ("cg", 3, 0.8), "dcg@2": ("dcg", 2, 0.8), "clicks@2": ("clicks", 2, 0.8), "dcg": ("dcg", None, 0.8), "p@3": ("p", 3, 0.8),
           "p": ("p", None, 0.8), "rbp(p=0.5)": ("rbp", None, 0.5), "rbp@2": ("rbp", 2, 0.8),
           "clicks@3": ("clicks", 3, 0.8), "ctr@2": ("ctr", 2, 0.8), "ctr": ("ctr", None, 0.8)}


@st.composite
def click_logs(draw: st.DrawFn) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """1-5 arms, 1-4 queries, rankings of 1-12 items (deep positions), zero-click rankings, ties
    of scores in the candidate, items the candidate lacks and candidate items never logged."""
    rows = []
    arms = [f"arm{a}" for a in range(draw(st.integers(1, 5)))]
    queries = [f"q{i}" for i in range(draw(st.integers(1, 4)))]
    depth = draw(st.integers(3, 12))
    for arm in arms:
        for q in queries:
            if draw(st.integers(0, 4)) == 0:
                continue  # this arm never showed this query
            items = draw(st.permutations([f"d{j}" for j in range(depth)]))[: draw(st.integers(1, depth))]
            for p, d in enumerate(items, 1):
                rows.append({"arm": arm, "query": q, "item": d, "position": p, "click": draw(st.integers(0, 2))})
    if not rows:
        rows.append({"arm": "arm0", "query": "q0", "item": "d0", "position": 1, "click": 1})
    cand = []
    for q in queries:
        for d in draw(st.permutations([f"d{j}" for j in range(depth + 1)]))[: draw(st.integers(1, depth + 1))]:
            cand.append({"query": q, "item": d, "score": float(draw(st.integers(0, 3)))})
    theta = sorted((draw(st.floats(0.05, 1.0)) for _ in range(depth + 1)), reverse=True)
    exam = pl.DataFrame({"position": list(range(1, depth + 2)), "examination": [1.0, *theta[1:]]})
    return pl.DataFrame(rows), pl.DataFrame(cand), exam


def ranks_by_score(cand: pl.DataFrame) -> dict[Any, dict[Any, int]]:
    """Highest score first, ties by item ascending (plain sort per query)."""
    out: dict[Any, dict[Any, int]] = {}
    for q in set(cand["query"]):
        part = sorted((r for r in cand.iter_rows(named=True) if r["query"] == q), key=lambda r: (-r["score"], r["item"]))
        out[q] = {r["item"]: i for i, r in enumerate(part, 1)}
    return out


@SETTINGS
@given(data=click_logs(), clip=st.sampled_from([None, 3.0]), picks=st.sets(st.sampled_from(sorted(METRICS)),
                                                                             min_size=1, max_size=4))
def test_ips_equals_the_formula_in_both_engines_and_sql(data: tuple[pl.DataFrame, ...], clip: float | None,
                                                        picks: set[str]) -> None:
    log, cand, exam = data
    metrics = sorted(picks)
    ranks = ranks_by_score(cand)
    theta = dict(zip(exam["position"], exam["examination"]))
    results = {engine: quiet(log=log, candidate=cand, metrics=metrics, examination=exam, by="arm", clip=clip,
                             score="score", engine=engine) for engine in ("polars", "duckdb")}
    for arm in sorted(set(log["arm"])):
        rows = [r for r in log.iter_rows(named=True) if r["arm"] == arm]
        for m in metrics:
            expected = ips_reference(rows, ranks, theta, METRICS[m], clip, ("query",))
            for engine, got in results.items():
                value = got.filter((pl.col("arm") == arm) & (pl.col("metric") == m))["estimate"].item()
                assert value == pytest.approx(expected, rel=1e-9, abs=1e-12), (engine, arm, m)
    assert_frame_close(results["polars"], results["duckdb"])
    # the SQL of counterfactual_sql over the user's own tables, run by DuckDB
    con = duckdb.connect()
    con.register("log", log)
    con.register("candidate", cand)
    con.register("examination", exam)
    text = counterfactual_sql(metrics, by="arm", clip=clip, score="score")
    got_sql = con.sql(text).pl()
    both = results["polars"].join(got_sql, on=["arm", "metric"], suffix="_sql")
    assert both.height == results["polars"].height
    assert np.allclose(both["estimate"], both["estimate_sql"], rtol=1e-9, atol=1e-12)


def assert_frame_close(a: pl.DataFrame, b: pl.DataFrame) -> None:
    assert a.columns == b.columns and a.height == b.height
    for col in a.columns:
        if a[col].dtype == pl.Float64:
            assert np.allclose(a[col].to_numpy(), b[col].to_numpy(), rtol=1e-9, atol=1e-12, equal_nan=True), col
        else:
            assert a[col].to_list() == b[col].to_list(), col


def test_snips_rescales_the_click_weights_to_mean_one() -> None:
    """snips = Σ λ c w / (Σ c w / Σ c) / n: the weights of the logged clicks rescaled to mean 1."""
    log = pl.DataFrame({"query": ["a", "a", "b", "b", "c"], "item": ["x", "y", "x", "y", "x"],
                        "position": [1, 2, 1, 2, 1], "click": [1, 1, 0, 1, 0]})
    cand = pl.DataFrame({"query": ["a", "a", "b", "b", "c"], "item": ["y", "x", "y", "x", "x"],
                         "position": [1, 2, 1, 2, 1]})
    exam = pl.DataFrame({"position": [1, 2], "examination": [1.0, 0.25]})
    # clicks: a/x at 1 (w 1, candidate rank 2), a/y at 2 (w 4, rank 1), b/y at 2 (w 4, rank 1)
    lam = {1: 1.0, 2: 0.25}
    weighted = 1 * lam[2] * 1 + 1 * lam[1] * 4 + 1 * lam[1] * 4
    mean_w = (1 + 4 + 4) / 3
    for engine in ("polars", "duckdb"):
        got = quiet(log=log, candidate=cand, metrics=["clicks@2"], examination=exam, estimator="snips", engine=engine)
        assert got["estimate"][0] == pytest.approx(weighted / mean_w / 3, rel=1e-12)
    con = duckdb.connect()
    for name, frame in (("log", log), ("candidate", cand), ("examination", exam)):
        con.register(name, frame)
    got_sql = con.sql(counterfactual_sql(["clicks@2"], estimator="snips")).pl()
    assert got_sql["estimate"][0] == pytest.approx(weighted / mean_w / 3, rel=1e-12)


# -- the bootstrap, support and warnings -----------------------------------------------------------
def test_bootstrap_is_poisson_weights_over_rankings() -> None:
    """The vectorised interval equals resampling rankings by Poisson(1) counts one resample at a
    time (a loop over resamples here, with the generator the function is documented to use)."""
    from rank_polars.clicks.counterfactual import finish

    rng = np.random.default_rng(7)
    n = 40
    log = pl.DataFrame({"query": np.repeat(np.arange(n), 3), "item": np.tile([1, 2, 3], n),
                        "position": np.tile([1, 2, 3], n), "click": rng.integers(0, 2, 3 * n)})
    cand = log.select("query", "item", position=4 - pl.col("position"))
    exam = pl.DataFrame({"position": [1, 2, 3], "examination": [1.0, 0.6, 0.3]})
    got = quiet(log=log, candidate=cand, metrics=["clicks@3"], examination=exam, ci=0.9, n_resamples=200, seed=3)
    theta = {1: 1.0, 2: 0.6, 3: 0.3}
    per_ranking = np.zeros(n)
    for r in log.iter_rows(named=True):
        per_ranking[r["query"]] += r["click"] * theta[4 - r["position"]] / theta[r["position"]]
    gen = np.random.default_rng([3, 0])
    draws = gen.poisson(1.0, size=(200, n))
    ests = np.array([(w * per_ranking).sum() / w.sum() for w in draws if w.sum() > 0])
    low, high = np.quantile(ests, [0.05, 0.95])
    assert finish._STEP >= 200 * n  # one step: the draws are those above
    assert got["ci_low"][0] == pytest.approx(low, rel=1e-9)
    assert got["ci_high"][0] == pytest.approx(high, rel=1e-9)
    assert got["estimate"][0] == pytest.approx(per_ranking.mean(), rel=1e-12)


def test_few_supporting_clicks_warn_with_the_count() -> None:
    log = pl.DataFrame({"query": ["a", "a", "b"], "item": ["x", "y", "x"], "position": [1, 2, 1], "click": [1, 0, 0]})
    cand = pl.DataFrame({"query": ["a", "b"], "item": ["x", "x"], "position": [1, 1]})
    exam = pl.DataFrame({"position": [1, 2], "examination": [1.0, 0.5]})
    with pytest.warns(LowSupportWarning, match=r"1 click of 1 logged, effective sample size 1\.0"):
        counterfactual(log, cand, "p@1", examination=exam)


# -- bad input -------------------------------------------------------------------------------------
BASE_LOG = {"query": ["a", "a", "b", "b"], "item": ["x", "y", "x", "y"], "position": [1, 2, 1, 2],
            "click": [1, 0, 0, 1], "pscore": [0.5, 0.5, 0.2, 0.2], "pscore_item_position": [0.5, 0.4, 0.3, 0.9],
            "pscore_cascade": [0.5, 0.4, 0.3, 0.2]}
CAND = pl.DataFrame({"query": ["a", "a", "b", "b"], "item": ["y", "x", "x", "y"], "position": [1, 2, 1, 2]})
EXAM = pl.DataFrame({"position": [1, 2], "examination": [1.0, 0.5]})


@pytest.mark.parametrize("change, kwargs, message", [
    ({"click": [1, -1, 0, 1]}, {}, r"log rows that have a null, negative or non-integer click count \('click'\): 1 "
                                   r"\(queries 'a'\)"),
    ({"click": [1, 0.5, 0, 1]}, {}, r"non-integer click count"),
    ({"click": [1, None, 0, 1]}, {}, r"null, negative"),
    ({"position": [1, 1, 1, 2], "click": [1, 1, 0, 1]}, {},
     r"the log has 2 rows repeating a key \(clicked rows sharing a position within one logged ranking; queries 'a'\)"),
    ({"position": [1, 1, 1, 2]}, {"estimator": "independent_ips"},
     r"the log has 2 rows repeating a key \(rows sharing a position"),
    ({"position": [1, None, 1, 2]}, {}, r"null or non-positive position"),
    ({"pscore": [0.5, 0.5, 0.0, 0.0]}, {"estimator": "standard_ips"},
     r"log rows that .* logging propensity \('pscore'\) that is null or outside \(0, 1\]: 2 \(queries 'b'\)"),
    ({"pscore_item_position": [0.5, 1.5, 0.3, 0.9]}, {"estimator": "independent_ips"}, r"outside \(0, 1\]"),
    ({"pscore_cascade": [0.5, None, 0.3, 0.2]}, {"estimator": "rips"}, r"null or outside"),
    ({"pscore": [0.5, 0.4, 0.2, 0.2]}, {"estimator": "sn_standard_ips"}, r"not the same for the whole ranking"),
    ({"pscore_cascade": [0.3, 0.4, 0.3, 0.2]}, {"estimator": "rips"}, r"must not increase down a ranking"),
    # found by an adversarial pass (November 2026): a null id made a ranking of its own or lost a
    # click; a float position was truncated or raised Polars' own SchemaError; a text
    # propensity raised Polars' own error
    ({"query": ["a", "a", None, "b"]}, {}, r"log rows that have a null query or item \('query', 'item'\): 1"),
    ({"item": ["x", None, "x", "y"]}, {}, r"null query or item"),
    ({"position": [1.0, 2.0, 1.0, 2.0]}, {}, r"the log's 'position' \(a position\) must be an integer type, got Float64"),
    ({"click": ["1", "0", "0", "1"]}, {}, r"the log's 'click' must be numeric, got String"),
    ({"pscore": ["0.5", "0.5", "0.2", "0.2"]}, {"estimator": "standard_ips"}, r"the log's 'pscore' must be numeric"),
])
def test_bad_log(change: dict[str, Any], kwargs: dict[str, Any], message: str) -> None:
    log = pl.DataFrame({**BASE_LOG, **change}, strict=False)
    args = {"metrics": "dcg@2", "examination": EXAM} if "estimator" not in kwargs else {}
    for engine in ("polars", "duckdb"):
        with pytest.raises(rp.RankPolarsError, match=message):
            counterfactual(log, CAND, engine=engine, min_clicks=0, **args, **kwargs)


@pytest.mark.parametrize("exam, message", [
    (pl.DataFrame({"position": [1, 2], "examination": [1.0, 0.0]}), r"1 clicked row at positions where the "
                                                                     r"examination frame gives no usable probability"),
    (pl.DataFrame({"position": [1, 2], "examination": [1.0, None]}), r"missing, null, zero"),
    (pl.DataFrame({"position": [1, 2], "examination": [1.0, math.inf]}), r"not finite"),
    (pl.DataFrame({"position": [1], "examination": [1.0]}), r"1 clicked row at positions where .* \(2; queries 'b'\)"),
    (pl.DataFrame({"position": [1, 2, 2], "examination": [1.0, 0.5, 0.4]}), r"another row also gives"),
])
def test_bad_examination(exam: pl.DataFrame, message: str) -> None:
    log = pl.DataFrame(BASE_LOG)
    with pytest.raises(rp.RankPolarsError, match=message):
        counterfactual(log, CAND, "dcg@2", examination=exam, min_clicks=0)


def test_an_unusable_examination_where_no_click_needs_it_is_harmless() -> None:
    """position_bias gives null where a position has no support; no click there, no error."""
    log = pl.DataFrame(BASE_LOG)
    exam = pl.DataFrame({"position": [1, 2, 3], "examination": [1.0, 0.5, None]})
    got = quiet(log=log, candidate=CAND, metrics="dcg@2", examination=exam, min_clicks=0)
    assert got["estimate"][0] == pytest.approx(ips_reference(list(log.iter_rows(named=True)),
                                                             {"a": {"y": 1, "x": 2}, "b": {"x": 1, "y": 2}},
                                                             {1: 1.0, 2: 0.5}, ("dcg", 2, 0.8), None, ("query",)))


def test_bad_candidate_and_arguments() -> None:
    log = pl.DataFrame(BASE_LOG)
    twice = pl.DataFrame({"query": ["a", "a"], "item": ["x", "x"], "position": [1, 2]})
    with pytest.raises(rp.RankPolarsError, match=r"the candidate has 2 rows repeating a key \(an item ranked twice for one query; queries 'a'\)"):
        counterfactual(log, twice, "dcg@2", examination=EXAM)
    with pytest.raises(rp.RankPolarsError, match=r"candidate rows that have a null or non-positive position: 1"):
        counterfactual(log, CAND.with_columns(position=pl.Series([1, None, 1, 2])), "dcg@1", examination=EXAM)
    with pytest.raises(rp.RankPolarsError, match="no additive form.*first relevant item is a maximum"):
        counterfactual(log, CAND, "rr", examination=EXAM)
    with pytest.raises(rp.RankPolarsError, match="ndcg@10 has no additive form"):
        counterfactual(log, CAND, "ndcg@10", examination=EXAM)
    with pytest.raises(rp.RankPolarsError, match="needs examination="):
        counterfactual(log, CAND, "dcg@2")
    with pytest.raises(rp.RankPolarsError, match="clip is the largest importance weight"):
        counterfactual(log, CAND, "dcg@2", examination=EXAM, clip=0)
    with pytest.raises(rp.RankPolarsError, match="estimates the expected clicks"):
        counterfactual(log, CAND, "dcg@2", estimator="rips")
    with pytest.raises(rp.RankPolarsError, match="same type"):
        counterfactual(log, CAND.with_columns(pl.col("item").cast(pl.Categorical)), "dcg@2", examination=EXAM)
    with pytest.raises(rp.RankPolarsError, match="clicks@k / ctr@k weigh a click by the examination at its rank"):
        far = CAND.with_columns(position=pl.col("position") + 2)
        counterfactual(log, far, "clicks@5", examination=EXAM)


def test_unlogged_candidate_items_are_counted() -> None:
    log = pl.DataFrame(BASE_LOG)
    cand = pl.DataFrame({"query": ["a", "a", "b", "c"], "item": ["z", "x", "w", "x"], "position": [1, 2, 1, 1]})
    with pytest.warns(rp.CoverageWarning, match=r"candidate items never logged for their query: 2 \(in 2 of "
                                                r"the logged queries\).*candidate queries without a logged ranking, "
                                                r"not estimated: 1"):
        got = counterfactual(log, cand, "p@2", examination=EXAM, min_clicks=0)
    # the one supporting click: a/x (clicked at 1, candidate rank 2)
    assert got["clicks"][0] == 1 and got["logged_clicks"][0] == 2
    assert got["estimate"][0] == pytest.approx(1 * 0.5 / 2)
    assert all(math.isfinite(v) for v in got["estimate"])


def test_an_examination_curve_per_group() -> None:
    """An examination frame with the ``by`` column: each arm's clicks are weighed by its own curve."""
    log = pl.DataFrame({"arm": ["A", "A", "B", "B"], "query": ["a", "a", "a", "a"], "item": ["x", "y", "x", "y"],
                        "position": [1, 2, 1, 2], "click": [1, 1, 0, 1]})
    cand = pl.DataFrame({"query": ["a", "a"], "item": ["y", "x"], "position": [1, 2]})
    exam = pl.DataFrame({"arm": ["A", "A", "B", "B"], "position": [1, 2, 1, 2], "examination": [1.0, 0.5, 1.0, 0.25]})
    theta = {"A": {1: 1.0, 2: 0.5}, "B": {1: 1.0, 2: 0.25}}
    ranks = {"a": {"y": 1, "x": 2}}
    for engine in ("polars", "duckdb"):
        got = quiet(log=log.lazy(), candidate=cand.lazy(), metrics=["clicks@2", "dcg@2"], examination=exam, by="arm",
                    engine=engine)
        for arm in ("A", "B"):
            rows = [r for r in log.iter_rows(named=True) if r["arm"] == arm]
            for m in ("clicks@2", "dcg@2"):
                expected = ips_reference(rows, ranks, theta[arm], METRICS[m], None, ("query",))
                value = got.filter((pl.col("arm") == arm) & (pl.col("metric") == m))["estimate"].item()
                assert value == pytest.approx(expected, rel=1e-12), (engine, arm, m)
    con = duckdb.connect()
    for name, frame in (("log", log), ("candidate", cand), ("examination", exam)):
        con.register(name, frame)
    got_sql = con.sql(counterfactual_sql(["clicks@2", "dcg@2"], by="arm", examination_by=["arm"])).pl()
    assert np.allclose(got_sql.sort("arm", "metric")["estimate"], got.sort("arm", "metric")["estimate"], rtol=1e-12)


def lenskit_ipsrbp(recs: list[str], test: list[str], propensity: dict[str, float], n: int, patience: float) -> float:
    """LensKit's ``IPSRBP(n, propensity=..., patience=..., self_normalized=False).measure_list``,
    written from lenskit/lkpy ``src/lenskit/metrics/ranking/_ips.py`` (commit aef24fb) and
    ``_weighting.py``'s ``GeometricRankWeight``: Σ over the top-n recommendations that are
    observed relevant items of w_i · p^(rank-1) / series sum, w_i = 1 / P_i, series sum
    1 / (1 - p)."""
    gain = sum(patience ** (rank - 1) / propensity[item] for rank, item in enumerate(recs[:n], start=1) if item in test)
    return gain * (1 - patience)


@settings(max_examples=25, deadline=None)
@given(data=st.data(), engine=st.sampled_from(["polars", "duckdb"]))
def test_ips_rbp_equals_lenskit_ipsrbp(data, engine: str) -> None:
    """LensKit's IPSRBP weights each observed relevant item by 1 / its observation propensity
    (popularity-based, missing-not-at-random feedback); ``counterfactual(..., "rbp", "ips")``
    weights each logged click by 1 / the examination of its logged position.  The two agree
    when each item is logged at a position of its own whose examination is the item's
    propensity: the mean over users of LensKit's unnormalised form (``self_normalized=False``;
    its SNIPS form normalises per user, ours over the group's clicks, a different estimator)."""
    items = [f"i{j}" for j in range(8)]
    propensity = {item: data.draw(st.floats(0.05, 1.0)) for item in items}
    propensity[items[0]] = 1.0  # position 1 is the reference examination
    users = {f"u{u}": (data.draw(st.lists(st.sampled_from(items), min_size=1, max_size=5, unique=True)),
                       data.draw(st.lists(st.sampled_from(items), min_size=1, max_size=8, unique=True)))
             for u in range(data.draw(st.integers(1, 6)))}
    n, patience = data.draw(st.integers(1, 8)), data.draw(st.sampled_from([0.5, 0.85]))
    position = {item: j + 1 for j, item in enumerate(items)}
    log = pl.DataFrame([{"query": u, "item": i, "position": position[i], "click": 1}
                        for u, (test, _) in users.items() for i in test])
    candidate = pl.DataFrame([{"query": u, "item": i, "position": r}
                              for u, (_, recs) in users.items() for r, i in enumerate(recs, start=1)])
    examination = pl.DataFrame({"position": [position[i] for i in items], "examination": [propensity[i] for i in items]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few clicks, candidates showing unlogged items: expected here
        got = rp.counterfactual(log, candidate, [f"rbp(p={patience})@{n}"], examination=examination,
                                estimator="ips", engine=engine)
    want = sum(lenskit_ipsrbp(recs, test, propensity, n, patience) for test, recs in users.values()) / len(users)
    assert got["estimate"][0] == pytest.approx(want, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_positions_that_are_not_integers_are_refused_not_truncated(engine: str) -> None:
    log = pl.DataFrame(BASE_LOG)
    with pytest.raises(rp.RankPolarsError, match=r"the candidate's 'position' \(a position\) must be an integer type, "
                                                 r"got Float64; cast it"):
        counterfactual(log, CAND.with_columns(pl.Series("position", [1.7, 2.0, 1.0, 2.0])), "dcg@2", examination=EXAM,
                       engine=engine)
    with pytest.raises(rp.RankPolarsError, match=r"the examination frame's 'position' \(a position\) must be an integer"):
        counterfactual(log, CAND, "dcg@2", examination=EXAM.with_columns(pl.col("position").cast(pl.Float64) + 0.5),
                       engine=engine)


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize("tiny", [1e-300, 1e-320])
def test_an_overflowing_weight_is_an_error_not_inf_or_nan(engine: str, tiny: float) -> None:
    """1 / 1e-320 is infinite and 1 / 1e-300 squares to infinity in the ESS: the estimate was
    inf or 1e300 with a NaN ESS.  Both position-based and slate estimators."""
    log = pl.DataFrame(BASE_LOG)
    exam = pl.DataFrame({"position": [1, 2], "examination": [1.0, tiny]})
    with pytest.raises(rp.DataError, match=r"not a finite number: an importance weight overflows float64"):
        counterfactual(log, CAND, "dcg@2", examination=exam, engine=engine, min_clicks=0)
    slate = log.with_columns(pl.Series("pscore_item_position", [0.5, 0.4, 0.3, tiny]))  # b: y clicked at 2
    with pytest.raises(rp.DataError, match=r"1 estimate \(clicks\) is not a finite number"):
        counterfactual(slate, CAND, estimator="independent_ips", engine=engine, min_clicks=0)


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_an_empty_log_gives_an_empty_table_with_or_without_by(engine: str) -> None:
    empty = pl.DataFrame(BASE_LOG).clear().with_columns(model=pl.lit("m"))
    for by in (None, "model"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = counterfactual(empty, CAND, "dcg@2", examination=EXAM, engine=engine, by=by)
        assert got.height == 0 and "estimate" in got.columns
