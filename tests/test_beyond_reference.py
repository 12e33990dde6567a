"""Beyond-accuracy measures against the peers, on hypothesis-generated logs, histories and features.

References:

* Microsoft ``recommenders`` 1.2.1, ``recommenders/evaluation/python_evaluation.py``, run as
  it is (installed with ``--no-deps``: it pins pandas < 3; see :func:`recommenders_eval`):
  ``catalog_coverage``, ``distributional_coverage``, ``novelty``, ``user_diversity`` /
  ``diversity`` and ``user_serendipity`` / ``serendipity``, by item co-occurrence and by
  item feature vectors.
* Elliot (sisinflab/elliot), formulas reproduced below from
  ``elliot/evaluation/metrics/bias/{arp/arp.py, aplt/aplt.py, aclt/aclt.py,
  pop_reo/pop_reo.py, pop_rsp/pop_rsp.py}``, ``elliot/evaluation/metrics/novelty/{EPC/epc.py,
  EFD/efd.py}`` and the short head of ``elliot/evaluation/popularity_utils.py``
  (``get_short_head``); its discount ``1 / log2(r + 2)`` for the 0-based r is
  ``elliot/evaluation/relevance/relevance.py``'s ``logarithmic_ranking_discount``.
* RecBole, ``recbole/evaluator/metrics.py``: ``GiniIndex.get_gini``, ``AveragePopularity``.
* LensKit (lenskit/lkpy), ``src/lenskit/metrics/ranking/_gini.py`` (``ListGini``,
  ``ExposureGini`` with ``GeometricRankWeight(0.85)`` of ``_weighting.py``: weight
  ``patience ** rank``, rank from 1) over ``src/lenskit/stats.py``'s ``gini``, and
  ``_ils.py``'s ``intra_list_similarity`` (mean cosine over the pairs of the list, category
  vectors as multi-hot rows).

Every comparison runs in both engines at 1e-9.
"""

from __future__ import annotations

import functools
import importlib.util
import math
import re
import types
from collections import Counter
from itertools import combinations
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import rank_polars as rp
from rank_polars.measures import beyond as b

from . import system_deps

ENGINES = ["polars", "duckdb"]
TOL = 1e-9
SETTINGS = settings(max_examples=6, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate], suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# -- the recommenders reference ---------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def recommenders_eval() -> types.ModuleType:
    """recommenders' ``python_evaluation`` module, runnable under pandas 3.

    recommenders 1.2.1 pins pandas < 3 (so it is installed with ``--no-deps``, here when
    missing).  Under pandas 3 two idioms of that file changed meaning: ``df[col].fillna(0,
    inplace=True)`` is a no-op under copy-on-write (the missing similarities would stay NaN
    and drop out of the means instead of counting 0), and ``Series[0]`` on a labelled
    result is a label lookup (KeyError).  Exactly those two are rewritten to their pandas-3
    spelling (counted below), the rest of the file runs unchanged.
    """
    system_deps.ensure_reference("recommenders", "recommenders==1.2.1", "the beyond-accuracy reference; it pins pandas < 3")
    spec = importlib.util.find_spec("recommenders.evaluation.python_evaluation")
    assert spec is not None and spec.origin is not None
    source = open(spec.origin, encoding="utf-8").read()
    source, fills = re.subn(r"(\w+)\[(\w+)\]\.fillna\(0, inplace=True\)", r"\1[\2] = \1[\2].fillna(0)", source)
    source, firsts = re.subn(r"(\.agg\(\{[^{}]*\}\))\[0\]", r"\1.iloc[0]", source)
    assert (fills, firsts) == (2, 4), (fills, firsts)
    module = types.ModuleType("recommenders_python_evaluation_pandas3")
    module.__file__ = spec.origin
    exec(compile(source, spec.origin, "exec"), module.__dict__)
    return module


# -- generated data ---------------------------------------------------------------------------
@st.composite
def logs(draw: Any, n_items: int = 9, fresh: bool = True) -> dict[str, Any]:
    """A history, a log of two models' lists for the same users (items the user has not had,
    when ``fresh``: recommenders refuses the others), relevance 0/1, item vectors and categories."""
    users = list(range(1, draw(st.integers(2, 5)) + 1))
    items = list(range(1, n_items + 1))
    history = sorted(set(draw(st.lists(st.tuples(st.sampled_from(users), st.sampled_from(items)), min_size=2, max_size=18))))
    had = {u: {i for v, i in history if v == u} for u in users}
    rows = []
    for model in ("m1", "m2"):
        for u in users:
            pool = [i for i in items if i not in had[u]] if fresh else items
            shown = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=5, unique=True)) if pool else []
            for pos, i in enumerate(shown, 1):
                rows.append((model, u, i, pos, draw(st.sampled_from([0, 1]))))
    if not rows:
        rows.append(("m1", users[0], items[0], 1, 1))
    dim = draw(st.integers(2, 4))
    vec = st.lists(st.integers(-3, 3), min_size=dim, max_size=dim).filter(lambda v: any(v))
    vectors = {i: [float(x) for x in draw(vec)] for i in items}
    cats = {i: sorted(set(draw(st.lists(st.sampled_from("abcd"), min_size=1, max_size=3)))) for i in items}
    log = pl.DataFrame(rows, schema=["model", "user", "item", "position", "relevance"], orient="row")
    return {
        "log": log,
        "history": pl.DataFrame(history, schema=["user", "item"], orient="row"),
        "features": pl.DataFrame({"item": items, "vec": [vectors[i] for i in items]}),
        "categories": pl.DataFrame({"item": items, "cat": [cats[i] for i in items]}),
        "vectors": vectors,
        "cats": cats,
        "items": items,
    }


def per_list(data: dict[str, Any], k: int) -> dict[tuple[str, int], list[tuple[int, int]]]:
    """(model, user) -> [(item, relevance)] in rank order, cut at k."""
    out: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for model, user, item, pos, rel in data["log"].sort("model", "user", "position").iter_rows():
        if pos <= k:
            out.setdefault((model, user), []).append((item, rel))
    return out


def ours(data: dict[str, Any], specs: list[Any], engine: str, per_query: bool = False) -> pl.DataFrame:
    return rp.evaluate(data["log"], specs, by="model", query="user", engine=engine, per_query=per_query)


def close(got: float | None, want: float | None) -> bool:
    if got is None or want is None or (isinstance(want, float) and math.isnan(want)):
        return got is None and (want is None or math.isnan(want))
    return math.isclose(got, want, rel_tol=TOL, abs_tol=TOL)


def assert_per_model(got: pl.DataFrame, label: str, want: dict[str, float | None]) -> None:
    values = dict(zip(got["model"], got[label]))
    for model, value in want.items():
        assert close(values[model], value), (label, model, values[model], value)


def assert_per_user(got: pl.DataFrame, label: str, want: dict[tuple[str, int], float | None]) -> None:
    values = {(m, u): v for m, u, v in got.select("model", "user", label).iter_rows()}
    for key, value in want.items():
        assert close(values[key], value), (label, key, values[key], value)


# -- recommenders ---------------------------------------------------------------------------
def _pandas(frame: pl.DataFrame) -> Any:
    return frame.to_pandas()


@SETTINGS
@given(data=logs(), k=st.integers(1, 5))
def test_coverage_and_novelty_equal_recommenders(data: dict[str, Any], k: int) -> None:
    pe = recommenders_eval()
    train = _pandas(data["history"])
    specs = [b.catalog_coverage(k=k, history=data["history"]), b.entropy(k=k),
             b.novelty(k=k, history=data["history"], unseen="zero")]
    results = {engine: ours(data, specs, engine) for engine in ENGINES}
    for engine, model in ((e, m) for e in ENGINES for m in ("m1", "m2")):
        got = results[engine]
        reco = _pandas(data["log"].filter(pl.col("model") == model, pl.col("position") <= k).select("user", "item"))
        if reco.empty:
            continue
        row = got.filter(pl.col("model") == model).row(0, named=True)
        assert close(row[f"catalog_coverage@{k}"], pe.catalog_coverage(train, reco, col_user="user", col_item="item"))
        assert close(row[f"entropy@{k}"], pe.distributional_coverage(train, reco, col_user="user", col_item="item"))
        assert close(row[f"novelty(unseen=zero)@{k}"], pe.novelty(train, reco, col_user="user", col_item="item"))


@pytest.mark.parametrize("sim", ["cooccurrence", "features"])
@SETTINGS
@given(data=logs(), k=st.integers(2, 5))
def test_diversity_and_serendipity_equal_recommenders(sim: str, data: dict[str, Any], k: int) -> None:
    pe = recommenders_eval()
    train = _pandas(data["history"])
    tables = {"history": data["history"]}
    measure = "item_cooccurrence_count"
    features = None
    if sim == "features":
        tables["features"] = data["features"]
        measure = "item_feature_vector"
        features = _pandas(data["features"].rename({"vec": "features"}))
        features["features"] = features["features"].map(np.asarray)
    specs = [b.diversity(k=k, sim=sim, **tables), b.serendipity(k=k, sim=sim, **tables)]
    div_label, ser_label = (str(s) for s in specs)
    results = {engine: (ours(data, specs, engine, per_query=True), ours(data, specs, engine)) for engine in ENGINES}
    for model in ("m1", "m2"):
        reco = data["log"].filter(pl.col("model") == model, pl.col("position") <= k).select(
            "user", "item", pl.col("relevance").cast(pl.Float64))
        if reco.is_empty():
            continue
        args = dict(item_feature_df=features, item_sim_measure=measure, col_user="user", col_item="item")
        div = pe.user_diversity(train, _pandas(reco), **args)
        ser = pe.user_serendipity(train, _pandas(reco), col_relevance="relevance", **args)
        div_want = dict(zip(div["user"], div["user_diversity"]))
        ser_want = dict(zip(ser["user"], ser["user_serendipity"]))
        div_all = pe.diversity(train, _pandas(reco), **args) if div_want else None
        ser_all = pe.serendipity(train, _pandas(reco), col_relevance="relevance", **args) if ser_want else None
        users = reco["user"].unique().to_list()
        for got, summary in results.values():
            # a one-item list has no pair, a user without history no profile: no value (recommenders drops them)
            assert_per_user(got, div_label, {(model, u): div_want.get(u) for u in users})
            assert_per_user(got, ser_label, {(model, u): ser_want.get(u) for u in users})
            assert close(summary.filter(pl.col("model") == model)[div_label].item(), div_all)
            assert close(summary.filter(pl.col("model") == model)[ser_label].item(), ser_all)


# -- Elliot ---------------------------------------------------------------------------------
def elliot_short_head(history: pl.DataFrame, ratio: float) -> set[int]:
    """popularity_utils.get_short_head: items by popularity (users) descending, appended until
    the running limit transactions * ratio reaches 0.  Elliot breaks ties by its item map's
    order; the tie order here is the item id (ours, stated in docs/conventions.md)."""
    pop = Counter(i for _, i in set(history.iter_rows()))
    limit = sum(pop.values()) * ratio
    head = []
    for item, count in sorted(pop.items(), key=lambda kv: (-kv[1], kv[0])):
        head.append(item)
        limit -= count
        if limit <= 0:
            break
    return set(head)


def elliot_reference(data: dict[str, Any], k: int, ratio: float) -> dict[str, Any]:
    history = data["history"]
    pop = Counter(i for _, i in history.iter_rows())
    n_users = history["user"].n_unique()
    transactions = sum(pop.values())
    train = {u: {i for v, i in history.iter_rows() if v == u} for u in history["user"].unique()}
    head = elliot_short_head(history, ratio)
    catalog = set(pop)
    tail = catalog - head
    lists = per_list(data, 10**6)
    cut = per_list(data, k)
    disc = [1 / math.log(r + 2) * math.log(2) for r in range(k)]
    max_nov = -math.log(min(pop.values()) / transactions) / math.log(2)
    epc_nov = {i: 1 - v / n_users for i, v in pop.items()}
    efd_nov = {i: -math.log(v / transactions) / math.log(2) for i, v in pop.items()}
    out: dict[str, Any] = {"arp": {}, "aplt": {}, "aclt": {}, "epc": {}, "efd": {}, "reo": {}, "rsp": {}}
    for (model, user), recs in cut.items():
        items = [i for i, _ in recs]
        rel = {i for i, r in lists[(model, user)] if r > 0}
        out["arp"][(model, user)] = sum(pop.get(i, 0) for i in items) / len(items)
        out["aplt"][(model, user)] = len(set(items) - head) / len(items)  # long tail: not in the head
        out["aclt"][(model, user)] = len(set(items) - head)
        if rel:
            nov = norm = efd = 0.0
            for r, i in enumerate(items):
                nov += (i in rel) * disc[r] * epc_nov.get(i, 1)
                efd += (i in rel) * disc[r] * efd_nov.get(i, max_nov)
                norm += disc[r]
            out["epc"][(model, user)] = nov / norm
            out["efd"][(model, user)] = efd / norm
        else:
            out["epc"][(model, user)] = out["efd"][(model, user)] = None
    for model in sorted({m for m, _ in cut}):
        rsp_num, rsp_den, reo_num, reo_den = np.zeros(2), np.zeros(2), np.zeros(2), np.zeros(2)
        for (m, user), recs in cut.items():
            if m != model:
                continue
            shown = {i for i, _ in recs}
            u_train = train.get(user, set())
            rsp_num += [len(shown & head), len(shown & tail)]
            rsp_den += [len(head - u_train), len(tail - u_train)]
            rel = {i for i, r in lists[(m, user)] if r > 0}
            if rel:
                hits = shown & rel
                reo_num += [len(hits & head), len(hits & tail)]
                reo_den += [len((head & rel) - u_train), len((tail & rel) - u_train)]
        for name, num, den in (("rsp", rsp_num, rsp_den), ("reo", reo_num, reo_den)):
            if den.min() > 0 and num.sum() > 0:
                pr = num / den
                out[name][model] = float(np.std(pr) / np.mean(pr))
            else:
                out[name][model] = None  # Elliot: 0/0
    return out


@SETTINGS
@given(data=logs(fresh=False), k=st.integers(1, 5), ratio=st.sampled_from([0.2, 0.5, 0.8]))
def test_popularity_and_novelty_equal_elliot(data: dict[str, Any], k: int, ratio: float) -> None:
    history = data["history"]
    # Elliot's universe of items is its training set: every shown item is one of them here
    known = data["log"].filter(pl.col("item").is_in(history["item"].implode())).with_columns(
        pl.col("position").rank("ordinal").over("model", "user").cast(pl.Int64))  # the list Elliot sees
    if known.is_empty():
        return
    data = {**data, "log": known}
    want = elliot_reference(data, k, ratio)
    specs = [b.arp(k=k, history=history), b.aplt(k=k, history=history, head=ratio),
             b.aclt(k=k, history=history, head=ratio), b.epc(k=k, history=history), b.efd(k=k, history=history)]
    fairness = [b.pop_reo(k=k, history=history, head=ratio), b.pop_rsp(k=k, history=history, head=ratio)]
    for engine in ENGINES:
        got = ours(data, specs, engine, per_query=True)
        for name, spec in zip(["arp", "aplt", "aclt", "epc", "efd"], specs):
            assert_per_user(got, str(spec), want[name])
        summary = ours(data, fairness, engine)
        assert_per_model(summary, str(fairness[0]), want["reo"])
        assert_per_model(summary, str(fairness[1]), want["rsp"])


# -- RecBole and LensKit --------------------------------------------------------------------
def recbole_gini(item_matrix: list[list[int]], num_items: int) -> float:
    """RecBole GiniIndex.get_gini (total_num = every shown row)."""
    item_count = Counter(i for row in item_matrix for i in row)
    sorted_count = np.array(sorted(item_count.values()))
    num_recommended_items = sorted_count.shape[0]
    total_num = sum(len(row) for row in item_matrix)
    idx = np.arange(num_items - num_recommended_items + 1, num_items + 1)
    return float(np.sum((2 * idx - num_items - 1) * sorted_count) / total_num / num_items)


def lenskit_gini(xs: np.ndarray) -> float:
    """lenskit.stats.gini."""
    n = len(xs)
    xs = np.sort(xs)
    ranks = np.arange(1, n + 1, dtype=np.float64) * 2 - (n + 1)
    return max(float(np.sum(xs * ranks) / (n * np.sum(xs, dtype=np.float64))), 0)


def lenskit_ils(items: list[int], vectors: dict[int, np.ndarray]) -> float | None:
    """intra_list_similarity: the mean cosine over the pairs i < j of the list."""
    if len(items) < 2:
        return None
    m = np.array([vectors[i] for i in items], dtype=np.float64)
    m = m / np.linalg.norm(m, axis=1, keepdims=True)
    sims = m @ m.T
    return float(np.sum(np.triu(sims, 1)) / (len(items) * (len(items) - 1) / 2))


@SETTINGS
@given(data=logs(fresh=False), k=st.integers(1, 5), patience=st.sampled_from([0.5, 0.85]))
def test_gini_equal_recbole_and_lenskit(data: dict[str, Any], k: int, patience: float) -> None:
    catalog = pl.DataFrame({"item": data["items"] + [100, 101]})  # two items nobody shows
    specs = [b.gini(k=k, catalog=catalog), b.exposure_gini(k=k, catalog=catalog, patience=patience)]
    lists = per_list(data, k)
    results = {engine: ours(data, specs, engine) for engine in ENGINES}
    for engine, model in ((e, m) for e in ENGINES for m in ("m1", "m2")):
        got = results[engine]
        matrix = [[i for i, _ in recs] for (m, _), recs in lists.items() if m == model]
        if not matrix:
            continue
        row = got.filter(pl.col("model") == model).row(0, named=True)
        assert close(row[f"gini@{k}"], recbole_gini(matrix, catalog.height))
        counts = Counter(i for r in matrix for i in r)
        assert close(row[f"gini@{k}"], lenskit_gini(np.array([counts.get(i, 0) for i in catalog["item"]], float)))
        # LensKit keeps the exposure in float32; the formula is reproduced in float64
        exposure: Counter[int] = Counter()
        for r in matrix:
            for rank, i in enumerate(r, 1):
                exposure[i] += patience ** rank
        label = f"exposure_gini(patience={patience:g})@{k}" if patience != 0.85 else f"exposure_gini@{k}"
        assert close(row[label], lenskit_gini(np.array([exposure.get(i, 0.0) for i in catalog["item"]])))


@pytest.mark.parametrize("engine", ENGINES)
@SETTINGS
@given(data=logs(fresh=False), k=st.integers(1, 5))
def test_ils_equal_lenskit_on_vectors_and_categories(engine: str, data: dict[str, Any], k: int) -> None:
    got = ours(data, [b.ils(k=k, features=data["features"])], engine, per_query=True)
    got_cat = ours(data, [b.ils(k=k, features=data["categories"])], engine, per_query=True)
    vectors = {i: np.array(v) for i, v in data["vectors"].items()}
    onehot = {i: np.array([c in cats for c in "abcd"], dtype=float) for i, cats in data["cats"].items()}
    for key, recs in per_list(data, k).items():
        items = [i for i, _ in recs]
        assert close(got.filter(pl.col("model") == key[0], pl.col("user") == key[1])[f"ils@{k}"].item(),
                     lenskit_ils(items, vectors))
        assert close(got_cat.filter(pl.col("model") == key[0], pl.col("user") == key[1])[f"ils@{k}"].item(),
                     lenskit_ils(items, onehot))
