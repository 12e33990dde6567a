"""Versions that share no query are not paired (found by an adversarial pass: between A/B arms
with their own sessions, ``missing="zero"`` paired every session with a 0 filled in for the other
arm, so a CTR of 0.25 read 0.125 and a paired t-test ran on that).

The rule (``docs/comparing.md``, "Versions that share no query"): one shared query id pairs; none,
with the default test, compares a ratio metric unpaired with the delta method and refuses any other
metric; none, with a paired test named, is refused under ``missing="zero"``."""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest
import scipy.stats as ss

import rank_polars as rp
from rank_polars.errors import CoverageWarning, RankPolarsError, SmallSampleWarning
from rank_polars.stats.compare import compare_values

RATIO = "ctr(agg=ratio)@10"


def arms(seed: int = 0, sizes: tuple[int, ...] = (150, 150), ctr: tuple[float, ...] = (0.25, 0.25),
         shared: int = 0) -> pl.DataFrame:
    """A/B arms: each session in one arm only (its id names the arm), 1-10 rows shown, 0/1 clicks;
    ``shared`` sessions of the first arm are also in every other arm."""
    rng = np.random.default_rng(seed)
    rows = []
    for a, (n, rate) in enumerate(zip(sizes, ctr)):
        for s in range(n):
            sid = f"arm0-s{s}" if a and s < shared else f"arm{a}-s{s}"
            for pos in range(1, int(rng.integers(1, 11)) + 1):
                rows.append((f"arm{a}", sid, f"i{pos}", pos, int(rng.random() < rate)))
    return pl.DataFrame(rows, schema=["arm", "query", "item", "position", "click"], orient="row")


def raw(log: pl.DataFrame, arm: str, k: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """Clicks X and rows shown Y in the top k per session of one arm, straight from the log."""
    part = (log.filter((pl.col("arm") == arm) & (pl.col("position") <= k)).group_by("query")
            .agg(x=pl.col("click").sum().cast(pl.Float64), y=pl.len().cast(pl.Float64)).sort("query"))
    return part["x"].to_numpy(), part["y"].to_numpy()


def delta_reference(x0, y0, x1, y1, confidence: float) -> tuple[float, float, float, float]:
    """The delta-method z test of R1 - R0 (R = sum X / sum Y per arm), computed independently:
    var(R) = (s_x^2 - 2 R s_xy + R^2 s_y^2) / (n mean(y)^2), SciPy's normal distribution."""
    def ratio(x, y):
        r = x.sum() / y.sum()
        c = np.cov(x, y, ddof=1)
        return r, (c[0, 0] - 2 * r * c[0, 1] + r * r * c[1, 1]) / (x.size * y.mean() ** 2)

    (r0, v0), (r1, v1) = ratio(x0, y0), ratio(x1, y1)
    diff, se = r1 - r0, np.sqrt(v0 + v1)
    half = ss.norm.ppf((1 + confidence) / 2) * se
    return diff, 2 * ss.norm.sf(abs(diff) / se), diff - half, diff + half


@pytest.mark.parametrize(("seed", "sizes", "ctr", "confidence"),
                         [(0, (150, 150), (0.25, 0.25), 0.95), (3, (80, 120), (0.2, 0.3), 0.9),
                          (5, (300, 200), (0.25, 0.28), 0.99)])
def test_arms_that_share_no_session_are_compared_unpaired(seed, sizes, ctr, confidence):
    log = arms(seed, sizes, ctr)
    with pytest.warns(CoverageWarning, match="share no 'query' id, so they are not paired") as caught:
        row = rp.compare(log, RATIO, by="arm", relevance="click", confidence=confidence).row(0, named=True)
    assert not [w for w in caught if "count as 0" in str(w.message)]  # nothing zero-filled
    assert (row["test"], row["interval"]) == ("delta", "delta")
    # each arm's own CTR (sum of clicks / rows shown), not diluted by the other arm's sessions
    (x0, y0), (x1, y1) = raw(log, "arm0"), raw(log, "arm1")
    own = rp.evaluate(log, RATIO, by="arm", relevance="click").sort("arm")[RATIO].to_list()
    assert row["mean_baseline"] == pytest.approx(x0.sum() / y0.sum(), rel=1e-12) == pytest.approx(own[0], rel=1e-12)
    assert row["mean_version"] == pytest.approx(x1.sum() / y1.sum(), rel=1e-12) == pytest.approx(own[1], rel=1e-12)
    assert row["n_queries"] == sum(sizes) and row["wins"] is None and row["power"] is None
    diff, p, low, high = delta_reference(x0, y0, x1, y1, confidence)
    assert row["diff"] == pytest.approx(diff, rel=1e-9, abs=1e-15)
    assert row["p_value"] == pytest.approx(p, rel=1e-9)
    assert (row["ci_low"], row["ci_high"]) == (pytest.approx(low, rel=1e-9), pytest.approx(high, rel=1e-9))
    # statsmodels' unequal-variance z test on the per-session values compare read (the linearisation)
    from statsmodels.stats.weightstats import CompareMeans, DescrStatsW

    per = rp.evaluate(log, RATIO, by="arm", relevance="click", per_query=True)
    a, b = (per.filter(pl.col("arm") == f"arm{i}")[RATIO].to_numpy() for i in (0, 1))
    _z, p_sm = CompareMeans(DescrStatsW(b), DescrStatsW(a)).ztest_ind(usevar="unequal")
    assert row["p_value"] == pytest.approx(p_sm, rel=1e-9)
    low_sm, high_sm = CompareMeans(DescrStatsW(b), DescrStatsW(a)).zconfint_diff(alpha=1 - confidence, usevar="unequal")
    assert (row["ci_low"], row["ci_high"]) == (pytest.approx(low_sm, rel=1e-9), pytest.approx(high_sm, rel=1e-9))
    # the same row as naming the test
    with warnings.catch_warnings():
        warnings.simplefilter("error", CoverageWarning)
        named = rp.compare(log, RATIO, by="arm", relevance="click", confidence=confidence, test="delta")
    assert named.row(0, named=True) == row


def test_the_adversarial_case_reads_the_arms_ctr():
    """Equal arms of CTR 0.25: the baseline's mean is its CTR, about 0.25, not half of it."""
    log = arms(11, (400, 400), (0.25, 0.25))
    with pytest.warns(CoverageWarning):
        row = rp.compare(log, [RATIO], by="arm", relevance="click").row(0, named=True)
    ctr = rp.evaluate(log, RATIO, by="arm", relevance="click").sort("arm")[RATIO][0]
    assert row["mean_baseline"] == pytest.approx(ctr, rel=1e-12) and abs(ctr - 0.25) < 0.03
    assert row["test"] == "delta" and not row["significant"]


def test_a_metric_without_an_unpaired_default_is_refused_naming_versions_metric_and_fix():
    log = arms(1)
    for metrics in (["click_rr"], [RATIO, "click_rr"], ["ctr@10"]):
        with pytest.raises(RankPolarsError) as error:
            rp.compare(log, metrics, by="arm", relevance="click")
        text = str(error.value)
        assert "'arm0' and 'arm1' share no 'query' id" in text
        assert f"nothing to pair on {metrics[-1]}" in text
        assert "test='delta'" in text and "evaluate the versions on shared queries" in text


@pytest.mark.parametrize("test", ["paired_t", "wilcoxon", "randomization", "bootstrap", "tukey", "randomized-tukey"])
def test_a_paired_test_named_on_unpaired_arms_is_refused(test):
    with pytest.raises(RankPolarsError, match=f"test='{test}' pairs the versions query by query, but versions "
                                              "'arm0' and 'arm1' share no 'query' id.*test='delta'"):
        rp.compare(arms(2, (30, 30)), RATIO, by="arm", relevance="click", test=test, n_resamples=99)


def test_a_paired_test_named_with_skip_pairs_nothing_as_before():
    with pytest.warns(CoverageWarning, match="left out"), pytest.warns(SmallSampleWarning, match="0 paired queries"):
        row = rp.compare(arms(2, (30, 30)), RATIO, by="arm", relevance="click", test="paired_t",
                         missing="skip").row(0, named=True)
    assert (row["n_queries"], row["p_value"], row["note"], row["test"]) == (0, None, "n too small", "paired_t")
    # the default test does not depend on missing=: unpaired arms are compared with delta, or refused
    with pytest.warns(CoverageWarning, match="not paired"):
        row = rp.compare(arms(2, (30, 30)), RATIO, by="arm", relevance="click", missing="skip").row(0, named=True)
    assert (row["test"], row["n_queries"]) == ("delta", 60) and row["p_value"] is not None
    with pytest.raises(RankPolarsError, match="nothing to pair on click_rr"):
        rp.compare(arms(2, (30, 30)), "click_rr", by="arm", relevance="click", missing="skip")


def test_one_shared_session_pairs_as_before_with_the_coverage_warning():
    """A partial overlap is paired (zero-filled, the CoverageWarning naming the rest)."""
    log = arms(4, (40, 40), shared=1)
    with pytest.warns(CoverageWarning, match="78 queries are in one version's run only and count as 0"):
        row = rp.compare(log, RATIO, by="arm", relevance="click").row(0, named=True)
    assert row["test"] == "paired_t" and row["n_queries"] == 79


def test_the_default_interval_goes_with_the_test_chosen():
    log = arms(6, (40, 40))
    with pytest.raises(RankPolarsError, match="compared unpaired \\(test='delta'\\).*not 't'"):
        rp.compare(log, RATIO, by="arm", relevance="click", interval="t")
    with pytest.raises(RankPolarsError, match="interval='delta', only"):
        rp.compare(log, RATIO, by="arm", relevance="click", interval="delta")


def test_three_arms_pair_where_they_share_and_not_where_they_do_not():
    """arm0 and arm1 share every session (one population shown two rankers), arm2 has its own:
    the (arm0, arm1) row is paired, the two rows with arm2 unpaired, in the usual order, and the
    correction runs over the three."""
    one = arms(7, (60, 60), (0.2, 0.3), shared=60)
    other = arms(8, (50,), (0.35,)).with_columns(arm=pl.lit("arm2"), query="c-" + pl.col("query"))
    log = pl.concat([one, other])
    with pytest.warns(CoverageWarning, match="'arm2' with 'arm0'; 'arm2' with 'arm1'"):
        out = rp.compare(log, RATIO, by="arm", relevance="click", correction="holm")
    assert out.select("baseline", "version", "test").rows() == [
        ("arm0", "arm1", "paired_t"), ("arm0", "arm2", "delta"), ("arm1", "arm2", "delta")]
    from rank_polars.stats.tests import adjust

    assert out["p_adjusted"].to_list() == pytest.approx(adjust(out["p_value"].to_numpy(), "holm").tolist(), rel=1e-12)
    paired = out.row(0, named=True)
    assert paired["wins"] is not None and paired["n_queries"] == 60
    delta = out.row(2, named=True)
    own = rp.evaluate(log, RATIO, by="arm", relevance="click").sort("arm")[RATIO].to_list()
    assert (delta["mean_baseline"], delta["mean_version"]) == (pytest.approx(own[1], rel=1e-12),
                                                                pytest.approx(own[2], rel=1e-12))


def test_compare_values_knows_a_ratio_metric_by_its_name():
    per = pl.DataFrame({"arm": ["a"] * 4 + ["b"] * 4, "query": [f"s{i}" for i in range(8)],
                        RATIO: [0.1, 0.4, 0.2, 0.3, 0.5, 0.2, 0.4, 0.3]})
    with pytest.warns(CoverageWarning, match="not paired"):
        row = compare_values(per, by="arm").row(0, named=True)
    assert row["test"] == "delta" and row["mean_baseline"] == pytest.approx(0.25)
    with pytest.raises(RankPolarsError, match="'a' and 'b' share no 'query' id.*nothing to pair on x"):
        compare_values(per.rename({RATIO: "x"}), by="arm")


def test_shared_queries_are_unchanged():
    """Every version on the same queries: the default is the paired t-test, as before, no warning."""
    log = rp.datasets.sample_log()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        default = rp.compare(log, ["ndcg@10"], by="model", baseline="bot-v1")
    named = rp.compare(log, ["ndcg@10"], by="model", baseline="bot-v1", test="paired_t")
    assert default.equals(named) and default["test"].to_list() == ["paired_t"]


def test_the_command_line_leaves_the_choice_of_test_to_the_library(tmp_path) -> None:
    """``rank-polars compare`` without --test on A/B arms that share no session: the delta
    method, as rp.compare chooses (the option's old default, paired_t, was refused)."""
    from click.testing import CliRunner

    from rank_polars.cli import main

    path = tmp_path / "ab.parquet"
    arms().write_parquet(path)
    result = CliRunner().invoke(main, ["compare", str(path), "-m", "ctr(agg=ratio)@3", "--by", "arm", "--format", "csv"])
    assert result.exit_code == 0, result.output
    assert ",delta," in result.stdout
