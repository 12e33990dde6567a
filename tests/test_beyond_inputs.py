"""Beyond-accuracy measures: bad auxiliary tables (the same error in both engines, with counts)
and the conventions where the peers disagree, each shown on a small case (docs/conventions.md)."""

from __future__ import annotations

import math
import re
from collections import Counter

import numpy as np
import polars as pl
import pytest

import rank_polars as rp
from rank_polars.errors import DataError, MetricNameError, RankPolarsError

from .test_beyond_reference import ENGINES, lenskit_gini, recommenders_eval

LOG = pl.DataFrame({
    "model": ["a", "a", "a", "a", "b", "b", "b"],
    "user": [1, 1, 1, 2, 1, 2, 2],
    "item": ["x", "y", "z", "x", "w", "y", "z"],
    "position": [1, 2, 3, 1, 1, 1, 2],
    "relevance": [1, 0, 1, 1, 0, 1, 1],
})
HISTORY = pl.DataFrame({"user": [1, 1, 2, 3, 3, 3], "item": ["w", "v", "x", "x", "y", "w"]})
VECTORS = pl.DataFrame({"item": ["w", "x", "y", "z", "v"], "vec": [[1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [2.0, 1.0], [1.0, 3.0]]})


def run(specs: list, engine: str, log: pl.DataFrame = LOG, **kw: object) -> pl.DataFrame:
    return rp.evaluate(log, specs, by="model", query="user", engine=engine, **kw)


# -- bad input: the same message in both engines ----------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
def test_shown_item_without_features_is_counted_never_a_zero(engine: str) -> None:
    features = VECTORS.filter(~pl.col("item").is_in(["y", "z"]))
    with pytest.raises(DataError, match=r"ils@3: 2 shown items have no row in the features table, e\.g\. 'y', 'z': "
                                        r"its similarity is unknown \(never taken as 0\)"):
        run([rp.ils(k=3, features=features)], engine)
    with pytest.raises(DataError, match=r"serendipity@3: 2 shown items have no row in the features table"):
        run([rp.serendipity(k=3, features=features, history=HISTORY)], engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_shown_item_outside_catalog(engine: str) -> None:
    catalog = pl.DataFrame({"item": ["x", "y", "q"]})
    for spec in (rp.catalog_coverage(k=3, catalog=catalog), rp.gini(k=3, catalog=catalog),
                 rp.exposure_gini(k=3, catalog=catalog), rp.pop_rsp(k=3, catalog=catalog, history=HISTORY),
                 rp.pop_reo(k=3, catalog=catalog, history=HISTORY)):
        with pytest.raises(DataError, match=rf"{re.escape(spec.name)}: 2 shown items have no row in the catalog table, "
                                            r"e\.g\. 'w', 'z'"):
            run([spec], engine)
    # without catalog=, the history's items are the catalogue: z was never in it
    for spec in (rp.gini(k=3, history=HISTORY), rp.pop_rsp(k=3, history=HISTORY)):
        with pytest.raises(DataError, match=rf"{re.escape(spec.name)}: 1 shown items have no row in the history table, "
                                            r"e\.g\. 'z'"):
            run([spec], engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_shown_item_without_a_category_row(engine: str) -> None:
    categories = pl.DataFrame({"item": ["w", "x", "y"], "cat": [["a"], ["a", "b"], ["b"]]})
    with pytest.raises(DataError, match=r"diversity@3: 1 shown items have no row in the features table, e\.g\. 'z'"):
        run([rp.diversity(k=3, features=categories)], engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_fixed_size_float32_vectors_equal_float64_lists(engine: str) -> None:
    # an Array(Float32) column (Parquet's fixed-size list) is kept float32 in memory; every sum is float64
    as_array = VECTORS.with_columns(pl.col("vec").cast(pl.Array(pl.Float32, 2)))
    got = run([rp.ils(k=3, features=as_array)], engine, per_query=True)
    want = run([rp.ils(k=3, features=VECTORS)], engine, per_query=True)
    for x, y in zip(got.rows(), want.rows()):
        assert (x[2] is None and y[2] is None) or math.isclose(x[2], y[2], rel_tol=1e-12), (x, y)
    bad = as_array.with_columns(pl.when(pl.col("item") == "x").then(None).otherwise(pl.col("vec")).alias("vec"))
    with pytest.raises(DataError, match=r"1 items have a null vector"):
        run([rp.ils(k=3, features=bad)], engine)


def _same_values(got: pl.DataFrame, want: pl.DataFrame) -> None:
    """The same (model, user) rows, their values equal to 1e-12 (null where the other is)."""
    for x, y in zip(got.rows(), want.rows()):
        assert x[:2] == y[:2] and all((a is None and b is None) or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)
                                      for a, b in zip(x[2:], y[2:]))


@pytest.mark.parametrize("size", [1, 3])
def test_similarity_by_chunks_of_lists_equals_one_chunk(monkeypatch: pytest.MonkeyPatch, size: int) -> None:
    # the Polars engine adds vectors / sparse products a chunk of lists at a time: any cut (one list
    # per chunk, or several lists in one), the same values
    from rank_polars.families.beyond import polars_similarity

    specs = [rp.ils(k=3, features=VECTORS), rp.diversity(k=3, history=HISTORY, sim="cooccurrence")]
    whole = run(specs, "polars", per_query=True)
    monkeypatch.setattr(polars_similarity, "ILS_CHUNK", size)
    monkeypatch.setattr(polars_similarity, "COOC_CHUNK", size)
    cut = run(specs, "polars", per_query=True)
    assert cut.rows() == whole.rows()
    sql = run(specs, "duckdb", per_query=True)
    _same_values(whole, sql)


@pytest.mark.parametrize("size", [1, 3, None])
def test_cooccurrence_pairs_equal_the_list_sums(monkeypatch: pytest.MonkeyPatch, size: int | None) -> None:
    # co-occurrence ILS by the counts of its lists' pairs in the users' histories (recommenders'
    # way) or by the list sums: whichever is cheaper is taken; each forced here, the same values
    # (1e-12), and any chunks of lists and of users give the bits of one chunk
    from rank_polars.families.beyond import polars_pairs, polars_similarity

    pairs_way = polars_pairs.cooccurrence_pairs
    specs = [rp.diversity(k=3, history=HISTORY, sim="cooccurrence"), rp.ils(k=4, history=HISTORY, sim="cooccurrence")]
    taken: list[bool] = []

    def forced(a, item, user, count, work):
        got = pairs_way(a, item, user, count, math.inf)
        taken.append(got is not None)
        return got

    monkeypatch.setattr(polars_similarity, "cooccurrence_pairs", lambda *args: None)
    sums = run(specs, "polars", per_query=True)
    monkeypatch.setattr(polars_similarity, "cooccurrence_pairs", forced)
    pairs = run(specs, "polars", per_query=True)
    assert taken and all(taken)
    _same_values(sums, pairs)
    if size is not None:
        monkeypatch.setattr(polars_pairs, "PAIR_CHUNK", size)
        assert run(specs, "polars", per_query=True).rows() == pairs.rows()


@pytest.mark.parametrize("size", [1, 7, None])
def test_cooccurrence_serendipity_by_pairs_equals_the_profiles(monkeypatch: pytest.MonkeyPatch, size: int | None) -> None:
    # the Polars engine sums each shown item's co-occurrence with its user's history items by
    # the pair counts; DuckDB by the dot product with the user's profile: the same values
    # (1e-12), and any chunks of pairs give the bits of one chunk
    from rank_polars.families.beyond import polars_pairs, polars_serendipity

    specs = [rp.serendipity(k=3, history=HISTORY, sim="cooccurrence")]
    whole = run(specs, "polars", per_query=True)
    sql = run(specs, "duckdb", per_query=True)
    _same_values(whole, sql)
    if size is not None:
        monkeypatch.setattr(polars_pairs, "PAIR_CHUNK", size)
        assert run(specs, "polars", per_query=True).rows() == whole.rows()
        monkeypatch.setattr(polars_serendipity, "DOTS_CHUNK", size)
        assert run(specs, "polars", per_query=True).rows() == whole.rows()


def test_cooccurrence_pairs_against_a_dense_product() -> None:
    # each list's sum over its pairs of distinct items of c_i . c_j / sqrt(pop_i pop_j), the
    # counts c (item x user) with repeats (a count of 2), items no list shows, empty lists
    import numpy as np
    from scipy import sparse

    from rank_polars.families.beyond.polars import cooccurrence_pairs

    rng = np.random.default_rng(11)
    c = (rng.random((30, 40)) < 0.25) * rng.integers(1, 3, (30, 40))
    c[c.sum(axis=1) == 0, 0] = 1  # every item is in the history (the index's items are)
    shown = np.zeros((20, 30))
    for i in range(20):
        shown[i, rng.choice(25, size=rng.integers(0, 8), replace=False)] = 1.0
    pop = c.sum(axis=1)
    sim = (c @ c.T) / np.sqrt(np.outer(pop, pop))
    want = [sum(sim[x, y] for j, x in enumerate(np.flatnonzero(r)) for y in np.flatnonzero(r)[j + 1:]) for r in shown]
    item, user = np.nonzero(c)
    got = cooccurrence_pairs(sparse.csr_array(shown), item, user, c[item, user].astype(float), math.inf)
    assert np.allclose(got, want, rtol=1e-12, atol=1e-15)
    assert cooccurrence_pairs(sparse.csr_array(shown), item, user, c[item, user].astype(float), 0.0) is None


# -- by name ---------------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
def test_by_name_the_catalogue_is_the_logs_items(engine: str) -> None:
    # a name carries no table: the catalogue is every item of the log, every version and rank
    names = ["catalog_coverage@2", "gini@2", "exposure_gini@2", "entropy@2", "distributional_coverage@3"]
    got = run(names, engine)
    catalog = LOG.select("item").unique()
    specs = [rp.catalog_coverage(k=2, catalog=catalog), rp.gini(k=2, catalog=catalog),
             rp.exposure_gini(k=2, catalog=catalog), rp.entropy(k=2), rp.entropy(k=3)]
    want = run(specs, engine)
    assert got.rows() == want.rows()
    # the catalogue is the same for every version: w, x, y, z; model a shows x, y in its top 2, b shows w, y, z
    assert got["catalog_coverage@2"].to_list() == [2 / 4, 3 / 4]
    assert [rp.parse(n) for n in names] == specs


@pytest.mark.parametrize("name", ["novelty@10", "arp@5", "aplt(head=0.3)@5", "aclt", "epc@3", "efd@3",
                                  "pop_reo@10", "pop_rsp@10", "ils@10", "diversity@10", "serendipity@10",
                                  "ils(sim=cooccurrence)@10"])
def test_names_that_need_a_table_say_which_and_how(name: str) -> None:
    spec_name = name.split("@")[0].split("(")[0]
    needed = {"ils": "features=", "diversity": "features=", "serendipity": "features= and history="}.get(spec_name, "history=")
    if "cooccurrence" in name:
        needed = "history="
    with pytest.raises(MetricNameError, match=rf"needs {needed}: use rp\.{spec_name}\(.*{needed.split(' ')[-1]}\.\.\.\)"):
        rp.parse(name)
    with pytest.raises(MetricNameError, match=r"needs"):
        run([name], "polars")


def test_novelty_by_name_message() -> None:
    with pytest.raises(MetricNameError) as info:
        rp.parse("novelty@10")
    assert str(info.value) == "novelty@10 needs history=: use rp.novelty(k=10, history=...) (a metric name cannot carry a table)"


@pytest.mark.parametrize("engine", ENGINES)
def test_novelty_of_an_item_never_in_the_history(engine: str) -> None:
    with pytest.raises(DataError, match=r"novelty@3: 1 shown items have no row in the history table, e\.g\. 'z': "
                                        r".*unseen='zero'"):
        run([rp.novelty(k=3, history=HISTORY)], engine)
    # recommenders' convention on request: 0 for it, counted in the denominator
    pe = recommenders_eval()
    got = run([rp.novelty(k=3, history=HISTORY, unseen="zero")], engine)
    for model in ("a", "b"):
        reco = LOG.filter(pl.col("model") == model).select("user", "item").to_pandas()
        train = HISTORY.to_pandas()
        want = pe.novelty(train, reco, col_user="user", col_item="item") if not _overlap(train, reco) else None
        if want is not None:
            assert math.isclose(got.filter(pl.col("model") == model).item(0, 2), want, rel_tol=1e-12)


def _overlap(train: object, reco: object) -> bool:
    return bool(len(train.merge(reco, on=["user", "item"])))  # type: ignore[attr-defined]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("features", "message"), [
    (pl.DataFrame({"item": ["w", "x"], "vec": [[1.0, 0.0], [1.0, 1.0, 2.0]]}),
     r"vectors have unequal lengths \(1 of length 2, 1 of length 3\)"),
    (pl.DataFrame({"item": ["w", "x", "y"], "vec": [[0.0, 0.0], [1.0, 1.0], [0.0, 0.0]]}),
     r"2 items have a zero vector, whose cosine with anything is undefined \(e\.g\. 'w', 'y'\)"),
    (pl.DataFrame({"item": ["w", "x"], "vec": [[1.0, float("nan")], [1.0, 1.0]]}), r"1 vectors hold a NaN"),
    # an overflowing squared norm is not a non-finite component, and both are told apart by
    # looking again at the rows whose sum of squares is not finite
    (pl.DataFrame({"item": ["w", "x", "y"], "vec": [[1e200, 1.0], [float("-inf"), 1.0], [1.0, 1.0]]}),
     r"1 vectors hold a NaN, infinite or null value"),
    (pl.DataFrame({"item": ["w", "x", "y", "z"], "vec": [[1e-160, 0.0], [1e200, 0.0], [0.0, 0.0], [1.0, 1.0]]}),
     r"2 vectors are too large or too small to normalise in float64"),
    (pl.DataFrame({"item": ["w", "w"], "vec": [[1.0, 0.0], [1.0, 1.0]]}), r"2 rows repeat an item"),
    (pl.DataFrame({"item": ["w", "x"], "cat": [["a"], []]}), r"1 items have no category"),
    # a null inside a list was dropped, and two lists of one item were merged (November 2026)
    (pl.DataFrame({"item": ["w", "x", "y", "z", "v"], "cat": [["a", None], ["b"], ["a"], ["c"], ["b"]]}),
     r"1 items have a null inside their list of categories, e\.g\. 'w'"),
    (pl.DataFrame({"item": ["w", "w", "x", "y", "z", "v"], "cat": [["a"], ["b"], ["b"], ["a"], ["c"], ["b"]]}),
     r"2 rows repeat an item \(one list of categories per item"),
    (pl.DataFrame({"item": ["w"], "vec": [[1.0]], "other": [1]}), r"needs the item column and one more column"),
])
def test_bad_features(engine: str, features: pl.DataFrame, message: str) -> None:
    with pytest.raises(RankPolarsError, match=message):
        run([rp.ils(k=3, features=features)], engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_empty_history_and_missing_tables(engine: str) -> None:
    empty = HISTORY.clear()
    for spec in (rp.novelty(k=3, history=empty), rp.arp(k=3, history=empty), rp.ils(k=3, history=empty, sim="cooccurrence")):
        with pytest.raises(DataError, match=re.escape(f"{spec.name}: the history table is empty")):
            run([spec], engine)
    with pytest.raises(RankPolarsError, match=r"novelty@3 needs history="):
        run([rp.novelty(k=3)], engine)
    with pytest.raises(RankPolarsError, match=r"ils@3 needs features="):
        run([rp.ils(k=3)], engine)
    with pytest.raises(RankPolarsError, match=r"history table has no column 'user'"):
        run([rp.arp(k=3, history=HISTORY.rename({"user": "u"}))], engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_repeated_history_rows(engine: str) -> None:
    """A (user, item) row repeated: the co-occurrence cosine (recommenders' count of row pairs
    over sqrt(rows x rows)) went above 1 and 1 - ILS below 0, so it is refused; EPC counts an
    item's distinct users over all distinct users, as Elliot does (rows made it negative);
    popularity counts rows (recommenders, RecBole: data-model.md).  Found by an adversarial pass
    (November 2026)."""
    twice = pl.concat([HISTORY, HISTORY])
    for spec in (rp.ils(k=3, history=twice, sim="cooccurrence"), rp.diversity(k=3, history=twice, sim="cooccurrence"),
                 rp.serendipity(k=3, history=twice, sim="cooccurrence")):
        with pytest.raises(DataError, match=re.escape(f"{spec.name}: the history table repeats 6 (user, item) rows, "
                                                      "e.g. user 1, 2, 3")):
            run([spec], engine)
    # EPC by hand (Elliot): 1 - distinct users of the item / distinct users, the same once or twice
    once, doubled = (run([rp.epc(k=3, history=h)], engine)["epc@3"].to_list() for h in (HISTORY, twice))
    assert doubled == once
    # model a, user 1: x (rel, users {2, 3}: 1 - 2/3) at 1, y (not rel) at 2, z (rel, never: 1) at 3;
    # user 2: x (rel) at 1.  EPC = sum rel disc gain / sum disc, disc = 1/log2(r + 1)
    disc = [1 / math.log2(r + 1) for r in (1, 2, 3)]
    user1 = (disc[0] * (1 - 2 / 3) + disc[2] * 1.0) / sum(disc)
    assert once[0] == pytest.approx((user1 + (1 - 2 / 3)) / 2, abs=1e-12)


@pytest.mark.parametrize("head", [0, 1, -0.5, 1.5])
def test_head_outside_the_open_unit_interval(head: float) -> None:
    with pytest.raises(MetricNameError, match=r"aplt: head must be a share strictly between 0 and 1"):
        rp.aplt(k=3, head=head)
    with pytest.raises(MetricNameError, match=r"exposure_gini: patience must be strictly between 0 and 1"):
        rp.exposure_gini(k=3, patience=head)


def test_catalogue_level_measures_refuse_per_query() -> None:
    with pytest.raises(RankPolarsError, match=r"no per-query value"):
        run([rp.entropy(k=3)], "polars", per_query=True)


@pytest.mark.parametrize("engine", ENGINES)
def test_beside_ndcg_and_engines_agree(engine: str) -> None:
    specs = ["ndcg@3", rp.novelty(k=3, history=HISTORY, unseen="zero"), rp.diversity(k=3, features=VECTORS),
             rp.aplt(k=3, history=HISTORY), rp.gini(k=3, history=HISTORY.vstack(pl.DataFrame({"user": [9, 9], "item": ["y", "z"]})))]
    got = run(specs, engine)
    assert got.columns == ["model", "queries", "ndcg@3", "novelty(unseen=zero)@3", "diversity@3", "aplt@3", "gini@3"]
    assert got["ndcg@3"].to_list() == run(["ndcg@3"], engine)["ndcg@3"].to_list()
    other = run(specs, "duckdb" if engine == "polars" else "polars")
    for column in got.columns[2:]:
        assert np.allclose(got[column].to_numpy(), other[column].to_numpy(), rtol=1e-12, atol=1e-12)


# -- conventions where the peers disagree -----------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
def test_one_item_list_has_no_intra_list_similarity(engine: str) -> None:
    """recommenders drops a list without a pair from the mean (others return 1 or 0): null here."""
    per = run([rp.ils(k=3, features=VECTORS)], engine, per_query=True)
    assert per.filter(pl.col("model") == "a", pl.col("user") == 2)["ils@3"].item() is None
    mean = run([rp.ils(k=3, features=VECTORS)], engine).filter(pl.col("model") == "a")["ils@3"].item()
    assert mean == per.filter(pl.col("model") == "a", pl.col("user") == 1)["ils@3"].item()


@pytest.mark.parametrize("engine", ENGINES)
def test_entropy_base_2_not_recbole_normalised(engine: str) -> None:
    """recommenders' distributional_coverage: -sum p log2 p.  RecBole's ShannonEntropy
    (recbole/evaluator/metrics.py get_entropy): natural log, divided by the distinct items."""
    got = run([rp.entropy(k=3)], engine).filter(pl.col("model") == "a")["entropy@3"].item()
    counts = Counter(LOG.filter(pl.col("model") == "a")["item"])
    total = sum(counts.values())
    recbole = sum(-c / total * math.log(c / total) for c in counts.values()) / len(counts)
    assert math.isclose(recbole, got * math.log(2) / len(counts), rel_tol=1e-12)
    assert not math.isclose(recbole, got)


@pytest.mark.parametrize("engine", ENGINES)
def test_long_tail_by_interactions_not_recbole_item_share(engine: str) -> None:
    """Elliot's short head: the most popular items making up a share of the interactions (ours,
    head=0.2 by default; Elliot's pop_ratio default 0.8).  RecBole's TailPercentage: the
    tail_ratio share of the *items*, least popular first.  They differ on a skewed history."""
    history = pl.DataFrame({"user": list(range(8)) + [1, 2], "item": ["x"] * 8 + ["y", "z"]})
    log = pl.DataFrame({"model": ["a"] * 3, "user": [1] * 3, "item": ["x", "y", "z"], "position": [1, 2, 3],
                        "relevance": [1, 0, 0]})
    got = run([rp.aplt(k=3, history=history, head=0.5)], engine, log=log)["aplt(head=0.5)@3"].item()
    # Elliot: x makes up 8 of 10 rows >= 0.5: head = {x}; tail share of the list 2/3
    assert got == pytest.approx(2 / 3, abs=1e-12)
    # RecBole (tail_ratio=0.5): sorted by (count, item) ascending, the first max(int(3 * 0.5), 1) = 1 item
    counts = sorted(Counter(history["item"]).items(), key=lambda kv: (kv[1], kv[0]))
    tail = {i for i, _ in counts[: max(int(len(counts) * 0.5), 1)]}
    assert len({"x", "y", "z"} & tail) / 3 == pytest.approx(1 / 3)


@pytest.mark.parametrize("engine", ENGINES)
def test_popularity_counts_history_rows(engine: str) -> None:
    """recommenders and RecBole count interactions (rows); Elliot counts distinct users: the
    same on a history without repeats, not with one."""
    repeated = HISTORY.vstack(pl.DataFrame({"user": [2], "item": ["x"]}))
    got = run([rp.arp(k=1, history=repeated)], engine, per_query=True)
    # model a, user 1 shows x first: 3 rows of x (users 2, 3 and 2 again); Elliot would say 2 users
    assert got.filter(pl.col("model") == "a", pl.col("user") == 1)["arp@1"].item() == 3.0


@pytest.mark.parametrize("engine", ENGINES)
def test_novelty_is_a_mean_over_rows_not_over_lists(engine: str) -> None:
    """recommenders' novelty divides by every shown row of the group (lists of unequal length
    weigh by their length), not a mean of per-list novelties."""
    got = run([rp.novelty(k=3, history=HISTORY, unseen="zero")], engine).filter(pl.col("model") == "a").item(0, 2)
    pop, rows = Counter(HISTORY["item"]), HISTORY.height
    nov = {i: -math.log2(c / rows) for i, c in pop.items()}
    shown = LOG.filter(pl.col("model") == "a")
    assert math.isclose(got, sum(nov.get(i, 0.0) for i in shown["item"]) / shown.height, rel_tol=1e-12)
    per_list = [np.mean([nov.get(i, 0.0) for i in g["item"]]) for _, g in shown.group_by("user")]
    assert not math.isclose(got, float(np.mean(per_list)))


@pytest.mark.parametrize("engine", ENGINES)
def test_exposure_gini_weight_exponent_does_not_matter(engine: str) -> None:
    """LensKit's GeometricRankWeight says p^(k-1) in its docstring and computes p^k: the Gini
    index is scale-free, so both give the same value."""
    got = run([rp.exposure_gini(k=3, history=HISTORY.vstack(pl.DataFrame({"user": [9], "item": ["z"]})))], engine)
    catalog = sorted(set(HISTORY["item"]) | {"z"})
    for model in ("a", "b"):
        rows = LOG.filter(pl.col("model") == model)
        for shift in (0, 1):
            exposure = Counter()
            for item, pos in rows.select("item", "position").iter_rows():
                exposure[item] += 0.85 ** (pos - shift)
            want = lenskit_gini(np.array([exposure.get(i, 0.0) for i in catalog]))
            assert math.isclose(got.filter(pl.col("model") == model)["exposure_gini@3"].item(), want, rel_tol=1e-9)


@pytest.mark.parametrize("engine", ENGINES)
def test_relevance_from_judgments(engine: str) -> None:
    """With qrels the grades come from the judgments (labels='qrels' joins them, labels='run'
    reads the log's own, checked to agree): the same values.  Whether a query has a relevant
    item (EPC / EFD are undefined without one, as Elliot's test set decides) is read from all
    its judgments, so a list that shows none of them scores 0 there; from the log alone, only
    the shown rows are known and that list has no value."""
    qrels = LOG.select("user", "item", "relevance").unique(["user", "item"], keep="first")
    log = LOG.join(qrels.rename({"relevance": "r"}), on=["user", "item"]).with_columns(pl.col("r").alias("relevance")).drop("r")
    history = HISTORY.vstack(pl.DataFrame({"user": [9], "item": ["z"]}))
    specs = [rp.epc(k=3, history=history), rp.efd(k=3, history=history),
             rp.serendipity(k=3, history=history, features=VECTORS), rp.pop_reo(k=3, history=history, head=0.5)]
    per, catalog = specs[:3], specs[3:]
    joined = run(per, engine, log=log.drop("relevance"), qrels=qrels, per_query=True)
    assert joined.equals(run(per, engine, log=log, qrels=qrels, labels="run", per_query=True))
    assert run(catalog, engine, log=log.drop("relevance"), qrels=qrels).equals(
        run(catalog, engine, log=log, qrels=qrels, labels="run"))
    plain = run(per, engine, log=log, per_query=True)
    assert np.allclose(plain["serendipity@3"].to_numpy(), joined["serendipity@3"].to_numpy())
    # model b shows user 1 only w (not relevant); user 1's judgments hold relevant x and z
    b1 = (pl.col("model") == "b") & (pl.col("user") == 1)
    assert plain.filter(b1)["epc@3"].item() is None and joined.filter(b1)["epc@3"].item() == 0.0


@pytest.mark.parametrize("engine", ENGINES)
def test_entropy_of_a_single_item_is_positive_zero(engine: str) -> None:
    """-sum(1 * log2(1)) printed -0.0."""
    log = pl.DataFrame({"model": ["a"], "user": [1], "item": ["x"], "position": [1]})
    value = run([rp.entropy(k=1)], engine, log=log)["entropy@1"][0]
    assert value == 0.0 and math.copysign(1.0, value) == 1.0
