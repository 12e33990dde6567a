"""rp.leaderboard_agreement: Kendall's tau against scipy.stats.kendalltau, RBO against the rbo
package's rbo_ext, tau_ap re-derived from Yilmaz, Aslam and Robertson (SIGIR 2008); the rankings
and shifts against pytrec_eval's per-query values, the flips against scipy.stats.ttest_rel, on
generated logs and judgments, in both engines."""

from __future__ import annotations

import math
from itertools import combinations, permutations
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

import rank_polars as rp
from rank_polars.judges.leaderboard import kendall_tau_b, rbo_ext, tau_ap

from . import system_deps
from .test_judges_evaluate import reference

TOL = 1e-9


def rbo_package() -> Any:
    """The rbo package (0.1.3 pins numpy < 2: installed with --no-deps; it needs numpy and tqdm)."""
    system_deps.ensure_reference("rbo", "rbo==0.1.3", "the RBO reference; it pins numpy < 2")
    import rbo

    return rbo


def tau_ap_by_the_paper(truth: list[Any], estimate: list[Any]) -> float:
    """tau_ap = 2/(N-1) * sum_{i=2..N} C(i)/(i-1) - 1, C(i): the items above rank i of the estimate
    that the truth also ranks above the i-th (Yilmaz et al. 2008, eq. 3), one item at a time."""
    n = len(estimate)
    total = 0.0
    for i in range(1, n):
        correct = sum(1 for j in range(i) if truth.index(estimate[j]) < truth.index(estimate[i]))
        total += correct / i
    return 2.0 / (n - 1) * total - 1.0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=2, max_size=12))
def test_kendall_tau_b_is_scipys(pairs: list[tuple[int, int]]) -> None:
    x, y = (np.array(v, dtype=float) for v in zip(*pairs))
    want = stats.kendalltau(x, y).statistic
    got = kendall_tau_b(x, y)
    assert (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want, abs=TOL)


@settings(max_examples=200, deadline=None)
@given(st.permutations(list("abcdefgh")), st.integers(2, 8), st.sampled_from([0.5, 0.8, 0.9, 0.98]))
def test_rbo_is_the_rbo_packages_extrapolated_rbo(order: list[str], n: int, p: float) -> None:
    first, second = list("abcdefgh")[:n], [v for v in order if v in "abcdefgh"[:n]]
    want = rbo_package().RankingSimilarity(first, second).rbo_ext(p=p)
    assert rbo_ext(first, second, p) == pytest.approx(want, abs=TOL)


def test_tau_ap_is_the_papers_on_every_ranking_of_six() -> None:
    truth = list("abcdef")
    for estimate in permutations(truth):
        assert tau_ap(truth, list(estimate)) == pytest.approx(tau_ap_by_the_paper(truth, list(estimate)), abs=TOL)
    assert tau_ap(truth, truth) == 1.0 and tau_ap(truth, truth[::-1]) == -1.0
    # a swap at the top costs more than one at the bottom (the paper's point)
    assert tau_ap(truth, list("bacdef")) < tau_ap(truth, list("abcdfe"))


@st.composite
def boards(draw: Any) -> tuple[pl.DataFrame, pl.DataFrame]:
    """3-4 versions over 4-8 queries, two judges who judge every shown item, differently."""
    n_queries, n_versions = draw(st.integers(4, 8)), draw(st.integers(3, 4))
    items = [f"d{i}" for i in range(6)]
    log, judged = [], []
    for q in range(n_queries):
        for v in range(n_versions):
            shown = draw(st.permutations(items))[: draw(st.integers(2, 5))]
            log += [(f"v{v}", f"q{q}", item, float(10 - pos)) for pos, item in enumerate(shown)]
        for item in items:
            judged += [(f"q{q}", item, draw(st.integers(0, 2)), judge) for judge in ("people", "llm")]
    return (pl.DataFrame(log, schema=["model", "query", "item", "score"], orient="row"),
            pl.DataFrame(judged, schema={"query": pl.String, "item": pl.String, "relevance": pl.Int64,
                                         "judge": pl.String}, orient="row"))


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=boards())
def test_the_leaderboards_their_agreement_flips_and_shifts(engine: str, case: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    log, judgments = case
    metrics = {"ndcg@10": True, "p@5": True}
    board = rp.leaderboard_agreement(log, list(metrics), judgments, judges=["people", "llm"], engine=engine, p=0.8)
    per = {j: reference(log, judgments.filter(pl.col("judge") == j)) for j in ("people", "llm")}
    means = {j: per[j].group_by("model").agg(pl.col(list(metrics)).mean()).sort("model") for j in per}
    for metric in metrics:
        orders = {}
        for j in ("people", "llm"):
            want = sorted(means[j].select("model", metric).iter_rows(), key=lambda r: (-r[1], r[0]))
            got = board.rankings.filter((pl.col("judge") == j) & (pl.col("metric") == metric))
            assert got["model"].to_list() == [m for m, _ in want]
            assert np.allclose(got["value"].to_numpy(), [v for _, v in want], atol=TOL, rtol=0)
            assert got["rank"].to_list() == list(range(1, len(want) + 1))
            orders[j] = [m for m, _ in want]
        stat = {r["statistic"]: r["value"] for r in board.correlations.filter(pl.col("metric") == metric).iter_rows(named=True)}
        x = means["people"][metric].to_numpy()
        y = means["llm"][metric].to_numpy()
        want_tau = stats.kendalltau(x, y).statistic
        assert (math.isnan(stat["kendall_tau"]) and math.isnan(want_tau)) or stat["kendall_tau"] == pytest.approx(want_tau, abs=TOL)
        assert stat["tau_ap"] == pytest.approx(tau_ap_by_the_paper(orders["people"], orders["llm"]), abs=TOL)
        assert stat["rbo"] == pytest.approx(rbo_package().RankingSimilarity(orders["people"], orders["llm"]).rbo_ext(p=0.8), abs=TOL)
        # flips: the paired t-test's verdict under each judge
        flips = board.flips.filter(pl.col("metric") == metric)
        assert flips.height == len(list(combinations(sorted(means["people"]["model"]), 2)))
        for row in flips.iter_rows(named=True):
            verdicts = []
            for j in ("people", "llm"):
                wide = per[j].pivot(on="model", index="query", values=metric)
                d = (wide[row["version_a"]] - wide[row["version_b"]]).to_numpy()
                with np.errstate(all="ignore"):
                    p = stats.ttest_rel(wide[row["version_a"]].to_numpy(), wide[row["version_b"]].to_numpy()).pvalue
                spread = np.ptp(d) > 1e-12 * max(1.0, float(np.abs(d).max()))
                verdicts.append("=" if not (spread and p < 0.05) else (">" if d.mean() > 0 else "<"))
            assert (row["verdict_a"], row["verdict_b"]) == tuple(verdicts)
            assert row["flipped"] == (verdicts[0] != verdicts[1])
        shifts = board.shifts.filter(pl.col("metric") == metric).sort("model")
        assert np.allclose(shifts["shift"].to_numpy(), (means["llm"][metric] - means["people"][metric]).to_numpy(),
                           atol=TOL, rtol=0)


def test_the_refusals() -> None:
    log = pl.DataFrame({"model": ["a", "b"], "query": ["q1", "q1"], "item": ["x", "x"], "position": [1, 1]})
    one = pl.DataFrame({"query": ["q1"], "item": ["x"], "relevance": [1], "judge": ["people"]})
    with pytest.raises(rp.RankPolarsError, match="compares judges"):
        rp.leaderboard_agreement(log, "p@1", one)
    with pytest.raises(rp.RankPolarsError, match="persistence"):
        rp.leaderboard_agreement(log, "p@1", one, p=1.0)
    piped = pl.concat([one, one.with_columns(judge=pl.lit("gpt|4"))])  # its pairs would read "people|gpt|4"
    with pytest.raises(rp.RankPolarsError, match=r"'gpt\|4' has a '\|' in its name"):
        rp.leaderboard_agreement(log, "p@1", piped)
