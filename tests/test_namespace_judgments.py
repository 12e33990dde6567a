"""The ``ranking`` namespace with judgments in their own table: ``rp.with_judgments`` and the list
functions' ``ideal=``, ``r=`` and ``n=`` give ``rp.evaluate(log, metrics, qrels=judgments)``'s
numbers, per query and per group, in a ``group_by`` of the user's own.

The reference is ``evaluate`` (its numbers are checked against trec_eval, pytrec_eval and the
peers elsewhere); the logs are generated: scores with ties (ranked as ``evaluate`` ranks, score
descending then the item id's text descending), unjudged items, judged items never shown,
queries without judgments, judged queries a group did not rank, several grouping columns and
custom column names."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import rank_polars as rp
from rank_polars.formula.listform import list_expr
from rank_polars.measures import parse

SCHEMA = rp.Schema(query="search_id", item="sku", score="s", relevance="grade", judgments=rp.Schema(relevance="label"))
BY = ["model", "market"]
# evaluate's order by score: descending, ties broken by the item id's text, descending
RANKED = pl.col("grade").sort_by(pl.col("s"), pl.col("sku").cast(pl.String), descending=True)
IDEAL = {"ideal": "ideal"}
WITH_N = {"ideal": "ideal", "n": "num_nonrel"}

# every measure whose list function takes ideal= (and n= where it reads the grade-0 judgments)
WITH_IDEAL = {
    "ndcg@3": lambda g: g.ranking.ndcg(3, **IDEAL),
    "ndcg": lambda g: g.ranking.ndcg(**IDEAL),
    "ndcg(gain=exp, discount=jarvelin)@4": lambda g: g.ranking.ndcg(4, gain="exp", discount="jarvelin", **IDEAL),
    "idcg@2": lambda g: g.ranking.idcg(2, **IDEAL),
    "idcg": lambda g: g.ranking.idcg(**IDEAL),
    "ap": lambda g: g.ranking.ap(**IDEAL),
    "ap@3": lambda g: g.ranking.ap(3, **IDEAL),
    "ap(rel=2, denom=min)@2": lambda g: g.ranking.ap(2, rel=2, denom="min", **IDEAL),
    "r@3": lambda g: g.ranking.recall(3, **IDEAL),
    "r(rel=2)": lambda g: g.ranking.recall(rel=2, **IDEAL),
    "f1@2": lambda g: g.ranking.f1(2, **IDEAL),
    "rprec": lambda g: g.ranking.rprec(**IDEAL),
    "rprec(mult=0.5)": lambda g: g.ranking.rprec(mult=0.5, **IDEAL),
    "iprec(recall=0.5)": lambda g: g.ranking.iprec(0.5, **IDEAL),
    "11pt_avg": lambda g: g.ranking.iprec_avg(**IDEAL),
    "p(relative=true)@3": lambda g: g.ranking.precision(3, relative=True, **IDEAL),
    "bpref": lambda g: g.ranking.bpref(**WITH_N),
    "bpref(rel=2)": lambda g: g.ranking.bpref(rel=2, **WITH_N),
    "fallout@3": lambda g: g.ranking.fallout(3, **WITH_N),
    "fallout(rel=2)": lambda g: g.ranking.fallout(rel=2, **WITH_N),
}
# the measures that read only R and N, with those counts instead of the list
WITH_COUNTS = {
    "ap": lambda g: g.ranking.ap(r="num_rel"),
    "ap(denom=min)@2": lambda g: g.ranking.ap(2, denom="min", r="num_rel"),
    "r@2": lambda g: g.ranking.recall(2, r="num_rel"),
    "f1@3": lambda g: g.ranking.f1(3, r="num_rel"),
    "rprec": lambda g: g.ranking.rprec(r="num_rel"),
    "iprec(recall=0.3)": lambda g: g.ranking.iprec(0.3, r="num_rel"),
    "11pt_avg": lambda g: g.ranking.iprec_avg(r="num_rel"),
    "p(relative=true)@2": lambda g: g.ranking.precision(2, relative=True, r="num_rel"),
    "bpref": lambda g: g.ranking.bpref(r="num_rel", n="num_nonrel"),
    "fallout@2": lambda g: g.ranking.fallout(2, n="num_nonrel"),
}
# lower is better: evaluate leaves a missing ranking out of these (missing="zero" would score it best)
LEFT_OUT = ("fallout",)


@st.composite
def tables(draw) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A log (two grouping columns, scores with ties, integer item ids) and its judgments."""
    queries = [f"q{i}" for i in range(draw(st.integers(1, 5)))]
    groups = [(m, k) for m in draw(st.sampled_from([["a"], ["a", "b"]])) for k in draw(st.sampled_from([["fr"], ["fr", "de"]]))]
    rows = []
    for model, market in groups:
        for q in queries:
            if not draw(st.booleans()) and q != queries[0]:
                continue  # a judged query this group did not rank (missing="zero" scores it 0)
            items = draw(st.lists(st.integers(0, 11), min_size=1, max_size=7, unique=True))
            scores = draw(st.lists(st.sampled_from([0.5, 1.0, 1.5]), min_size=len(items), max_size=len(items)))
            rows += [(model, market, q, sku, s) for sku, s in zip(items, scores)]
    log = pl.DataFrame(rows, schema={"model": pl.String, "market": pl.String, "search_id": pl.String, "sku": pl.Int64,
                                     "s": pl.Float64}, orient="row")
    judged = []
    for q in [*queries, "q_only_judged"]:
        grades = draw(st.lists(st.sampled_from([None, None, 0, 0, 1, 2, 3]), min_size=12, max_size=12))
        judged += [(q, sku, g) for sku, g in enumerate(grades) if g is not None]
    judged = [j for j in judged if j[0] != queries[-1]] if draw(st.booleans()) else judged  # a query without judgments
    qrels = pl.DataFrame(judged, schema={"search_id": pl.String, "sku": pl.Int64, "label": pl.Int64}, orient="row")
    return log, qrels


def _compare(log: pl.DataFrame, qrels: pl.DataFrame, forms: dict, missing: str = "zero") -> None:
    if qrels.height == 0:
        return
    got = (rp.with_judgments(log, qrels, by=BY, missing=missing, schema=SCHEMA)
           .group_by(*BY, "search_id").agg(f(RANKED).alias(name) for name, f in forms.items()))
    want = rp.evaluate(log, list(forms), qrels=qrels, by=BY, missing=missing, schema=SCHEMA, per_query=True)
    assert got.height == want.height
    joined = want.join(got, on=[*BY, "search_id"], how="left", suffix="_list", nulls_equal=True)
    for name in forms:
        for a, b in zip(joined[name], joined[f"{name}_list"]):
            if a is None:  # a missing ranking that evaluate leaves out (lower is better)
                assert name.startswith(LEFT_OUT), name
                continue
            assert b == pytest.approx(a, abs=1e-12), name


@settings(max_examples=30, deadline=None)
@given(data=tables())
def test_ideal_gives_evaluates_numbers_per_query(data):
    log, qrels = data
    _compare(log, qrels, WITH_IDEAL)


@settings(max_examples=20, deadline=None)
@given(data=tables())
def test_counts_give_evaluates_numbers_per_query(data):
    log, qrels = data
    _compare(log, qrels, WITH_COUNTS)


@settings(max_examples=15, deadline=None)
@given(data=tables())
def test_missing_skip_gives_evaluates_numbers(data):
    log, qrels = data
    _compare(log, qrels, {name: WITH_IDEAL[name] for name in ("ndcg@3", "ap", "bpref", "fallout@3")}, missing="skip")


@settings(max_examples=15, deadline=None)
@given(data=tables())
def test_the_means_per_group_are_evaluates(data):
    """The README's route: a mean per group of the per-query values is ``evaluate``'s line, with
    the missing rankings' rows dropped for fall-out, which ``evaluate`` leaves out."""
    log, qrels = data
    if qrels.height == 0:
        return
    names = ["ndcg@3", "ap", "rprec", "bpref", "fallout@3"]
    attached = rp.with_judgments(log, qrels, by=BY, schema=SCHEMA)
    per_query = attached.group_by(*BY, "search_id").agg(
        *(WITH_IDEAL[name](RANKED).alias(name) for name in names if name != "fallout@3"),
        WITH_IDEAL["fallout@3"](RANKED).filter(pl.col("sku").is_not_null().all()).first().alias("fallout@3"))
    got = per_query.group_by(BY).agg(pl.len().alias("queries"), pl.col(names).mean()).sort(BY)
    want = rp.evaluate(log, names, qrels=qrels, by=BY, schema=SCHEMA).sort(BY)
    assert got["queries"].to_list() == want["queries"].to_list()
    for name in names:
        assert got[name].to_list() == pytest.approx(want[name].to_list(), abs=1e-12), name


def test_the_rows_attached():
    log = pl.DataFrame({"model": ["a", "a", "a", "b"], "query": ["q1", "q1", "q9", "q1"],
                        "item": ["x", "u", "z", "y"], "position": [1, 2, 1, 1], "relevance": [5, 5, 5, 5]})
    qrels = pl.DataFrame({"query": ["q1", "q1", "q1", "q1", "q2"], "item": ["x", "y", "w", "v", "z"],
                          "relevance": [0, 2, 3, 0, 1]})
    got = rp.with_judgments(log, qrels, by="model").sort("model", "query", "position", nulls_last=True)
    assert got.columns == ["model", "query", "item", "position", "relevance", "ideal", "num_rel", "num_nonrel"]
    # the log's own labels are replaced by the judgments' grades (null: unjudged), q9 (no judgment) leaves,
    # q2 (judged, ranked by no group) gets a row per group
    assert got.select("model", "query", "item", "relevance").rows() == [
        ("a", "q1", "x", 0), ("a", "q1", "u", None), ("a", "q2", None, None), ("b", "q1", "y", 2), ("b", "q2", None, None)]
    assert got["ideal"].to_list() == [[3, 2], [3, 2], [1], [3, 2], [1]]
    assert got["num_rel"].to_list() == [2, 2, 1, 2, 1] and got["num_nonrel"].to_list() == [2, 2, 0, 2, 0]
    skipped = rp.with_judgments(log, qrels, by="model", missing="skip")
    assert skipped.height == 3 and skipped["item"].null_count() == 0


def test_a_lazy_log_stays_lazy():
    """Nothing of a LazyFrame log is read: a plan that fails when run fails only when collected."""
    log = pl.LazyFrame({"query": ["q1"], "item": ["x"], "position": ["1"]}).with_columns(
        pl.col("position").str.replace("1", "one").cast(pl.Int64, strict=True))
    qrels = pl.DataFrame({"query": ["q1"], "item": ["x"], "relevance": [1]})
    attached = rp.with_judgments(log, qrels)
    assert isinstance(attached, pl.LazyFrame)
    with pytest.raises(pl.exceptions.InvalidOperationError):
        attached.collect()


def test_ids_are_matched_by_the_id_rule():
    """Integer item ids in the log against text in the judgments: matched as text, as evaluate does."""
    log = pl.DataFrame({"query": [1, 1, 1], "item": [7, 8, 9], "position": [1, 2, 3]})
    qrels = pl.DataFrame({"query": ["1", "1", "1"], "item": ["9", "7", "07"], "relevance": [1, 2, 3]})
    got = rp.with_judgments(log, qrels).group_by("query").agg(pl.col("relevance").sort_by("position").ranking.ndcg(ideal="ideal"))
    want = rp.evaluate(log, ["ndcg"], qrels=qrels)
    assert got["ndcg"].item() == pytest.approx(want["ndcg"].item(), abs=1e-15)
    with pytest.raises(rp.RankPolarsError, match="item"):
        rp.with_judgments(log, qrels.with_columns(pl.col("item").cast(pl.Float64, strict=False)))


@pytest.mark.parametrize(("qrels", "error", "message"), [
    (pl.DataFrame({"query": ["q1", "q1"], "item": ["x", "x"], "label": [0, 0]}), rp.DataError,
     r"qrels: duplicate judgments for the same \(query, item\) in columns 'query', 'item' \(1 rows\), e.g. query 'q1'"),
    (pl.DataFrame({"query": ["q1"], "item": ["x"], "grade": [1]}), rp.RankPolarsError,
     r"qrels: column 'label' \(relevance grade\) not found; columns are 'query', 'item', 'grade'"),
    (pl.DataFrame({"query": ["q1", "q2"], "item": ["x", "y"], "label": [1.0, float("nan")]}), rp.DataError,
     r"qrels: column 'label' has 1 NaN grades.*e.g. query 'q2'"),
])
def test_bad_judgments_are_refused_in_evaluates_words(qrels, error, message):
    log = pl.DataFrame({"query": ["q1"], "item": ["x"], "position": [1]})
    schema = rp.Schema(judgments=rp.Schema(relevance="label"))
    with pytest.raises(error, match=message):
        rp.with_judgments(log, qrels, schema=schema)
    # the same words as evaluate's; a repeated grade-0 judgment, which no measure of evaluate reads
    # by default, is copied onto the shown row here (a row twice): refused as checks="strict" refuses it
    with pytest.raises(error, match=message):
        rp.evaluate(log, ["ndcg"], qrels=qrels, schema=schema, checks="strict")


def test_added_columns_must_not_shadow_the_logs():
    log = pl.DataFrame({"query": ["q1"], "item": ["x"], "position": [1], "ideal": [0]})
    qrels = pl.DataFrame({"query": ["q1"], "item": ["x"], "relevance": [1]})
    with pytest.raises(rp.RankPolarsError, match="already has a column 'ideal'"):
        rp.with_judgments(log, qrels)
    assert "best" in rp.with_judgments(log, qrels, ideal="best").columns


def test_what_each_measure_needs_is_said():
    ranked = pl.col("relevance")
    with pytest.raises(rp.RankPolarsError, match="bpref reads N.*pass n="):
        ranked.ranking.bpref(ideal="ideal")
    with pytest.raises(rp.RankPolarsError, match="ap reads no grade-0 judgments: n= does not apply"):
        list_expr(parse("ap"), ranked, ideal="ideal", n="num_nonrel")
    with pytest.raises(rp.RankPolarsError, match=r"ap\(rel=0\) reads the judgments graded 0.*pass n=.*or r=, R itself"):
        ranked.ranking.ap(rel=0, ideal="ideal")
    ranked.ranking.ap(rel=0, ideal="ideal", r="num_rel")  # R given: no grade-0 judgment is read
    with pytest.raises(rp.RankPolarsError, match="p@5 reads no R"):
        ranked.ranking.precision(5, r="num_rel")
    with pytest.raises(rp.RankPolarsError, match="bpref also reads N.*pass n="):
        ranked.ranking.bpref(r="num_rel")
    with pytest.raises(rp.RankPolarsError, match="top grade of every judgment.*max="):
        list_expr(parse("err@5"), ranked, ideal="ideal")
    with pytest.raises(TypeError):
        ranked.ranking.err(5, ideal="ideal")  # err takes max=, not the judgments of one query


def test_the_ideal_alone_and_given_as_grades():
    """ideal= as a literal list (one ranking), with the counts it implies; and a null ideal refused."""
    frame = pl.DataFrame({"relevance": [0, 2, None, 1]})
    # the judgments: grades 3, 2, 1, 1 and two judged 0; the list shows 0, 2, unjudged, 1
    both = frame.select(pl.col("relevance").ranking.ap(ideal=[3, 2, 1, 1]), pl.col("relevance").ranking.ap(r=4).alias("r"))
    assert both.row(0) == pytest.approx(((1 / 2 + 2 / 4) / 4, (1 / 2 + 2 / 4) / 4))
    bpref = frame.select(pl.col("relevance").ranking.bpref(ideal=[3, 2, 1, 1], n=2)).item()
    # relevant retrieved at 2 and 4, one judged non-relevant above each: (1 - 1/2) + (1 - 1/2), / R = 4
    assert bpref == pytest.approx(1.0 / 4)
    with pytest.raises(pl.exceptions.PolarsError, match=r"a grade is NaN or infinite \(1 such grade in the list or ideal="):
        frame.select(pl.col("relevance").ranking.ndcg(3, ideal=[3.0, float("nan")]))
    # a null ideal or count would read as no judgment (0 where evaluate leaves the query out): refused
    frame = pl.DataFrame({"relevance": [1], "ideal": [None], "r": [None]},
                         schema={"relevance": pl.Int64, "ideal": pl.List(pl.Int64), "r": pl.Int64})
    for form in (pl.col("relevance").ranking.ndcg(ideal="ideal"), pl.col("relevance").ranking.recall(r="r")):
        with pytest.raises(pl.exceptions.PolarsError, match=r"ideal=, r= or n= is null for a ranking \(1 null\)"):
            frame.select(form)


def test_the_readmes_namespace_route_gives_evaluates_numbers(tmp_path, monkeypatch):
    """The README's second Python block (with_judgments and the namespace), run on the sample's
    run and judgments, gives the evaluate call its last line names."""
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    code = re.findall(r"```python\n(.*?)```", readme, flags=re.S)[1].strip().splitlines()
    run, qrels = rp.datasets.split_judgments(rp.datasets.sample_log())
    (tmp_path / "logs").mkdir()
    run.write_parquet(tmp_path / "logs" / "part-0.parquet")
    qrels.write_parquet(tmp_path / "qrels.parquet")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"pl": pl, "rp": rp}
    exec("\n".join(code[:-2]), namespace)  # noqa: S102
    got = eval(code[-2], namespace).sort("model")  # noqa: S307
    assert code[-1].startswith("# the numbers of rp.evaluate(")
    want = eval(code[-1].removeprefix("# the numbers of "), namespace)  # noqa: S307
    assert got["queries"].to_list() == want["queries"].to_list() == [200, 200]
    for name in ("ndcg@10", "ap"):
        assert got[name].to_list() == pytest.approx(want[name].to_list(), abs=1e-12)


def test_every_context_reads_the_judgments_alike():
    """The with-judgments forms in group_by, the streaming engine, over and select give one value."""
    log = pl.DataFrame({"query": ["a", "a", "a", "b", "b"], "item": ["x", "y", "z", "x", "w"], "position": [1, 2, 3, 1, 2]})
    qrels = pl.DataFrame({"query": ["a", "a", "a", "b", "b"], "item": ["y", "v", "z", "w", "u"], "relevance": [2, 3, 0, 1, 0]})
    attached = rp.with_judgments(log, qrels)
    ranked = pl.col("relevance").sort_by("position")
    forms = [ranked.ranking.ndcg(2, ideal="ideal"), ranked.ranking.bpref(ideal="ideal", n="num_nonrel"),
             ranked.ranking.recall(r="num_rel")]
    want = rp.evaluate(log, ["ndcg@2", "bpref", "r"], qrels=qrels, per_query=True).sort("query")
    grouped = attached.group_by("query").agg(forms).sort("query")
    streamed = attached.lazy().group_by("query").agg(forms).collect(engine="streaming").sort("query")
    over = attached.select("query", *(f.over("query") for f in forms)).unique().sort("query")
    one = attached.filter(pl.col("query") == "a").select(forms)
    flat = [v for row in want.drop("query").rows() for v in row]
    for got in (grouped, streamed, over):
        assert [v for row in got.drop("query").rows() for v in row] == pytest.approx(flat, abs=1e-12)
    assert one.row(0) == pytest.approx(want.row(0)[1:], abs=1e-12)


def test_one_judges_labels_of_judgments_with_several():
    """judge= gives evaluate(..., judge=...)'s numbers; several judges without it are refused,
    as evaluate refuses them (their rows are no one label set)."""
    log = rp.datasets.sample_log().drop("relevance")
    judgments = rp.datasets.sample_judgments()
    ranked = pl.col("relevance").sort_by("position")
    for who in ("people", "llm"):
        attached = rp.with_judgments(log, judgments, by="model", judge=who)
        per = attached.group_by("model", "query").agg(ranked.ranking.ndcg(10, ideal="ideal"),
                                                      ranked.ranking.ap(ideal="ideal"))
        got = per.group_by("model").agg(pl.len().alias("queries"), pl.col("ndcg@10", "ap").mean()).sort("model")
        # a plain mean here, evaluate's exact one there: equal to the last bits or so
        assert_frame_equal(got, rp.evaluate(log, ["ndcg@10", "ap"], qrels=judgments, judge=who, by="model"),
                           rel_tol=1e-13, abs_tol=1e-15)
    with pytest.raises(rp.RankPolarsError, match=r"holds 2 judges \('llm', 'people'\): choose one with judge="):
        rp.with_judgments(log, judgments, by="model")
