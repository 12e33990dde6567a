"""Which repeats a call of ndeval's diversity measures refuses, both engines, against pyndeval.

The policy pinned here: a repeat that no measure reads changes no value, so it is accepted,
as the flat qrels' duplicate check counts only the judgments that contribute.

* A (query, subtopic, item) judged twice is refused when some measure reads it (relevance > 0,
  or >= ``rel``), since ndeval would count it twice in R_s. A repeat among grade-0 (or
  below-``rel``) rows is accepted, with the values of the judgments without the repeat.
  ``checks="strict"`` refuses every repeat.
* An item shown twice in one ranking (in a call of diversity measures only) is refused when it
  is relevant to some subtopic and both copies are read: within the deepest cutoff, or anywhere
  for a measure over the whole list (nrbp, map_ia). An item relevant to nothing is accepted,
  with the values of the run whose second copy is a fresh unjudged item. ``judged_only=true``,
  and a call that also has a flat measure (ndcg), keep the old rule.

Every expected value comes from pyndeval on the cleaned input (repeated judgments dropped,
second copies renamed), which ``evaluate`` on the cleaned input must equal as well.
"""

from __future__ import annotations

import math

import hypothesis.strategies as st
import polars as pl
import pytest
from hypothesis import HealthCheck, Phase, given, settings

import rank_polars as rp
from rank_polars.errors import DataError, RankPolarsError

from .test_diversity import reference

Judgment = tuple[str, str, str, int]  # query, subtopic, item, grade
Shown = tuple[str, "str | None", int]  # query, item, position

ENGINES = ["polars", "duckdb"]
# (our name, pyndeval's name)
CUT = [("alpha_dcg@5", "alpha-DCG@5"), ("alpha_ndcg@5", "alpha-nDCG@5"), ("err_ia@5", "ERR-IA@5"),
       ("nerr_ia@5", "nERR-IA@5"), ("p_ia@5", "P-IA@5"), ("strec@5", "strec@5")]
ALL = CUT + [("alpha_ndcg@10", "alpha-nDCG@10"), ("strec@10", "strec@10"), ("nrbp", "NRBP"),
             ("nnrbp", "nNRBP"), ("map_ia", "MAP-IA")]

# q1: subtopic 1 has a (1) and c (0); subtopic 2 has b (2) and d (1); q2: one relevant item
JUDGMENTS: list[Judgment] = [("q1", "1", "a", 1), ("q1", "1", "c", 0), ("q1", "2", "b", 2),
                             ("q1", "2", "d", 1), ("q2", "1", "e", 1)]
SHOWN: list[Shown] = [("q1", d, p) for p, d in enumerate(["a", "x", "b", "c", "d"], 1)] + [("q2", "e", 1)]


def _with_rel(name: str, rel: int) -> str:
    if rel == 1:
        return name
    base, at, k = name.partition("@")
    return f"{base}(rel={rel}){at}{k}"


def _ours(judgments: list[Judgment], shown: list[Shown], names: list[str], engine: str, **kw: object) -> dict:
    run = pl.DataFrame([("m", *s) for s in shown], orient="row",
                       schema={"model": pl.String, "query": pl.String, "item": pl.String, "position": pl.Int64})
    subtopics = pl.DataFrame(judgments, orient="row",
                             schema={"query": pl.String, "subtopic": pl.String, "item": pl.String, "relevance": pl.Int64})
    table = rp.evaluate(run, names, qrels=subtopics, by="model", per_query=True, engine=engine, **kw)
    return {row["query"]: row for row in table.iter_rows(named=True)}


def _renamed(shown: list[Shown]) -> list[Shown]:
    """The run with every later copy of an item in a ranking renamed to a fresh unjudged item."""
    seen: set[tuple[str, str]] = set()
    out = []
    for q, d, p in shown:
        out.append((q, d if (q, d) not in seen else f"{d}#copy{p}", p))
        seen.add((q, d))
    return out


def _assert_as_pyndeval(judgments: list[Judgment], shown: list[Shown], pairs: list[tuple[str, str]],
                        engine: str, rel: int = 1) -> None:
    """``evaluate`` on the input as given and on the cleaned input both equal pyndeval on the
    cleaned input (judgments without repeats, later copies renamed) at 1e-9."""
    clean_judgments = list(dict.fromkeys(judgments))
    clean_shown = _renamed(shown)
    # pyndeval ranks by score descending: scores that reproduce the positions
    run = [("m", q, d, 1000.0 - p) for q, d, p in clean_shown]
    expected = reference(clean_judgments, run, "m", [nd for _, nd in pairs], 0.5, 0.5, rel)
    names = [_with_rel(ours, rel) for ours, _ in pairs]
    for got in (_ours(judgments, shown, names, engine), _ours(clean_judgments, clean_shown, names, engine)):
        assert set(expected) <= set(got)
        for query, values in expected.items():
            for name, (_, nd) in zip(names, pairs):
                if math.isnan(values[nd]):  # no subtopic relevant at rel: ndeval's 0/0, ours 0
                    assert nd == "nNRBP" and got[query][name] == 0.0
                    continue
                assert got[query][name] == pytest.approx(values[nd], abs=1e-9), (query, name)


# --- Policy 1: repeated subtopic judgments ------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("extra, names, count", [
    pytest.param([("q1", "1", "a", 1)], ["alpha_ndcg@5"], 1, id="relevant"),
    pytest.param([("q1", "2", "b", 2)] * 2, ["alpha_ndcg(rel=2)@5"], 2, id="at-rel-twice"),
    pytest.param([("q1", "2", "d", 1)], ["alpha_ndcg(rel=2)@5", "err_ia@5"], 1, id="read-by-one-measure"),
    pytest.param([("q1", "2", "d", 1)], ["nrbp", "map_ia"], 1, id="whole-list"),
    # the count is of the rows some measure reads: the grade-0 repeat is not among them
    pytest.param([("q1", "1", "a", 1), ("q1", "1", "c", 0)], ["alpha_ndcg@5"], 1, id="read-and-unread"),
])
def test_read_repeated_judgment_is_refused(engine: str, extra: list[Judgment], names: list[str], count: int) -> None:
    with pytest.raises(RankPolarsError) as e:
        _ours(JUDGMENTS + extra, SHOWN, names, engine)
    assert f"{count} repeated (query, subtopic, item) rows" in str(e.value)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("extra, rel", [
    pytest.param([("q1", "1", "c", 0)], 1, id="grade-0"),
    pytest.param([("q1", "1", "c", 0), ("q1", "1", "c", 0), ("q2", "1", "z", 0)] * 2, 1, id="grade-0-many"),
    pytest.param([("q1", "2", "d", 1), ("q1", "1", "c", 0)], 2, id="below-rel"),
])
def test_unread_repeated_judgment_changes_nothing(engine: str, extra: list[Judgment], rel: int) -> None:
    _assert_as_pyndeval(JUDGMENTS + extra, SHOWN, ALL, engine, rel)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("names", [["alpha_ndcg@5"], ["alpha_dcg@5"], ["nnrbp", "p_ia@5"]])
def test_a_repeated_judgment_is_refused_before_an_item_shown_twice(engine: str, names: list[str]) -> None:
    """Both at once: the judgments' repeat is named, whichever way the engine finds it (the
    Polars engine sees it in the greedy ideal's sorted rows where a measure has an ideal)."""
    shown = [("q1", d, p) for p, d in enumerate(["a", "x", "a", "b"], 1)] + [("q2", "e", 1)]
    with pytest.raises(RankPolarsError, match=r"1 repeated \(query, subtopic, item\) rows"):
        _ours(JUDGMENTS + [("q1", "2", "b", 2)], shown, names, engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_strict_checks_refuse_every_repeated_judgment(engine: str) -> None:
    with pytest.raises(RankPolarsError, match=r"1 repeated \(query, subtopic, item\) rows"):
        _ours(JUDGMENTS + [("q1", "1", "c", 0)], SHOWN, ["alpha_ndcg@5"], engine, checks="strict")


# --- Policy 2: an item shown twice in one ranking -------------------------------------------


def _ranking(items: list[str]) -> list[Shown]:
    return [("q1", d, p) for p, d in enumerate(items, 1)] + [("q2", "e", 1)]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("items, names", [
    pytest.param(["a", "x", "a", "b"], ["alpha_ndcg@5"], id="relevant-within-cutoff"),
    pytest.param(["a", "x", "a", "b"], ["strec@2", "err_ia@5"], id="within-deepest-cutoff"),
    pytest.param(["x", "a", "y", "z", "w", "v", "t", "a"], ["nrbp"], id="nrbp-reads-every-rank"),
    pytest.param(["x", "a", "y", "z", "w", "v", "t", "a"], ["alpha_ndcg@5", "map_ia"], id="map_ia-reads-every-rank"),
    pytest.param(["c", "x", "c", "b"], ["alpha_ndcg(judged_only=true)@5"], id="judged-only-grade-0"),
    pytest.param(["a", "x", "a", "b"], ["alpha_ndcg(judged_only=true)@5"], id="judged-only-relevant"),
    pytest.param(["a", "x", "a", "b"], ["ndcg@5", "alpha_ndcg@5"], id="with-flat-measure"),
])
def test_read_repeated_item_is_refused(engine: str, items: list[str], names: list[str]) -> None:
    with pytest.raises(DataError) as e:
        _ours(JUDGMENTS, _ranking(items), names, engine)
    assert "duplicate" in str(e.value) and "'item'" in str(e.value) and "'q1'" in str(e.value)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("items, pairs", [
    pytest.param(["u", "a", "u", "b", "d"], ALL, id="unjudged"),
    pytest.param(["a", "c", "b", "c", "d"], ALL, id="judged-grade-0"),
    pytest.param(["u", "a", "u", "b", "u", "c", "d", "c"], ALL, id="several-copies"),
    pytest.param(["x", "a", "y", "z", "w", "v", "t", "a"], CUT, id="relevant-beyond-every-cutoff"),
])
def test_unread_repeated_item_changes_nothing(engine: str, items: list[str], pairs: list[tuple[str, str]]) -> None:
    _assert_as_pyndeval(JUDGMENTS, _ranking(items), pairs, engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_null_item_is_relevant_to_nothing_in_a_diversity_only_call(engine: str) -> None:
    """A null item id matches no judgment: in a call of diversity measures alone it is a row no
    measure reads (the values are pyndeval's with a fresh unjudged docno in its place); beside a
    flat measure, or under judged_only, the run's checks over every row still refuse it."""
    items = ["a", None, "b", "c", "d"]
    shown = [("q1", d, p) for p, d in enumerate(items, 1)] + [("q2", "e", 1)]
    fresh = [(q, d if d is not None else "fresh#2", p) for q, d, p in shown]
    run = [("m", q, d, 1000.0 - p) for q, d, p in fresh]
    expected = reference(JUDGMENTS, run, "m", [nd for _, nd in ALL], 0.5, 0.5, 1)
    got = _ours(JUDGMENTS, shown, [ours for ours, _ in ALL], engine)
    for query, values in expected.items():
        for ours, nd in ALL:
            assert got[query][ours] == pytest.approx(values[nd], abs=1e-9), (query, ours)
    for names in (["alpha_ndcg@5", "ndcg@5"], ["alpha_ndcg(judged_only=true)@5"]):
        with pytest.raises(DataError, match="null item ids"):
            _ours(JUDGMENTS, shown, names, engine)


# --- Both at once, generated ----------------------------------------------------------------


@st.composite
def dirty_collections(draw: st.DrawFn) -> tuple[list[Judgment], list[Shown]]:
    """Subtopic judgments with some grade-0 rows repeated, and a run whose rankings show some
    items relevant to nothing (unjudged, or judged 0 only) more than once, anywhere."""
    judgments: list[Judgment] = []
    shown: list[Shown] = []
    for q in map(str, range(draw(st.integers(1, 4)))):
        docs = [f"d{j}" for j in range(draw(st.integers(1, 8)))]
        rows = [(q, "0", "d0", 1)]  # a relevant subtopic: nNRBP is not ndeval's 0/0
        for s in range(1, draw(st.integers(1, 3)) + 1):
            for d in draw(st.lists(st.sampled_from(docs), unique=True, max_size=len(docs))):
                rows.append((q, str(s), d, draw(st.integers(0, 3))))
        zeros = [r for r in rows if r[3] == 0]
        rows += draw(st.lists(st.sampled_from(zeros), max_size=4)) if zeros else []
        judgments += draw(st.permutations(rows))
        relevant = {d for _, _, d, g in rows if g > 0}
        items = draw(st.lists(st.sampled_from(docs + ["u1", "u2"]), unique=True, min_size=1, max_size=12))
        unread = [d for d in items if d not in relevant]
        for d in draw(st.lists(st.sampled_from(unread), max_size=4)) if unread else []:
            items.insert(draw(st.integers(0, len(items))), d)
        shown += [(q, d, p) for p, d in enumerate(items, 1)]
    return judgments, shown


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=[Phase.explicit, Phase.generate])  # no shrinking: each example costs seconds
@given(data=dirty_collections())
def test_unread_repeats_equal_pyndeval_on_clean_input(data: tuple[list[Judgment], list[Shown]]) -> None:
    judgments, shown = data
    for engine in ENGINES:
        _assert_as_pyndeval(judgments, shown, ALL, engine)
