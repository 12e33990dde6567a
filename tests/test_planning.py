"""Topic set size design and power, against statsmodels' ``TTestPower`` and ``FTestAnovaPower``."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from scipy import stats
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.formula.api import ols
from statsmodels.stats.anova import anova_lm
from statsmodels.stats.power import FTestAnovaPower, TTestPower

import rank_polars as rp
from rank_polars.errors import RankPolarsError
from rank_polars.stats.planning import anova_power, estimate_sd, t_power

FEW = settings(max_examples=15, deadline=None)


@FEW
@given(st.floats(0.0, 2.0), st.integers(2, 400), st.sampled_from([0.01, 0.05, 0.1]))
def test_t_power_is_statsmodels(effect, n, alpha):
    ref = TTestPower().power(effect, n, alpha)
    got = t_power(effect, n, alpha)
    if math.isnan(ref):  # statsmodels adds SciPy's nct.cdf far in the left tail, NaN there; that tail is ~0
        ref = stats.nct.sf(stats.t.isf(alpha / 2, n - 1), n - 1, effect * math.sqrt(n))
    assert 0 <= got <= 1 and got == pytest.approx(ref, abs=1e-9)


@FEW
@given(st.floats(0.1, 1.5), st.sampled_from([0.01, 0.05]), st.sampled_from([0.7, 0.8, 0.9]))
def test_queries_needed_for_a_paired_t_is_statsmodels_solve_power(effect, alpha, power):
    n = rp.queries_needed(effect, sd=1.0, alpha=alpha, power=power)
    exact = TTestPower().solve_power(effect_size=effect, alpha=alpha, power=power)
    assert n == max(2, math.ceil(exact - 1e-9))
    assert TTestPower().power(effect, n, alpha) >= power - 1e-9
    assert n == 2 or TTestPower().power(effect, n - 1, alpha) < power


@FEW
@given(st.floats(0.02, 0.3), st.floats(0.05, 0.4), st.integers(3, 10), st.integers(2, 300))
def test_anova_power_is_statsmodels_with_the_least_favourable_configuration(delta, sd, m, n):
    f = math.sqrt(delta**2 / (2 * m * sd**2))  # Cohen's f of two means delta apart, the rest in the middle
    want = FTestAnovaPower().power(f, m * n, 0.05, m)
    if math.isnan(want):
        # SciPy's noncentral F gives NaN past a huge noncentrality (hypothesis found f^2 N = 1,282:
        # delta 0.3, sd 0.078, 3 versions of 174 queries), where the power is 1 in doubles
        assert f * f * m * n > 500 and anova_power(delta, sd, n, m) == 1.0
        return
    assert anova_power(delta, sd, n, m) == pytest.approx(want, abs=1e-9)


@pytest.mark.parametrize(("delta", "sd", "m"), [(0.1, 0.2, 5), (0.05, 0.15, 3), (0.2, 0.3, 10)])
def test_queries_needed_for_m_versions_is_statsmodels_solve_power(delta, sd, m):
    n = rp.queries_needed(delta, sd=sd, versions=m)
    f = math.sqrt(delta**2 / (2 * m * sd**2))
    total = FTestAnovaPower().solve_power(effect_size=f, nobs=None, alpha=0.05, power=0.8, k_groups=m)
    assert n == math.ceil(total / m - 1e-9)
    assert rp.queries_needed(delta, sd=sd, test="anova", versions=m) == n


def test_sd_from_a_log_is_sakais_residual_estimate():
    rng = np.random.default_rng(2)
    rows = [(v, f"q{j}", f"i{k}", k + 1, int(rng.random() < 0.15 + 0.05 * vi))
            for vi, v in enumerate("abcd") for j in range(50) for k in range(5)]
    log = pl.DataFrame(rows, schema=["model", "query", "item", "position", "relevance"], orient="row")
    per = rp.evaluate(log, "ndcg@5", by="model", per_query=True).rename({"ndcg@5": "y"}).to_pandas()
    v_e = anova_lm(ols("y ~ C(model) + C(query)", data=per).fit()).loc["Residual", "mean_sq"]
    assert estimate_sd(log, "ndcg@5", by="model") == pytest.approx(math.sqrt(2 * v_e), rel=1e-9)
    assert estimate_sd(log, "ndcg@5", by="model", test="anova") == pytest.approx(math.sqrt(v_e), rel=1e-9)
    n = rp.queries_needed(0.05, log=log, metric="ndcg@5", by="model")
    assert n == rp.queries_needed(0.05, sd=math.sqrt(2 * v_e))


def test_no_difference_needs_no_number_of_queries_and_bad_arguments_are_named():
    assert rp.queries_needed(0.0, sd=0.2) is None
    for kwargs, message in [({"sd": -1}, "sd must be"), ({"sd": 0.2, "power": 1.0}, "power must be"),
                            ({"sd": 0.2, "versions": 1}, "versions must be"), ({}, "give sd")]:
        with pytest.raises(RankPolarsError, match=message):
            rp.queries_needed(0.05, **kwargs)


def test_compare_reports_power_when_it_cannot_tell():
    per = pl.DataFrame({"model": ["a"] * 6 + ["b"] * 6, "query": [f"q{i}" for i in range(6)] * 2,
                        "m": [0.2, 0.4, 0.5, 0.1, 0.6, 0.3, 0.25, 0.35, 0.6, 0.1, 0.6, 0.4]})
    from rank_polars.stats.compare import compare_values

    row = compare_values(per, baseline="a").row(0, named=True)
    assert not row["significant"]
    d = per.filter(pl.col("model") == "b")["m"].to_numpy() - per.filter(pl.col("model") == "a")["m"].to_numpy()
    dz = d.mean() / d.std(ddof=1)
    assert row["power"] == pytest.approx(TTestPower().power(dz, 6, 0.05), abs=1e-9)
    assert row["queries_needed"] == math.ceil(TTestPower().solve_power(dz, power=0.8, alpha=0.05))


def test_large_answers_are_given_and_beyond_a_billion_refused():
    """From 2^29 queries on, the search returned None, which says "delta is 0": 784,886,053
    queries for delta 1e-4 (statsmodels' answer) came back as None."""
    exact = TTestPower().solve_power(effect_size=1e-4, alpha=0.05, power=0.8)
    assert rp.queries_needed(1e-4, sd=1.0) == math.ceil(exact - 1e-6)
    with pytest.raises(rp.RankPolarsError, match="more than 1,000,000,000 queries would be needed"):
        rp.queries_needed(1e-5, sd=1.0)
