"""The ratio CTR ``ctr(agg=ratio)@k``: its per-ranking values are the delta method's
linearisation, so the t interval of ``evaluate(ci=)`` is the delta-method interval of Deng,
Knoblich & Lu (KDD 2018, "Applying the Delta Method in Metric Analytics", eq. 3-4, reproduced
below), and Welch's t between two arms on those values is tea-tasting's ``RatioOfMeans``
(use_t=True, equal_var=False): the same difference, interval and p-value."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import rank_polars as rp

tea = pytest.importorskip("tea_tasting")


def click_log(seed: int, arms: int, rankings: int) -> pl.DataFrame:
    """Rankings of 1-12 rows, clicks 0/1 with an arm- and position-dependent probability."""
    rng = np.random.default_rng(seed)
    rows = []
    for a in range(arms):
        for q in range(rankings):
            depth = int(rng.integers(1, 13))
            for pos in range(1, depth + 1):
                rows.append((f"arm{a}", f"q{q}", f"i{pos}", pos, int(rng.random() < (0.3 + 0.1 * a) / pos)))
    return pl.DataFrame(rows, schema=["arm", "query", "item", "position", "click"], orient="row")


def parts(log: pl.DataFrame, k: int) -> pl.DataFrame:
    """X (clicks at positions <= k) and Y (rows shown at positions <= k) per ranking, from the log."""
    top = log.filter(pl.col("position") <= k)
    return top.group_by("arm", "query").agg(x=pl.col("click").sum().cast(pl.Float64), y=pl.len().cast(pl.Float64))


def delta_interval(x: np.ndarray, y: np.ndarray, level: float) -> tuple[float, float, float]:
    """Deng et al. 2018: var(X̄/Ȳ) ≈ (s_X² − 2 R s_XY + R² s_Y²) / (n Ȳ²), sample moments (ddof 1)."""
    n, r = len(x), x.sum() / y.sum()
    cov = np.cov(x, y, ddof=1)
    se = math.sqrt((cov[0, 0] - 2 * r * cov[0, 1] + r * r * cov[1, 1]) / (n * y.mean() ** 2))
    t = stats.t.ppf(0.5 + level / 2, n - 1)
    return r, r - t * se, r + t * se


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 10_000), arms=st.integers(1, 3), rankings=st.integers(2, 40), k=st.sampled_from([1, 3, 10]))
def test_ratio_and_its_interval_are_the_delta_method(engine: str, seed: int, arms: int, rankings: int, k: int) -> None:
    log = click_log(seed, arms, rankings)
    got = rp.evaluate(log, [f"ctr(agg=ratio)@{k}"], by="arm", ci=0.9, engine=engine)
    ref = parts(log, k)
    for row in got.iter_rows(named=True):
        p = ref.filter(pl.col("arm") == row["arm"])
        x, y = p["x"].to_numpy(), p["y"].to_numpy()
        r, low, high = delta_interval(x, y, 0.9)
        name = f"ctr(agg=ratio)@{k}"
        assert math.isclose(row[name], r, rel_tol=1e-9, abs_tol=1e-12)
        if np.isfinite(low) and high > low:
            assert math.isclose(row[f"{name}_low"], low, rel_tol=1e-9, abs_tol=1e-12)
            assert math.isclose(row[f"{name}_high"], high, rel_tol=1e-9, abs_tol=1e-12)
        else:  # an arm whose rankings all have the same CTR has no spread: no interval, not a point
            assert row[f"{name}_low"] is None and row[f"{name}_high"] is None


@pytest.mark.parametrize("seed", [3, 11])
def test_welch_on_the_linearised_values_is_tea_tastings_ratio_of_means(seed: int) -> None:
    log = click_log(seed, 2, 60)
    per = rp.evaluate(log, ["ctr(agg=ratio)@5", "clicks@5", "impressions@5"], by="arm", per_query=True)
    a = per.filter(pl.col("arm") == "arm0")["ctr(agg=ratio)@5"].to_numpy()
    b = per.filter(pl.col("arm") == "arm1")["ctr(agg=ratio)@5"].to_numpy()
    welch = stats.ttest_ind(b, a, equal_var=False)
    ci = welch.confidence_interval(0.95)
    # tea-tasting reads the raw parts: clicks@5 and impressions@5 per ranking (spec.ratio_parts())
    data = per.select(variant=pl.col("arm").replace_strict({"arm0": 0, "arm1": 1}),
                      clicks=pl.col("clicks@5"), impressions=pl.col("impressions@5")).to_pandas()
    exp = tea.Experiment(ctr=tea.RatioOfMeans("clicks", "impressions", use_t=True, equal_var=False,
                                              confidence_level=0.95))
    res = exp.analyze(data)["ctr"]
    assert math.isclose(a.mean(), res.control, rel_tol=1e-9)
    assert math.isclose(b.mean(), res.treatment, rel_tol=1e-9)
    assert math.isclose(b.mean() - a.mean(), res.effect_size, rel_tol=1e-9)
    assert math.isclose(ci.low, res.effect_size_ci_lower, rel_tol=1e-9)
    assert math.isclose(ci.high, res.effect_size_ci_upper, rel_tol=1e-9)
    assert math.isclose(welch.pvalue, res.pvalue, rel_tol=1e-9)


def test_ratio_over_the_universe_with_missing_zero() -> None:
    """With qrels and missing="zero" a judged query the arm never showed is a ranking with no
    impression: it adds 0 / 0 to the ratio, and its linearised value keeps the mean at R.  The
    clicks are the log's (the click metrics read the run's click column whatever the qrels); the
    qrels give the evaluated queries."""
    log = pl.DataFrame({"query": ["a", "a", "b"], "item": ["x", "y", "x"], "position": [1, 2, 1], "click": [0, 1, 1]})
    qrels = pl.DataFrame({"query": ["a", "b", "c"], "item": ["y", "x", "z"], "relevance": [1, 1, 1]})
    for engine in ("polars", "duckdb"):
        got = rp.evaluate(log, ["ctr(agg=ratio)@2", "ctr@2"], qrels=qrels, missing="zero", engine=engine)
        assert got.row(0, named=True) == pytest.approx({"queries": 3, "ctr(agg=ratio)@2": 2 / 3,
                                                        "ctr@2": (1 / 2 + 1 + 0) / 3})
