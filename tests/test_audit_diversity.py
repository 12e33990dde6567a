"""Adversarial cases of the diversity family (ndeval's measures) found by an audit: each test
failed before its fix.  Expected values come from pyndeval (ndeval.c) or from ndeval's
definitions written out below in plain Python, never from rank_polars' own output."""

from __future__ import annotations

import math
import re

import duckdb
import polars as pl
import pyndeval
import pytest

import rank_polars as rp
from rank_polars.measures import parse

from .sql_cases import sql_frame

ENGINES = ["polars", "duckdb"]


def _pyndeval(judgments: list[tuple], ranked: list[tuple], measures: list[str], **kw) -> dict:
    """pyndeval's values per query; ``ranked``: (query, docno, score) with distinct scores
    (pyndeval and rank_polars order ties differently)."""
    return pyndeval.RelevanceEvaluator(judgments, measures, **kw).evaluate(sorted(ranked))


def _to_sql(run: pl.DataFrame, subtopics: pl.DataFrame, names: list[str]) -> pl.DataFrame:
    """``rank_polars.to_sql`` of ``names`` (judgments named ``subs``) run in DuckDB, per query."""
    con = duckdb.connect()
    con.register("logs", run.to_arrow())
    con.register("subs", subtopics.to_arrow())
    specs = [parse(n).replace(subtopics="subs") for n in names]
    got = sql_frame(con, rp.to_sql(specs, table="logs", per_query=True))
    return got.rename({repr(s): n for s, n in zip(specs, names)})


# -- the greedy ideal's ties with integer item ids --------------------------------------------

# Items 10 {1, 2}, 8 {3, 4} and 9 {1, 3} all gain 2 at the ideal's first rank.  ndeval breaks
# the tie by strcmp (the larger docno: "9"), which leaves 10 and 8 at 1.5 each (2, 1.5, 1.5);
# the largest integer (10) would leave 8 at 2 (2, 2, 1): another ideal, another alpha-nDCG.
TIED = [("1", "1", "10", 1), ("1", "2", "10", 1), ("1", "3", "8", 1), ("1", "4", "8", 1), ("1", "1", "9", 1),
        ("1", "3", "9", 1)]
TIED_RUN = [("1", "10", 3.0), ("1", "8", 2.0), ("1", "9", 1.0)]
TIED_NAMES = {"alpha-nDCG@3": "alpha_ndcg@3", "nERR-IA@3": "nerr_ia@3", "nNRBP": "nnrbp"}


def _tied_frames(ids: pl.DataType) -> tuple[pl.DataFrame, pl.DataFrame]:
    subtopics = pl.DataFrame(TIED, schema=["query", "subtopic", "item", "relevance"], orient="row")
    run = pl.DataFrame({"query": ["1"] * 3, "item": [r[1] for r in TIED_RUN], "position": [1, 2, 3]})
    return run.with_columns(pl.col("item").cast(ids)), subtopics.with_columns(pl.col("item").cast(ids))


@pytest.mark.parametrize("engine", [*ENGINES, "to_sql"])
def test_integer_item_ids_break_ideal_ties_by_their_text(engine: str) -> None:
    """ndeval's greedy ideal breaks a tie by the larger docno as text (strcmp), as the run's
    order by score does (the item id's text): integer ids gave the larger number instead, so
    the same judgments scored otherwise as Int64 than as String (found by the audit)."""
    want = _pyndeval(TIED, TIED_RUN, list(TIED_NAMES))["1"]
    assert want["alpha-nDCG@3"] != pytest.approx(1.0)  # the tie decides the value here
    for ids in (pl.String, pl.Int64):
        run, subtopics = _tied_frames(ids)
        names = list(TIED_NAMES.values())
        if engine == "to_sql":
            got = _to_sql(run, subtopics, names).row(0, named=True)
        else:
            got = rp.evaluate(run, names, qrels=subtopics, per_query=True, engine=engine).row(0, named=True)
        for theirs, ours in TIED_NAMES.items():
            assert got[ours] == pytest.approx(want[theirs], abs=1e-12), (ids, ours)


# -- subtopic judgments on the spec -------------------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
def test_text_grades_on_the_spec_are_refused_naming_the_column(engine: str) -> None:
    """Grades read as text (a CSV without a schema) on ``subtopics=``: a raw ComputeError in
    Polars and a BinderException in DuckDB before; now the message qrels= gives."""
    subtopics = pl.DataFrame({"query": ["1", "1"], "subtopic": [1, 2], "item": ["x", "y"], "relevance": ["1", "0"]})
    run = pl.DataFrame({"query": ["1", "1"], "item": ["x", "y"], "position": [1, 2]})
    spec = parse("alpha_ndcg@5").replace(subtopics=subtopics)
    with pytest.raises(rp.RankPolarsError, match=r"subtopic judgments: column 'relevance' must be numeric, got String"):
        rp.evaluate(run, [spec], engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_an_ndeval_file_on_the_spec_is_read_as_subtopic_judgments(engine: str, tmp_path) -> None:
    """An ndeval qrels file given as ``subtopics=`` is read by its content, as given as
    ``qrels=``: it was read as TREC qrels (the subtopic taken for trec_eval's unused second
    column), refused for lacking a subtopic column or for 'duplicate docs'."""
    judgments = [("1", "1", "x", 1), ("1", "2", "x", 1), ("1", "2", "y", 2), ("1", "3", "z", 0), ("2", "1", "w", 1)]
    path = tmp_path / "qrels.txt"
    path.write_text("".join(f"{q} {s} {d} {g}\n" for q, s, d, g in judgments))
    ranked = [("1", "y", 3.0), ("1", "x", 2.0), ("1", "u", 1.0), ("2", "w", 1.0)]
    run = pl.DataFrame({"query": [r[0] for r in ranked], "item": [r[1] for r in ranked], "position": [1, 2, 3, 1]})
    want = _pyndeval(judgments, ranked, ["alpha-nDCG@5", "strec@1"])
    for given in (path, str(path)):
        specs = [parse("alpha_ndcg@5").replace(subtopics=given), parse("strec@1").replace(subtopics=given)]
        got = rp.evaluate(run, specs, per_query=True, engine=engine).sort("query")
        assert got["query"].to_list() == ["1", "2"]
        assert got[repr(specs[0])].to_list() == pytest.approx([want[q]["alpha-nDCG@5"] for q in "12"], abs=1e-12)
        assert got[repr(specs[1])].to_list() == pytest.approx([want[q]["strec@1"] for q in "12"], abs=1e-12)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("on_spec", [False, True])
@pytest.mark.parametrize("subtopic, dtype", [([[1, 2], [2], [1]], "List(Int64)"),
                                             ([{"s": 1}, {"s": 2}, {"s": 1}], "Struct({'s': Int64})")])
def test_a_subtopic_column_of_lists_is_refused(engine: str, on_spec: bool, subtopic: list, dtype: str) -> None:
    """An item's intents as one list per row (``[1, 2]``) were each taken for one opaque
    subtopic: x serving 1 and 2 after y serving 2 scored alpha-nDCG 1.0, where ndeval's is
    0.84 (the list exploded).  Refused, as a list of ids is, naming the column."""
    subtopics = pl.DataFrame({"query": ["1", "1", "2"], "subtopic": subtopic, "item": ["x", "y", "z"],
                              "relevance": [1, 1, 1]})
    run = pl.DataFrame({"query": ["1", "1", "2"], "item": ["y", "x", "z"], "position": [1, 2, 1]})
    metrics, qrels = (([parse("alpha_ndcg@5").replace(subtopics=subtopics)], subtopics.drop("subtopic")) if on_spec
                      else (["alpha_ndcg@5"], subtopics))
    with pytest.raises(rp.RankPolarsError, match=rf"subtopic judgments: column 'subtopic' \(subtopic id\) is "
                                                 rf"{re.escape(dtype)}; it must hold one text or number per row"):
        rp.evaluate(run, metrics, qrels=qrels, engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_queries_without_subtopic_judgments_on_the_spec_are_told(engine: str) -> None:
    """Judgments on the spec, no qrels: every query of the run is evaluated, and one without a
    subtopic judgment scored 0 and counted in the mean, silently, where ndeval leaves such a
    topic out (and qrels= the same judgments warns and leaves it out).  Now a CoverageWarning
    names it; the values stay those of the definitions (0 for that query)."""
    subtopics = pl.DataFrame({"query": ["1", "1", "2"], "subtopic": [1, 2, 1], "item": ["x", "y", "z"],
                              "relevance": [1, 1, 0]})
    run = pl.DataFrame({"query": ["1", "1", "2", "3"], "item": ["y", "x", "z", "w"], "position": [1, 2, 1, 1]})
    spec = parse("strec@1").replace(subtopics=subtopics)
    with pytest.warns(rp.CoverageWarning, match=r"strec@1: 1 evaluated queries have no subtopic judgments and score "
                                                r"0, counted in the means \(ndeval leaves such a topic out\), e.g. '3'"):
        got = rp.evaluate(run, [spec], per_query=True, engine=engine).sort("query")
    assert got[repr(spec)].to_list() == [0.5, 0.0, 0.0]  # query 2: judged, nothing relevant; 3: unjudged
    with pytest.warns(rp.CoverageWarning, match=r"1 queries of the qrels have no subtopic judgments.*e.g. '3'"):
        rp.evaluate(run, [spec], qrels=subtopics.vstack(pl.DataFrame(
            {"query": ["3"], "subtopic": [1], "item": ["w"], "relevance": [0]})).drop("subtopic"), engine=engine)


# -- risk-sensitive values ---------------------------------------------------------------------


@pytest.mark.parametrize("missing", ["zero", "skip"])
def test_risk_with_query_ids_of_two_types_says_so(missing: str) -> None:
    """A baseline read elsewhere with integer query ids: a raw SchemaError before."""
    from rank_polars.dropins.risk import risk

    run = pl.DataFrame({"query": ["1", "2"], "ndcg@20": [0.5, 0.2]})
    base = pl.DataFrame({"query": [1, 3], "ndcg@20": [0.3, 0.4]})
    with pytest.raises(rp.RankPolarsError, match=r"risk: the query column 'query' is String in values but Int64 "
                                                 r"in the baseline"):
        risk(run, base, alpha=1.0, missing=missing)


@pytest.mark.parametrize("side", ["values", "baseline"])
@pytest.mark.parametrize("bad", [None, math.nan, math.inf])
def test_risk_refuses_an_undefined_value_rather_than_scoring_it_0(side: str, bad: float | None) -> None:
    """A null per-query value (ctr@k of a ranking with nothing in its top k) was filled with 0:
    a made-up loss (here -0.5 x 2 = -1.0 for query 1) or win; a NaN or infinity spread."""
    from rank_polars.dropins.risk import risk

    good = pl.DataFrame({"query": ["1", "2"], "ndcg@20": [0.5, 0.2]})
    hole = pl.DataFrame({"query": ["1", "2"], "ndcg@20": [bad, 0.2]}, schema=good.schema)
    run, base = (hole, good) if side == "values" else (good, hole)
    with pytest.raises(rp.RankPolarsError, match=rf"risk: column 'ndcg@20' of {side} has 1 null, NaN or infinite"):
        risk(run, base, alpha=1.0, missing="skip")


def test_risk_refuses_an_infinite_alpha() -> None:
    """alpha=inf made every loss -inf (and a tie 0 x inf, NaN)."""
    from rank_polars.dropins.risk import risk

    run = pl.DataFrame({"query": ["1"], "ndcg@20": [0.5]})
    with pytest.raises(rp.RankPolarsError, match="alpha must be a finite number"):
        risk(run, run, alpha=math.inf)


def test_risk_without_by_on_a_grouped_table_names_the_group_column() -> None:
    """Values per (model, query) without ``by=``: the group column was taken for a metric
    ("the baseline has no column 'model'"); a baseline of that column would have gone on."""
    from rank_polars.dropins.risk import risk

    run = pl.DataFrame({"model": ["a", "b"], "query": ["1", "1"], "ndcg@20": [0.5, 0.2]})
    base = pl.DataFrame({"query": ["1"], "ndcg@20": [0.3]})
    with pytest.raises(rp.RankPolarsError, match=r"risk: values' column 'model' \(String\) is not a metric; name "
                                                 r"the group columns with by="):
        risk(run, base, alpha=1.0)
    with pytest.raises(rp.RankPolarsError, match=r"risk: values has more than one row for query '1'"):
        risk(run.drop("model"), base, alpha=1.0)
    with pytest.raises(rp.RankPolarsError, match=r"risk: values has no group column 'version' \(by=\)"):
        risk(run, base, alpha=1.0, by="version")  # a raw ColumnNotFoundError before


# -- ndeval's definitions in plain Python: any cutoff (pyndeval stops at 20), any id type -----


def _definitions(judged: list[tuple], ranked: list, alpha: float, beta: float, k: int) -> dict[str, float]:
    """ndeval's measures of one ranking (``ranked``: its items in rank order) given its query's
    judgments ``(subtopic, item, grade)``, written from ndeval's definitions (docs/diversity.md):
    a grade above 0 is relevant, |S| the subtopics with a relevant item, the greedy ideal's
    ties to the larger item id as text, ``alpha_dcg@1`` / ``err_ia@1`` undivided."""
    serves: dict = {}
    for sub, item, grade in judged:
        if grade > 0:
            serves.setdefault(item, set()).add(sub)
    subtopics = sorted({s for subs in serves.values() for s in subs})
    names = ["alpha_dcg", "alpha_ndcg", "err_ia", "nerr_ia", "p_ia", "strec", "nrbp", "nnrbp", "map_ia"]
    if not subtopics:
        return dict.fromkeys(names, 0.0)

    def gains(order: list) -> list[float]:
        seen = dict.fromkeys(subtopics, 0)
        out = []
        for item in order:
            out.append(sum((1 - alpha) ** seen[s] for s in sorted(serves.get(item, ()))))
            for s in serves.get(item, ()):
                seen[s] += 1
        return out

    ideal: list = []
    left = set(serves)
    while left:  # ndeval's greedy ideal: the best gain given the items placed, ties to the larger text
        best = max(left, key=lambda item: (gains([*ideal, item])[-1], str(item)))
        ideal.append(best)
        left.remove(best)
    run, top = gains(ranked), gains(ideal)
    n = len(subtopics)
    dcg = lambda g: sum(x / math.log2(i + 2) for i, x in enumerate(g[:k]))
    err = lambda g: sum(x / (i + 1) for i, x in enumerate(g[:k]))
    rbp = lambda g: sum(x * beta**i for i, x in enumerate(g))
    every_dcg = n * sum((1 - alpha) ** i / math.log2(i + 2) for i in range(k)) if k > 1 else 1.0
    every_err = n * sum((1 - alpha) ** i / (i + 1) for i in range(k)) if k > 1 else 1.0
    ap = 0.0
    for s in subtopics:
        hits, total = 0, 0.0
        for i, item in enumerate(ranked):
            if s in serves.get(item, ()):
                hits += 1
                total += hits / (i + 1)
        ap += total / sum(s in subs for subs in serves.values())
    return {
        "alpha_dcg": dcg(run) / every_dcg, "alpha_ndcg": dcg(run) / dcg(top) if dcg(run) else 0.0,
        "err_ia": err(run) / every_err, "nerr_ia": err(run) / err(top) if err(run) else 0.0,
        "p_ia": sum(len(serves.get(item, ())) for item in ranked[:k]) / (k * n),
        "strec": len(set().union(*[serves.get(item, set()) for item in ranked[:k]])) / n,
        "nrbp": (1 - (1 - alpha) * beta) / n * rbp(run), "nnrbp": rbp(run) / rbp(top) if rbp(run) else 0.0,
        "map_ia": ap / n,
    }


def _generated(ids: pl.DataType, seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Subtopic judgments (grades 0-2, a subtopic without a relevant item, a query whose grades
    are all 0, an item serving several subtopics) and a run of two versions (one lacking a
    query, unjudged items, lists of 1 to 30), items as ``ids``."""
    import random

    rng = random.Random(seed)
    judged, shown = [], []
    for q in range(6):
        items = list(range(1, rng.randint(2, 30)))
        for s in range(1, rng.randint(1, 4) + 1):
            for item in rng.sample(items, rng.randint(0, len(items))):
                judged.append((f"q{q}", s, item, 0 if q == 5 else rng.choice([0, 1, 1, 2])))
        for model in ("a", "b"):
            if model == "b" and q == 2:
                continue  # a version lacking a query
            order = rng.sample(items + [100 + q, 200 + q], rng.randint(1, len(items) + 2))
            shown += [(model, f"q{q}", item, i + 1) for i, item in enumerate(order)]
    subtopics = pl.DataFrame(judged, schema=["query", "subtopic", "item", "relevance"], orient="row")
    run = pl.DataFrame(shown, schema=["model", "query", "item", "position"], orient="row")
    return (run.with_columns(pl.col("item").cast(ids)), subtopics.with_columns(pl.col("item").cast(ids)))


@pytest.mark.parametrize("ids", [pl.String, pl.Int64])
@pytest.mark.parametrize("alpha, beta", [(0.5, 0.5), (0.3, 0.9), (1.0, 0.0), (0.0, 1.0)])
def test_every_engine_equals_the_definitions_at_any_cutoff(ids: pl.DataType, alpha: float, beta: float) -> None:
    """Cutoffs 1 (ndeval's undivided @1), 2, 25 and 50 (deeper than ndeval's 20 and than most
    lists), every measure with two parameter sets and ndcg@10 in one call, ``by=`` a version
    lacking a query: Polars, DuckDB and to_sql against ndeval's definitions in plain Python."""
    run, subtopics = _generated(ids, seed=int(alpha * 10 + beta * 100))
    params = f"(alpha={alpha}, beta={beta})"
    kinds = ["alpha_dcg", "alpha_ndcg", "err_ia", "nerr_ia", "p_ia", "strec"]
    names = ([f"{m}{params.replace(f', beta={beta}', '')}@{k}" for m in kinds for k in (1, 2, 25, 50)]
             + [f"nrbp{params}", f"nnrbp{params}", "map_ia", "alpha_ndcg@5"])
    judged: dict = {}
    for q, s, item, grade in subtopics.iter_rows():
        judged.setdefault(q, []).append((s, item, grade))
    lists: dict = {}
    for model, q, item, _ in run.sort("position").iter_rows():
        lists.setdefault((model, q), []).append(item)
    con = duckdb.connect()
    con.register("logs", run.to_arrow())
    con.register("subs", subtopics.to_arrow())
    con.register("judged", subtopics.group_by("query", "item").agg(pl.col("relevance").max()).to_arrow())
    specs = [parse(n).replace(subtopics="subs") for n in names]
    sql = rp.to_sql([*specs, "ndcg@10"], table="logs", qrels="judged", by="model", per_query=True)
    tables = {engine: rp.evaluate(run, [*names, "ndcg@10"], qrels=subtopics, by="model", per_query=True,
                                  engine=engine).sort("model", "query") for engine in ENGINES}
    tables["to_sql"] = sql_frame(con, sql).rename({repr(s): n for s, n in zip(specs, names)}).sort("model", "query")
    keys = {(m, q) for m in ("a", "b") for q in judged if (m, q) != ("b", "q2")} | {("b", "q2")}
    for engine, table in tables.items():
        assert set(table.select("model", "query").iter_rows()) == keys, engine
        assert table["ndcg@10"].to_list() == pytest.approx(tables["polars"]["ndcg@10"].to_list(), abs=1e-12)
        for row in table.iter_rows(named=True):
            for name in names:
                kind, _, k = name.partition("@")
                kind = kind.split("(")[0]
                a, b = (0.5, 0.5) if name == "alpha_ndcg@5" else (alpha, beta)
                want = _definitions(judged[row["query"]], lists.get((row["model"], row["query"]), []), a, b,
                                    int(k) if k else 1)[kind]
                assert row[name] == pytest.approx(want, abs=1e-9), (engine, row["model"], row["query"], name)


@pytest.mark.parametrize("dialect", ["spark", "postgres", "trino"])
def test_to_sql_names_the_dialect_the_diversity_measures_are_written_in(dialect: str) -> None:
    """Other dialects failed with the translation's generic message ("does not survive
    translation", "cannot be expressed"), naming neither the measure nor why."""
    from rank_polars.measures.diversity import AlphaNDCG

    with pytest.raises(rp.RankPolarsError, match=rf"alpha_ndcg@20: to_sql writes these measures for duckdb only .* not '{dialect}'"):
        rp.to_sql([AlphaNDCG(20, subtopics="subs"), "ndcg@10"], table="logs", qrels="q", dialect=dialect)
