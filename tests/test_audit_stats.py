"""Audit of the statistics on inputs a real pipeline produces: every expected number comes from
SciPy / statsmodels or a formula written out here, never from rank_polars' own output.

Each test below failed before its fix (silent wrong numbers, unclear errors, results that
depended on row order), except the last few, which pin down uncovered cases that could fail.
"""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest
from scipy import stats as ss

import rank_polars as rp
from rank_polars.stats.anova import anova_values, randomized_tukey
from rank_polars.stats.compare import compare_values
from rank_polars.errors import CoverageWarning, RankPolarsError, SmallSampleWarning
from rank_polars.stats.intervals import intervals
from rank_polars.measures import parse


def _per(a: list[float], b: list[float], queries: list | None = None) -> pl.DataFrame:
    queries = queries or [f"q{i}" for i in range(len(a))]
    return pl.DataFrame({"model": ["a"] * len(a) + ["b"] * len(b), "query": queries[: len(a)] + queries[: len(b)],
                         "m": [*a, *b]})


# ---------------------------------------------------------------------------------------------
# compare_values: the per-query table's contract (one row per version and query, numeric metrics)


def test_a_version_and_query_given_twice_is_refused_not_paired_twice() -> None:
    # q1 twice for "a": a join pairs it twice (3 "queries" from 2), with a p-value of its own
    per = pl.DataFrame({"model": ["a", "a", "a", "b", "b"], "query": ["q1", "q1", "q2", "q1", "q2"],
                        "m": [.1, .2, .3, .4, .5]})
    for test in ("paired_t", "tukey", "delta"):
        with pytest.raises(RankPolarsError, match=r"more than one row.*'q1'"):
            compare_values(per, test=test)


def test_a_second_grouping_column_is_not_compared_as_a_metric() -> None:
    # evaluate(by=["model", "day"], per_query=True) then compare_values(by="model"): "day" is not a
    # metric, and each query has two rows per version
    per = pl.DataFrame({"model": ["a"] * 4 + ["b"] * 4, "day": [1, 1, 2, 2] * 2, "query": ["q1", "q2"] * 4,
                        "m": [.1, .2, .3, .4, .5, .6, .9, .1]})
    with pytest.raises(RankPolarsError, match="more than one row"):
        compare_values(per)
    # a text column: a clear error naming it, not Polars' "is_finite not supported for str"
    with pytest.raises(RankPolarsError, match=r"'day'.*not numeric"):
        compare_values(per.with_columns(pl.col("day").cast(pl.String)))


def test_a_boolean_metric_is_compared_as_0_and_1() -> None:
    x = np.array([1, 0, 1, 1, 0, 0, 1, 0], dtype=bool)
    y = np.array([1, 1, 1, 1, 0, 1, 1, 1], dtype=bool)
    out = compare_values(_per(x.tolist(), y.tolist()), correction=None)
    assert out["p_value"][0] == pytest.approx(ss.ttest_rel(y.astype(float), x.astype(float)).pvalue, rel=1e-12)


@pytest.mark.parametrize("kwargs", [{}, {"missing": "skip"}, {"pairs": "all", "test": "tukey"},
                                    {"pairs": "all", "test": "randomized-tukey", "n_resamples": 99}])
def test_null_query_ids_are_refused(kwargs: dict) -> None:
    # null ids never join: "zero" made each a query of its own (zero-filled), "skip" dropped them, Tukey crashed
    per = _per([.1, .2, .3, .4], [.5, .6, .9, .1], ["q1", "q2", "q3", None])
    with pytest.raises(RankPolarsError, match="'query' has null"):
        compare_values(per, **kwargs)


def test_a_query_column_under_another_name_is_named_in_the_error() -> None:
    per = _per([.1, .2, .3], [.5, .6, .9]).rename({"query": "qid"})
    with pytest.raises(RankPolarsError, match=r"no column 'query'.*query="):
        compare_values(per)
    assert compare_values(per, query="qid")["n_queries"][0] == 3


def test_an_unknown_missing_is_refused_not_read_as_zero() -> None:
    per = _per([.1, .2, .3, .4], [.5, .6, .9])
    with pytest.raises(RankPolarsError, match="missing must be 'zero' or 'skip'"):
        compare_values(per, missing="skp")


def test_a_direction_for_a_column_that_is_not_there_is_refused() -> None:
    # {"abandonment": False} for a column "abandonment@10": the direction was silently "higher is better"
    per = _per([1., 0., 1., 1., 1., 1.], [0., 0., 0., 1., 0., 0.]).rename({"m": "abandonment@10"})
    with pytest.raises(RankPolarsError, match="'abandonment'"):
        compare_values(per, higher_is_better={"abandonment": False})
    out = compare_values(per, higher_is_better={"abandonment@10": False})
    assert (out["wins"][0], out["losses"][0]) == (4, 0)  # 4 queries fall from 1 to 0: better


def test_queries_left_out_by_skip_are_counted_in_a_warning() -> None:
    # as the Tukey tests' block already said; n_queries alone does not say how many were left out
    per = _per([.1, .2, .3, .4, .8], [.5, .6, .9])
    with pytest.warns(CoverageWarning, match=r"2 queries .*left out \(missing='skip'\), e.g. 'q3', 'q4'"):
        out = compare_values(per, missing="skip")
    assert out["n_queries"][0] == 3


def test_anova_refuses_a_text_column_clearly() -> None:
    per = pl.DataFrame({"model": ["a"] * 3 + ["b"] * 3, "query": ["q1", "q2", "q3"] * 2,
                        "m": [.1, .5, .3, .4, .5, .9], "day": ["1", "2", "3"] * 2})
    with pytest.raises(RankPolarsError, match=r"'day'.*not numeric"):
        anova_values(per)


def test_anova_values_refuses_an_unknown_missing() -> None:
    per = pl.DataFrame({"model": ["a"] * 3 + ["b"] * 2, "query": ["q1", "q2", "q3", "q1", "q2"],
                        "m": [.1, .5, .3, .4, .5]})
    with pytest.raises(RankPolarsError, match="missing must be 'zero' or 'skip'"):
        anova_values(per, missing="skp")


@pytest.mark.parametrize("test", ["randomization", "bootstrap"])
def test_pairwise_resampling_does_not_depend_on_the_row_order(test: str) -> None:
    # the tables a DuckDB / Spark pipeline hands over come in any order; the same seed must give
    # the same bits (as the Tukey tests, which sort by query, already did)
    rng = np.random.default_rng(5)
    n = 40
    per = pl.DataFrame({"model": ["a"] * n + ["b"] * n + ["c"] * n,
                        "query": [f"q{i:02d}" for i in range(n)] * 3, "m": rng.random(3 * n)})
    shuffled = per.sample(fraction=1.0, shuffle=True, seed=1)
    kw = {"test": test, "n_resamples": 500, "pairs": "all"}
    assert compare_values(per, **kw).equals(compare_values(shuffled, **kw))
    # and with a query one version lacks (zero-filled), wherever the join puts it
    part = per.filter(~((pl.col("model") == "a") & (pl.col("query") == "q03")))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert compare_values(part, **kw).equals(compare_values(part.reverse(), **kw))


def test_tukey_p_values_far_in_the_tail_are_not_scipys_integration_floor() -> None:
    # SciPy's studentized_range.sf stops near 1e-12 (its integration's error): a Tukey p of 1e-12
    # where the truth is 1e-31.  Two references written out: for two versions Tukey's HSD is the
    # paired t-test (Q = sqrt(2) |T|, V_E = var(d) / 2), and for m versions the true tail lies in
    # [P2, C(m, 2) P2] with P2 = P(|T_df| > q / sqrt(2)) (one pair's event; the union of all pairs')
    rng = np.random.default_rng(0)
    n = 2000
    x = rng.random(n)
    y = x + rng.normal(0.05, 0.2, n)
    per = pl.DataFrame({"model": np.repeat(["a", "b"], n), "query": np.tile(np.arange(n), 2), "m": np.r_[x, y]})
    out = compare_values(per, pairs="all", test="tukey")
    assert out["p_value"][0] == pytest.approx(ss.ttest_rel(y, x).pvalue, rel=1e-9, abs=0)  # ~1e-27
    z = y + rng.normal(0.01, 0.2, n)
    per3 = pl.concat([per, pl.DataFrame({"model": ["c"] * n, "query": np.arange(n), "m": z})])
    out3 = compare_values(per3, pairs="all", test="tukey")
    ve = float(anova_values(per3)["ms_residual"][0])
    means = {"a": x.mean(), "b": y.mean(), "c": z.mean()}
    for base, version, p in out3.select("baseline", "version", "p_value").iter_rows():
        p2 = 2 * ss.t.sf(abs(means[version] - means[base]) / np.sqrt(ve / n) / np.sqrt(2), 2 * (n - 1))
        assert p2 * (1 - 1e-9) <= p <= 3 * p2 * (1 + 1e-9)


def test_a_constant_shift_left_by_rounding_has_an_infinite_effect_and_no_queries_needed() -> None:
    # (x + 0.25) - x is 0.25 up to 1e-17: the note says "the same on every query", so d_z is the
    # documented +inf (sd 0), not 0.25 / 4e-17 = 7e15, and no "4 queries would give 80% power"
    x = np.array([0.1, 0.2, 0.3, 0.7, 0.33, 0.61])
    out = compare_values(_per(x.tolist(), (x + 0.25).tolist()), test="wilcoxon")
    row = out.row(0, named=True)
    assert row["effect_size"] == np.inf
    assert row["queries_needed"] is None and row["power"] is None
    out = compare_values(_per(x.tolist(), (x + 0.25).tolist()))
    assert out["note"][0] == "the difference is the same on every query" and out["queries_needed"][0] is None


@pytest.mark.parametrize("test", ["wilcoxon", "randomization"])
def test_sign_tests_count_only_the_queries_with_a_difference(test: str) -> None:
    # 20 queries, 15 tied: the sign tests drop ties, so 5 signs are left.  No test on 5 signs can
    # reach 0.05 (the exact two-sided minimum is 2 / 2^5, SciPy's exact Wilcoxon on them), yet
    # SciPy's normal approximation on the 20 gave 0.043 ("significant"), and a randomization
    # test with 100 resamples can land below 0.05 by chance
    d = np.r_[np.zeros(15), 0.05 * np.arange(1, 6)]
    x = np.linspace(0.1, 0.6, 20)
    exact = ss.wilcoxon(d[d != 0], method="exact").pvalue
    assert exact == pytest.approx(2 / 2**5) and exact >= 0.05
    with pytest.warns(SmallSampleWarning, match=r"20 paired queries \(5 with a difference\)"):
        out = compare_values(_per(x.tolist(), (x + d).tolist()), test=test, n_resamples=100)
    assert out["p_value"][0] is None and out["note"][0] == "n too small" and not out["significant"][0]


def test_randomized_tukey_without_queries_gives_no_p() -> None:
    p = randomized_tukey(np.empty((3, 0)), 99, np.random.default_rng(0))
    assert isinstance(p, np.ndarray) and p.shape == (3, 3) and np.isnan(p).all()


# ---------------------------------------------------------------------------------------------
# evaluate(ci=): a per-query value a measure leaves undefined (ctr@k of a ranking with no row in
# its top k) is left out of the mean, so it must be left out of the interval too


def _ctr_log() -> pl.DataFrame:
    # s5's log starts at position 3: no row in the top 2, so ctr@2 is null for it
    return pl.DataFrame({
        "model": ["a"] * 12, "session": ["s1", "s1", "s2", "s2", "s3", "s3", "s4", "s4", "s5", "s5", "s6", "s6"],
        "item": list("xyxyxyxyxyxy"), "position": [1, 2, 1, 2, 1, 2, 1, 2, 3, 4, 1, 2],
        "click": [1, 0, 0, 0, 1, 1, 0, 1, 1, 0, 0, 1],
    })


def test_t_interval_counts_only_the_values_a_measure_defines() -> None:
    out = rp.evaluate(_ctr_log(), ["ctr@2"], by="model", query="session", relevance="click", ci=0.95)
    defined = np.array([0.5, 0.0, 1.0, 0.5, 0.5])  # clicks / 2 rows shown, s5 left out
    ref = ss.ttest_1samp(defined, 0).confidence_interval(0.95)
    assert out["ctr@2"][0] == pytest.approx(defined.mean())
    assert (out["ctr@2_low"][0], out["ctr@2_high"][0]) == pytest.approx((ref.low, ref.high), rel=1e-12)


@pytest.mark.parametrize("method", ["bootstrap", "bca"])
def test_bootstrap_intervals_leave_undefined_values_out(method: str) -> None:
    values = [0.5, 0.0, None, 1.0, 0.5, 0.5, 0.25]
    spec = [("m", parse("ndcg"))]
    with_null = intervals(pl.DataFrame({"model": ["a"] * 7, "m": values}), spec, ["model"], method=method,
                          n_resamples=2000)
    without = intervals(pl.DataFrame({"model": ["a"] * 6, "m": [v for v in values if v is not None]}), spec,
                        ["model"], method=method, n_resamples=2000)
    assert with_null["m_low"][0] is not None  # was null: the NaN spoilt every resample
    assert with_null.equals(without)
    # t on a sum: n times the mean's interval, n the defined values (trec_eval's sum over them)
    t_sum = intervals(pl.DataFrame({"m": values}), [("m", parse("num_rel"))], [])
    defined = np.array([v for v in values if v is not None])
    ref = ss.ttest_1samp(defined, 0).confidence_interval(0.95)
    assert (t_sum["m_low"][0], t_sum["m_high"][0]) == pytest.approx((6 * ref.low, 6 * ref.high), rel=1e-12)


# ---------------------------------------------------------------------------------------------
# uncovered cases checked against references (these passed before; they guard the edges)


def test_corrections_with_p_values_of_exactly_0_and_1_are_statsmodels() -> None:
    from statsmodels.stats.multitest import multipletests

    from rank_polars.stats.tests import adjust

    p = np.array([0.0, 1.0, 0.02, 0.0, 1.0, 0.04])
    for ours, theirs in (("holm", "holm"), ("bonferroni", "bonferroni"), ("bh", "fdr_bh")):
        np.testing.assert_allclose(adjust(p, ours), multipletests(p, method=theirs)[1], rtol=0, atol=1e-15)


def test_tukey_over_22_versions_is_the_two_way_studentized_range() -> None:
    import statsmodels.api as sm
    import statsmodels.formula.api as smf

    rng = np.random.default_rng(3)
    m, n = 22, 8
    y = rng.random((n, 1)) * 0.5 + rng.normal(0, 0.1, (n, m)) + np.linspace(0, 0.2, m)
    versions = [f"v{i:02d}" for i in range(m)]
    per = pl.DataFrame({"model": np.repeat(versions, n), "query": np.tile([f"q{j}" for j in range(n)], m),
                        "m": y.T.ravel()})
    table = sm.stats.anova_lm(smf.ols("m ~ C(model) + C(query)", data=per.to_pandas()).fit())
    ve, df = table.loc["Residual", "mean_sq"], table.loc["Residual", "df"]
    out = compare_values(per, pairs="all", test="tukey")
    where = {v: i for i, v in enumerate(versions)}
    means = y.mean(axis=0)
    q = np.array([abs(means[where[v]] - means[where[b]]) for b, v in out.select("baseline", "version").iter_rows()])
    np.testing.assert_allclose(out["p_value"].to_numpy(), ss.studentized_range.sf(q / np.sqrt(ve / n), m, df),
                               rtol=1e-9, atol=1e-12)
    assert anova_values(per)["f"][0] == pytest.approx(table.loc["C(model)", "F"], rel=1e-10)


def test_a_million_queries_paired_t_and_interval_are_scipys() -> None:
    rng = np.random.default_rng(2)
    x = rng.random(1_000_000)
    y = x + rng.normal(1e-4, 1e-2, x.size)
    q = np.arange(x.size)  # integer query ids
    per = pl.DataFrame({"model": np.repeat(["a", "b"], x.size), "query": np.r_[q, q], "m": np.r_[x, y]})
    out = compare_values(per, correction=None)
    ref = ss.ttest_rel(y, x)
    ci = ref.confidence_interval(0.95)
    assert out["p_value"][0] == pytest.approx(ref.pvalue, rel=1e-9)
    assert (out["ci_low"][0], out["ci_high"][0]) == pytest.approx((ci.low, ci.high), rel=1e-9)


def test_t_intervals_do_not_depend_on_the_order_of_the_queries() -> None:
    """The engines hand over the per-query table in any order; the t bounds' mean and sd were
    sums in that order, so ``evaluate(..., ci=0.9)`` changed in the last digit between runs."""
    import numpy as np

    from rank_polars.stats.intervals import intervals
    from rank_polars.measures import parse

    rng = np.random.default_rng(5)
    values = rng.random(5000) * np.exp(rng.normal(0, 8, 5000))  # magnitudes far apart: order shows
    per = pl.DataFrame({"model": ["a"] * 5000, "ndcg": values})
    outputs = [("ndcg", parse("ndcg"))]
    first = intervals(per, outputs, ["model"], 0.9)
    for seed in range(5):
        shuffled = per.sample(fraction=1.0, shuffle=True, seed=seed)
        chunked = pl.concat([shuffled.slice(i, 700) for i in range(0, 5000, 700)], rechunk=False)
        for table in (shuffled, chunked):
            got = intervals(table, outputs, ["model"], 0.9)
            assert got["ndcg_low"].to_list() == first["ndcg_low"].to_list()
            assert got["ndcg_high"].to_list() == first["ndcg_high"].to_list()
        assert intervals(table.drop("model"), outputs, [], 0.9).rows() == intervals(per.drop("model"), outputs, [], 0.9).rows()
