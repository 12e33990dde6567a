"""The sample chatbot logs: determinism, shape, labels, judgments and the shipped sample."""

from __future__ import annotations

import polars as pl
from polars.testing import assert_frame_equal
import pytest

import rank_polars as rp
from rank_polars import datasets
from rank_polars.errors import RankPolarsError

COLUMNS = ["model", "segment", "date", "query", "question", "item", "position", "score", "relevance"]


@pytest.fixture(scope="module")
def log() -> pl.DataFrame:
    return datasets.chatbot_log(n_questions=300, results_per_question=8, versions=("bot-v1", "bot-v2", "bot-v3"), seed=7)


def test_same_seed_same_log_other_seed_other_log():
    a = datasets.chatbot_log(n_questions=50, seed=3)
    assert a.equals(datasets.chatbot_log(n_questions=50, seed=3))
    assert not a.equals(datasets.chatbot_log(n_questions=50, seed=4))
    assert datasets.chatbot_qrels(n_questions=50, seed=3).equals(datasets.chatbot_qrels(n_questions=50, seed=3))


def test_shape_columns_and_types(log):
    assert log.columns == COLUMNS
    assert log.height == 300 * 8 * 3
    assert log.schema["date"] == pl.Date and log.schema["position"] == pl.Int64
    assert log.schema["relevance"] == pl.Float64
    assert log["model"].unique(maintain_order=True).to_list() == ["bot-v1", "bot-v2", "bot-v3"]
    assert log["query"].n_unique() == 300
    assert log["query"].str.contains(r"^q\d{4}$").all() and log["query"].min() == "q0001"
    assert log["item"].str.contains(r"^vid_\d{4,}$").all()
    assert log["question"].str.len_chars().min() > 10
    # one question keeps its segment, date and text across versions
    per_q = log.group_by("query").agg(pl.col("segment", "date", "question").n_unique())
    assert per_q.select(pl.all().exclude("query").max()).row(0) == (1, 1, 1)


def test_rankings_are_well_formed(log):
    groups = log.group_by("model", "query").agg(
        pl.col("position").sort().alias("positions"),
        pl.col("item").n_unique().alias("distinct_items"),
        (pl.col("score").sort_by("position").diff() <= 0).all().alias("decreasing"),
    )
    assert groups.height == 300 * 3
    assert groups["positions"].to_list() == [list(range(1, 9))] * groups.height
    assert (groups["distinct_items"] == 8).all()
    assert groups["decreasing"].all()
    assert log["score"].is_between(0, 1).all()


def test_label_ranges_and_the_two_grade_scales():
    marks = datasets.chatbot_log(n_questions=200, seed=2)
    grades = datasets.chatbot_log(n_questions=200, seed=2, grades="0-3")
    assert marks["relevance"].is_between(0, 1).all()
    assert ((marks["relevance"] * 100).round(6) == (marks["relevance"] * 100).round(0)).all()  # two decimals
    assert (marks["relevance"] >= 0.9).any() and (marks["relevance"] == 0).any()
    assert grades.schema["relevance"] == pl.Int64
    assert set(grades["relevance"].unique().to_list()) == {0, 1, 2, 3}
    # same rankings; grades are the marks binned
    assert marks.drop("relevance").equals(grades.drop("relevance"))
    m = marks["relevance"]
    expected = pl.Series((m > 0).cast(pl.Int64) + (m >= 0.5).cast(pl.Int64) + (m >= 0.85).cast(pl.Int64))
    assert grades["relevance"].to_list() == expected.to_list()


def test_some_questions_have_no_relevant_video():
    qrels = datasets.chatbot_qrels(n_questions=300, seed=0)
    relevant = qrels.group_by("query").agg((pl.col("relevance") > 0).sum().alias("r"))
    no_good = relevant.filter(pl.col("r") == 0).height
    assert 0.03 * 300 < no_good < 0.2 * 300
    assert relevant.height == 300


def test_qrels_agree_with_the_log_and_hold_unretrieved_relevant_videos():
    log = datasets.chatbot_log(n_questions=100, results_per_question=5, seed=5)
    qrels = datasets.chatbot_qrels(n_questions=100, results_per_question=5, seed=5)
    assert qrels.columns == ["query", "item", "relevance"]
    assert qrels.height == 100 * 15
    assert qrels.select("query", "item").is_unique().all()
    joined = log.join(qrels, on=["query", "item"], how="left", suffix="_qrels")
    assert joined["relevance_qrels"].null_count() == 0
    assert (joined["relevance"] == joined["relevance_qrels"]).all()
    unretrieved = qrels.filter(pl.col("relevance") > 0).join(log, on=["query", "item"], how="anti")
    assert unretrieved.height > 0
    # with the full judgments recall counts them: below 1 even for the better bot
    scores = rp.evaluate(log.drop("relevance"), "recall@5", qrels=qrels, by="model")
    assert (scores["recall@5"] < 1).all()


def test_split_judgments():
    log = datasets.chatbot_log(n_questions=40, seed=1)
    run, qrels = datasets.split_judgments(log)
    assert run.columns == [c for c in COLUMNS if c != "relevance"] and run.height == log.height
    assert qrels.columns == ["query", "item", "relevance"]
    assert qrels.height == log.select("query", "item").unique().height
    # precision and RR read only the shown videos: the same either way
    assert rp.evaluate(log, ["p@5", "mrr"], by="model").equals(rp.evaluate(run, ["p@5", "mrr"], by="model", qrels=qrels))
    # nDCG's ideal ranking now also holds the videos the other version showed: never higher
    with_labels = rp.evaluate(log, "ndcg@10", by="model")["ndcg@10"]
    with_qrels = rp.evaluate(run, "ndcg@10", by="model", qrels=qrels)["ndcg@10"]
    assert (with_qrels <= with_labels + 1e-12).all() and (with_qrels < with_labels).any()
    clash = log.with_columns(pl.when(pl.col("model") == "bot-v2").then(0.5).otherwise(pl.col("relevance")).alias("relevance"))
    with pytest.raises(RankPolarsError, match="different labels"):
        datasets.split_judgments(clash)
    with pytest.raises(RankPolarsError, match="no column 'label'"):
        datasets.split_judgments(log, relevance="label")


def test_adding_a_version_keeps_the_others():
    two = datasets.chatbot_log(n_questions=30, seed=9)
    three = datasets.chatbot_log(n_questions=30, seed=9, versions=("bot-v1", "bot-v2", "bot-v3"))
    assert three.filter(pl.col("model") != "bot-v3").equals(two)


def test_sample_log_is_the_default_generator_output():
    path = datasets.sample_path()
    assert path.name == "chatbot_sample.parquet" and path.exists()
    assert path.stat().st_size < 200_000
    sample = datasets.sample_log()
    assert sample.shape == (200 * 10 * 2, 9)
    # the shipped file was written by another NumPy/Polars: floats agree to the last few ulps
    # (exp/log differ by 1 ulp across versions), everything else exactly
    assert_frame_equal(sample, datasets.chatbot_log(), check_exact=False, rel_tol=1e-12, abs_tol=1e-15)


def test_v2_better_on_average_but_not_on_every_question():
    sample = datasets.sample_log()
    means = rp.evaluate(sample, "ndcg@10", by="model")
    v1, v2 = means.sort("model")["ndcg@10"].to_list()
    assert v2 > v1
    wide = rp.evaluate(sample, "ndcg@10", by="model", per_query=True).pivot(on="model", index="query", values="ndcg@10")
    assert (wide["bot-v2"] < wide["bot-v1"]).sum() > 10
    assert (wide["bot-v2"] > wide["bot-v1"]).sum() > (wide["bot-v2"] < wide["bot-v1"]).sum()


def test_any_size_quickly():
    big = datasets.chatbot_log(n_questions=20_000, results_per_question=10)
    assert big.height == 400_000
    assert big["query"].max() == "q20000"
    wide = datasets.chatbot_log(n_questions=12_345, results_per_question=1, versions=("only",))
    assert wide["query"].str.len_chars().unique().to_list() == [6]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_questions": 0}, "n_questions must be a positive integer"),
        ({"n_questions": 2.5}, "n_questions must be a positive integer"),
        ({"results_per_question": 0}, "results_per_question must be a positive integer"),
        ({"grades": "stars"}, "grades must be 'marks' or '0-3'"),
        ({"versions": ()}, "versions must be distinct strings"),
        ({"versions": ("a", "a")}, "versions must be distinct strings"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(RankPolarsError, match=message):
        datasets.chatbot_log(**kwargs)
