"""compare(): every statistic against SciPy or its definition, pairing, counts and errors."""

from __future__ import annotations

import itertools
import json
import math
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import scipy.stats as ss

from rank_polars.stats import tests as stats
from rank_polars.stats.compare import SmallSampleWarning, compare
from rank_polars.errors import CoverageWarning, RankPolarsError

from . import stats_reference


def log_from_values(values: dict[str, list[float | None]]) -> pl.DataFrame:
    """A log whose per-query ``dcg@1`` is exactly the given value (the grade shown first);
    ``None`` leaves the query out of that version's run."""
    rows = []
    for model, vals in values.items():
        for i, v in enumerate(vals):
            if v is not None:
                rows.append({"model": model, "query": f"q{i:05d}", "item": "x", "position": 1, "relevance": float(v)})
    return pl.DataFrame(rows)


def paired(rng: np.random.Generator, n: int, kind: int) -> tuple[np.ndarray, np.ndarray]:
    """Paired values in [0, 1] (non-negative, as dcg@1 needs): continuous, tied, or with zeros."""
    x = rng.random(n)
    if kind == 0:
        y = np.clip(x + rng.normal(0.03, 0.2, n), 0, None)
    elif kind == 1:
        x = np.round(x, 1)
        y = np.clip(np.round(x + rng.normal(0.05, 0.2, n), 1), 0, None)
    else:
        y = np.where(rng.random(n) < 0.4, x, x + rng.choice([-0.25, 0.25, 0.5], n))
        y = np.clip(y, 0, None)
    return x, y


# ----------------------------------------------------------------------------------------
# the tests against SciPy, on the statistics module


@pytest.mark.parametrize("n", [2, 3, 7, 30, 500, 5000])
def test_paired_t_equals_scipy_ttest_rel(n):
    rng = np.random.default_rng(n)
    for kind in range(3):
        x, y = paired(rng, n, kind)
        if np.all(x == y):
            continue
        expected = ss.ttest_rel(y, x).pvalue
        assert stats.paired_t_p(y - x) == pytest.approx(expected, rel=1e-9, abs=1e-300)


def test_same_numbers_as_the_hand_written_statistics_of_e89e36c():
    # the statistics before SciPy (own t, normal and Wilcoxon tails, own corrections) on
    # 346 inputs (every size 1..3000 and 20000, ties, zeros, constant, all zero, outliers);
    # see tests/stats_reference.py for how the file was written
    expected = json.loads((Path(__file__).parent / "data" / "stats_reference_e89e36c.json").read_text())
    got = stats_reference.numbers(stats)
    assert len(expected["cases"]) == len(got["cases"]) == 346
    inputs = {name: d for name, d, _ in stats_reference.cases()}
    for name, row in expected["cases"].items():
        for key, value in row.items():
            if key == "paired_t" and stats.degenerate(inputs[name]) is not None:
                # changed on purpose since: no spread, no t-test (the old code gave p = 0 or 1)
                assert math.isnan(got["cases"][name][key]), name
                continue
            assert got["cases"][name][key] == pytest.approx(value, rel=1e-12, nan_ok=True), (name, key)
    for method, families in expected["adjust"].items():
        for old, new in zip(families, got["adjust"][method], strict=True):
            assert new == pytest.approx(old, rel=1e-12, abs=1e-15, nan_ok=True), method


@pytest.mark.parametrize(
    ("n", "kind"),
    [
        (5, 0), (13, 0), (30, 0), (50, 0),  # exact distribution (no ties, no zeros)
        (6, 1), (9, 2), (13, 2),  # ties or zeros, n <= 13: exact sign-flip permutation
        (14, 2), (40, 1), (50, 2),  # ties or zeros, 14..50: normal approximation
        (51, 0), (200, 1), (3000, 2),  # n > 50: normal approximation with tie correction
    ],
)
def test_wilcoxon_equals_scipy_defaults(n, kind):
    rng = np.random.default_rng(100 + n + kind)
    # SciPy's permutation branch (n <= 13 with ties or zeros) is slow: one sample there
    for _ in range(1 if n <= 13 and kind else 5):
        x, y = paired(rng, n, kind)
        if np.all(x == y):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = ss.wilcoxon(y, x).pvalue
        assert stats.wilcoxon_p(y - x) == pytest.approx(expected, rel=1e-9, abs=1e-300)


def test_differences_without_spread_have_no_t_test():
    d = np.zeros(20)
    assert stats.wilcoxon_p(d) == 1.0  # SciPy: NaN (every zero dropped); compare gives no p at all
    assert math.isnan(ss.ttest_rel(d, np.zeros(20)).pvalue) and math.isnan(stats.paired_t_p(d))
    assert stats.randomization_p(d, 100, np.random.default_rng(0)) == 1.0
    assert stats.bootstrap_p(d, stats.bootstrap_means(d, 100, np.random.default_rng(0))) == 1.0
    assert stats.effect_size(d) == 0.0
    # a constant shift: SciPy's t is x/0 (or 1e16 from rounding, p ~ 1e-49); ours has no p
    x = np.random.default_rng(2).random(20)
    assert ss.ttest_rel(x + 0.25, x).pvalue < 1e-40
    assert math.isnan(stats.paired_t_p((x + 0.25) - x)) and math.isnan(stats.t_interval((x + 0.25) - x, 0.95)[0])
    assert stats.effect_size(np.full(5, 0.2)) == math.inf and math.isnan(stats.paired_t_p(np.full(5, 0.2)))
    assert math.isnan(stats.paired_t_p(np.array([0.3]))) and math.isnan(stats.effect_size(np.array([0.3])))


def test_effect_size_is_cohens_dz():
    d = np.random.default_rng(3).normal(0.1, 0.4, 80)
    assert stats.effect_size(d) == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)


# ----------------------------------------------------------------------------------------
# multiple comparisons


def holm_reference(p):
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):  # rank 0 = smallest
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def bh_reference(p):
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out, running = [0.0] * m, 1.0
    for rank in range(m - 1, -1, -1):
        i = order[rank]
        running = min(running, m * p[i] / (rank + 1))
        out[i] = min(1.0, running)
    return out


P_VECTORS = [
    [0.01, 0.04, 0.03, 0.005],
    [0.2, 0.2, 0.01, 0.5, 0.049, 0.9, 0.0001],
    [0.5],
    [1.0, 1.0, 0.0],
    list(np.random.default_rng(7).random(25)),
]


@pytest.mark.parametrize("p", P_VECTORS)
def test_corrections_match_their_definitions(p):
    arr = np.array(p)
    assert stats.adjust(arr, None).tolist() == p
    assert stats.adjust(arr, "bonferroni") == pytest.approx([min(1.0, x * len(p)) for x in p], rel=1e-15)
    assert stats.adjust(arr, "holm") == pytest.approx(holm_reference(p), rel=1e-15)
    assert stats.adjust(arr, "bh") == pytest.approx(bh_reference(p), rel=1e-15)
    assert stats.adjust(arr, "bh") == pytest.approx(ss.false_discovery_control(arr, method="bh"), rel=1e-12)


def test_corrections_by_hand_and_nan_left_out():
    p = np.array([0.01, 0.04, 0.03, 0.005])
    assert stats.adjust(p, "holm").tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert stats.adjust(p, "bh").tolist() == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert stats.adjust(p, "bonferroni").tolist() == pytest.approx([0.04, 0.16, 0.12, 0.02])
    with_nan = stats.adjust(np.array([0.01, np.nan, 0.04]), "bonferroni")
    assert with_nan[0] == pytest.approx(0.02) and math.isnan(with_nan[1]) and with_nan[2] == pytest.approx(0.08)


# ----------------------------------------------------------------------------------------
# resampling


def test_randomization_and_bootstrap_reproducible_and_sane():
    rng = np.random.default_rng(11)
    d = rng.normal(0.02, 0.3, 300)
    for seed in (0, 1):
        a = stats.randomization_p(d, 999, np.random.default_rng(seed))
        assert a == stats.randomization_p(d, 999, np.random.default_rng(seed))
        m = stats.bootstrap_means(d, 999, np.random.default_rng(seed))
        assert np.array_equal(m, stats.bootstrap_means(d, 999, np.random.default_rng(seed)))
    assert stats.randomization_p(d, 999, np.random.default_rng(0)) != stats.randomization_p(d, 999, np.random.default_rng(1))
    # a large shift: no resample is as extreme, p is the smallest possible
    shift = rng.normal(1.0, 0.1, 300)
    assert stats.randomization_p(shift, 500, np.random.default_rng(0)) == 1 / 501
    assert stats.bootstrap_p(shift, stats.bootstrap_means(shift, 500, np.random.default_rng(0))) == 1 / 501
    # p on a granular grid, close to the t-test on well-behaved data
    p = stats.randomization_p(d, 4000, np.random.default_rng(2))
    assert p * 4001 == pytest.approx(round(p * 4001)) and p == pytest.approx(stats.paired_t_p(d), abs=0.03)


def test_randomization_matches_the_exact_sign_flip_distribution():
    d = np.array([0.3, 0.1, -0.2, 0.4, 0.0, 0.25, 0.1, -0.05, 0.3, 0.15])
    signs = np.array(list(itertools.product([1.0, -1.0], repeat=d.size)))
    sums = np.abs(signs @ d)
    exact = np.mean(sums >= abs(d.sum()) - 1e-12)
    assert stats.randomization_p(d, 20_000, np.random.default_rng(0)) == pytest.approx(exact, abs=0.006)


def test_bootstrap_interval_covers_the_mean_and_matches_a_direct_resampling():
    d = np.random.default_rng(5).normal(0.05, 0.3, 400)
    means = stats.bootstrap_means(d, 4000, np.random.default_rng(1))
    low, high = stats.percentile_ci(means, 0.95)
    assert low < d.mean() < high
    se = d.std(ddof=1) / math.sqrt(d.size)
    assert low == pytest.approx(d.mean() - 1.96 * se, abs=0.25 * se)
    assert high == pytest.approx(d.mean() + 1.96 * se, abs=0.25 * se)
    # few distinct values: drawn as multinomial counts, same distribution
    coarse = np.random.default_rng(2).choice([0.0, 0.1, 0.2, -0.1], 5000)
    cm = stats.bootstrap_means(coarse, 4000, np.random.default_rng(1))
    assert cm.mean() == pytest.approx(coarse.mean(), abs=0.002)
    assert cm.std() == pytest.approx(coarse.std() / math.sqrt(coarse.size), rel=0.06)


# ----------------------------------------------------------------------------------------
# compare() end to end


@pytest.mark.parametrize("test", ["paired_t", "wilcoxon"])
def test_compare_p_values_equal_scipy_on_the_per_query_values(test):
    rng = np.random.default_rng(21)
    x, y = paired(rng, 60, 1)
    out = compare(log_from_values({"v1": list(x), "v2": list(y)}), "dcg@1", baseline="v1", test=test, correction=None, n_resamples=200)
    if test == "paired_t":
        expected = ss.ttest_rel(y, x).pvalue
    else:
        expected = ss.wilcoxon(y, x).pvalue
    row = out.row(0, named=True)
    assert row["p_value"] == pytest.approx(expected, rel=1e-9)
    assert row["p_adjusted"] == row["p_value"]
    assert row["n_queries"] == 60 and row["test"] == test
    assert row["mean_baseline"] == pytest.approx(x.mean()) and row["mean_version"] == pytest.approx(y.mean())
    assert row["diff"] == pytest.approx(y.mean() - x.mean())
    assert row["rel_diff"] == pytest.approx((y.mean() - x.mean()) / x.mean())
    d = y - x
    assert row["effect_size"] == pytest.approx(d.mean() / d.std(ddof=1))
    assert (row["wins"], row["ties"], row["losses"]) == (int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum()))
    assert row["ci_low"] < row["diff"] < row["ci_high"]


def test_compare_columns_order_and_correction_across_all_rows():
    rng = np.random.default_rng(4)
    base = rng.random(40)
    log = log_from_values({"a": list(base), "b": list(np.clip(base + 0.05, 0, None)), "c": list(rng.random(40))})
    out = compare(log, ["dcg@1", "p@1"], baseline=None, correction="holm", n_resamples=100)
    assert out.columns == [
        "metric", "baseline", "version", "n_queries", "mean_baseline", "mean_version", "diff", "rel_diff",
        "ci_low", "ci_high", "p_value", "p_adjusted", "significant", "effect_size", "wins", "ties", "losses", "test",
        "interval", "power", "queries_needed", "note", "higher_is_better",
    ]
    assert out.select("metric", "baseline", "version").rows() == [
        ("dcg@1", "a", "b"), ("dcg@1", "a", "c"), ("dcg@1", "b", "c"),
        ("p@1", "a", "b"), ("p@1", "a", "c"), ("p@1", "b", "c"),
    ]
    p = out["p_value"].to_list()
    # a+0.05 on dcg@1 is a constant shift: no t-test, no p, not counted in the family
    assert p[0] is None and out["note"][0] == "the difference is the same on every query"
    tested = [i for i, q in enumerate(p) if q is not None]
    expected = dict(zip(tested, holm_reference([p[i] for i in tested])))
    assert out["p_adjusted"].to_list() == [pytest.approx(expected[i]) if i in expected else None for i in range(6)]
    assert out["significant"].to_list() == [q is not None and q < 0.05 for q in out["p_adjusted"].to_list()]
    with_baseline = compare(log, "dcg@1", baseline="b", correction=None, n_resamples=100)
    assert with_baseline.select("baseline", "version").rows() == [("b", "a"), ("b", "c")]


def test_compare_reproducible_with_seed_and_tests_share_the_interval():
    rng = np.random.default_rng(8)
    x, y = paired(rng, 50, 0)
    log = log_from_values({"v1": list(x), "v2": list(y)})
    first = compare(log, "dcg@1", test="randomization", n_resamples=500, seed=3)
    assert first.equals(compare(log, "dcg@1", test="randomization", n_resamples=500, seed=3))
    other = compare(log, "dcg@1", test="randomization", n_resamples=500, seed=4)
    assert other["p_value"][0] != first["p_value"][0] or other["ci_low"][0] != first["ci_low"][0]
    boot = compare(log, "dcg@1", test="bootstrap", n_resamples=500, seed=3)
    assert boot["ci_low"][0] == first["ci_low"][0] and boot["ci_high"][0] == first["ci_high"][0]


def test_compare_identical_versions_and_a_large_shift():
    vals = list(np.random.default_rng(1).random(30))
    same = log_from_values({"v1": vals, "v2": vals})
    for test in ("paired_t", "wilcoxon", "randomization", "bootstrap"):
        row = compare(same, "dcg@1", test=test, n_resamples=300).row(0, named=True)
        # nothing to test: no p (not 1, which would read as evidence of no difference), and a reason
        assert row["p_value"] is None and not row["significant"], test
        assert row["note"] == "no difference on any query" and row["ci_low"] is None, test
        assert (row["wins"], row["ties"], row["losses"]) == (0, 30, 0)
        assert row["effect_size"] == 0.0 and row["diff"] == 0.0
    shifted = log_from_values({"v1": [0.0] * 30, "v2": [0.5 + v for v in vals]})
    for test in ("randomization", "bootstrap"):
        row = compare(shifted, "dcg@1", test=test, n_resamples=999).row(0, named=True)
        assert row["p_value"] == 1 / 1000 and row["significant"]


def test_compare_missing_skip_pairs_only_common_queries():
    log = log_from_values({"v1": [0.2, 0.5, 0.9, 0.4, None], "v2": [0.3, None, 0.9, 0.1, 0.7]})
    skip = compare(log, "dcg@1", missing="skip", n_resamples=100).row(0, named=True)
    assert skip["n_queries"] == 3  # q0, q2, q3
    assert skip["mean_baseline"] == pytest.approx((0.2 + 0.9 + 0.4) / 3)
    assert skip["mean_version"] == pytest.approx((0.3 + 0.9 + 0.1) / 3)
    assert (skip["wins"], skip["ties"], skip["losses"]) == (1, 1, 1)
    with pytest.warns(CoverageWarning, match="2 queries are in one version's run only"):
        zero = compare(log, "dcg@1", missing="zero", n_resamples=100).row(0, named=True)
    assert zero["n_queries"] == 5
    assert zero["mean_baseline"] == pytest.approx((0.2 + 0.5 + 0.9 + 0.4) / 5)
    assert zero["mean_version"] == pytest.approx((0.3 + 0.9 + 0.1 + 0.7) / 5)
    assert (zero["wins"], zero["ties"], zero["losses"]) == (2, 1, 2)


def test_compare_missing_with_qrels_uses_evaluates_zero_fill():
    run = pl.DataFrame(
        {"model": ["a", "a", "b"], "query": ["q1", "q2", "q1"], "item": ["x", "y", "x"], "position": [1, 1, 1]}
    )
    qrels = pl.DataFrame({"query": ["q1", "q2"], "item": ["x", "y"], "relevance": [1, 1]})
    with pytest.warns(CoverageWarning):
        zero = compare(run, "p@1", qrels=qrels, missing="zero", n_resamples=50).row(0, named=True)
    assert (zero["n_queries"], zero["wins"], zero["ties"], zero["losses"]) == (2, 0, 1, 1)
    with pytest.warns(CoverageWarning), pytest.warns(SmallSampleWarning):  # one paired query: no t-test
        skip = compare(run, "p@1", qrels=qrels, missing="skip", n_resamples=50).row(0, named=True)
    assert (skip["n_queries"], skip["ties"], skip["note"]) == (1, 1, "n too small")


def test_compare_keeps_the_version_dtype_and_passes_column_names():
    log = log_from_values({"1": [0.2, 0.4, 0.6], "2": [0.3, 0.4, 0.9]}).with_columns(pl.col("model").cast(pl.Int64))
    renamed = log.rename({"query": "qid", "model": "release"})
    out = compare(renamed, "dcg@1", by="release", query="qid", baseline=1, n_resamples=50)
    assert out.schema["baseline"] == pl.Int64 and out.select("baseline", "version").row(0) == (1, 2)
    assert out["n_queries"][0] == 3


def test_compare_duckdb_engine_gives_the_same_table():
    x, y = paired(np.random.default_rng(9), 25, 1)
    log = log_from_values({"v1": list(x), "v2": list(y)})
    by_polars = compare(log, ["dcg@1", "p@1"], n_resamples=200)
    by_duckdb = compare(log, ["dcg@1", "p@1"], n_resamples=200, engine="duckdb")
    assert by_polars.equals(by_duckdb)


def test_compare_on_the_sample_log():
    from rank_polars import datasets

    out = compare(datasets.sample_log(), ["ndcg@10", "mrr"], baseline="bot-v1", n_resamples=500)
    ndcg = out.row(0, named=True)
    assert ndcg["version"] == "bot-v2" and ndcg["diff"] > 0 and ndcg["losses"] > 0 and ndcg["wins"] > ndcg["losses"]


LOG = log_from_values({"v1": [0.1, 0.2], "v2": [0.3, 0.1]})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"test": "mann_whitney"}, "unknown test 'mann_whitney'"),
        ({"correction": "fdr"}, "unknown correction 'fdr'"),
        ({"baseline": "v9"}, "baseline 'v9' is not a version in column 'model'"),
        ({"alpha": 0.0}, "alpha must be between 0 and 1"),
        ({"alpha": 1.5}, "alpha must be between 0 and 1"),
        ({"confidence": 1.0}, "confidence must be between 0 and 1"),
        ({"n_resamples": 0}, "n_resamples must be an integer >= 1"),
        ({"n_resamples": 2.5}, "n_resamples must be an integer >= 1"),
        ({"seed": -1}, "seed must be a non-negative integer"),
        ({"by": ["model", "query"]}, "by must be one column name"),
        ({"per_query": True}, "per_query= is not an evaluate option here"),
        ({"by_judge": True}, "by_judge=True is evaluate's .* one label set"),  # a version's rows of every judge
        ({"bounds": True}, "bounds=True is evaluate's .* one label set"),
    ],
)
def test_compare_argument_errors(kwargs, message):
    with pytest.raises(RankPolarsError, match=message):
        compare(LOG, "dcg@1", **kwargs)


def test_compare_needs_two_versions():
    one = LOG.filter(pl.col("model") == "v1")
    with pytest.raises(RankPolarsError, match="needs at least 2 versions in column 'model', found 1"):
        compare(one, "dcg@1")
