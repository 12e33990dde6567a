"""The sample click log (rank_polars.datasets.load_clicks): deterministic, shaped
as documented, its clicks drawn from the position-based model it declares, and the online
metrics' intervals covering the arms' true CTR at about the nominal rate over seeded logs."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy import stats

import rank_polars as rp
from rank_polars.datasets import ATTRACTIVENESS, load_clicks


def test_deterministic_and_shaped() -> None:
    a, b = load_clicks(n_queries=20, sessions=300, seed=5), load_clicks(n_queries=20, sessions=300, seed=5)
    assert a.log.equals(b.log) and a.arms.equals(b.arms)
    assert not a.log.equals(load_clicks(n_queries=20, sessions=300, seed=6).log)
    log = a.log
    assert log.columns == ["model", "session", "query", "item", "position", "click", "randomized", "relevance"]
    assert log.height == (300 + 90) * 10
    ab = log.filter(~pl.col("randomized"))
    assert set(ab["model"]) == {"bot-v1", "bot-v2"} and set(log.filter("randomized")["model"]) == {"bot-v1"}
    # every session is one ranking of positions 1..10 of distinct videos of one question
    per = log.group_by("session").agg(pl.col("position").sort(), pl.col("item").n_unique(), pl.col("query").n_unique(),
                                      pl.col("model").n_unique())
    assert per["position"].to_list() == [list(range(1, 11))] * per.height
    assert (per["item"] == 10).all() and (per["query"] == 1).all() and (per["model"] == 1).all()
    # a randomized session shows bot-v1's videos for that question, in another order
    def lists(frame: pl.DataFrame) -> pl.DataFrame:
        return frame.group_by("session", "query").agg(pl.col("item").sort_by("position")).select("query", "item")
    v1 = lists(ab.filter(pl.col("model") == "bot-v1")).unique("query")
    rand = lists(log.filter("randomized")).join(v1, on="query", suffix="_v1")
    assert rand.height > 0
    assert all(sorted(r) == sorted(v) for r, v in zip(rand["item"].to_list(), rand["item_v1"].to_list()))
    assert any(r != v for r, v in zip(rand["item"].to_list(), rand["item_v1"].to_list()))
    assert a.examination["examination"].to_list() == pytest.approx([1 / p for p in range(1, 11)])
    with pytest.raises(rp.RankPolarsError, match="sessions"):
        load_clicks(sessions=0)


def test_clicks_follow_the_declared_click_model() -> None:
    """Per (position, grade): the clicks are Binomial(shown, examination(p) * attractiveness(g));
    a chi-square goodness of fit over the cells does not reject it."""
    sample = load_clicks(sessions=20_000, seed=1)
    cells = sample.log.group_by("position", "relevance").agg(n=pl.len(), c=pl.col("click").sum())
    p = cells["relevance"].replace_strict(ATTRACTIVENESS, return_dtype=pl.Float64) / cells["position"]
    n, c, p = cells["n"].to_numpy(), cells["c"].to_numpy(), p.to_numpy()
    chi2 = (((c - n * p) ** 2) / (n * p * (1 - p))).sum()
    assert stats.chi2.sf(chi2, len(n)) > 1e-3


def test_intervals_cover_the_true_ctr_at_the_nominal_rate() -> None:
    """Over 25 seeded logs the 90% intervals of ctr@10, mean and ratio, contain the arm's true CTR
    about 90% of the time (a binomial test at 1e-3 against 0.9 over 50 arm-logs, per form)."""
    hits = {"ctr@10": 0, "ctr(agg=ratio)@10": 0}
    trials = 0
    for seed in range(25):
        sample = load_clicks(n_queries=50, sessions=400, randomized_share=0, seed=100 + seed)
        got = rp.evaluate(sample.log, list(hits), by="model", query="session", ci=0.9).join(sample.arms, on="model")
        for row in got.iter_rows(named=True):
            trials += 1
            for name in hits:
                hits[name] += row[f"{name}_low"] <= row["ctr"] <= row[f"{name}_high"]
    for name, h in hits.items():
        assert stats.binomtest(h, trials, 0.9).pvalue > 1e-3, (name, h, trials)


def test_true_ctr_is_the_expectation_over_the_log() -> None:
    """The arms' truth is what a very long log converges to."""
    sample = load_clicks(sessions=60_000, randomized_share=0, seed=2)
    got = sample.log.group_by("model").agg(pl.col("click").mean()).join(sample.arms, on="model")
    se = np.sqrt(got["ctr"] * (1 - got["ctr"]) / (sample.log.height / 2))
    assert ((got["click"] - got["ctr"]).abs() < 5 * se).all()


def test_candidates_equal_to_depth_show_every_video_in_both_arms() -> None:
    """``candidates=depth``: each session of either arm (and each randomized one) shows all of its
    question's candidates, so bot-v1's log covers every (question, video) bot-v2 shows; the
    default leaves some uncovered; fewer candidates than positions are refused."""
    sample = load_clicks(n_queries=15, sessions=200, depth=6, candidates=6, seed=3)
    sets = sample.log.group_by("session", "query", "model").agg(pl.col("item").sort())
    assert sets.group_by("query").agg(pl.col("item").n_unique())["item"].eq(1).all()
    def pairs(frame: pl.DataFrame, model: str) -> pl.DataFrame:
        return frame.filter(pl.col("model") == model).select("query", "item").unique()
    for log, covered in ((sample.log, True), (load_clicks(n_queries=15, sessions=200, depth=6, seed=3).log, False)):
        uncovered = pairs(log, "bot-v2").join(pairs(log.filter(~pl.col("randomized")), "bot-v1"), on=["query", "item"],
                                              how="anti")
        assert (uncovered.height == 0) == covered
    with pytest.raises(rp.RankPolarsError, match="candidates must be at least depth"):
        load_clicks(depth=10, candidates=9)
