"""Audit of the list forms (``rank_polars.formula.exprs``, the ``ranking`` namespace) on inputs a real
pipeline produces: non-finite grades, overflowing gains, null grades, list columns read with
``list.eval``.  Expected values come from ``evaluate`` (itself checked against trec_eval and
the peers) or from the definition written out here."""

from __future__ import annotations

import math
import warnings

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rank_polars as rp
from rank_polars.formula import exprs as E

RANKED = pl.col("relevance").sort_by("position")


def _log(grades: list) -> pl.DataFrame:
    n = len(grades)
    return pl.DataFrame({"query": ["q"] * n, "item": [f"i{j}" for j in range(n)], "position": range(1, n + 1),
                         "relevance": grades}, schema_overrides={"relevance": pl.Float64})


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_nan_or_infinite_grade_is_an_error_naming_the_column(bad):
    """A NaN compares above every number in Polars: it was read as a relevant grade (ap, rr, p
    and err of [1, NaN, 0] were 1, 1, 2/3 and 0.51), and -inf as unjudged.  ``evaluate``
    refuses these labels; the list forms must too, in every context they run in."""
    grades = [1.0, bad, 0.0]
    with pytest.raises(rp.DataError, match="infinite"):
        rp.evaluate(_log(grades), ["ap"])
    log = _log(grades)
    forms = [E.ap(RANKED), E.rr(RANKED), E.precision(RANKED, 3), E.err(RANKED, max=3), E.judged(RANKED, 3),
             RANKED.ranking.ndcg(3)]
    runs = {
        "select": lambda: log.select(forms),
        "group_by": lambda: log.group_by("query").agg(forms),
        "over": lambda: log.select(f.over("query") for f in forms),
        "streaming": lambda: log.lazy().group_by("query").agg(forms).collect(engine="streaming"),
        "list.eval": lambda: log.group_by("query").agg(RANKED).select(
            pl.col("relevance").list.eval(E.ap(pl.element()))),
    }
    for context, run in runs.items():
        # inside list.eval the element has no column name: the message says so
        where = "over a list of grades" if context == "list.eval" else "over column 'relevance'"
        with pytest.raises(pl.exceptions.PolarsError, match=f"{where}: a grade is NaN or infinite"):
            run()


def test_one_bad_list_is_named_among_good_ones():
    log = pl.DataFrame({"query": ["a", "a", "b", "b"], "position": [1, 2, 1, 2], "relevance": [1.0, 0.0, 2.0, math.nan]})
    with pytest.raises(pl.exceptions.PolarsError, match=r"ndcg@2 over column 'relevance'.*NaN"):
        log.group_by("query").agg(E.ndcg(RANKED, 2))
    # the good lists alone are untouched: the check does not change a number
    good = log.filter(pl.col("query") == "a").group_by("query").agg(E.ndcg(RANKED, 2))
    assert good["ndcg@2"].item() == 1.0


@pytest.mark.parametrize("form", ["ndcg(gain=exp)", "err"])
def test_an_overflowing_gain_is_an_error_not_nan(form):
    """2^grade overflows float64 from grade 1024 on: ``evaluate`` refuses the value (never a NaN
    in the output); the list form gave NaN, which a mean over queries carries silently on."""
    grades = [1.0, 2000.0, 0.0]
    with pytest.raises(rp.DataError, match="not a finite number"):
        rp.evaluate(_log(grades), [form])
    expr = E.ndcg(RANKED, gain="exp") if form.startswith("ndcg") else E.err(RANKED)
    with pytest.raises(pl.exceptions.PolarsError, match=r"not a finite number.*largest grade.*2000"):
        _log(grades).select(expr)


grade = st.one_of(st.none(), st.sampled_from([0, 0, 1, 2, 3, -1]))
SPECS = {"ndcg@3": lambda g: E.ndcg(g, 3), "ap": E.ap, "rr": E.rr, "p@3": lambda g: E.precision(g, 3),
         "r@3": lambda g: E.recall(g, 3), "bpref": E.bpref, "err(max=3)": lambda g: E.err(g, max=3),
         "judged@3": lambda g: E.judged(g, 3), "unj@5": lambda g: E.unj(g, 5), "rprec": E.rprec,
         "11pt_avg": E.iprec_avg}


@settings(max_examples=25, deadline=None)
@given(lists=st.lists(st.lists(grade, min_size=1, max_size=7), min_size=1, max_size=4))
def test_a_null_grade_is_an_unjudged_item(lists):
    """A null element of the list is an item without a judgment: the numbers of ``evaluate``
    given the other items' judgments as qrels (the existing property test has no null)."""
    rows = [(f"q{q}", f"i{j}", j + 1, g) for q, grades in enumerate(lists) for j, g in enumerate(grades)]
    log = pl.DataFrame(rows, schema={"query": pl.String, "item": pl.String, "position": pl.Int64,
                                     "relevance": pl.Int64}, orient="row")
    qrels = log.filter(pl.col("relevance").is_not_null()).select("query", "item", "relevance")
    judged = set(qrels["query"])
    got = log.group_by("query").agg(f(RANKED).alias(n) for n, f in SPECS.items())
    if not judged:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rp.CoverageWarning)
        want = rp.evaluate(log.drop("relevance"), list(SPECS), qrels=qrels, per_query=True)
    rows = got.join(want, on="query", suffix="_evaluate").iter_rows(named=True)
    for row in rows:
        for name in SPECS:
            assert row[name] == pytest.approx(row[f"{name}_evaluate"], abs=1e-12), (name, row["query"], lists)
    assert want.height == len(judged)


def test_err_without_max_reads_the_lists_own_top_grade():
    """As documented: the list carries its own judgments, so ERR's ``max`` (``evaluate``: the top
    grade of all the judgments) is the list's top grade.  ERR written out, gdeval's loop."""

    def err(grades: list[float]) -> float:
        top, reach, total = max(grades), 1.0, 0.0
        for i, g in enumerate(grades, 1):
            stop = (2**g - 1) / 2**top if g > 0 else 0.0
            total += reach * stop / i
            reach *= 1 - stop
        return total

    lists = {"a": [0.0, 1.0, 0.0], "b": [1.0, 3.0, 2.0]}
    log = pl.DataFrame([(q, i + 1, g) for q, gs in lists.items() for i, g in enumerate(gs)],
                       schema=["query", "position", "relevance"], orient="row")
    got = dict(log.group_by("query").agg(E.err(RANKED)).iter_rows())
    assert got == pytest.approx({q: err(gs) for q, gs in lists.items()}, abs=1e-15)


def test_a_list_column_read_with_list_eval():
    """A column of ranked lists (one row per ranking, chunked, with a null and an empty list):
    ``list.eval`` gives each list the numbers ``evaluate`` gives its ranking; a null list null."""
    lists = [[3, 0, 1], [0, 0], [0, 2, 2, 1], None, []]
    column = pl.concat([pl.DataFrame({"g": lists[:2]}), pl.DataFrame({"g": lists[2:]})], rechunk=False)
    assert column.n_chunks() == 2
    el = pl.element()
    forms = {"ndcg@3": E.ndcg(el, 3), "ap": E.ap(el), "err(max=3)": E.err(el, max=3), "rprec": E.rprec(el)}
    got = column.select(pl.col("g").list.eval(f).list.first().alias(n) for n, f in forms.items())
    rows = [(f"q{q}", f"i{j}", j + 1, g) for q, grades in enumerate(lists) for j, g in enumerate(grades or [])]
    want = rp.evaluate(pl.DataFrame(rows, schema=["query", "item", "position", "relevance"], orient="row"),
                       list(forms), per_query=True)
    for q, row in enumerate(got.iter_rows(named=True)):
        if lists[q] is None:
            assert set(row.values()) == {None}
        elif not lists[q]:
            assert set(row.values()) == {0.0}  # no item: nothing relevant retrieved
        else:
            assert row == pytest.approx(want.filter(pl.col("query") == f"q{q}").drop("query").row(0, named=True))


@pytest.mark.parametrize("grades", [[100, 1, 0], [0, 60, 60, 1], [1, 54, 2]])
def test_err_with_a_top_grade_from_54_on_is_a_number(grades):
    """With the top grade at 54 or more, (2^max - 1) / 2^max rounds to 1 in float64, so
    ln(1 - R) was -inf and the running product NaN: the list form returned NaN and ``evaluate``
    refused the query, saying 2^grade overflows from grade 1024 on.  gdeval's loop, written
    out here in exact fractions, gives a number well inside float64's range."""
    from fractions import Fraction

    top, reach, total = max(grades), Fraction(1), Fraction(0)
    for i, g in enumerate(grades, 1):
        stop = Fraction(2**g - 1, 2**top) if g > 0 else Fraction(0)
        total += reach * stop / i
        reach *= 1 - stop
    log = _log(grades)
    assert log.select(E.err(RANKED)).item() == pytest.approx(float(total), rel=1e-12)
    assert rp.evaluate(log, ["err", "err@2"])["err"].item() == pytest.approx(float(total), rel=1e-12)


@pytest.mark.parametrize("name", ["alpha_dcg", "err_ia", "p_ia", "strec"])
def test_a_bool_cutoff_is_refused_by_the_diversity_list_forms(name):
    """``True`` is an int to Python: ``alpha_dcg(s, True)`` was alpha-DCG@1 named ``alpha_dcg@True``;
    the other list forms and ``evaluate`` refuse it (``ndcg: cutoff k must be a positive integer``)."""
    with pytest.raises(rp.MetricNameError, match="ndcg: cutoff k must be a positive integer, got True"):
        E.ndcg("relevance", True)
    with pytest.raises(rp.MetricNameError, match=f"{name}: cutoff k must be a positive integer, got True"):
        getattr(E, name)("subtopics", True)


@pytest.mark.parametrize("name", ["ndcg", "alpha_dcg", "strec"])
def test_a_numpy_integer_is_a_cutoff(name):
    """``for k in np.arange(1, 11)`` gives NumPy integers: they were refused ("cutoff k must be a
    positive integer, got np.int64(5)"), as was ``spec.replace(k=5)`` (a TypeError). Now read as
    the int they are, with the int's value and name; a float with a fraction is still refused."""
    import numpy as np

    column = "relevance" if name == "ndcg" else "subtopics"
    frame = (pl.DataFrame({"relevance": [3, 2, 0, 1, 2]}) if name == "ndcg"
             else pl.DataFrame({"subtopics": [[1, 2], [], [1], [3], [2]]}))
    for k in (np.int64(3), np.int32(3), np.uint8(3), 3.0):
        got = frame.select(getattr(E, name)(column, k))
        assert got.equals(frame.select(getattr(E, name)(column, 3))), k
        assert got.columns == [f"{name}@3"]
    with pytest.raises(rp.MetricNameError, match="cutoff k must be a positive integer, got np.float64"):
        getattr(E, name)(column, np.float64(2.5))
    assert rp.measures.parse("ndcg@5").replace(k=np.int64(10)) == rp.measures.parse("ndcg@10")
