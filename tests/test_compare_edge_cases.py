"""compare() at the edges: NaN per-query values, too few queries for a test, progress, and
SciPy kept out of ``import rank_polars`` / ``evaluate``."""

from __future__ import annotations

import contextlib
import importlib
import math
import threading

import numpy as np
import polars as pl
import pytest
import scipy.stats as ss

from rank_polars.stats import tests as stats
from rank_polars.stats.compare import SmallSampleWarning, compare
from rank_polars.errors import RankPolarsError

from .test_compare import log_from_values

TESTS = ("paired_t", "wilcoxon", "randomization", "bootstrap")
compare_module = importlib.import_module("rank_polars.stats.compare")  # the module (rank_polars.stats.compare is the function)


# ----------------------------------------------------------------------------------------
# a per-query value that is not a number is an error, never a dropped query


def per_query_frame(values: dict[str, list[float | None]]) -> pl.DataFrame:
    return pl.DataFrame([
        {"model": m, "query": f"q{i}", "ndcg@3": v} for m, vals in values.items() for i, v in enumerate(vals)
    ], schema={"model": pl.String, "query": pl.String, "ndcg@3": pl.Float64})


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, None])
def test_a_value_that_is_not_a_number_is_refused_naming_metric_version_and_queries(monkeypatch, bad):
    # the engines never give NaN (bad grades are refused upstream); compare must still refuse one
    per = per_query_frame({"v1": [0.5, bad, 0.7], "v2": [0.6, 0.4, bad]})
    monkeypatch.setattr(compare_module, "evaluate", lambda *a, **k: per)
    with pytest.raises(RankPolarsError) as err:
        compare(pl.DataFrame(), "ndcg@3", n_resamples=10)
    message = str(err.value)
    assert "ndcg@3" in message and "not numbers" in message
    assert "version 'v1': 1 queries, e.g. 'q1'" in message and "version 'v2': 1 queries, e.g. 'q2'" in message


def test_only_the_bad_metric_is_named(monkeypatch):
    per = per_query_frame({"v1": [0.5, 0.2], "v2": [0.6, 0.4]}).with_columns(
        pl.Series("p@1", [1.0, math.nan, 0.0, 1.0])
    )
    monkeypatch.setattr(compare_module, "evaluate", lambda *a, **k: per)
    with pytest.raises(RankPolarsError, match=r"values of p@1 are not numbers .* version 'v1': 1 queries, e.g. 'q1'"):
        compare(pl.DataFrame(), ["ndcg@3", "p@1"], n_resamples=10)


# ----------------------------------------------------------------------------------------
# too few queries: the test says so instead of declaring significance


def run_small(test: str, d: list[float], **kwargs) -> dict:
    log = log_from_values({"v1": [1.0] * len(d), "v2": [1.0 + x for x in d]})
    with pytest.warns(SmallSampleWarning) if kwargs.pop("warns", False) else contextlib.nullcontext():
        return compare(log, "dcg@1", test=test, correction=None, n_resamples=10_000, **kwargs).row(0, named=True)


D = [0.5, 0.25, 0.75]  # all positive, distinct: the most extreme data n queries can give

# (test, n) -> runs at alpha = 0.05?  paired_t from 2, bootstrap from 3 (1/3^3 < 0.05),
# wilcoxon and randomization from 6 (2/2^6 < 0.05)
RUNS = {("paired_t", 1): False, ("paired_t", 2): True, ("paired_t", 3): True, ("bootstrap", 3): True}


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("test", TESTS)
def test_too_few_queries_give_no_p_and_say_so(test, n):
    d = D[:n]
    runs = RUNS.get((test, n), False)
    if runs:
        row = run_small(test, d)
        assert row["note"] is None and row["p_value"] is not None
        if test == "paired_t":
            assert row["p_value"] == pytest.approx(ss.ttest_1samp(d, 0.0).pvalue, rel=1e-12)
        else:  # no resample of [0.5, 0.25, 0.75] is as far from the mean as the mean from 0
            assert row["p_value"] == pytest.approx(1 / 27, rel=1e-12)
        return
    with pytest.warns(SmallSampleWarning, match=rf"the {test} test was not run on 1 of 1 rows \(n too small; .*{n} paired"):
        row = run_small(test, d)
    assert row["p_value"] is None and row["p_adjusted"] is None and row["significant"] is False
    assert row["note"] == "n too small"
    assert row["n_queries"] == n and row["diff"] == pytest.approx(np.mean(d))
    if n == 1:
        assert row["ci_low"] is None and row["ci_high"] is None and row["effect_size"] is None


def test_one_query_bootstrap_no_longer_significant():
    # the reported case: one query, test="bootstrap" gave p = 1e-4, significant
    row = run_small("bootstrap", [0.3], warns=True)
    assert row["p_value"] is None and not row["significant"]


@pytest.mark.parametrize("test", ["wilcoxon", "randomization"])
def test_sign_tests_run_from_six_queries(test):
    d = [0.5, 0.25, 0.75, 0.125, 0.375, 0.625]
    with pytest.warns(SmallSampleWarning):
        assert run_small(test, d[:5])["note"] == "n too small"
    row = run_small(test, d)
    assert row["note"] is None
    if test == "wilcoxon":  # 2 / 2^6, SciPy's exact distribution
        assert row["p_value"] == pytest.approx(ss.wilcoxon(d).pvalue, rel=1e-12)
    else:  # the exact p is 2 / 2^6 too: the sign flips estimate it, never below it
        assert 2 / 64 <= row["p_value"] <= 2 / 64 + 4 * math.sqrt(2 / 64 / 10_000)
    assert row["significant"]


def test_bounds_follow_alpha():
    # alpha 0.1: wilcoxon runs from 5 queries (2/32 < 0.1); alpha 0.01: needs 8 (2/256)
    d = [0.5, 0.25, 0.75, 0.125, 0.375, 0.625, 0.875, 0.0625]
    assert run_small("wilcoxon", d[:5], alpha=0.1)["note"] is None
    with pytest.warns(SmallSampleWarning):
        assert run_small("wilcoxon", d[:7], alpha=0.01)["note"] == "n too small"
    assert run_small("wilcoxon", d[:8], alpha=0.01)["note"] is None


@pytest.mark.parametrize("test", ["randomization", "bootstrap"])
def test_too_few_resamples_say_so(test):
    d = list(np.random.default_rng(0).normal(0.3, 0.1, 30))
    log = log_from_values({"v1": [1.0] * 30, "v2": [1.0 + x for x in d]})
    with pytest.warns(SmallSampleWarning, match="n_resamples too small"):
        row = compare(log, "dcg@1", test=test, n_resamples=19).row(0, named=True)  # 1/20 = alpha
    assert row["note"] == "n_resamples too small" and row["p_value"] is None and not row["significant"]
    row = compare(log, "dcg@1", test=test, n_resamples=20).row(0, named=True)
    assert row["note"] is None and row["p_value"] == 1 / 21 and row["significant"]


def test_rows_not_run_leave_the_correction_family():
    # versions b (3 queries, runs) and c (1 query, not run): holm over one p only
    log = log_from_values({"a": [1.0, 1.0, 1.0], "b": [1.5, 1.25, 1.75], "c": [1.5, None, None]})
    with pytest.warns(SmallSampleWarning, match="1 of 2 rows"):
        out = compare(log, "dcg@1", test="paired_t", baseline="a", missing="skip", correction="holm")
    b, c = out.rows(named=True)
    assert b["p_adjusted"] == b["p_value"] and c["p_adjusted"] is None and c["note"] == "n too small"


def test_smallest_p_is_reached_by_the_tests():
    # the bound is attained: the most extreme data of n queries give exactly it
    for n in (6, 8, 10):
        d = np.arange(1, n + 1) / 8
        assert stats.smallest_p("wilcoxon", n, 10**6) == pytest.approx(ss.wilcoxon(d).pvalue, rel=1e-12)
        exact = ss.permutation_test((d,), np.mean, permutation_type="samples", n_resamples=np.inf).pvalue
        assert stats.smallest_p("randomization", n, 10**6) == pytest.approx(exact, rel=1e-12)
    assert stats.smallest_p("paired_t", 2, 10) == 0.0 and stats.smallest_p("paired_t", 1, 10) == 1.0
    assert stats.smallest_p("bootstrap", 4, 10**6) == 4.0**-4
    assert stats.smallest_p("randomization", 100_000, 10_000) == 1 / 10_001  # no overflow at large n


# ----------------------------------------------------------------------------------------
# progress


class Recording:
    """A Progress that records every phase and what was advanced in it (from any thread)."""

    def __init__(self):
        self.phases: list[dict] = []
        self.lock = threading.Lock()

    @contextlib.contextmanager
    def phase(self, description, total=None, unit=""):
        record = {"description": description, "total": total, "unit": unit, "done": 0, "calls": 0}
        self.phases.append(record)

        def advance(n):
            with self.lock:
                record["done"] += n
                record["calls"] += 1

        yield advance


@pytest.mark.parametrize(("test", "per_pair"), [("bootstrap", 1), ("randomization", 2), ("paired_t", 1)])
def test_progress_counts_add_up_to_the_resamples_requested(test, per_pair):
    rng = np.random.default_rng(3)
    log = log_from_values({v: list(rng.random(3000)) for v in ("a", "b", "c")})
    shown = Recording()
    compare(log, ["dcg@1", "p@1"], test=test, n_resamples=2500, progress=shown, interval="bootstrap")
    resampling = [p for p in shown.phases if p["description"].startswith("resampling")]
    assert [p["description"] for p in resampling] == [f"resampling dcg@1 ({test})", f"resampling p@1 ({test})"]
    for p in resampling:
        # 3 pairs x 2500 resamples for the interval (and as many sign flips for randomization)
        assert p["unit"] == "resamples" and p["total"] == p["done"] == 3 * 2500 * per_pair
        assert p["calls"] >= 3
    assert len(shown.phases) > len(resampling)  # evaluate's own phases come first


def test_progress_counts_add_up_when_a_test_is_not_run():
    log = log_from_values({"a": [1.0] * 3, "b": [1.5, 1.25, 1.75]})
    shown = Recording()
    with pytest.warns(SmallSampleWarning):
        compare(log, "dcg@1", test="randomization", n_resamples=500, progress=shown)
    (p,) = [p for p in shown.phases if p["description"].startswith("resampling")]
    assert p["total"] == p["done"] == 1000


def test_progress_must_be_a_progress():
    with pytest.raises(TypeError, match="progress must be True, False or a Progress object"):
        compare(log_from_values({"a": [1.0, 0.5], "b": [0.5, 1.0]}), "dcg@1", progress="yes")


# ----------------------------------------------------------------------------------------
# SciPy stays out of import rank_polars and evaluate


# ----------------------------------------------------------------------------------------
# no spread in the differences: no p-value, a reason, never p=0, NaN or "significant"

SHIFT = list(np.random.default_rng(11).random(12))


def shifted_log(by: float = 0.25) -> pl.DataFrame:
    """v2 = v1 + 0.25 on every query: a constant shift, as rounding leaves it ((x + 0.25) - x != 0.25)."""
    return log_from_values({"v1": SHIFT, "v2": [v + by for v in SHIFT]})


def test_a_constant_shift_has_no_t_or_bootstrap_p_and_says_why():
    x = np.array(SHIFT)
    # what SciPy answers: a "significant" p from the rounding of (x + 0.25) - x, and no bootstrap interval
    assert ss.ttest_rel(x + 0.25, x).pvalue < 1e-30
    with pytest.warns(ss.DegenerateDataWarning):
        assert np.isnan(ss.bootstrap(((x + 0.25) - x,), np.mean, n_resamples=99, rng=0).confidence_interval.low)
    for test in ("paired_t", "bootstrap"):
        out = compare(shifted_log(), "dcg@1", test=test, n_resamples=200)
        row = out.row(0, named=True)
        assert row["p_value"] is None and row["p_adjusted"] is None and row["significant"] is False, test
        assert row["note"] == stats.SAME_DIFFERENCE and row["ci_low"] is None and row["ci_high"] is None
        assert row["wins"] == 12 and row["diff"] == pytest.approx(0.25)
        from rank_polars.presentation import verdict
        assert verdict(row) == "cannot tell v2 from v1 on dcg@1: the difference is the same on every query (+0.2500)"
    # the sign-flip tests still test a constant shift: wilcoxon is SciPy's exact 2 / 2^12
    row = compare(shifted_log(), "dcg@1", test="wilcoxon").row(0, named=True)
    assert row["p_value"] == pytest.approx(ss.wilcoxon(x + 0.25 - x).pvalue) == pytest.approx(2 / 2**12)
    assert row["note"] is None and row["significant"]


def test_no_difference_at_all_gives_no_p_in_every_test_and_in_all_pairs():
    same = log_from_values({"v1": SHIFT, "v2": SHIFT, "v3": [v / 2 for v in SHIFT[::-1]]})
    for test in TESTS:
        out = compare(same, "dcg@1", pairs="all", test=test, n_resamples=200)
        first = out.row(0, named=True)  # v1 vs v2: identical
        assert first["p_value"] is None and first["note"] == stats.NO_DIFFERENCE and not first["significant"], test
        # the pairs that have a p are the family the correction counts
        others = out.filter(pl.col("p_value").is_not_null())
        assert others.height == 2 and (others["p_adjusted"] >= others["p_value"]).all()


def test_intervals_of_a_constant_group_are_null():
    import rank_polars as rp

    log = log_from_values({"v1": [0.5] * 6, "v2": SHIFT[:6]})
    for method in ("t", "bootstrap", "bca"):
        out = rp.evaluate(log, "dcg@1", by="model", ci=0.95, ci_method=method).sort("model")
        assert out["dcg@1_low"][0] is None and out["dcg@1_high"][0] is None, method
        assert out["dcg@1_low"][1] is not None, method


# ----------------------------------------------------------------------------------------
# direction: a metric to minimise (abandonment-like) turns wins, verdicts and groups around


def lower_is_better_spec():
    from rank_polars.measures import parse

    class LowerDcg(type(parse("dcg@1"))):  # dcg@1 read as a cost: smaller is better
        HIGHER_IS_BETTER = False

    return LowerDcg(1)


def test_a_metric_to_minimise_is_better_when_it_falls():
    from rank_polars.presentation import groups, verdict

    rng = np.random.default_rng(5)
    base = rng.random(40) + 0.5
    log = log_from_values({"a": list(base), "b": list(base - 0.3 + rng.normal(0, 0.05, 40)),
                           "c": list(base + rng.normal(0, 0.05, 40))})
    spec = lower_is_better_spec()
    out = compare(log, [spec], pairs="all", n_resamples=100)
    higher = compare(log, ["dcg@1"], pairs="all", n_resamples=100)
    ab = out.filter(pl.col("version") == "b", pl.col("baseline") == "a").row(0, named=True)
    assert ab["higher_is_better"] is False and ab["diff"] < 0 and ab["significant"]
    # wins are the queries where b is lower; the same rows read higher-is-better are losses
    ab_high = higher.filter(pl.col("version") == "b", pl.col("baseline") == "a").row(0, named=True)
    assert (ab["wins"], ab["ties"], ab["losses"]) == (ab_high["losses"], ab_high["ties"], ab_high["wins"])
    assert ab["wins"] == int(np.count_nonzero(log_values(log, "b") < log_values(log, "a")))
    assert verdict(ab).startswith("b is better than a on dcg@1 by -0.")
    assert verdict(ab_high).startswith("b is worse than a on dcg@1 by -0.")
    # groups: the lowest mean is the best, letter a
    g = groups(out, "dcg@1")
    assert g["version"].to_list()[0] == "b" and g["group"].to_list()[0] == "a"
    assert groups(higher, "dcg@1")["version"].to_list()[-1] == "b"
    # the direction comes from the spec: a spec without the attribute counts as higher-is-better
    assert compare_module.directions([("m", object())]) == {"m": True}


def log_values(log: pl.DataFrame, model: str) -> np.ndarray:
    return log.filter(pl.col("model") == model).sort("query")["relevance"].to_numpy()


def test_abandonment_falling_is_better():
    """The clicks family's abandonment@k (HIGHER_IS_BETTER = False): a version with more clicks
    abandons less, and compare calls that better."""
    from rank_polars.presentation import verdict

    rng = np.random.default_rng(8)
    rows = []
    for model, p in (("old", 0.15), ("new", 0.45)):
        for q in range(60):
            for pos in range(1, 4):
                rows.append((model, f"q{q}", f"i{pos}", pos, int(rng.random() < p)))
    log = pl.DataFrame(rows, schema=["model", "query", "item", "position", "click"], orient="row")
    row = compare(log, "abandonment@3", baseline="old", relevance="click").row(0, named=True)
    assert row["higher_is_better"] is False and row["diff"] < 0 and row["significant"]
    clicked = log.group_by("model", "query").agg(pl.col("click").max())
    by_query = clicked.pivot(on="model", index="query", values="click")
    assert row["wins"] == by_query.filter((pl.col("new") == 1) & (pl.col("old") == 0)).height  # new has a click, old none
    assert verdict(row).startswith("new is better than old on abandonment@3 by -")
