"""rp.pool against trectools' depth-k pooling (TrecPoolMaker.make_pool, strategy="topX") and its
pool difference (TrecPool.minus) on generated logs; the judging queue's order against the
strategies written out in Python; the budget; ranks by score as trec_eval orders them."""

from __future__ import annotations

import importlib
import importlib.util
import math
import sys
import types
from typing import Any

import pandas as pd
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rank_polars as rp

from . import system_deps


def trectools() -> types.SimpleNamespace:
    """trectools' TrecRun, TrecPool and TrecPoolMaker.  trectools 0.0.50 pins old versions and its
    package imports bs4, lxml and sarge (topics and indexers), which pooling never uses: it is
    installed with --no-deps and its pooling modules are loaded under a bare package, unchanged."""
    system_deps.ensure_reference("trectools", "trectools==0.0.50", "the pooling reference; it pins old pandas and scipy")
    spec = importlib.util.find_spec("trectools")
    assert spec is not None and spec.submodule_search_locations
    saved = {k: v for k, v in sys.modules.items() if k == "trectools" or k.startswith("trectools.")}
    package = types.ModuleType("trectools")
    package.__path__ = list(spec.submodule_search_locations)
    sys.modules["trectools"] = package
    try:
        for module, name in (("trec_res", "TrecRes"), ("trec_run", "TrecRun"), ("trec_pool", "TrecPool")):
            setattr(package, name, getattr(importlib.import_module(f"trectools.{module}"), name))
        maker = importlib.import_module("trectools.trec_pool_maker").TrecPoolMaker
        return types.SimpleNamespace(TrecRun=package.TrecRun, TrecPool=package.TrecPool, TrecPoolMaker=maker)
    finally:
        for key in [k for k in sys.modules if k == "trectools" or k.startswith("trectools.")]:
            del sys.modules[key]
        sys.modules.update(saved)


@pytest.fixture(scope="module")
def tt() -> types.SimpleNamespace:
    return trectools()


@st.composite
def logs(draw: Any) -> pl.DataFrame:
    """2-4 versions, 1-4 queries, lists of 1-8 distinct items at positions 1..n."""
    rows = []
    for model in [f"v{i}" for i in range(draw(st.integers(2, 4)))]:
        for q in range(draw(st.integers(1, 4))):
            items = draw(st.lists(st.sampled_from([f"d{i:02d}" for i in range(12)]), min_size=1, max_size=8, unique=True))
            rows += [(model, f"q{q}", item, pos, float(draw(st.integers(0, 3)))) for pos, item in enumerate(items, 1)]
    return pl.DataFrame(rows, schema=["model", "query", "item", "position", "score"], orient="row")


def _runs(tt: types.SimpleNamespace, log: pl.DataFrame, rank: str = "position") -> list[Any]:
    runs = []
    for (model,), part in log.sort("model", "query", rank).group_by(["model"], maintain_order=True):
        frame = pd.DataFrame({"query": part["query"].to_list(), "q0": "Q0", "docid": part["item"].to_list(),
                              "rank": part[rank].to_list(), "score": 0.0, "system": model})
        run = tt.TrecRun()
        run.load_run_from_dataframe(frame)
        runs.append(run)
    return runs


def _pairs(frame: pl.DataFrame) -> set[tuple[str, str]]:
    return set(frame.select("query", "item").iter_rows())


def _flat(pool: Any) -> set[tuple[str, str]]:
    return {(q, d) for q, docs in pool.pool.items() for d in docs}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(logs(), st.integers(1, 6))
def test_the_pool_is_trectools_top_x_pool(tt: types.SimpleNamespace, log: pl.DataFrame, depth: int) -> None:
    want = tt.TrecPoolMaker().make_pool(_runs(tt, log), strategy="topX", topX=depth)
    got = rp.pool(log.drop("score"), depth=depth)
    assert _pairs(got) == _flat(want)
    assert got.height == len(_flat(want))  # one row per pooled item


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(logs(), st.integers(1, 6), st.data())
def test_the_queue_is_the_pool_minus_the_judged_in_the_strategys_order(tt: types.SimpleNamespace, log: pl.DataFrame,
                                                                       depth: int, data: Any) -> None:
    pooled = sorted(_pairs(rp.pool(log.drop("score"), depth=depth)))
    judged = data.draw(st.lists(st.sampled_from(pooled), unique=True)) + [("q9", "d99")]
    judgments = pl.DataFrame(judged, schema=["query", "item"], orient="row").with_columns(relevance=pl.lit(1))
    full = tt.TrecPoolMaker().make_pool(_runs(tt, log), strategy="topX", topX=depth)
    # TrecPool.minus wants the same topics in the same order
    want = _flat(full.minus(tt.TrecPool({q: {d for qq, d in judged if qq == q} for q in full.pool})))
    # the strategies, written out: each item's ranks among the versions' top `depth`
    ranks: dict[tuple[str, str], list[int]] = {}
    for _, q, item, pos, _ in log.iter_rows():
        if pos <= depth:
            ranks.setdefault((q, item), []).append(pos)
    for strategy in ("depth", "impact"):
        got = rp.pool(log.drop("score"), depth=depth, judgments=judgments, strategy=strategy)
        assert _pairs(got) == want
        keys = list(got.select("query", "item").iter_rows())
        for key, row in zip(keys, got.iter_rows(named=True)):
            assert row["rank"] == min(ranks[key]) and row["versions"] == len(ranks[key])
            weight = sum(1 / math.log2(r + 1) for r in ranks[key]) if strategy == "impact" else 1 / min(ranks[key])
            assert row["priority"] == pytest.approx(weight, rel=1e-12)
        if strategy == "depth":  # the order a depth-k pool fills in
            assert keys == sorted(keys, key=lambda k: (min(ranks[k]), -len(ranks[k]), k))
        else:
            weights = got["priority"].to_list()
            assert all(a >= b - 1e-12 for a, b in zip(weights, weights[1:]))
        budget = data.draw(st.integers(0, len(keys) + 1))
        cut = rp.pool(log.drop("score"), depth=depth, judgments=judgments, strategy=strategy, budget=budget)
        assert cut.height == min(budget, len(keys))
        if strategy == "depth":
            assert list(cut.select("query", "item").iter_rows()) == keys[:budget]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(logs(), st.integers(1, 6))
def test_ranks_by_score_are_trec_evals_order(tt: types.SimpleNamespace, log: pl.DataFrame, depth: int) -> None:
    """By score: highest first, ties by item id descending (trec_eval), then trectools' pool of those ranks."""
    ranked = []
    for (model, q), part in log.group_by(["model", "query"]):
        order = sorted(part.select("item", "score").iter_rows(), key=lambda r: (-r[1], tuple(-ord(c) for c in r[0])))
        ranked += [(model, q, item, rank) for rank, (item, _) in enumerate(order, 1)]
    by_score = pl.DataFrame(ranked, schema=["model", "query", "item", "trec_rank"], orient="row")
    want = tt.TrecPoolMaker().make_pool(_runs(tt, by_score, "trec_rank"), strategy="topX", topX=depth)
    assert _pairs(rp.pool(log.drop("position"), depth=depth)) == _flat(want)


def test_one_version_without_by() -> None:
    log = pl.DataFrame({"query": ["q1", "q1", "q2"], "item": ["x", "y", "x"], "position": [1, 2, 1]})
    got = rp.pool(log, depth=1, by=None)
    assert got.select("query", "item", "versions").rows() == [("q1", "x", 1), ("q2", "x", 1)]


def test_the_queue_of_one_judge_and_the_refusals() -> None:
    log = pl.DataFrame({"model": ["a", "a", "b"], "query": ["q1"] * 3, "item": ["x", "y", "z"], "position": [1, 2, 1]})
    two = pl.DataFrame({"query": ["q1", "q1"], "item": ["x", "z"], "relevance": [1, 0], "judge": ["people", "llm"]})
    assert _pairs(rp.pool(log, depth=2, judgments=two, judge="people")) == {("q1", "y"), ("q1", "z")}
    with pytest.raises(rp.RankPolarsError, match="holds 2 judges"):
        rp.pool(log, depth=2, judgments=two)
    with pytest.raises(rp.RankPolarsError, match="depth must be a positive integer"):
        rp.pool(log, depth=0)
    with pytest.raises(rp.RankPolarsError, match="strategy must be"):
        rp.pool(log, judgments=two, judge="llm", strategy="random")  # type: ignore[arg-type]
    with pytest.raises(rp.RankPolarsError, match="pass judgments="):
        rp.pool(log, budget=3)


@pytest.mark.parametrize("grade, what", [(None, "1 null values"), (float("nan"), "1 NaN grades or infinite ones"),
                                         (float("inf"), "1 NaN grades or infinite ones")])
def test_a_judgment_without_a_grade_is_refused_not_taken_as_judged(grade: float | None, what: str) -> None:
    """A judging tool's export may hold the items still waiting for a grade (null): taken as
    judged they would leave the queue unseen, so the queue refuses them as ``evaluate`` does."""
    log = pl.DataFrame({"model": ["a", "a", "b"], "query": ["q1", "q1", "q2"], "item": ["x", "y", "z"],
                        "position": [1, 2, 1]})
    judged = pl.DataFrame({"query": ["q1", "q2"], "item": ["x", "z"], "relevance": [1.0, grade]})
    with pytest.raises(rp.DataError, match=rf"judgments: column 'relevance' has {what} .* query 'q2'"):
        rp.pool(log, depth=2, judgments=judged)
    assert _pairs(rp.pool(log, depth=2, judgments=judged.drop_nulls().filter(pl.col("relevance").is_finite()))) == {
        ("q1", "y"), ("q2", "z")}
