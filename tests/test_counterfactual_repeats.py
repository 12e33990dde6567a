"""Repeated positions and items in rp.counterfactual's inputs, refused as evaluate refuses them in
a run (found by an adversarial pass: a candidate with two items at one position was estimated,
ctr@2 = 0.5 where neither reading of the ranking gives it).  Each test runs both engines."""

from __future__ import annotations

import warnings
from typing import Any

import polars as pl
import pytest

import rank_polars as rp
from rank_polars.clicks.counterfactual import counterfactual, counterfactual_sql

ENGINES = ["polars", "duckdb"]
# two logged rankings of two items; position 2 examined half as often as position 1
LOG = pl.DataFrame({"query": ["a", "a", "b", "b"], "item": ["x", "y", "x", "y"], "position": [1, 2, 1, 2],
                    "click": [1, 1, 0, 1], "pscore": [0.5, 0.5, 0.2, 0.2], "pscore_item_position": [0.5, 0.4, 0.3, 0.9],
                    "pscore_cascade": [0.5, 0.4, 0.3, 0.2]})
EXAM = pl.DataFrame({"position": [1, 2, 3], "examination": [1.0, 0.5, 0.4]})
# query a: x and y both at position 1
TIED = pl.DataFrame({"query": ["a", "a", "b", "b"], "item": ["x", "y", "y", "x"], "position": [1, 1, 1, 2]})
SAID = (r"counterfactual: the candidate's column 'position': duplicate positions within a ranking "
        r"\(1 repeated row in 1 ranking, counting {scope}\), e\.g\. query 'a'")


def quiet(**kwargs: Any) -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return counterfactual(**kwargs)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("metric", ["ctr@2", "dcg@2", "clicks@2", "p@2", "cg@2"])
def test_two_items_at_one_candidate_position_are_refused(metric: str, engine: str) -> None:
    scope = "the rows ranked at most 2, the deepest cutoff asked for"
    with pytest.raises(rp.DataError, match=SAID.format(scope=scope)):
        counterfactual(LOG, TIED, metric, examination=EXAM, min_clicks=0, engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_without_a_cutoff_every_row_counts_and_the_slate_estimators_say_the_same(engine: str) -> None:
    with pytest.raises(rp.DataError, match=SAID.format(scope="every row")):
        counterfactual(LOG, TIED, "dcg", examination=EXAM, min_clicks=0, engine=engine)
    for estimator in ("standard_ips", "independent_ips", "rips"):
        with pytest.raises(rp.DataError, match=SAID.format(scope="every row")):
            counterfactual(LOG, TIED, estimator=estimator, min_clicks=0, engine=engine)


def test_the_same_refusal_as_evaluate() -> None:
    """evaluate refuses the same ranking as a run, naming the same column and problem."""
    run = TIED.with_columns(relevance=pl.lit(1))
    with pytest.raises(rp.DataError, match=r"column 'position': duplicate positions within a ranking \(1 repeated "
                                           r"row in 1 ranking.*e\.g\. query 'a'"):
        rp.evaluate(run, ["p@2"])


@pytest.mark.parametrize("engine", ENGINES)
def test_the_column_is_named_as_the_user_names_it(engine: str) -> None:
    log, cand = LOG.rename({"position": "slot"}), TIED.rename({"position": "slot"})
    with pytest.raises(rp.DataError, match=r"the candidate's column 'slot': duplicate positions"):
        counterfactual(log, cand, "ctr@2", examination=EXAM, position="slot", min_clicks=0, engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_tie_below_the_deepest_cutoff_changes_nothing_and_is_accepted(engine: str) -> None:
    """Rows ranked below every cutoff carry no weight (as evaluate's default checks read only the
    rows that can change a value): the estimate is the one without them."""
    deep = pl.DataFrame({"query": ["a", "a", "a", "b", "b"], "item": ["y", "x", "z", "x", "y"],
                         "position": [1, 2, 2, 1, 2]})
    clean = deep.filter(pl.col("item") != "z")
    got = quiet(log=LOG, candidate=deep.with_columns(pl.col("position") + pl.col("item").eq("z").cast(pl.Int64)),
                metrics=["ctr@2", "dcg@2"], examination=EXAM, min_clicks=0, engine=engine)
    want = quiet(log=LOG, candidate=clean, metrics=["ctr@2", "dcg@2"], examination=EXAM, min_clicks=0, engine=engine)
    assert got.equals(want)
    # the tie itself inside the cutoff: refused
    with pytest.raises(rp.DataError, match="duplicate positions within a ranking"):
        counterfactual(LOG, deep, "ctr@2", examination=EXAM, min_clicks=0, engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_an_item_twice_in_a_candidate_ranking_is_refused(engine: str) -> None:
    twice = pl.DataFrame({"query": ["a", "a", "b", "b"], "item": ["x", "x", "x", "y"], "position": [1, 2, 1, 2]})
    with pytest.raises(rp.DataError, match=r"the candidate has 2 rows repeating a key \(an item ranked twice for one "
                                           r"query; queries 'a'\)"):
        counterfactual(LOG, twice, "ctr@2", examination=EXAM, min_clicks=0, engine=engine)
    scored = twice.drop("position").with_columns(score=pl.Series([2.0, 1.0, 2.0, 1.0]))
    with pytest.raises(rp.DataError, match=r"an item ranked twice for one query"):
        counterfactual(LOG, scored, "ctr@2", examination=EXAM, score="score", min_clicks=0, engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_two_clicked_rows_at_one_logged_position_are_refused(engine: str) -> None:
    """The usual cause, two showings of a query without session=, is named; with the showings
    named each is its own ranking."""
    merged = LOG.with_columns(position=pl.Series([1, 1, 1, 2]), click=pl.Series([1, 1, 0, 1]))
    cand = LOG.select("query", "item", "position")
    with pytest.raises(rp.DataError, match=r"the log has 2 rows repeating a key \(clicked rows sharing a position within "
                                           r"one logged ranking; queries 'a'\); if a query was shown several times, "
                                           r"pass session="):
        counterfactual(merged, cand, "dcg@2", examination=EXAM, min_clicks=0, engine=engine)
    for estimator in ("standard_ips", "independent_ips", "rips"):  # per slot: any two rows, clicked or not
        with pytest.raises(rp.DataError, match=r"\(rows sharing a position within one logged ranking; queries 'a'\)"):
            counterfactual(merged.with_columns(click=pl.Series([1, 0, 0, 1])), cand, estimator=estimator,
                           min_clicks=0, engine=engine)
    shown = merged.with_columns(session=pl.Series([1, 2, 1, 1]))
    got = quiet(log=shown, candidate=cand, metrics="dcg@2", examination=EXAM, session="session", min_clicks=0,
                engine=engine)
    assert got["rankings"].item() == 3


@pytest.mark.parametrize("engine", ENGINES)
def test_an_unclicked_row_at_a_clicked_position_changes_nothing(engine: str) -> None:
    """ips: the unclicked row carries no term and each click is weighed at its own logged
    position, so the estimate is the one without that row (the documented choice)."""
    extra = pl.DataFrame({"query": ["a"], "item": ["z"], "position": [1], "click": [0], "pscore": [0.5],
                          "pscore_item_position": [0.5], "pscore_cascade": [0.5]})
    cand = LOG.select("query", "item", "position")
    metrics = ["dcg@2", "ctr@2", "p@2", "clicks@2"]
    for estimator in ("ips", "snips"):
        got = quiet(log=pl.concat([LOG, extra]), candidate=cand, metrics=metrics, examination=EXAM,
                    estimator=estimator, min_clicks=0, engine=engine)
        want = quiet(log=LOG, candidate=cand, metrics=metrics, examination=EXAM, estimator=estimator, min_clicks=0,
                     engine=engine)
        assert got.equals(want)


def test_counterfactual_sql_says_the_candidate_needs_distinct_positions() -> None:
    """The SQL has no checks by design: its docstring says what the tables must be."""
    doc = " ".join((counterfactual_sql.__doc__ or "").split())
    assert "distinct positions" in doc and "each item once" in doc
