"""Beyond-accuracy measures: an adversarial pass over inputs a real pipeline produces (November
2026).  Each test failed before its fix; expected values are the published formulas written out
here, or the other engine / ``to_sql`` run in DuckDB."""

from __future__ import annotations

import math
import re

import duckdb
import polars as pl
import pytest

import rank_polars as rp
from rank_polars.errors import DataError

from .sql_cases import sql_frame
from .test_beyond_reference import ENGINES

LOG = pl.DataFrame({
    "model": ["a", "a", "a", "a", "b", "b", "b"],
    "user": [1, 1, 1, 2, 1, 2, 2],
    "item": [2, 3, 4, 2, 1, 3, 4],
    "position": [1, 2, 3, 1, 1, 1, 2],
    "relevance": [1, 0, 1, 1, 0, 1, 1],
})
# the same history with the items written as zero-padded text ("002"), as a CSV export keeps them
HISTORY = pl.DataFrame({"user": [1, 1, 2, 3, 3, 3], "item": [1, 5, 2, 2, 3, 1]})
PADDED = HISTORY.with_columns(pl.col("item").cast(pl.String).str.zfill(3))


def run(specs: list, engine: str, log: pl.DataFrame = LOG, **kw: object) -> pl.DataFrame:
    return rp.evaluate(log, specs, by="model", query="user", engine=engine, **kw)


def _history_specs(history: object) -> list:
    return [rp.arp(k=3, history=history), rp.aplt(k=3, history=history), rp.aclt(k=3, history=history),
            rp.epc(k=3, history=history), rp.efd(k=3, history=history),
            rp.novelty(k=3, history=history, unseen="zero"), rp.pop_rsp(k=3, history=history, catalog=LOG),
            rp.pop_reo(k=3, history=history, catalog=LOG), rp.ils(k=3, history=history, sim="cooccurrence"),
            rp.diversity(k=3, history=history, sim="cooccurrence"),
            rp.serendipity(k=3, history=history, sim="cooccurrence")]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("written", ["00{}", "{}.0", " {}"])
def test_history_ids_written_another_way_are_refused(engine: str, written: str) -> None:
    """Integer item ids in the log, the history's written "001", "1.0" or " 1" (a CSV export, a
    float column written out): by the id rule 1 is "1", so no shown item was in the history.
    Every popularity was then 0 (arp 0, aplt 1, epc 1, every co-occurrence 0: diversity 1),
    silently.  Found by an adversarial pass (November 2026)."""
    history = HISTORY.with_columns(pl.col("item").map_elements(written.format, return_dtype=pl.String))
    pairs = ", ".join(repr(f"{i} as {written.format(i)}") for i in (1, 2, 3))
    for spec in _history_specs(history):
        with pytest.raises(DataError, match=re.escape(
                f"{spec.name}: 3 items of the log have no row in the history table but match one of its items once "
                f"the ids are written alike, e.g. {pairs}: each would count as never seen")):
            run([spec], engine)
    # one item written as the log writes it does not hide the others
    some = history.vstack(pl.DataFrame({"user": [9], "item": ["2"]}))
    pairs = ", ".join(repr(f"{i} as {written.format(i)}") for i in (1, 3))
    with pytest.raises(DataError, match=re.escape(f"arp@3: 2 items of the log have no row in the history table but "
                                                  f"match one of its items once the ids are written alike, e.g. {pairs}")):
        run([rp.arp(k=3, history=some)], engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_history_of_other_items_is_read_as_given(engine: str) -> None:
    """Items never in the history (cold items) are not ids written another way: arp by hand
    (Elliot: the mean over the top k of the item's history rows, 0 when absent)."""
    other = pl.DataFrame({"user": [1, 2, 3], "item": ["6", "07", "2"]})
    got = run([rp.arp(k=3, history=other)], engine, per_query=True)
    assert got["arp@3"].to_list() == [1 / 3, 1.0, 0.0, 0.0]
    # none of the log's items at all (recommenders' novelty is then 0 for every row)
    disjoint = other.filter(pl.col("item") != "2")
    assert run([rp.novelty(k=3, history=disjoint, unseen="zero")], engine)["novelty(unseen=zero)@3"].to_list() == [0.0, 0.0]


def test_to_sql_refuses_history_ids_written_another_way() -> None:
    log = LOG.with_columns(pl.col("item").cast(pl.String))
    con = duckdb.connect()
    con.register("logs", log.to_arrow())
    con.register("train", PADDED.to_arrow())
    con.register("items", log.select("item").to_arrow())
    for spec in _history_specs("train"):
        if spec.NAME.startswith("pop_"):
            spec = type(spec)(k=3, history="train", catalog="items")
        sql = rp.to_sql([spec], table="logs", by="model", query="user")
        with pytest.raises(duckdb.InvalidInputException, match=re.escape(
                f"rank_polars: {spec.name}: 3 items of the log have no row in the history table but match one of its "
                "items once the ids are written alike, e.g. '1 as 001', '2 as 002', '3 as 003'")):
            con.sql(sql).fetchall()


@pytest.mark.parametrize("engine", ENGINES)
def test_a_null_category_row_is_refused_as_a_null_inside_a_list(engine: str) -> None:
    """Categories one row per (item, category): item 2's null row was dropped, so it was read as
    {a} alone and its overlap with item 3's {a} came out 1 (a null inside a list is refused)."""
    long = pl.DataFrame({"item": [1, 2, 2, 3, 4], "cat": ["a", "a", None, "a", "b"]})
    with pytest.raises(DataError, match=re.escape("ils@3: features column 'cat': 1 rows have a null category "
                                                  "(of 1 items, e.g. 2)")):
        run([rp.ils(k=3, features=long)], engine)
    # without the null row: the category overlap of the list's pairs by hand (cosine of the
    # multi-hot vectors, LensKit's ILS): model a, user 1 shows 2 {a}, 3 {a}, 4 {b}
    got = run([rp.ils(k=3, features=long.drop_nulls())], engine, per_query=True)
    assert got.filter(pl.col("model") == "a", pl.col("user") == 1)["ils@3"].item() == pytest.approx((1 + 0 + 0) / 3)


def test_to_sql_aclt_per_query_is_a_double_as_evaluate() -> None:
    """The count of long-tail items summed 1.0 / 0.0 literals: a DECIMAL column in DuckDB (and
    whatever the target dialect makes of it), where evaluate gives Float64."""
    con = duckdb.connect()
    con.register("logs", LOG.to_arrow())
    con.register("train", HISTORY.to_arrow())
    got = sql_frame(con, rp.to_sql([rp.aclt(k=3, history="train")], table="logs", by="model", query="user",
                                   per_query=True))
    want = run([rp.aclt(k=3, history=HISTORY)], "duckdb", per_query=True)
    assert got.schema["aclt@3"] == pl.Float64
    assert got.sort("model", "user")["aclt@3"].to_list() == want["aclt@3"].to_list()
    # Elliot's ACLT by hand: the short head (head=0.2 of 6 rows) is item 1 alone (2 rows, ties by
    # id: 1 before 2); each list's items outside it
    assert want["aclt@3"].to_list() == [3.0, 1.0, 0.0, 2.0]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("scale", [1e200, 1e-160])
def test_vectors_whose_norm_leaves_float64_are_refused(engine: str, scale: float) -> None:
    """Item 2's vector is (1, 1) scaled: its cosines are those of (1, 1).  Scaled by 1e200 its
    squared norm overflowed: its normalised vector was 0 and every pair with it 0 (ILS 0.149
    instead of 0.701, silently); by 1e-160 the squared norm was subnormal (ILS 0.701004: off in the 6th digit)."""
    base = pl.DataFrame({"item": [1, 2, 3, 4, 5], "vec": [[1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [2.0, 1.0], [1.0, 3.0]]})
    scaled = base.with_columns(pl.when(pl.col("item") == 2).then(pl.col("vec").list.eval(pl.element() * scale))
                               .otherwise(pl.col("vec")).alias("vec"))
    with pytest.raises(DataError, match=re.escape("ils@3: features column 'vec': 1 vectors are too large or too small "
                                                  "to normalise in float64")):
        run([rp.ils(k=3, features=scaled)], engine)
    # the unscaled vectors by hand: model a, user 1 shows 2, 3, 4; the mean cosine of its pairs
    def cos(u: list[float], v: list[float]) -> float:
        return sum(a * b for a, b in zip(u, v)) / math.sqrt(sum(a * a for a in u) * sum(b * b for b in v))

    vec = dict(base.iter_rows())
    want = (cos(vec[2], vec[3]) + cos(vec[2], vec[4]) + cos(vec[3], vec[4])) / 3
    got = run([rp.ils(k=3, features=base)], engine, per_query=True)
    assert got.filter(pl.col("model") == "a", pl.col("user") == 1)["ils@3"].item() == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_null_item_in_the_features_table_is_refused_as_in_the_history(engine: str) -> None:
    """A features row whose item id was lost: its category table was reported as "1 items have
    no category, e.g. None" (the null had one), its vector kept unread; the history and the
    catalogue refuse a null id."""
    categories = pl.DataFrame({"item": [1, 2, 3, 4, None], "cat": ["a", "a", "b", "b", "a"]})
    vectors = pl.DataFrame({"item": [1, 2, 3, 4, None], "vec": [[1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [2.0, 1.0], [1.0, 3.0]]})
    for features in (categories, vectors):
        with pytest.raises(DataError, match=re.escape("ils@3: the features table has 1 null item values")):
            run([rp.ils(k=3, features=features)], engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_values_a_measure_leaves_undefined_are_told_not_averaged_silently(engine: str) -> None:
    """User '1' has no history (its id is written '001' there): its serendipity is null; user '3'
    is shown one item: its ILS is null.  The means leave them out while ``queries`` counts all
    three: a CoverageWarning now says how many and which (nothing said before)."""
    log = pl.DataFrame({"user": ["1", "1", "2", "2", "3"], "item": ["a", "b", "a", "c", "a"],
                        "position": [1, 2, 1, 2, 1], "relevance": [1, 0, 1, 1, 0]})
    hist = pl.DataFrame({"user": ["001", "2", "3"], "item": ["b", "c", "b"]})
    feat = pl.DataFrame({"item": ["a", "b", "c"], "vec": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]})
    metrics = [rp.serendipity(k=2, history=hist, features=feat), rp.ils(k=2, features=feat), "ndcg@2"]
    with pytest.warns(rp.CoverageWarning) as caught:
        out = rp.evaluate(log, metrics, query="user", engine=engine)
    said = [str(w.message) for w in caught]
    assert any(m.startswith("serendipity@2: undefined (null) on 1 of 3 queries") and "'1'" in m for m in said), said
    assert any(m.startswith("ils@2: undefined (null) on 1 of 3 queries") and "'3'" in m for m in said), said
    assert not any(m.startswith("ndcg@2") for m in said), said
    per = rp.evaluate(log, metrics, query="user", engine=engine, per_query=True)
    # the means are over the defined values, as said
    assert out["serendipity@2"][0] == pytest.approx(per["serendipity@2"].drop_nulls().mean(), abs=1e-12)
    assert out["ils@2"][0] == pytest.approx(per["ils@2"].drop_nulls().mean(), abs=1e-12)
    assert out["queries"][0] == 3


@pytest.mark.parametrize("engine", ENGINES)
def test_a_list_with_nothing_in_its_top_k_has_no_mean_over_it(engine: str) -> None:
    """User 'u2' was logged from position 11 on (its first page not in the log): nothing in its
    top 10.  ARP, APLT, EPC, EFD, ILS, diversity and serendipity are means over the top k's items,
    undefined on none; they scored 0 and pulled the means down (arp 0.75 where every peer, which
    sees only the users that have a top-k list, gives 1.5), silently.  Now null, left out of the
    mean with a CoverageWarning; ACLT, a count, stays 0.  The reference: recommenders' functions on
    the top-10 rows (u2 has none, as its reco table would)."""
    from .test_beyond_reference import recommenders_eval

    pe = recommenders_eval()
    log = pl.DataFrame({"user": ["u1", "u1", "u1", "u2", "u2", "u3", "u3"], "item": ["a", "b", "c", "c", "a", "b", "c"],
                        # every shown item relevant: recommenders' serendipity without a relevance column
                        "position": [1, 2, 3, 11, 12, 1, 2], "relevance": [1] * 7})
    # (recommenders refuses a shown item in the user's own history)
    hist = pl.DataFrame({"user": ["u1", "u2", "u3", "u4", "u4", "u5", "u5"], "item": ["d", "b", "a", "c", "b", "a", "d"]})
    top = log.filter(pl.col("position") <= 10)
    kw = {"col_user": "user", "col_item": "item"}
    expected = {
        "diversity(sim=cooccurrence)@10": pe.diversity(hist.to_pandas(), top.to_pandas(), **kw),
        "serendipity(sim=cooccurrence)@10": pe.serendipity(hist.to_pandas(), top.to_pandas(), **kw),
        # ARP as Elliot and RecBole: the mean over the users with a list of their items' popularity
        "arp@10": (
            sum(hist.filter(pl.col("item") == i).height for i in ["a", "b", "c"]) / 3
            + sum(hist.filter(pl.col("item") == i).height for i in ["b", "c"]) / 2
        ) / 2,
    }
    specs = [rp.diversity(k=10, history=hist, sim="cooccurrence"), rp.serendipity(k=10, history=hist, sim="cooccurrence"),
             rp.arp(k=10, history=hist), rp.aplt(k=10, history=hist), rp.aclt(k=10, history=hist),
             rp.epc(k=10, history=hist), rp.efd(k=10, history=hist), rp.ils(k=10, history=hist, sim="cooccurrence")]
    with pytest.warns(rp.CoverageWarning) as caught:
        out = rp.evaluate(log, specs, query="user", engine=engine).row(0, named=True)
    for label, value in expected.items():
        assert out[label] == pytest.approx(value, abs=1e-12), label
    said = [str(w.message) for w in caught]
    per = rp.evaluate(log, specs, query="user", engine=engine, per_query=True).filter(pl.col("user") == "u2")
    for spec in specs:
        if spec.name == "aclt@10":
            assert per[spec.name][0] == 0.0  # a count over no item
        else:
            assert per[spec.name][0] is None, spec.name
            assert any(m.startswith(f"{spec.name}: undefined (null) on 1 of 3 queries") and "'u2'" in m for m in said), said
    # to_sql run in DuckDB: the same nulls and means
    con = duckdb.connect()
    con.register("logs", log.to_arrow())
    con.register("train", hist.to_arrow())
    sql_specs = [type(spec)(**{"k": spec.k, **spec.params, "history": "train"}) for spec in specs]
    for per_query in (True, False):
        got = sql_frame(con, rp.to_sql(sql_specs, table="logs", query="user", per_query=per_query))
        want = rp.evaluate(log, specs, query="user", engine=engine, per_query=per_query)
        assert got.columns == want.columns
        for column in want.columns[1:]:
            pairs = zip(got.sort(got.columns[0])[column].to_list(), want.sort(want.columns[0])[column].to_list())
            assert all(a is None and b is None or a == pytest.approx(b, abs=1e-12) for a, b in pairs), column
    # a user absent from a version's log (missing="zero"): ARP is lower-is-better, so its 0 would be
    # the best value; the missing list is left out (null), as the one with nothing in its top k
    two = pl.concat([log.with_columns(model=pl.lit("a")), log.filter(pl.col("user") != "u3").with_columns(model=pl.lit("b"))])
    judged = two.select("user", "item", "relevance").unique()
    with pytest.warns(rp.CoverageWarning):
        per = rp.evaluate(two, [rp.arp(k=10, history=hist)], qrels=judged, query="user", by="model", engine=engine,
                          per_query=True)
    assert per.filter((pl.col("model") == "b") & (pl.col("user") == "u3"))["arp@10"].to_list() == [None]
    assert per.filter((pl.col("model") == "b") & (pl.col("user") == "u2"))["arp@10"].to_list() == [None]
