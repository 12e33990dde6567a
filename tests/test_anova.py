"""Many versions at once: two-way ANOVA, Tukey HSD, randomised Tukey HSD and all-pairs compare,
against statsmodels (``anova_lm``, ``multipletests``), SciPy (``tukey_hsd``, ``studentized_range``,
``ttest_rel``) and an exact enumeration of the permutations."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.formula.api import ols
from statsmodels.stats.anova import anova_lm
from statsmodels.stats.multitest import multipletests

import rank_polars as rp
from rank_polars.stats.anova import anova_values, block, randomized_tukey, tukey, tukey_pairs, two_way
from rank_polars.stats.compare import compare_values
from rank_polars.errors import RankPolarsError


@st.composite
def matrices(draw: st.DrawFn, max_versions: int = 12) -> np.ndarray:
    """versions x queries per-query values: 2-12 versions, 3-500 queries, on a coarse grid (ties),
    some versions constant."""
    m = draw(st.integers(2, max_versions))
    n = draw(st.integers(3, 500 if m <= 3 else 40))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    y = rng.random((m, n)) * rng.random(m)[:, None] + rng.random(n)[None, :] * 0.5
    if draw(st.booleans()):
        y = np.round(y, 1)  # many ties
    for i in range(m):
        if draw(st.integers(0, 5)) == 0:
            y[i] = draw(st.sampled_from([0.0, 1.0, 0.5]))  # a constant version
    return y


def per_query_frame(y: np.ndarray) -> pl.DataFrame:
    m, n = y.shape
    return pl.DataFrame({
        "model": [f"v{i:02d}" for i in range(m) for _ in range(n)],
        "query": [f"q{j:03d}" for _ in range(m) for j in range(n)],
        "m": y.ravel(),
    })


def statsmodels_anova(y: np.ndarray) -> pd.DataFrame:
    frame = per_query_frame(y).to_pandas()
    return anova_lm(ols("m ~ C(model) + C(query)", data=frame).fit())


FAST = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# SciPy's studentized range tail is a numerical integral (~50 ms a value): fewer, smaller cases
TUKEY = settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(matrices())
def test_two_way_anova_is_statsmodels_anova_lm(y):
    ref = statsmodels_anova(y)
    got = anova_values(per_query_frame(y)).row(0, named=True)
    scale = max(1.0, float(np.square(y - y.mean()).sum()))
    assert got["ss_versions"] == pytest.approx(ref.loc["C(model)", "sum_sq"], abs=1e-9 * scale)
    assert got["ss_queries"] == pytest.approx(ref.loc["C(query)", "sum_sq"], abs=1e-9 * scale)
    assert got["ss_residual"] == pytest.approx(ref.loc["Residual", "sum_sq"], abs=1e-9 * scale)
    assert got["df_residual"] == ref.loc["Residual", "df"]
    if ref.loc["Residual", "sum_sq"] > 1e-6 * scale:  # F is well conditioned
        assert got["f"] == pytest.approx(ref.loc["C(model)", "F"], rel=1e-9)
        assert got["p_value"] == pytest.approx(ref.loc["C(model)", "PR(>F)"], rel=1e-7, abs=1e-9)
        assert got["p_queries"] == pytest.approx(ref.loc["C(query)", "PR(>F)"], rel=1e-7, abs=1e-9)
        ss_t, ms_e = ref["sum_sq"].sum(), ref.loc["Residual", "mean_sq"]
        assert got["eta_squared"] == pytest.approx(ref.loc["C(model)", "sum_sq"] / ss_t, rel=1e-9, abs=1e-12)
        omega = (ref.loc["C(model)", "sum_sq"] - (y.shape[0] - 1) * ms_e) / (ss_t + ms_e)
        assert got["omega_squared"] == pytest.approx(omega, rel=1e-9, abs=1e-12)
        assert got["note"] is None


@TUKEY
@given(st.integers(2, 5), st.integers(3, 200), st.integers(0, 2**32 - 1), st.floats(0.8, 0.99))
def test_tukey_pairs_is_scipy_tukey_hsd(m, n, seed, confidence):
    rng = np.random.default_rng(seed)
    groups = [np.round(rng.normal(rng.random(), 0.3, n), 2) for _ in range(m)]
    ref = stats.tukey_hsd(*groups)
    means = np.array([g.mean() for g in groups])
    ms = sum(float(np.square(g - g.mean()).sum()) for g in groups) / (m * n - m)
    p, half = tukey_pairs(means, ms, n, m * n - m, confidence)
    np.testing.assert_allclose(p, ref.pvalue, rtol=1e-7, atol=1e-9)
    ci = ref.confidence_interval(confidence)
    diff = means[:, None] - means[None, :]
    np.testing.assert_allclose(diff - half, ci.low, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(diff + half, ci.high, rtol=1e-9, atol=1e-9)


@TUKEY
@given(matrices(max_versions=5))
def test_compare_tukey_uses_the_two_way_residual_variance(y):
    ref = statsmodels_anova(y)
    v_e, df = ref.loc["Residual", "mean_sq"], int(ref.loc["Residual", "df"])
    out = compare_values(per_query_frame(y), pairs="all", test="tukey", confidence=0.9)
    m, n = y.shape
    assert out.height == m * (m - 1) // 2
    scale = max(1.0, float(np.square(y - y.mean()).sum()))
    residual = ref.loc["Residual", "sum_sq"] > 1e-6 * scale
    # the quantile is a root of a numerical integral (the costliest reference value): once per example
    half = stats.studentized_range.ppf(0.9, m, df) * math.sqrt(v_e / n) if residual else math.nan
    for row in out.iter_rows(named=True):
        i, j = int(row["baseline"][1:]), int(row["version"][1:])
        d = y[j] - y[i]
        assert row["diff"] == pytest.approx(d.mean(), abs=1e-12)
        assert (row["wins"], row["ties"], row["losses"]) == (int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum()))
        if residual:
            q = abs(d.mean()) / math.sqrt(v_e / n)
            assert row["p_value"] == pytest.approx(stats.studentized_range.sf(q, m, df) if q else 1.0, rel=1e-7, abs=1e-9)
            assert row["ci_low"] == pytest.approx(d.mean() - half, rel=1e-7, abs=1e-9)
            assert row["p_adjusted"] == row["p_value"] and row["interval"] == "tukey"
        elif ref.loc["Residual", "sum_sq"] < 1e-20:
            # no residual variance: no p-value, never "significant"
            assert row["p_value"] is None and row["significant"] is False and row["note"] == "no residual variance"


@FAST
@given(matrices(), st.sampled_from(["holm", "bh", "bonferroni"]))
def test_all_pairs_paired_t_with_correction_is_statsmodels_multipletests(y, correction):
    out = compare_values(per_query_frame(y), pairs="all", test="paired_t", correction=correction)
    m = y.shape[0]
    refs, ps = [], []
    for i, j in itertools.combinations(range(m), 2):
        d = y[j] - y[i]
        if np.ptp(d) <= 1e-12 * np.abs(y[[i, j]]).max():
            ps.append(math.nan)  # no spread: no t-test (SciPy: NaN, or a p of 1e-49 from rounding)
            refs.append(None)
        else:
            r = stats.ttest_rel(y[j], y[i])
            ps.append(r.pvalue)
            refs.append(r.confidence_interval(0.95))
    method = {"holm": "holm", "bh": "fdr_bh", "bonferroni": "bonferroni"}[correction]
    valid = ~np.isnan(ps)  # a pair without a p is not counted in the family
    adjusted = np.full(len(ps), np.nan)
    if valid.any():
        adjusted[valid] = multipletests(np.asarray(ps)[valid], method=method)[1]
    np.testing.assert_allclose(out["p_value"].to_numpy(), ps, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(out["p_adjusted"].to_numpy(), adjusted, rtol=1e-9, atol=1e-12)
    for row, ref in zip(out.iter_rows(named=True), refs):
        if ref is not None:
            assert row["ci_low"] == pytest.approx(ref.low, rel=1e-9, abs=1e-12)
            assert row["ci_high"] == pytest.approx(ref.high, rel=1e-9, abs=1e-12)


def exact_randomized_tukey(y: np.ndarray) -> np.ndarray:
    """p[i, j] over every arrangement of every query's values across the versions."""
    m, n = y.shape
    means = y.mean(axis=1)
    observed = np.abs(means[:, None] - means[None, :])
    perms = list(itertools.permutations(range(m)))
    ranges = []
    for choice in itertools.product(perms, repeat=n):
        arranged = np.stack([y[list(p), j] for j, p in enumerate(choice)], axis=1)
        mu = arranged.mean(axis=1)
        ranges.append(mu.max() - mu.min())
    ranges = np.array(ranges)
    return (ranges[None, None, :] >= observed[:, :, None] - 1e-12).mean(axis=2)


@pytest.mark.parametrize("y", [
    np.array([[0.1, 0.4, 0.3], [0.3, 0.6, 0.2], [0.5, 0.9, 0.6]]),
    np.array([[0.0, 1.0, 1.0, 0.5], [1.0, 1.0, 0.0, 0.5]]),  # ties within queries
    np.array([[0.2, 0.2, 0.7], [0.2, 0.5, 0.7], [0.2, 0.9, 0.9]]),
])
def test_randomized_tukey_agrees_with_exact_enumeration(y):
    exact = exact_randomized_tukey(y)
    b = 40_000
    got = randomized_tukey(y, b, np.random.default_rng(7))
    # within Monte-Carlo error (4.5 standard errors) of the exact permutation p-value
    bound = 4.5 * np.sqrt(exact * (1 - exact) / b) + 2.0 / b
    assert (np.abs(got - exact) <= bound).all(), (got, exact)
    again = randomized_tukey(y, b, np.random.default_rng(7))
    assert (again == got).all()  # a seed gives the same numbers


def test_randomized_tukey_in_pieces_equals_its_distribution(monkeypatch):
    # one resample larger than a step: the queries are permuted in pieces; same exact distribution
    import sys

    anova_module = sys.modules["rank_polars.stats.anova"]  # rp.anova is the function

    y = np.array([[0.1, 0.4, 0.3], [0.3, 0.6, 0.2], [0.5, 0.9, 0.6]])
    monkeypatch.setattr(anova_module, "_CHUNK", 4)
    got = randomized_tukey(y, 20_000, np.random.default_rng(1))
    exact = exact_randomized_tukey(y)
    assert (np.abs(got - exact) <= 4.5 * np.sqrt(exact * (1 - exact) / 20_000) + 1e-4).all()


def test_compare_randomized_tukey_rows_and_seed():
    rng = np.random.default_rng(0)
    y = rng.random((4, 30)) + np.array([0, 0.02, 0.3, 0.31])[:, None]
    per = per_query_frame(y)
    a = compare_values(per, pairs="all", test="randomized-tukey", n_resamples=2000, seed=3, interval="t")
    b = compare_values(per, pairs="all", test="randomized-tukey", n_resamples=2000, seed=3, interval="t")
    assert a.equals(b) and a.height == 6
    far = a.filter((pl.col("baseline") == "v00") & (pl.col("version") == "v03")).row(0, named=True)
    near = a.filter((pl.col("baseline") == "v00") & (pl.col("version") == "v01")).row(0, named=True)
    assert far["significant"] and not near["significant"] and near["power"] is not None


def test_one_query_and_no_residual_variance_give_nulls_with_a_reason():
    one = per_query_frame(np.array([[0.1], [0.5], [0.7]]))
    row = anova_values(one).row(0, named=True)
    assert row["f"] is None and row["p_value"] is None and "n too small" in row["note"]
    out = compare_values(one, pairs="all", test="tukey")
    assert out["p_value"].null_count() == 3 and not out["significant"].any() and set(out["note"]) == {"n too small"}
    additive = per_query_frame(np.array([[0.1, 0.4, 0.2], [0.3, 0.6, 0.4]]))  # the same +0.2 on every query
    row = anova_values(additive).row(0, named=True)
    assert row["p_value"] is None and row["note"].startswith("no residual variance")
    out = compare_values(additive, pairs="all", test="tukey")
    assert out["p_value"].to_list() == [None] and out["significant"].to_list() == [False]


def test_block_fills_or_skips_absent_values():
    per = pl.DataFrame({"model": ["a", "a", "b"], "query": ["q1", "q2", "q1"], "m": [1.0, 0.5, 0.25]})
    with pytest.warns(UserWarning, match="count as 0"):
        b = block(per, "model", "query", ["m"], "zero")
    assert b.values["m"].tolist() == [[1.0, 0.5], [0.25, 0.0]]
    with pytest.warns(UserWarning, match="left out"):
        b = block(per, "model", "query", ["m"], "skip")
    assert b.values["m"].tolist() == [[1.0], [0.25]] and b.queries.to_list() == ["q1"]


@pytest.mark.parametrize(("per", "message"), [
    (pl.DataFrame({"model": ["a", "a", "b"], "query": ["q1", "q1", "q1"], "m": [1.0, 0.5, 0.25]}), "repeat a"),
    (pl.DataFrame({"model": ["a", "b"], "query": ["q1", "q1"], "m": [float("nan"), 0.5]}), "not numbers"),
    (pl.DataFrame({"model": ["a", "a"], "query": ["q1", "q2"], "m": [1.0, 0.5]}), "at least 2 versions"),
    (pl.DataFrame({"model": ["a", None], "query": ["q1", "q1"], "m": [1.0, 0.5]}), "has nulls"),
])
def test_anova_refuses_bad_input(per, message):
    with pytest.raises(RankPolarsError, match=message):
        anova_values(per)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"per_query": True}, "anova: per_query= is not an evaluate option here"),
    ({"by_judge": True}, "anova: by_judge=True is evaluate's .* one label set"),
    ({"bounds": True}, "anova: bounds=True is evaluate's .* one label set"),
])
def test_anova_refuses_the_options_that_change_evaluates_table(kwargs, message):
    log = pl.DataFrame({"model": ["a", "b"], "query": ["q1", "q1"], "item": ["x", "x"], "position": [1, 1],
                        "relevance": [1, 0]})
    with pytest.raises(RankPolarsError, match=message):
        rp.anova(log, "p@1", **kwargs)


def test_anova_from_a_log_matches_statsmodels():
    rng = np.random.default_rng(5)
    rows = [(v, f"q{j}", f"i{k}", k + 1, int(rng.random() < 0.2 + 0.1 * vi))
            for vi, v in enumerate("abcde") for j in range(40) for k in range(5)]
    log = pl.DataFrame(rows, schema=["model", "query", "item", "position", "relevance"], orient="row")
    out = rp.anova(log, ["p@5", "ndcg@5"], by="model")
    per = rp.evaluate(log, ["p@5", "ndcg@5"], by="model", per_query=True)
    for label in ("p@5", "ndcg@5"):
        frame = per.rename({label: "y"}).to_pandas()
        ref = anova_lm(ols("y ~ C(model) + C(query)", data=frame).fit())
        row = out.filter(pl.col("metric") == label).row(0, named=True)
        assert row["f"] == pytest.approx(ref.loc["C(model)", "F"], rel=1e-9)
        assert row["p_value"] == pytest.approx(ref.loc["C(model)", "PR(>F)"], rel=1e-7, abs=1e-12)


def test_compare_argument_errors():
    per = per_query_frame(np.array([[0.1, 0.4, 0.2], [0.3, 0.7, 0.4]]))
    with pytest.raises(RankPolarsError, match="leave baseline out"):
        compare_values(per, pairs="all", baseline="v00")
    with pytest.raises(RankPolarsError, match="interval='tukey'"):
        compare_values(per, test="paired_t", interval="tukey")
    with pytest.raises(RankPolarsError, match="pairs must be"):
        compare_values(per, pairs="some")


def test_block_of_evaluates_sorted_output_is_the_general_one():
    """The shortcut for per-query tables sorted by (version, query) with every version on the same
    queries gives the same block as coding the ids of the same rows shuffled."""
    rng = np.random.default_rng(4)
    for queries in (["q3", "q1", "q2", "q10"], [5, 1, 3]):
        rows = [{"model": mdl, "query": q, "m": float(rng.random()), "k": int(rng.integers(0, 3))}
                for mdl in ("b", "a", "c") for q in queries]
        per = pl.DataFrame(rows).sort("model", "query")
        fast = block(per, "model", "query", ["m", "k"])
        general = block(per.sample(fraction=1.0, shuffle=True, seed=2), "model", "query", ["m", "k"])
        assert fast.versions == general.versions == ["a", "b", "c"]
        assert fast.queries.to_list() == general.queries.to_list() == sorted(queries)
        for label in ("m", "k"):
            np.testing.assert_array_equal(fast.values[label], general.values[label])
    # not the same queries in every version: the general path (with its warning)
    ragged = pl.DataFrame({"model": ["a", "a", "b", "b"], "query": ["q1", "q2", "q1", "q3"], "m": [0.1, 0.2, 0.3, 0.4]})
    with pytest.warns(UserWarning, match="count as 0"):
        b = block(ragged, "model", "query", ["m"])
    assert b.values["m"].tolist() == [[0.1, 0.2, 0.0], [0.3, 0.0, 0.4]]


def test_no_query_in_every_version_says_so() -> None:
    """missing="skip" with versions that share no query: ANOVA printed df -1 and NumPy's "Mean of
    empty slice", Tukey said "no residual variance" (found by an adversarial pass, November 2026)."""
    import warnings

    log = pl.DataFrame({"model": ["v1", "v1", "v2", "v2"], "query": ["a", "b", "c", "d"], "item": ["x"] * 4,
                        "position": [1] * 4, "relevance": [1, 0, 0, 1]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = rp.anova(log, ["p@1"], missing="skip")
        pairs = rp.compare(log, ["p@1"], missing="skip", pairs="all", test="tukey")
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]
    row = table.row(0, named=True)
    assert (row["n_queries"], row["df_queries"], row["df_residual"], row["f"]) == (0, 0, 0, None)
    assert row["note"] == "no query is in every version's run (missing='skip' left them all out)"
    assert pairs["note"].to_list() == [row["note"]] and pairs["p_value"].to_list() == [None]


def test_randomized_tukey_on_identical_versions_has_no_p_value() -> None:
    """As the paired tests and Tukey: every version the same on every query is no test (it gave
    p = 1.0 without a note)."""
    log = pl.DataFrame({"model": [m for m in ("v1", "v2", "v3") for _ in range(3)], "query": ["a", "b", "c"] * 3,
                        "item": ["x"] * 9, "position": [1] * 9, "relevance": [1, 0, 1] * 3})
    got = rp.compare(log, ["p@1"], pairs="all", test="randomized-tukey", n_resamples=50)
    assert got["p_value"].to_list() == [None] * 3
    assert set(got["note"].to_list()) == {"no difference on any query"}
