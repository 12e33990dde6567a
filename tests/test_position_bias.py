"""rp.position_bias against ultr-bias-toolkit's estimators, reproduced in pandas from its source
(github.com/philipphager/ultr-bias-toolkit, commit ba62bcb "Rename source", 2023-12-10, unchanged
at 0c06446: ``ultr_bias_toolkit/bias/naive.py`` NaiveCtrEstimator,
``bias/intervention_harvesting/pivot.py`` PivotEstimator, ``adjacent_chain.py``
AdjacentChainEstimator, ``all_pairs.py`` AllPairsEstimator's model and loss, and ``util.py``
build_intervention_sets / normalize_bias; the package itself pulls torch), in both engines.

all_pairs: the toolkit fits by SGD, so it is checked against the optimum of the objective our
docstring states (gradient ~0 there, and scipy.optimize landing at the same point), and, on a
simulated log, against the toolkit's own cross-entropy objective minimised by scipy."""

from __future__ import annotations

import functools
import math
import warnings
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rank_polars.errors import RankPolarsError
from rank_polars.clicks.position_bias import position_bias

# --- ultr-bias-toolkit, reproduced (query_col="query", doc_col="item") ------------------------


def normalize_bias(examination: pd.Series) -> pd.Series:
    examination /= examination.values[0]
    return examination.fillna(0)


def build_intervention_sets(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    df["no_click"] = 1 - df["click"]
    df = df.groupby(["query", "item", "position"]).agg(
        clicks=("click", "sum"), no_clicks=("no_click", "sum"), impressions=("item", "count")).reset_index()
    df["c"] = df["clicks"] / df["impressions"]
    df["not_c"] = df["no_clicks"] / df["impressions"]
    df = df.merge(df, on=["query", "item"], suffixes=["_0", "_1"])
    return df.groupby(["position_0", "position_1"]).agg(
        c_0=("c_0", "sum"), c_1=("c_1", "sum"), not_c_0=("not_c_0", "sum"), not_c_1=("not_c_1", "sum")).reset_index()


def naive(df: pd.DataFrame) -> pd.DataFrame:
    df = df.groupby("position").agg(examination=("click", "mean")).reset_index()
    df.examination = normalize_bias(df.examination)
    return df


def pivot(df: pd.DataFrame) -> pd.DataFrame:
    df = build_intervention_sets(df)
    df = df[df.position_0 == 1].copy()
    df["examination"] = (df["c_1"] / df["c_0"]).fillna(0)
    df.examination = normalize_bias(df.examination)
    df = df.rename(columns={"position_1": "position"})
    return df[["position", "examination"]]


def adjacent_chain(df: pd.DataFrame) -> pd.DataFrame:
    df = build_intervention_sets(df)
    pos_1_df = df[(df.position_0 == 1) & (df.position_1 == 1)]
    adjacent_pair_df = df[df.position_1 == df.position_0 + 1]
    adjacent_pair_df = adjacent_pair_df.sort_values(["position_0", "position_1"])
    df = pd.concat([pos_1_df, adjacent_pair_df])
    with np.errstate(all="ignore"):
        df["examination"] = (df["c_1"] / df["c_0"]).fillna(0)
        df["examination"] = df.examination.cumprod()
    df = df.rename(columns={"position_1": "position"})
    return df[["position", "examination", "position_0"]].reset_index(drop=True)


def toolkit_all_pairs_loss(df: pd.DataFrame) -> tuple[list[int], object]:
    """AllPairsEstimator's loss over its parameters (logits of examination per position and of
    relevance per k · k', as its nn.Embedding + Sigmoid), summed over the whole set (its batches
    only split the sum)."""
    positions = sorted(df.position.unique())
    n = len(positions)
    sets = build_intervention_sets(df)
    sets = sets[sets.position_0 != sets.position_1]
    k, kp = sets.position_0.to_numpy(), sets.position_1.to_numpy()
    c, nc = sets.c_0.to_numpy(), sets.not_c_0.to_numpy()
    rel_index = {v: j for j, v in enumerate(sorted(set((k * kp).tolist())))}
    r = np.array([rel_index[v] for v in (k * kp).tolist()])
    width = max(positions) + 1

    def loss(theta: np.ndarray) -> float:
        e, rel = 1 / (1 + np.exp(-theta[:width])), 1 / (1 + np.exp(-theta[width:]))
        y = e[k] * rel[r]
        return float(-(c * np.log(y) + nc * np.log(1 - y)).sum())

    return positions, (loss, width + len(rel_index), n)


# --- our stated all-pairs objective, written from the docstring ------------------------------


def wls_terms(df: pd.DataFrame) -> tuple[list[int], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    sets = build_intervention_sets(df)
    sets = sets[(sets.position_0 < sets.position_1) & (sets.c_0 > 0) & (sets.c_1 > 0)]
    positions = sorted(set(sets.position_0) | set(sets.position_1))
    ix = {p: j for j, p in enumerate(positions)}
    a = np.array([ix[p] for p in sets.position_0], dtype=int)
    b = np.array([ix[p] for p in sets.position_1], dtype=int)
    c0, c1 = sets.c_0.to_numpy(), sets.c_1.to_numpy()
    return positions, a, b, np.log(c0 / c1), c0 * c1 / (c0 + c1)


def wls(x: np.ndarray, a: np.ndarray, b: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[float, np.ndarray]:
    resid = x[a] - x[b] - y
    grad = np.zeros_like(x)
    np.add.at(grad, a, 2 * w * resid)
    np.add.at(grad, b, -2 * w * resid)
    return float((w * resid**2).sum()), grad


# --- generated click logs ---------------------------------------------------------------------


@st.composite
def logs(draw: st.DrawFn) -> pl.DataFrame:
    """1-5 arms showing their own order of each query's items (deep positions: the shown slots
    are any increasing positions up to 40, position 1 nearly always among them), sessions drawn
    per arm, zero-click sessions, single impressions, ties (two items at one position), and a
    randomised flag per session."""
    rows = []
    arms = draw(st.integers(1, 5))
    for q in range(draw(st.integers(1, 3))):
        items = [f"d{j}" for j in range(draw(st.integers(1, 5)))]
        slots = sorted(draw(st.sets(st.integers(2, 40), min_size=len(items) - 1, max_size=len(items) - 1)))
        slots = ([1] if draw(st.integers(0, 9)) else [2 + 40]) + slots
        orders = [draw(st.permutations(items)) for _ in range(arms)]
        for s in range(draw(st.integers(1, 6))):
            arm = draw(st.integers(0, arms - 1))
            shown = orders[arm] if draw(st.booleans()) else draw(st.permutations(items))
            rand, tie, silent = draw(st.booleans()), draw(st.integers(0, 5)) == 0, draw(st.integers(0, 3)) == 0
            for n, it in enumerate(shown):
                pos = slots[max(n - 1, 0)] if tie and n else slots[n]
                rows.append({"query": f"q{q}", "item": it, "position": pos, "arm": f"a{arm}", "rand": rand,
                             "click": 0 if silent else draw(st.integers(0, 1))})
    return pl.DataFrame(rows)


def close(a: float | None, b: float) -> bool:
    if math.isinf(b) or math.isnan(b):  # the toolkit's x/0 (and inf·0): undefined here, null (never inf)
        return a is None
    return a is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def expected(method: str, df: pd.DataFrame) -> dict[int, float | None]:
    """The toolkit's answer as ours states it: every position of the log, null where the toolkit
    has no row, has inf/NaN, or (the chain) skipped a missing link; and every position null
    where position 1 has no click (the toolkit divides by that 0: 0 at position 1 and at the
    unclicked positions, inf at the clicked ones; a curve relative to position 1 is undefined)."""
    if method in ("rand_topk", "rand_pair"):
        df = df[df["rand"]]
    out: dict[int, float | None] = {int(p): None for p in df.position.unique()}
    if df.loc[df.position == 1, "click"].sum() == 0:
        return out
    if method in ("ctr", "rand_topk"):
        if 1 in out:  # the toolkit divides by its first row: position 1 when it is there
            out.update({int(p): float(e) for p, e in naive(df)[["position", "examination"]].itertuples(index=False)})
    elif 1 not in out:  # the toolkit fails (no pivot row) or multiplies from a missing position 1
        pass
    elif method in ("pivot", "rand_pair"):
        out.update({int(p): float(e) for p, e in pivot(df).itertuples(index=False)})
    else:
        last = 0
        for p, e, p0 in adjacent_chain(df).itertuples(index=False):
            if p0 != last and not (p0 == 1 and p == 1):
                break  # a missing link: the toolkit multiplies on across it
            out[int(p)], last = float(e), p
    return {p: (None if e is not None and (math.isinf(e) or math.isnan(e)) else e) for p, e in out.items()}


def quiet(*args: Any, **kwargs: Any) -> pl.DataFrame:
    """position_bias with its null-position warning silenced (tested on its own below)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return position_bias(*args, **kwargs)


REFERENCE = ["ctr", "pivot", "adjacent_chain", "rand_topk", "rand_pair"]


@settings(max_examples=10, deadline=None)
@given(log=logs())
def test_matches_ultr_bias_toolkit(log: pl.DataFrame) -> None:
    """In Polars; DuckDB equals Polars in the next test (each DuckDB call opens a connection)."""
    pdf = log.to_pandas()
    for method in REFERENCE:
        want = expected(method, pdf)
        if method.startswith("rand") and not log["rand"].any():
            continue
        got = quiet(log, method, randomized="rand" if method.startswith("rand") else None)
        assert got["position"].to_list() == sorted(want), method
        for p, e in zip(got["position"].to_list(), got["examination"].to_list()):
            assert close(e, want[p]) if want[p] is not None else e is None, (method, p, e, want[p])


@settings(max_examples=10, deadline=None)
@given(log=logs(), by=st.sampled_from([None, "arm"]))
def test_engines_agree(log: pl.DataFrame, by: str | None) -> None:
    for method in ["ctr", "pivot", "adjacent_chain", "all_pairs", "rand_topk", "rand_pair"]:
        rand = "rand" if method.startswith("rand") else None
        if rand and not log["rand"].any():
            continue
        a = quiet(log, method, by=by, randomized=rand)
        b = quiet(log, method, by=by, randomized=rand, engine="duckdb")
        assert a.columns == b.columns and a.drop("examination").equals(b.drop("examination")), (method, by)
        for x, y in zip(a["examination"].to_list(), b["examination"].to_list()):
            assert (x is None and y is None) or math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12), (method, by, x, y)


@settings(max_examples=10, deadline=None)
@given(log=logs())
def test_all_pairs_is_the_optimum_of_its_objective(log: pl.DataFrame) -> None:
    from scipy.optimize import minimize

    pdf = log.to_pandas()
    got = quiet(log, "all_pairs")
    exam = dict(zip(got["position"].to_list(), got["examination"].to_list()))
    positions, a, b, y, w = wls_terms(pdf)
    if 1 not in positions:
        assert all(e is None or e == 0 for p, e in exam.items()), exam
        return
    fitted = [p for p in positions if exam[p] is not None and exam[p] > 0]
    # on the positions the fit reached (linked to position 1), the gradient vanishes ...
    keep = np.isin(a, [positions.index(p) for p in fitted]) & np.isin(b, [positions.index(p) for p in fitted])
    x = np.array([math.log(exam[p]) if p in fitted else 0.0 for p in positions])
    _, grad = wls(x, a[keep], b[keep], y[keep], w[keep])
    assert exam[1] == 1.0 and np.abs(grad).max() < 1e-8 * max(1.0, float(w.sum()))
    # ... and scipy, started elsewhere, lands at the same point
    free = [positions.index(p) for p in fitted if p != 1]
    if free:
        def f(z: np.ndarray) -> tuple[float, np.ndarray]:
            full = np.zeros(len(positions))
            full[free] = z
            v, g = wls(full, a[keep], b[keep], y[keep], w[keep])
            return v, g[free]
        res = minimize(f, np.full(len(free), 0.3), jac=True, method="BFGS", options={"gtol": 1e-12})
        assert np.allclose(res.x, x[free], atol=1e-6), (res.x, x[free])


# --- simulated position-based click logs with known examination --------------------------------

TRUE = np.array([1.0, 0.72, 0.55, 0.44, 0.36, 0.3, 0.26, 0.22])


@functools.cache
def simulate(seed: int, queries: int = 1000, sessions: int = 40, arms: int = 3, share_random: float = 0.3) -> pl.DataFrame:
    """A position-based model (click = examined · relevant): per query 8 items with relevance
    U(0.05, 0.95); each arm shows its own noisy order of them; a share of sessions shows a
    uniformly random order instead (flagged ``randomized``)."""
    rng = np.random.default_rng(seed)
    k = len(TRUE)
    rel = rng.uniform(0.05, 0.95, (queries, k))
    orders = np.argsort(-(rel[:, None, :] + rng.normal(0, 0.3, (queries, arms, k))), axis=2)  # (query, arm, slot)
    query = np.repeat(np.arange(queries), sessions)
    rand = rng.random(query.size) < share_random
    shown = orders[query, rng.integers(arms, size=query.size)]
    shown[rand] = rng.permuted(np.tile(np.arange(k), (int(rand.sum()), 1)), axis=1)
    click = rng.random(shown.shape) < TRUE * rel[query[:, None], shown]
    return pl.DataFrame({"query": np.repeat(query, k), "item": shown.ravel(), "position": np.tile(np.arange(1, k + 1), query.size),
                         "click": click.ravel().astype(np.int64), "randomized": np.repeat(rand, k)})


@pytest.mark.parametrize("method", ["pivot", "adjacent_chain", "all_pairs", "rand_topk", "rand_pair"])
def test_recovers_the_simulated_examination(method: str) -> None:
    log = simulate(7)
    got = position_bias(log, method, randomized="randomized" if method.startswith("rand") else None)
    err = np.abs(got["examination"].to_numpy() - TRUE)
    assert err.max() < 0.04, (method, got["examination"].to_list())  # sampling noise: ~0.02 over seeds 7-10


def test_the_naive_ctr_does_not_recover_it() -> None:
    # the naive CTR, biased by the rankers' order, is off by ~0.11 on the same log: the check
    # above can fail (once here, not once per method: each call reads 320k rows)
    naive_err = np.abs(position_bias(simulate(7), "ctr")["examination"].to_numpy() - TRUE)
    assert naive_err.max() > 0.08


def test_all_pairs_lands_near_the_toolkits_own_objective() -> None:
    """The toolkit's cross-entropy over sigmoid(examination) · sigmoid(relevance[k · k']) (its
    AllPairsPBM), minimised by scipy instead of its 5,000 Adam epochs: the examination it finds,
    normalised to position 1, is within sampling noise of our closed-form fit."""
    from scipy.optimize import minimize

    log = simulate(11, queries=200, arms=3)
    positions, (loss, size, _) = toolkit_all_pairs_loss(log.to_pandas())
    res = minimize(loss, np.zeros(size), method="L-BFGS-B", options={"maxiter": 20000, "maxfun": 200000})
    e = 1 / (1 + np.exp(-res.x[: max(positions) + 1]))
    theirs = e[positions] / e[positions[0]]
    ours = position_bias(log, "all_pairs")["examination"].to_numpy()
    assert np.abs(theirs - ours).max() < 0.05, (theirs, ours)


# --- bad input and warnings ----------------------------------------------------------------------


def test_bad_input() -> None:
    log = pl.DataFrame({"query": ["q", "r"], "item": ["a", "b"], "position": [1, 1], "click": [-1, 0]})
    for engine in ("polars", "duckdb"):
        with pytest.raises(RankPolarsError, match=r"1 row has a negative, non-integer or non-finite 'click' \(queries 'q'\)"):
            position_bias(log, engine=engine)
        with pytest.raises(RankPolarsError, match="non-integer"):
            position_bias(log.with_columns(click=pl.lit(0.5)), engine=engine)
        # NaN and infinities equal their floor: they reached a cast to integers (Polars' own error)
        for odd in (float("nan"), float("inf")):
            with pytest.raises(RankPolarsError, match=r"2 rows have a negative, non-integer or non-finite 'click'"):
                position_bias(log.with_columns(click=pl.lit(odd)), engine=engine)
        with pytest.raises(RankPolarsError, match="add up beyond a 64-bit integer"):
            position_bias(log.with_columns(click=pl.lit(2**62 + 2**61)), engine=engine)  # two rows at position 1
        with pytest.raises(RankPolarsError, match="null position"):
            position_bias(log.with_columns(click=pl.lit(1), position=pl.Series([0, 1])), engine=engine)
        with pytest.raises(RankPolarsError, match="null 'query', 'item' or by column"):
            position_bias(log.with_columns(click=pl.lit(1), item=pl.Series(["a", None])), engine=engine)
        with pytest.raises(RankPolarsError, match="no column 'rand'"):
            position_bias(log, "rand_topk", randomized="rand", engine=engine)
        with pytest.raises(RankPolarsError, match="must be a boolean"):
            position_bias(log.with_columns(rand=pl.lit(1), click=pl.lit(1)), "rand_topk", randomized="rand", engine=engine)
        with pytest.raises(RankPolarsError, match="no rows where 'rand' is true"):
            position_bias(log.with_columns(rand=pl.lit(False), click=pl.lit(1)), "rand_pair", randomized="rand", engine=engine)
    with pytest.raises(RankPolarsError, match="method"):
        position_bias(log.with_columns(click=pl.lit(1)), "em")
    with pytest.raises(RankPolarsError, match="randomized="):
        position_bias(log.with_columns(click=pl.lit(1)), "rand_pair")
    with pytest.raises(RankPolarsError, match="by=.'position'."):
        position_bias(log.with_columns(click=pl.lit(1)), by="position")


def test_a_position_without_support_is_null_with_a_warning() -> None:
    # item b is shown at 1 and 2, c only ever at 3: the pivot and the chain have nothing for 3
    log = pl.DataFrame({"query": ["q"] * 5, "item": ["a", "b", "b", "a", "c"], "position": [1, 2, 1, 2, 3],
                        "click": [1, 1, 1, 0, 1]})
    for method in ("pivot", "adjacent_chain", "all_pairs"):
        for engine in ("polars", "duckdb"):
            with pytest.warns(UserWarning, match=r"1 position without support \(positions 3\)"):
                got = position_bias(log, method, engine=engine)
            assert got.filter(pl.col("position") == 3).row(0) == (3, None, 0, 0)
            assert got["examination"].to_list()[:2] == [1.0, 0.5] if method != "all_pairs" else True


# found by an adversarial pass: with no click at position 1 the curve relative to position 1 was
# reported as 0 at position 1 itself (ctr, pivot, rand_*), 0 down the whole chain
# (adjacent_chain), and 0 at every unclicked position; now every position of that group is
# null, in every method and both engines, with a warning that says why.
METHODS = ["ctr", "pivot", "adjacent_chain", "all_pairs", "rand_topk", "rand_pair"]
# two arms swapping two items of two queries, every row randomised: position 1 never clicked
UNCLICKED_TOP = pl.DataFrame({"query": ["q"] * 4 + ["r"] * 4, "item": ["a", "b", "b", "a", "c", "d", "d", "c"],
                              "position": [1, 2, 1, 2] * 2, "click": [0, 1, 0, 0, 0, 1, 0, 1], "rand": [True] * 8})


def _rand(method: str) -> str | None:
    return "rand" if method.startswith("rand") else None


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize("method", METHODS)
def test_no_click_at_position_1_leaves_every_position_null(method: str, engine: str) -> None:
    rows = r", among the rows where 'rand' is true," if _rand(method) else ""
    with pytest.warns(UserWarning, match=rf"position_bias\(method='{method}'\): position 1 has no click in the log"
                                         rf"{rows} \(never clicked or never shown there\): the examination relative "
                                         r"to position 1 is undefined, so every position is null"):
        got = position_bias(UNCLICKED_TOP, method, randomized=_rand(method), engine=engine)
    assert got["position"].to_list() == [1, 2]
    assert got["examination"].to_list() == [None, None]  # was [0.0, None] (all_pairs: [None, None], another warning)
    assert got["clicks"].to_list() == [0, 3]  # what the rows read show, as before


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize("method", METHODS)
def test_position_1_never_shown_is_the_same_outcome(method: str, engine: str) -> None:
    log = UNCLICKED_TOP.with_columns(pl.col("position") + 1, click=pl.lit(1))
    with pytest.warns(UserWarning, match=r"position 1 has no click in the log.*every position is null"):
        got = position_bias(log, method, randomized=_rand(method), engine=engine)
    assert got["position"].to_list() == [2, 3] and got["examination"].to_list() == [None, None]


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize("method", METHODS)
def test_only_the_group_without_a_click_at_position_1_is_null(method: str, engine: str) -> None:
    """With by: the other groups keep their curve (each group is estimated on its own), and the
    warning names the group and the way out."""
    fine = UNCLICKED_TOP.with_columns(click=pl.Series([1, 0, 1, 1, 1, 0, 1, 1]))
    log = pl.concat([UNCLICKED_TOP.with_columns(arm=pl.lit("b")), fine.with_columns(arm=pl.lit("a"))])
    want = position_bias(fine, method, randomized=_rand(method), engine=engine)
    assert want["examination"].null_count() == 0
    with pytest.warns(UserWarning, match=r"position 1 has no click in 1 of 2 groups \(arm='b'\).*every position of "
                                         r"those groups is null.*or pool the groups \(fewer by columns\)"):
        got = position_bias(log, method, by="arm", randomized=_rand(method), engine=engine)
    assert got.filter(pl.col("arm") == "a").drop("arm").equals(want)
    assert got.filter(pl.col("arm") == "b")["examination"].to_list() == [None, None]


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_the_rows_read_decide(engine: str) -> None:
    """rand_* read the randomised rows only: clicks at position 1 elsewhere do not define their curve."""
    shown = UNCLICKED_TOP.with_columns(rand=pl.lit(False), click=pl.lit(1, pl.Int64))
    log = pl.concat([UNCLICKED_TOP, shown])
    assert position_bias(log, "pivot", engine=engine)["examination"].null_count() == 0
    for method in ("rand_topk", "rand_pair"):
        with pytest.warns(UserWarning, match=r"among the rows where 'rand' is true"):
            got = position_bias(log, method, randomized="rand", engine=engine)
        assert got["examination"].to_list() == [None, None]


def test_a_null_curve_is_refused_by_counterfactual_not_divided_by() -> None:
    """The null curve, handed on, is refused where a click needs it: never inf or NaN."""
    from rank_polars.clicks.counterfactual import counterfactual

    curve = quiet(UNCLICKED_TOP, "pivot").select("position", "examination")
    log = UNCLICKED_TOP.with_columns(session=pl.Series([1, 1, 2, 2] * 2))
    cand = UNCLICKED_TOP.head(2).vstack(UNCLICKED_TOP.slice(4, 2)).select("query", "item", "position")
    for engine in ("polars", "duckdb"):
        with pytest.raises(RankPolarsError, match=r"clicked rows? at positions where the examination frame gives no "
                                                  r"usable probability"):
            counterfactual(log, cand, "dcg@2", examination=curve, session="session", engine=engine)


def test_lazy_and_parquet_inputs_and_several_by_columns(tmp_path: Any) -> None:
    log = simulate(3, queries=60).with_columns(device=pl.col("query") % 2, market=pl.col("query") % 3)
    want = position_bias(log, "all_pairs", by=["device", "market"])
    assert want.height == 6 * 8 and want["examination"].null_count() == 0
    path = tmp_path / "log.parquet"
    log.write_parquet(path)
    for engine, source in (("polars", log.lazy()), ("polars", pl.scan_parquet(path)), ("duckdb", str(path)),
                           ("duckdb", pl.scan_parquet(path))):
        got = position_bias(source, "all_pairs", by=["device", "market"], engine=engine)
        assert got.drop("examination").equals(want.drop("examination")), (engine, source)
        assert np.allclose(got["examination"].to_numpy(), want["examination"].to_numpy(), rtol=1e-9)


def test_the_sample_click_log_gives_back_its_curve() -> None:
    """What docs/position-bias.md shows: on ``datasets.load_clicks`` (examination 1/p) every method
    but the naive CTR lands within 0.05 of the truth at every position."""
    from rank_polars.datasets import load_clicks

    sample = load_clicks()
    truth = sample.examination["examination"].to_numpy()
    for method in ["pivot", "adjacent_chain", "all_pairs", "rand_topk", "rand_pair"]:
        got = position_bias(sample.log, method, randomized="randomized" if method.startswith("rand") else None)
        assert got["position"].to_list() == sample.examination["position"].to_list()
        assert np.abs(got["examination"].to_numpy() - truth).max() < 0.05, method
    assert np.abs(position_bias(sample.log, "ctr")["examination"].to_numpy() - truth).max() > 0.05
