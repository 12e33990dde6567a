"""Intervals on evaluate's aggregates: t against SciPy's t interval, percentile and BCa against
``scipy.stats.bootstrap`` given the same bootstrap distribution, the bootstrap against an exact
enumeration of the resamples, and every engine alike."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import rank_polars as rp
from rank_polars.errors import RankPolarsError
from rank_polars.stats.intervals import bootstrap_interval, intervals
from rank_polars.measures import parse

from .test_spark import spark  # noqa: F401  (the module's session fixture)

FEW = settings(max_examples=20, deadline=None)
GM_FLOOR = 1e-5


@st.composite
def groups(draw: st.DrawFn) -> pl.DataFrame:
    k = draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    frames = []
    for g in range(k):
        n = draw(st.integers(1, 300))
        x = rng.random(n)
        if draw(st.booleans()):
            x = np.round(x, 1)  # ties, and zeros for the geometric mean's floor
        if draw(st.integers(0, 4)) == 0:
            x = np.full(n, 0.5)  # a constant group
        frames.append(pl.DataFrame({"model": [f"m{g}"] * n, "x": x}))
    return pl.concat(frames)


SPECS = [("x", parse("ndcg")), ("x_sum", parse("num_rel")), ("x_gm", parse("gm_map"))]


def with_copies(per: pl.DataFrame) -> pl.DataFrame:
    return per.with_columns(x_sum=pl.col("x"), x_gm=pl.col("x"))


@FEW
@given(groups(), st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_t_intervals_are_scipys_for_mean_sum_and_geometric_mean(per, confidence):
    out = intervals(with_copies(per), SPECS, ["model"], confidence)
    for row in out.iter_rows(named=True):
        x = per.filter(pl.col("model") == row["model"])["x"].to_numpy()
        n = x.size
        if n < 2:
            assert all(row[c] is None for c in out.columns if c != "model")
            continue
        for label, values, back in [("x", x, lambda v: v), ("x_sum", x, lambda v: v * n),
                                    ("x_gm", np.log(np.maximum(x, GM_FLOOR)), np.exp)]:
            low, high = stats.t.interval(confidence, n - 1, loc=values.mean(), scale=stats.sem(values))
            if np.ptp(values) <= 1e-12 * np.abs(values).max():  # no spread: SciPy gives NaN, we give null
                assert row[f"{label}_low"] is None and row[f"{label}_high"] is None
                continue
            assert row[f"{label}_low"] == pytest.approx(back(low), rel=1e-9, abs=1e-12)
            assert row[f"{label}_high"] == pytest.approx(back(high), rel=1e-9, abs=1e-12)


class Given:
    """A bootstrap result SciPy reuses (``bootstrap(..., bootstrap_result=)``): our resamples."""

    def __init__(self, dist: np.ndarray) -> None:
        self.bootstrap_distribution = dist


@FEW
@given(st.integers(2, 200), st.integers(0, 2**32 - 1), st.sampled_from(["mean", "sum", "gmean"]),
       st.sampled_from(["bootstrap", "bca"]), st.booleans())
def test_percentile_and_bca_are_scipy_bootstrap_on_the_same_resamples(n, seed, aggregate, method, ties):
    rng = np.random.default_rng(seed)
    x = rng.random(n)
    if ties:
        x = np.round(x, 1)
    values = np.log(np.maximum(x, GM_FLOOR)) if aggregate == "gmean" else x
    low, high, dist = bootstrap_interval(values, aggregate, 0.9, method, 999, np.random.default_rng(seed))
    statistic = {"mean": np.mean, "sum": np.sum, "gmean": lambda v, axis=-1: np.exp(np.log(np.maximum(v, GM_FLOOR)).mean(axis=axis))}[aggregate]
    with np.errstate(all="ignore"), warnings.catch_warnings():  # SciPy warns on a degenerate BCa
        warnings.simplefilter("ignore")
        ref = stats.bootstrap((x,), statistic, n_resamples=0, bootstrap_result=Given(dist), confidence_level=0.9,
                              method="BCa" if method == "bca" else "percentile").confidence_interval
    if math.isnan(ref.low):
        assert math.isnan(low)
    else:
        assert low == pytest.approx(ref.low, rel=1e-9, abs=1e-12) and high == pytest.approx(ref.high, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("x", [np.array([0.0, 0.2, 0.5, 1.0]), np.array([0.1, 0.1, 0.4, 0.9, 0.9])])
def test_bootstrap_percentile_interval_agrees_with_exact_enumeration(x):
    n = x.size
    means = np.array([x[list(idx)].mean() for idx in itertools.product(range(n), repeat=n)])
    exact_low, exact_high = np.quantile(means, [0.05, 0.95])
    b = 40_000
    low, high, dist = bootstrap_interval(x, "mean", 0.9, "bootstrap", b, np.random.default_rng(3))
    # the resampled means follow the exact distribution (two-sample KS), and the quantiles land
    # on the exact ones within the spacing of the distribution's atoms
    assert stats.ks_2samp(dist, means).pvalue > 1e-4
    step = np.diff(np.unique(means)).max()
    assert abs(low - exact_low) <= step and abs(high - exact_high) <= step
    again = bootstrap_interval(x, "mean", 0.9, "bootstrap", b, np.random.default_rng(3))
    assert (again[0], again[1]) == (low, high)  # seeded: the same numbers


def test_bca_within_monte_carlo_error_of_scipy_with_its_own_resamples():
    x = np.random.default_rng(8).exponential(0.3, 80)
    ours = bootstrap_interval(x, "mean", 0.95, "bca", 20_000, np.random.default_rng(0))
    ref = stats.bootstrap((x,), np.mean, n_resamples=20_000, method="BCa", rng=np.random.default_rng(1)).confidence_interval
    se = x.std(ddof=1) / math.sqrt(x.size)
    assert abs(ours[0] - ref.low) < 0.05 * se and abs(ours[1] - ref.high) < 0.05 * se


def test_evaluate_ci_in_every_engine_and_the_column_order():
    log = rp.datasets.chatbot_log(n_questions=60)
    polars_out = rp.evaluate(log, ["ndcg@10", "num_rel", "gm_map"], by="model", ci=0.9)
    duck_out = rp.evaluate(log, ["ndcg@10", "num_rel", "gm_map"], by="model", ci=0.9, engine="duckdb")
    assert polars_out.columns == ["model", "queries", "ndcg@10", "ndcg@10_low", "ndcg@10_high", "num_rel", "num_rel_low",
                                  "num_rel_high", "gm_map", "gm_map_low", "gm_map_high"]
    for c in polars_out.columns[1:]:
        np.testing.assert_allclose(polars_out[c].to_numpy(), duck_out[c].to_numpy(), rtol=1e-12)
    per = rp.evaluate(log, ["ndcg@10"], by="model", per_query=True)
    for row in polars_out.iter_rows(named=True):
        x = per.filter(pl.col("model") == row["model"])["ndcg@10"].to_numpy()
        low, high = stats.t.interval(0.9, x.size - 1, loc=x.mean(), scale=stats.sem(x))
        assert row["ndcg@10_low"] == pytest.approx(low, rel=1e-12) and row["ndcg@10_high"] == pytest.approx(high, rel=1e-12)
    boot = rp.evaluate(log, ["ndcg@10"], by="model", ci=0.9, ci_method="bca")
    assert boot.equals(rp.evaluate(log, ["ndcg@10"], by="model", ci=0.9, ci_method="bca"))
    assert (boot["ndcg@10_low"] < boot["ndcg@10"]).all() and (boot["ndcg@10"] < boot["ndcg@10_high"]).all()


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"ci": 1.5}, "ci must be a confidence level"), ({"ci": 0.9, "ci_method": "normal"}, "ci_method must be"),
    ({"ci": 0.9, "per_query": True}, "no per-query value"),
])
def test_evaluate_ci_refuses_bad_arguments(kwargs, message):
    with pytest.raises(RankPolarsError, match=message):
        rp.evaluate(rp.datasets.chatbot_log(n_questions=5), "ndcg@10", by="model", **kwargs)


def test_one_query_has_no_interval_not_nan():
    per = pl.DataFrame({"model": ["a", "b", "b"], "x": [0.5, 0.2, 0.4]})
    for method in ("t", "bootstrap", "bca"):
        out = intervals(per, [("x", parse("ndcg"))], ["model"], 0.95, method, n_resamples=200)
        assert out.row(0, named=True) == {"model": "a", "x_low": None, "x_high": None}
        assert out["x_low"][1] is not None


# ----------------------------------------------------------------------------------------
# ratios of means: the delta method, and compare(test="delta") between unpaired arms,
# against tea-tasting's RatioOfMeans (use_t=False: the normal interval and z test)


def click_arms(seed: int, rankings: tuple[int, int]) -> pl.DataFrame:
    """Two A/B arms with their own rankings (different ids): 1-10 rows, 0/1 clicks."""
    rng = np.random.default_rng(seed)
    rows = []
    for a, n in enumerate(rankings):
        for q in range(n):
            for pos in range(1, int(rng.integers(1, 11)) + 1):
                rows.append((f"arm{a}", f"s{a}-{q}", f"i{pos}", pos, int(rng.random() < (0.25 + 0.08 * a) / pos)))
    return pl.DataFrame(rows, schema=["arm", "query", "item", "position", "click"], orient="row")


def tea_ratio(parts: pl.DataFrame, confidence: float):
    tea = pytest.importorskip("tea_tasting")
    data = parts.select(variant=pl.col("arm").replace_strict({"arm0": 0, "arm1": 1}), x="x", y="y").to_pandas()
    exp = tea.Experiment(r=tea.RatioOfMeans("x", "y", use_t=False, equal_var=False, confidence_level=confidence))
    return exp.analyze(data)["r"]


def raw_parts(log: pl.DataFrame, k: int) -> pl.DataFrame:
    """Clicks and rows shown in the top k per ranking, straight from the log."""
    top = log.filter(pl.col("position") <= k)
    return top.group_by("arm", "query").agg(x=pl.col("click").sum().cast(pl.Float64), y=pl.len().cast(pl.Float64))


@pytest.mark.parametrize(("seed", "sizes", "confidence"), [(1, (80, 120), 0.95), (7, (30, 45), 0.9), (9, (200, 150), 0.99)])
def test_delta_difference_of_two_ratios_is_tea_tastings(seed, sizes, confidence):
    from rank_polars.stats.intervals import difference, linearise, ratio_of_means

    log = click_arms(seed, sizes)
    parts = raw_parts(log, 5)
    ref = tea_ratio(parts, confidence)
    arms = [parts.filter(pl.col("arm") == a) for a in ("arm0", "arm1")]
    (x0, y0), (x1, y1) = [(p["x"].to_numpy(), p["y"].to_numpy()) for p in arms]
    assert ratio_of_means(x0, y0).value == pytest.approx(ref.control, rel=1e-9)
    assert ratio_of_means(x1, y1).value == pytest.approx(ref.treatment, rel=1e-9)
    # the standalone function on numerator / denominator columns
    est, p = difference(linearise(x0, y0), linearise(x1, y1), confidence)
    assert est.value == pytest.approx(ref.effect_size, rel=1e-9)
    assert est.low == pytest.approx(ref.effect_size_ci_lower, rel=1e-9)
    assert est.high == pytest.approx(ref.effect_size_ci_upper, rel=1e-9)
    assert p == pytest.approx(ref.pvalue, rel=1e-9)
    # the delta-method variance of one ratio is the variance of the difference with an arm of no spread
    se = math.sqrt(ratio_of_means(x0, y0).se ** 2 + ratio_of_means(x1, y1).se ** 2)
    assert est.se == pytest.approx(se, rel=1e-9)
    # compare on the ratio CTR's per-ranking values (H20a's linearisation), unpaired between arms
    out = rp.compare(log, "ctr(agg=ratio)@5", by="arm", relevance="click", test="delta", confidence=confidence)
    row = out.row(0, named=True)
    assert (row["baseline"], row["version"], row["test"], row["interval"]) == ("arm0", "arm1", "delta", "delta")
    assert row["n_queries"] == sum(sizes) and row["wins"] is None and row["power"] is None
    assert row["diff"] == pytest.approx(ref.effect_size, rel=1e-9)
    assert row["ci_low"] == pytest.approx(ref.effect_size_ci_lower, rel=1e-9)
    assert row["ci_high"] == pytest.approx(ref.effect_size_ci_upper, rel=1e-9)
    assert row["p_value"] == pytest.approx(ref.pvalue, rel=1e-9)


def test_delta_without_spread_or_units_has_no_p():
    from rank_polars.stats.intervals import difference, ratio_of_means

    est, p = difference(np.full(5, 0.3), np.full(6, 0.3 + 1e-17))
    assert math.isnan(p) and math.isnan(est.low)
    assert math.isnan(ratio_of_means(np.array([1.0]), np.array([2.0])).se)
    log = click_arms(3, (1, 20))
    row = rp.compare(log, "ctr(agg=ratio)@5", by="arm", relevance="click", test="delta").row(0, named=True)
    assert row["p_value"] is None and row["note"] == "n too small" and not row["significant"]
    with pytest.raises(rp.RankPolarsError, match="interval='delta'"):
        rp.compare(log, "ctr(agg=ratio)@5", by="arm", relevance="click", test="delta", interval="t")


def test_evaluate_ci_in_spark_equals_polars(spark):
    """The third engine: the same per-query values from Spark give the same intervals."""
    log = rp.datasets.chatbot_log(n_questions=60)
    metrics = ["ndcg@10", "num_rel", "gm_map"]
    polars_out = rp.evaluate(log, metrics, by="model", ci=0.9).sort("model")
    spark_out = rp.evaluate(log, metrics, by="model", ci=0.9, engine="spark", spark=spark).sort("model")
    assert spark_out.columns == polars_out.columns
    for c in polars_out.columns[1:]:
        np.testing.assert_allclose(spark_out[c].to_numpy(), polars_out[c].to_numpy(), rtol=1e-12)
