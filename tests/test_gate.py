"""``rp.gate``: the one-sided tests against SciPy / statsmodels, its error rates on simulated logs,
its direction per metric, and the command's exit statuses.

References: ``scipy.stats.ttest_1samp`` (one-sided, on the per-query improvements minus the
margin), ``statsmodels``' ``DescrStatsW.ttest_mean`` and ``multipletests``, SciPy's noncentral t
for the power; the per-query values come from ``rp.evaluate(per_query=True)`` (the input of the
gate, not what is tested).  The simulations are vectorised: every repetition is a family of the
same table, tested in one pass (``decide(..., family=["rep"])``).
"""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner
from scipy import stats as sp
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.weightstats import DescrStatsW

import rank_polars as rp
from rank_polars.cli import main
from rank_polars.errors import DataError, RankPolarsError
from rank_polars.monitor.gate import decide

ALPHA = 0.05


@pytest.fixture(scope="module")
def log() -> pl.DataFrame:
    return rp.datasets.monitoring_log(days=2, queries_per_day=300, seed=3,
                                      regression=("v3", "country", "fr", 1))


def pairs(log: pl.DataFrame, metric: str, base: str = "v1", cand: str = "v3") -> pl.DataFrame:
    per = rp.evaluate(log, [metric], by="model", per_query=True)
    wide = per.pivot(on="model", index="query", values=metric)
    segs = log.select("query", "country").unique()
    return wide.join(segs, on="query").select("query", "country", pl.col(base).alias("x"), pl.col(cand).alias("y"))


@pytest.mark.parametrize("margin", [0.01, "2%"])
def test_p_values_and_intervals_are_scipy_and_statsmodels_one_sided_tests(log, margin):
    result = rp.gate(log, ["ndcg@10"], baseline="v1", candidate="v3", margin=margin, segments=["country"],
                     min_queries=10)
    values = pairs(log, "ndcg@10")
    rows = result.table
    p_raw = []
    for r in rows.iter_rows(named=True):
        part = values if r["segment"] == "(all)" else values.filter(pl.col("country") == r["value"])
        x, y = part["x"].to_numpy(), part["y"].to_numpy()
        m, share = (margin, 0.0) if isinstance(margin, float) else (0.0, 0.02)
        e = y - x + m + share * x  # the improvement minus the allowed loss (higher is better)
        assert r["n_queries"] == len(x)
        assert r["p_regression"] == pytest.approx(sp.ttest_1samp(e, 0.0, alternative="less").pvalue, rel=1e-9, abs=1e-300)
        assert r["p_non_inferior"] == pytest.approx(sp.ttest_1samp(e, 0.0, alternative="greater").pvalue, rel=1e-9)
        assert r["margin"] == pytest.approx(m + share * x.mean(), rel=1e-12)
        if share == 0.0:  # statsmodels' one-sample test of the difference against -margin
            tstat, p, _ = DescrStatsW(y - x).ttest_mean(value=-m, alternative="smaller")
            assert r["p_regression"] == pytest.approx(p, rel=1e-9, abs=1e-300)
        low, high = sp.ttest_rel(y, x).confidence_interval(1 - 2 * ALPHA)
        assert (r["ci_low"], r["ci_high"]) == pytest.approx((low, high), rel=1e-9)
        assert r["diff"] == pytest.approx(y.mean() - x.mean(), abs=1e-12)
        p_raw.append(r["p_regression"])
    holm = multipletests(p_raw, method="holm")[1]
    assert rows["p_adjusted"].to_numpy() == pytest.approx(holm, rel=1e-9, abs=1e-300)
    assert result.verdict == "fail"  # the regression injected into fr
    worst = rows.row(0, named=True)
    assert (worst["segment"], worst["value"], worst["status"]) == ("country", "fr", "regression")


def test_lower_is_better_metric_loses_when_it_rises(log):
    # fall-out is lower-is-better: the candidate regresses where its fall-out rises beyond the margin
    result = rp.gate(log, ["fallout@3"], baseline="v1", candidate="v3", margin=0.005, segments=["country"],
                     correction=None)
    values = pairs(log, "fallout@3")
    fr = values.filter(pl.col("country") == "fr")
    x, y = fr["x"].to_numpy(), fr["y"].to_numpy()
    e = (x - y) + 0.005  # improvement = baseline - candidate for a metric to minimise
    row = result.table.filter(pl.col("value") == "fr").row(0, named=True)
    assert y.mean() > x.mean() and row["higher_is_better"] is False
    assert row["p_regression"] == pytest.approx(sp.ttest_1samp(e, 0.0, alternative="less").pvalue, rel=1e-9, abs=1e-300)
    assert row["status"] == "regression" and result.verdict == "fail"
    # the same values read as higher-is-better would be a gain, not a regression
    flipped = decide(_rows(x, y), [], {"m": True}, {"m": (0.005, 0.0)}, alpha=ALPHA, min_queries=2)
    assert flipped["status"].to_list() == ["non-inferior"]


def test_wilcoxon_is_scipys_one_sided_signed_rank_test(log):
    result = rp.gate(log, ["ndcg@10"], baseline="v1", candidate="v3", margin=0.01, test="wilcoxon", correction=None)
    values = pairs(log, "ndcg@10")
    e = values["y"].to_numpy() - values["x"].to_numpy() + 0.01
    row = result.table.row(0, named=True)
    assert row["p_regression"] == pytest.approx(sp.wilcoxon(e, alternative="less").pvalue, rel=1e-9)
    assert row["p_non_inferior"] == pytest.approx(sp.wilcoxon(e, alternative="greater").pvalue, rel=1e-9)


def _rows(x: np.ndarray, y: np.ndarray, **extra: object) -> pl.LazyFrame:
    return pl.DataFrame({"metric": "m", "baseline": "a", "version": "b", "x": x, "y": y, **extra}).lazy()


def simulate(reps: int, n: int, shift: np.ndarray | float, sd: float = 0.1, segments: int = 1,
             metrics: int = 1, seed: int = 0) -> pl.LazyFrame:
    """Per-query values of ``reps`` logs at once: ``n`` queries per segment value, the candidate's
    mean shifted by ``shift`` (per segment value when an array), a query effect shared by both."""
    rng = np.random.default_rng(seed)
    size = reps * segments * metrics * n
    rep = np.repeat(np.arange(reps), segments * metrics * n)
    seg = np.tile(np.repeat(np.arange(segments), metrics * n), reps)
    metric = np.tile(np.repeat(np.arange(metrics), n), reps * segments)
    quality = rng.uniform(0.3, 0.8, size)
    x = quality + rng.normal(0, sd / math.sqrt(2), size)
    y = quality + np.asarray(shift, dtype=float).reshape(-1)[seg % np.size(shift)] + rng.normal(0, sd / math.sqrt(2), size)
    return pl.DataFrame({"rep": rep, "metric": np.char.add("m", metric.astype(str)), "baseline": "a", "version": "b",
                         "seg": seg.astype(str), "x": x, "y": y}).lazy()


def binomial_bound(rate: float, reps: int) -> float:
    return 3 * math.sqrt(rate * (1 - rate) / reps)


def fail_rate(table: pl.DataFrame) -> float:
    per_rep = table.group_by("rep").agg((pl.col("status") == "regression").any().alias("failed"))
    return float(per_rep["failed"].mean())


def test_a_release_that_loses_exactly_the_margin_fails_at_the_nominal_rate_per_metric():
    # the hardest case of "no regression": the candidate loses exactly the margin; the one-sided
    # test then rejects at alpha exactly (and less often for any smaller loss)
    reps, n, margin = 2000, 200, 0.01
    table = decide(simulate(reps, n, -margin), [], {"m0": True}, {"m0": (margin, 0.0)}, alpha=ALPHA, family=["rep"])
    rate = fail_rate(table)
    assert abs(rate - ALPHA) <= binomial_bound(ALPHA, reps), rate
    # no loss at all: failing is rarer still
    table = decide(simulate(reps, n, 0.0, seed=1), [], {"m0": True}, {"m0": (margin, 0.0)}, alpha=ALPHA, family=["rep"])
    assert fail_rate(table) <= ALPHA


def test_across_metrics_and_segments_the_corrected_gate_fails_at_most_at_the_nominal_rate():
    reps, n, margin = 400, 100, 0.01
    better = {"m0": True, "m1": True, "m2": True}
    margins = {m: (margin, 0.0) for m in better}
    rows = simulate(reps, n, -margin, segments=5, metrics=3, seed=2)
    # each repetition: 3 metrics x (overall + 5 segment values) = 18 tests at the boundary
    for correction in ("holm", "bonferroni", "bh"):
        table = decide(rows, ["seg"], better, margins, alpha=ALPHA, correction=correction, family=["rep"],
                       min_queries=30)
        assert table.height == reps * 3 * (1 + 5)
        assert fail_rate(table) <= ALPHA + binomial_bound(ALPHA, reps), correction
    # uncorrected, the same gate fails far more often: the correction is what holds the rate
    table = decide(rows, ["seg"], better, margins, alpha=ALPHA, correction=None, family=["rep"])
    assert fail_rate(table) > 2 * ALPHA


def test_a_regression_of_margin_plus_three_standard_errors_is_caught_in_90_percent():
    reps, n, sd, margin = 4000, 200, 0.1, 0.01
    se = sd / math.sqrt(n)
    table = decide(simulate(reps, n, -(margin + 3 * se), sd=sd, seed=4), [], {"m0": True}, {"m0": (margin, 0.0)},
                   alpha=ALPHA, family=["rep"])
    rate = fail_rate(table)
    # the power of the one-sided t test: SciPy's noncentral t with the true shift in standard errors
    power = sp.nct.cdf(sp.t.ppf(ALPHA, n - 1), n - 1, -3.0)
    assert power > 0.9
    assert rate >= 0.9 and abs(rate - power) <= binomial_bound(power, reps), (rate, power)


def test_relative_margins_are_exact_for_the_ratio_of_means():
    # "1%": mean(y) >= 0.99 mean(x) is mean(y - 0.99 x) >= 0; a candidate at exactly 99% of the
    # baseline sits on the boundary (rejection rate alpha), at 100% it is far inside
    reps, n = 2000, 200
    rng = np.random.default_rng(5)
    x = rng.uniform(0.4, 0.9, reps * n)
    noise = rng.normal(0, 0.05, reps * n)
    rows = pl.DataFrame({"rep": np.repeat(np.arange(reps), n), "metric": "m", "baseline": "a", "version": "b",
                         "x": x, "y": 0.99 * x + noise}).lazy()
    table = decide(rows, [], {"m": True}, {"m": (0.0, 0.01)}, alpha=ALPHA, family=["rep"])
    assert abs(fail_rate(table) - ALPHA) <= binomial_bound(ALPHA, reps)


def test_too_few_queries_are_shown_not_tested_and_no_spread_is_decided_by_its_sign():
    few = decide(_rows(np.array([0.5, 0.6]), np.array([0.1, 0.2])), [], {"m": True}, {"m": (0.01, 0.0)}, alpha=ALPHA,
                 min_queries=30)
    assert few["status"].to_list() == ["too few queries"] and few["p_regression"].to_list() == [None]
    x = np.linspace(0.2, 0.8, 40)
    flat = decide(_rows(x, x - 0.2), [], {"m": True}, {"m": (0.01, 0.0)}, alpha=ALPHA)
    assert flat["status"].to_list() == ["regression"] and flat["note"].to_list() == ["the difference is the same on every query"]


def test_require_non_inferiority_fails_an_underpowered_gate(log):
    small = log.filter(pl.col("query").str.ends_with("1"))  # ~60 queries: cannot show a loss below 0.001
    loose = rp.gate(small, ["ndcg@10"], baseline="v1", candidate="v2", margin=0.001)
    strict = rp.gate(small, ["ndcg@10"], baseline="v1", candidate="v2", margin=0.001, require="non-inferiority")
    assert loose.verdict == "pass" and strict.verdict == "fail"
    assert loose.table["status"].to_list() == ["inconclusive"]


def test_bad_input_is_refused_with_its_reason(log):
    with pytest.raises(RankPolarsError, match="candidate 'v9' is not a version"):
        rp.gate(log, ["ndcg@10"], baseline="v1", candidate="v9", margin=0.01)
    with pytest.raises(RankPolarsError, match="both 'v1'"):
        rp.gate(log, ["ndcg@10"], baseline="v1", candidate="v1", margin=0.01)
    for bad in (-0.1, "abc", "150%", True):
        with pytest.raises(RankPolarsError, match="margin for ndcg@10"):
            rp.gate(log, ["ndcg@10"], baseline="v1", candidate="v3", margin=bad)
    with pytest.raises(RankPolarsError, match="no margin for 'mrr'"):
        rp.gate(log, ["ndcg@10", "mrr"], baseline="v1", candidate="v3", margin={"ndcg@10": 0.01})
    with pytest.raises(RankPolarsError, match="alpha"):
        rp.gate(log, ["ndcg@10"], baseline="v1", candidate="v3", margin=0.01, alpha=0.7)
    moving = log.with_columns(pl.when(pl.col("model") == "v3").then(pl.lit("de")).otherwise("country").alias("country"))
    with pytest.raises(DataError, match="segment 'country': .* queries have more than one value"):
        rp.gate(moving, ["ndcg@10"], baseline="v1", candidate="v3", margin=0.01, segments=["country"])
    with pytest.raises(RankPolarsError, match="no column 'contry'.*did you mean 'country'"):
        rp.gate(log, ["ndcg@10"], baseline="v1", candidate="v3", margin=0.01, segments=["contry"])
    # several judges' values in one version's rows would be one verdict of mixed labels
    judged = log.select("query", "item", "relevance").unique(["query", "item"])
    two = pl.concat([judged.with_columns(judge=pl.lit("people")), judged.with_columns(judge=pl.lit("llm"))])
    for option in ("by_judge", "bounds"):
        with pytest.raises(RankPolarsError, match=f"gate: {option}=True is evaluate's .* choose it with judge="):
            rp.gate(log.drop("relevance"), ["ndcg@10"], qrels=two, baseline="v1", candidate="v3", margin=0.01,
                    **{option: True})


def test_the_command_exits_0_on_pass_1_on_regression_3_on_bad_input(log, tmp_path):
    fr_late = tmp_path / "log.parquet"
    log.write_parquet(fr_late)
    base = ["gate", str(fr_late), "--by", "model", "--baseline", "v1", "-m", "ndcg@10", "-m", "mrr"]
    runner = CliRunner()
    regress = runner.invoke(main, [*base, "--candidate", "v3", "--margin", "0.01", "--segment", "country",
                                   "--json", str(tmp_path / "g.json"), "--markdown", str(tmp_path / "g.md")])
    assert regress.exit_code == 1, regress.output
    assert "error:" not in regress.stderr  # a regression: the summary, no error line
    assert "**FAIL**" in regress.stdout and "| ndcg@10 | country | fr |" in regress.stdout
    saved = json.loads((tmp_path / "g.json").read_text())
    assert saved["verdict"] == "fail" and saved["rows"][0]["value"] == "fr"
    assert (tmp_path / "g.md").read_text() == regress.stdout
    passing = runner.invoke(main, [*base, "--candidate", "v2", "--margin", "2%", "--segment", "country"])
    assert passing.exit_code == 0, passing.output
    assert "**PASS**" in passing.stdout
    for args in (["--candidate", "v9", "--margin", "0.01"], ["--candidate", "v2", "--margin", "abc"],
                 ["--candidate", "v2", "--margin", "0.01", "--segment", "nowhere"]):
        bad = runner.invoke(main, [*base, *args, "--json", str(tmp_path / "bad.json")])
        assert bad.exit_code == 3, bad.output  # BAD_INPUT: never read as a regression
        assert bad.stdout == "" and bad.stderr.startswith("error: ") and not (tmp_path / "bad.json").exists()
    usage = runner.invoke(main, [*base, "--candidate", "v2"])  # --margin missing: the command line itself
    assert usage.exit_code == 2
