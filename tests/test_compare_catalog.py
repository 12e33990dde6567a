"""compare() on catalogue-level measures (one value per version over all its lists): a
bootstrap interval over lists, checked against a brute-force Python bootstrap with the same
seeds and the measure's published formula (RecBole's GiniIndex, recommenders'
distributional_coverage), never against this code's own numbers."""

from __future__ import annotations

import importlib
import math
from collections import Counter

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import rank_polars as rp
from rank_polars.errors import RankPolarsError

compare_module = importlib.import_module("rank_polars.stats.compare")
CATALOG = [f"i{j}" for j in range(12)]


def sweep_log(seed: int = 0, versions: int = 3, queries: int = 9, depth: int = 3) -> pl.DataFrame:
    """Each version shows ``depth`` items per query from a catalogue; later versions spread wider."""
    rng = np.random.default_rng(seed)
    rows = []
    for v in range(versions):
        pool = CATALOG[: 4 + 4 * v]
        for q in range(queries):
            for pos, item in enumerate(rng.choice(pool, depth, replace=False), 1):
                rows.append({"model": f"v{v}", "query": f"q{q}", "item": str(item), "position": pos,
                             "relevance": int(rng.random() < 0.4)})
    return pl.DataFrame(rows)


def gini_formula(counts: Counter, n: int) -> float:
    """RecBole's GiniIndex: sum_j (2j - n - 1) c_(j) / (n sum c), c ascending over the catalogue."""
    c = sorted([counts.get(item, 0) for item in CATALOG])
    assert len(c) == n
    return sum((2 * (j + 1) - n - 1) * x for j, x in enumerate(c)) / (n * sum(c))


def entropy_formula(counts: Counter) -> float:
    """recommenders' distributional_coverage: -sum p log2 p over the shown rows' items."""
    total = sum(counts.values())
    return -sum(k / total * math.log2(k / total) for k in counts.values())


def brute_force(log: pl.DataFrame, k: int, value, n_resamples: int, seed: int, confidence: float):
    """The bootstrap over lists in plain Python: resample b draws the sorted queries with
    default_rng(SeedSequence(seed, spawn_key=(b,))).integers(0, n, n), the same for every version."""
    top = log.filter(pl.col("position") <= k)
    lists = {(r["model"], r["query"]): r["item"] for r in top.group_by("model", "query").agg("item").iter_rows(named=True)}
    queries = sorted(log["query"].unique().to_list())
    versions = sorted(log["model"].unique().to_list())
    n = len(queries)

    def measure(version: str, drawn: list[str]) -> float:
        counts = Counter(item for q in drawn for item in lists.get((version, q), []))
        return value(counts)

    observed = {v: measure(v, queries) for v in versions}
    boot = {v: [] for v in versions}
    for b in range(n_resamples):
        idx = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(b,))).integers(0, n, n)
        drawn = [queries[i] for i in idx]
        for v in versions:
            boot[v].append(measure(v, drawn))
    level = (1 - confidence) / 2
    out = {}
    for i, a in enumerate(versions):
        for b in versions[i + 1:]:
            d = np.array(boot[b]) - np.array(boot[a])
            out[(a, b)] = (observed[b] - observed[a], *np.quantile(d, [level, 1 - level]))
    return out


@pytest.mark.parametrize("kind", ["gini", "entropy"])
def test_bootstrap_over_lists_is_the_brute_force_one_with_the_same_seeds(kind):
    log = sweep_log()
    catalog = pl.DataFrame({"item": CATALOG})
    spec = rp.gini(k=2, catalog=catalog) if kind == "gini" else rp.entropy(k=2)
    value = (lambda c: gini_formula(c, len(CATALOG))) if kind == "gini" else entropy_formula
    out = rp.compare(log, [spec, "ndcg@3"], pairs="all", catalog_resamples=150, seed=7, confidence=0.9)
    assert out["metric"].to_list() == [spec.name] * 3 + ["ndcg@3"] * 3  # the order the metrics were given
    ref = brute_force(log, 2, value, 150, 7, 0.9)
    for row in out.filter(pl.col("metric") == spec.name).iter_rows(named=True):
        diff, low, high = ref[(row["baseline"], row["version"])]
        assert row["diff"] == pytest.approx(diff, rel=1e-12, abs=1e-12)
        assert row["ci_low"] == pytest.approx(low, rel=1e-12, abs=1e-12)
        assert row["ci_high"] == pytest.approx(high, rel=1e-12, abs=1e-12)
        assert row["significant"] == (low > 0 or high < 0)
        assert row["p_value"] is None and row["test"] == "catalog-bootstrap" and row["n_queries"] == 9


def test_seeded_reproducible_and_independent_of_how_the_resamples_are_batched(monkeypatch):
    log = sweep_log(seed=2)
    spec = rp.entropy(k=3)
    first = rp.compare(log, [spec], baseline="v0", catalog_resamples=60, seed=3)
    # the same draws; the values to rounding (the family's sums over rows are not in a fixed order)
    same = {"check_exact": False, "rel_tol": 1e-12, "abs_tol": 1e-12}
    assert_frame_equal(first, rp.compare(log, [spec], baseline="v0", catalog_resamples=60, seed=3), **same)
    monkeypatch.setattr("rank_polars.stats.catalog._ROWS_PER_CALL", 100)  # one resample per evaluate call
    assert_frame_equal(first, rp.compare(log, [spec], baseline="v0", catalog_resamples=60, seed=3), **same)
    other = rp.compare(log, [spec], baseline="v0", catalog_resamples=60, seed=4)
    assert other["ci_low"].to_list() != first["ci_low"].to_list()
    # the verdict reads the interval, not a p-value
    from rank_polars.presentation import verdict

    row = first.row(1, named=True)
    assert row["significant"] and verdict(row).startswith("v2 is better than v0 on entropy@3 by +")
    assert "interval excludes 0" in verdict(row)


def test_a_measure_reading_each_querys_history_is_refused():
    log = sweep_log()
    history = pl.DataFrame({"query": ["q0", "q1"], "item": ["i0", "i1"]})
    with pytest.raises(RankPolarsError, match="reads each query's own history"):
        rp.compare(log, [rp.pop_reo(k=2, history=history)], catalog_resamples=10)
