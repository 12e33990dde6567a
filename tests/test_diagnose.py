"""rp.diagnose: findings on odd logs (the CLI's validate prints them)."""

from __future__ import annotations

import polars as pl
import pytest

import rank_polars as rp

BASE = pl.DataFrame({"query": ["q1", "q1", "q1", "q2", "q2"], "item": list("abcde"),
                     "position": [1, 2, 3, 1, 2], "relevance": [1, 0, 2, 0, 1]})


def test_a_null_group_is_a_group_not_one_that_lacks_queries():
    log = pl.concat([BASE.with_columns(model=pl.lit("A")), BASE.with_columns(model=pl.lit(None, pl.String))])
    messages = rp.diagnose(log, by="model").to_frame()["message"].to_list()
    assert not any("lacks" in m for m in messages), messages
    assert any("null 'model'" in m for m in messages), messages


def test_a_group_that_lacks_a_query_is_named():
    log = pl.concat([BASE.with_columns(model=pl.lit("A")),
                     BASE.filter(pl.col("query") == "q1").with_columns(model=pl.lit("B"))])
    messages = rp.diagnose(log, by="model").to_frame()["message"].to_list()
    assert any("B lacks 1" in m for m in messages), messages


def _sample_judges():
    run = rp.datasets.sample_log().drop("relevance")
    return run, rp.datasets.sample_judgments()


def test_each_judge_is_diagnosed_on_its_own_never_their_rows_as_one():
    """Two judges grading one pair is no repeated judgment, and each judge's unjudged share is its
    own: the findings are those of a diagnosis of each judge's rows alone, under the judge's name."""
    run, judgments = _sample_judges()
    both = rp.diagnose(run, qrels=judgments, by="model")
    assert both.errors == 0 and not any(f.check == "duplicates" for f in both.findings)
    for who in ("people", "llm"):
        alone = rp.diagnose(run, qrels=judgments.filter(pl.col("judge") == who).drop("judge"), by="model")
        mine = {(f.level, f.check, f.message) for f in both.findings if f.message.startswith(f"judge {who!r}: ")}
        theirs = {(f.level, f.check, f"judge {who!r}: {f.message}") for f in alone.findings}
        assert mine and mine <= theirs
        assert both.facts["judges"][who]["unjudged_at_k"] == alone.facts["unjudged_at_k"]
        assert both.facts["judges"][who]["judgments"] == alone.facts["judgments"]
        chosen = rp.diagnose(run, qrels=judgments, by="model", judge=who)
        assert [(f.level, f.check, f.message) for f in chosen.findings] == [
            (f.level, f.check, f.message) for f in alone.findings]
    assert both.facts["judges"]["people"]["unjudged_at_k"]["bot-v1"] > 0.3  # a depth-5 pool: 40% of the top 10


def test_a_repeat_within_one_judge_is_found_under_that_judge():
    run, judgments = _sample_judges()
    twice = pl.concat([judgments, judgments.filter(pl.col("judge") == "llm").head(1)])
    found = rp.diagnose(run, qrels=twice, by="model")
    errors = [f.message for f in found.findings if f.level == "error"]
    assert errors == ["judge 'llm': qrels: 1 (query, item) pairs are judged more than once, e.g. query 'q0001'"]
    with pytest.raises(rp.RankPolarsError, match="judge='robot' is not among the judges"):
        rp.diagnose(run, qrels=judgments, judge="robot")
