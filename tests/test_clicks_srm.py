"""The sample-ratio check of ``diagnose``: rankings per arm against the expected
shares, Pearson's chi-square as ``scipy.stats.chisquare`` computes it, in both engines."""

from __future__ import annotations

import math

import polars as pl
import pytest
from scipy import stats

import rank_polars as rp
from rank_polars.diagnose import Diagnosis, Finding


def ab_log(counts: dict[str, int]) -> pl.DataFrame:
    rows = [(arm, f"s{arm}{i}", "x", 1, i % 2) for arm, n in counts.items() for i in range(n)]
    return pl.DataFrame(rows, schema=["model", "session", "item", "position", "click"], orient="row")


def finding(diagnosis: Diagnosis) -> Finding | None:
    return next((f for f in diagnosis.findings if f.check == "sample_ratio"), None)


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize(("counts", "expected"), [
    ({"a": 500, "b": 430}, None),                        # p ~ 0.02: an info line
    ({"a": 500, "b": 400}, None),                        # p ~ 0.0009: a mismatch
    ({"a": 300, "b": 620, "c": 310}, {"a": 1, "b": 2, "c": 1}),  # 25/50/25 split, as planned
    ({"a": 300, "b": 300, "c": 300}, {"a": 1, "b": 2, "c": 1}),  # equal counts against 25/50/25
])
def test_sample_ratio_is_scipys_chisquare(engine: str, counts: dict[str, int], expected: dict | None) -> None:
    got = rp.diagnose(ab_log(counts), by="model", query="session", relevance="click", engine=engine,
                      expected_shares=expected)
    observed = [counts[g] for g in sorted(counts)]
    weights = [1.0] * len(observed) if expected is None else [expected[g] for g in sorted(counts)]
    f_exp = [sum(observed) * w / sum(weights) for w in weights]
    ref = stats.chisquare(observed, f_exp)
    facts = got.facts["sample_ratio"]
    assert facts["groups"] == sorted(counts) and facts["rankings"] == observed
    assert math.isclose(facts["chi2"], ref.statistic, rel_tol=1e-12)
    assert math.isclose(facts["p_value"], ref.pvalue, rel_tol=1e-12)
    line = finding(got)
    assert line is not None and line.level == ("warning" if ref.pvalue < 0.001 else "info")
    assert ("sample ratio mismatch" in line.message) == (ref.pvalue < 0.001)


def test_equal_counts_say_nothing_and_bad_shares_are_refused() -> None:
    log = ab_log({"a": 10, "b": 10})
    got = rp.diagnose(log, by="model", query="session", relevance="click")
    assert finding(got) is None and got.facts["sample_ratio"]["p_value"] == 1.0
    assert finding(rp.diagnose(log, query="session", relevance="click")) is None  # no groups, no check
    with pytest.raises(rp.RankPolarsError, match="missing 'b'"):
        rp.diagnose(log, by="model", query="session", relevance="click", expected_shares={"a": 1})
    with pytest.raises(rp.RankPolarsError, match="needs by="):
        rp.diagnose(log, query="session", relevance="click", expected_shares={"a": 1})


def test_the_sample_click_log_has_no_mismatch() -> None:
    sample = rp.datasets.load_clicks()
    ab = sample.log.filter(~pl.col("randomized"))
    got = rp.diagnose(ab, by="model", query="session", relevance="click")
    assert got.facts["sample_ratio"]["p_value"] > 0.001
