"""Bounded memory where the Polars engine counts per ranking over every row: the same numbers
and the same errors when the work runs range by range of query ids.

At 200M rows, a pass that counted distinct positions and items over every row (any measure
family, a run ordered by score, ``checks="strict"``) held 17.6 GiB, and a CTR was killed at
18 GiB; ``alpha_ndcg@20`` held 17.2 GiB.  The distinct counts are now counted after the pass,
range by range (``validate.DISTINCT_ROWS``, and always when the run's size is not known
beforehand: a LazyFrame), and the diversity measures run range by range
(``diversity.plan.RANGE_ROWS``).  Here the budgets are forced down to a few rows so that small logs
are cut into many ranges; the reference is the same call in one pass, which the other test
files check against pyndeval, trec_eval and the DuckDB engine.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, Phase, given, settings

import rank_polars as rp
from rank_polars import validate
from rank_polars.engines import polars_engine
from rank_polars.errors import DataError, RankPolarsError
from rank_polars.families import diversity
from rank_polars.plan import N_RET, Q

from .test_diversity import collections

LOG = pl.DataFrame({
    "model": ["m"] * 9 + [None] * 3,
    "query": ["q1", "q1", "q1", "q2", "q2", "q2", "q3", "q3", "q3", "q1", "q1", "q1"],
    "item": ["a", "b", "c", "a", "b", "c", "a", "b", "c", "a", "b", "c"],
    "position": [1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3],
    "score": [3.0, 2.0, 1.0] * 4,
    "click": [1, 0, 1, 0, 0, 1, 1, 1, 0, 0, 1, 0],
})
QRELS = pl.DataFrame({"query": ["q1", "q2", "q3", "q3"], "item": ["a", "c", "b", "c"], "relevance": [1, 2, 1, 1]})

# (what makes the pass count over every row, the call's keywords, the run's columns)
EVERY_ROW = {
    "a measure family": (["ctr@3", "clicks@3"], {}, ["position", "click"]),
    "order by score": (["ndcg@3", "ap"], {"qrels": QRELS}, ["score"]),
    'checks="strict"': (["ndcg@3", "p@2"], {"qrels": QRELS, "checks": "strict"}, ["position"]),
}


def _quiet(*args, **kwargs) -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rp.CoverageWarning)
        return rp.evaluate(*args, **kwargs)


def _ranged(run: pl.DataFrame, metrics: list[str], **kwargs) -> tuple[pl.DataFrame | Exception, int]:
    """The call with the distinct counts cut into ranges of 2 rows: its result (or error) and
    the number of range passes it ran."""
    counted: list[int] = []
    original = polars_engine.distinct_counts

    def spy(stats, inputs, names, plan, collect, only=None):
        def counting(lf):
            counted.append(1)
            return collect(lf)
        return original(stats, inputs, names, plan, counting, only)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(validate, "DISTINCT_ROWS", 2)  # the documented knob; the engine reads its own name
        m.setattr(polars_engine, "DISTINCT_ROWS", 2)
        m.setattr(polars_engine, "distinct_counts", spy)
        try:
            return _quiet(run, metrics, **kwargs), len(counted)
        except RankPolarsError as e:
            return e, len(counted)


def _fault(log: pl.DataFrame, fault: str) -> pl.DataFrame:
    if fault == "none":
        return log
    if fault == "an item shown twice":  # q2's "c" becomes "b" (q2's "c" is relevant, judged and clicked)
        return log.with_columns(item=pl.when((pl.col("query") == "q2") & (pl.col("item") == "c")).then(pl.lit("b"))
                                .otherwise(pl.col("item")))
    # two rows at one position, in q3 and in the null model's q1
    return log.with_columns(position=pl.when(pl.col("position") == 3).then(2).otherwise(pl.col("position")),
                            score=pl.when(pl.col("score") == 1.0).then(2.0).otherwise(pl.col("score")))


@pytest.mark.parametrize("fault", ["none", "an item shown twice", "two rows at one position"])
@pytest.mark.parametrize("case", list(EVERY_ROW))
@pytest.mark.parametrize("lazy", [False, True])
def test_distinct_counts_in_ranges_equal_one_pass(case: str, fault: str, lazy: bool) -> None:
    metrics, kwargs, columns = EVERY_ROW[case]
    run = _fault(LOG, fault).select("model", "query", "item", *columns)
    try:
        expected: pl.DataFrame | Exception = _quiet(run, metrics, by="model", per_query=True, **kwargs)
    except RankPolarsError as e:
        expected = e
    got, passes = _ranged(run.lazy() if lazy else run, metrics, by="model", per_query=True, **kwargs)
    # a DataFrame of 12 rows over the budget of 2, or a LazyFrame (size unknown): ranged
    assert passes >= 2
    if isinstance(expected, Exception):
        assert type(got) is type(expected) and str(got) == str(expected)
    else:
        assert isinstance(got, pl.DataFrame)
        assert got.sort("model", "query", nulls_last=True).equals(expected.sort("model", "query", nulls_last=True))
    if case == "order by score" and fault == "two rows at one position":
        assert isinstance(expected, pl.DataFrame)  # ties in score are no fault: trec_eval breaks them by item
    elif fault != "none":
        assert isinstance(expected, DataError)


def test_a_known_small_run_counts_in_the_one_pass() -> None:
    """A DataFrame or Parquet file within the budget: the distinct counts stay in the pass over
    every row (no extra read of the run)."""
    calls: list[int] = []

    def spy(stats, *args):
        calls.append(1)
        return stats

    with pytest.MonkeyPatch.context() as m:
        m.setattr(polars_engine, "distinct_counts", spy)
        _quiet(LOG, ["ctr@3"], by="model")
    assert calls == []


def _diversity(data: tuple, budget: int | None) -> tuple[pl.DataFrame | Exception, int]:
    """The diversity measures with ranges of ``budget`` run rows: the result (or error) and
    the number of ranges."""
    qrels, run = data
    seen: list[int] = []
    original = diversity.plan._ranges

    def spy(universe):
        ranges = original(universe)
        # a log is cut unless it holds at most the budget or one query
        held = universe.filter(pl.col(N_RET) > 0)
        assert len(ranges) > 1 or held[N_RET].sum() <= (budget or 10**9) or held[Q].n_unique() == 1
        seen.append(len(ranges))
        return ranges

    frame = pl.DataFrame(run, schema={"model": pl.String, "query": pl.String, "item": pl.String, "score": pl.Float64},
                         orient="row")
    subtopics = pl.DataFrame(qrels, schema={"query": pl.String, "subtopic": pl.String, "item": pl.String,
                                            "relevance": pl.Int64}, orient="row")
    names = ["alpha_ndcg@5", "nerr_ia@3", "nnrbp", "map_ia", "p_ia@2", "strec@4", "alpha_dcg(alpha=0.3)@10"]
    with pytest.MonkeyPatch.context() as m:
        m.setattr(diversity.plan, "_ranges", spy)
        if budget is not None:
            m.setattr(diversity.plan, "RANGE_ROWS", budget)
        try:
            return _quiet(frame, names, qrels=subtopics, by="model", per_query=True), max(seen, default=0)
        except RankPolarsError as e:
            return e, max(seen, default=0)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=[Phase.explicit, Phase.generate])
@given(data=collections())
def test_diversity_in_ranges_equals_one_pass(data: tuple) -> None:
    (expected, one), (got, ranges) = _diversity(data, None), _diversity(data, 3)
    assert isinstance(expected, pl.DataFrame) and isinstance(got, pl.DataFrame)
    assert one == 1 and ranges >= 1
    assert got.sort("model", "query").equals(expected.sort("model", "query"))


@pytest.mark.parametrize("bad, message", [
    # repeats in two queries that land in different ranges: the count is the whole table's
    ({"item": ["x", "x", "y", "y"], "subtopic": [1, 1, 2, 2]}, "2 repeated (query, subtopic, item) rows"),
    ({"relevance": [-1, 1, -1, 1]}, "2 rows, e.g. queries ['1', '3']"),
    ({"query": [None, "1", "3", "3"]}, "1 rows with a null query"),
])
def test_subtopic_checks_in_ranges_count_the_whole_table(bad: dict, message: str) -> None:
    subtopics = pl.DataFrame({"query": ["1", "1", "3", "3"], "subtopic": [1, 2, 1, 2], "item": ["x", "y", "x", "y"],
                              "relevance": [1, 1, 1, 1]})
    subtopics = subtopics.with_columns(pl.Series(k, v) for k, v in bad.items())
    run = pl.DataFrame({"query": ["1", "1", "2", "3", "3"], "item": ["x", "y", "z", "x", "y"], "position": [1, 2, 1, 1, 2]})
    spec = rp.measures.parse("alpha_ndcg@5").replace(subtopics=subtopics)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(diversity.plan, "RANGE_ROWS", 1)
        with pytest.raises(RankPolarsError, match="subtopic judgments") as ranged:
            _quiet(run, [spec])
    with pytest.raises(RankPolarsError, match="subtopic judgments") as whole:
        _quiet(run, [spec])
    assert message in str(whole.value)
    assert str(ranged.value) == str(whole.value)


@pytest.mark.parametrize("fault", ["none", "an item shown twice", "two rows at one position"])
@pytest.mark.parametrize("case", list(EVERY_ROW))
def test_sql_distinct_statements_equal_polars(case: str, fault: str) -> None:
    """The SQL engines count the repeats over every row in statements of their own
    (``sql_engine.distinct_sql``, plain counts DuckDB spills): the Polars engine's numbers and errors."""
    metrics, kwargs, columns = EVERY_ROW[case]
    run = _fault(LOG, fault).select("model", "query", "item", *columns)
    results = []
    for engine in ("polars", "duckdb"):
        try:
            results.append(_quiet(run, metrics, by="model", per_query=True, engine=engine, **kwargs)
                           .sort("model", "query", nulls_last=True))
        except RankPolarsError as e:
            results.append(e)
    polars, duckdb = results
    if isinstance(polars, Exception):
        assert type(duckdb) is type(polars) and str(duckdb) == str(polars)
    else:
        assert isinstance(duckdb, pl.DataFrame)
        for label in metrics:
            assert (duckdb[label] - polars[label]).abs().max() <= 1e-12


# The SQL engines: past diversity.sql.SQL_RANGE_ROWS run rows the diversity statement runs once per
# range of query ids (DuckDB at 200M rows ran out of its default 1.5 GiB in one statement)

DIVERSITY = ["alpha_ndcg@5", "alpha_ndcg@20", "err_ia@20", "nerr_ia@3", "nnrbp", "nrbp", "map_ia", "p_ia@2",
             "strec@4", "alpha_dcg(alpha=0.3)@10", "alpha_ndcg(judged_only=true)@5", "p_ia(rel=2)@5"]


def _sql_diversity(data: tuple, budget: int | None, engine: str = "duckdb",
                   **kwargs) -> tuple[pl.DataFrame | Exception, list[int]]:
    """The diversity measures in a SQL engine, the statement cut into ranges of ``budget`` run
    rows (None: the default budget, one statement): the result (or error), and the number of
    statements each call of the family ran."""
    qrels, run = data
    statements: list[int] = []
    original = diversity.sql_values

    def spy(outputs, tables):
        got = original(outputs, tables)
        statements.append(1 if isinstance(got, str) else len(got))
        return got

    frame = pl.DataFrame(run, schema={"model": pl.String, "query": pl.String, "item": pl.String, "score": pl.Float64},
                         orient="row")
    subtopics = pl.DataFrame(qrels, schema={"query": pl.String, "subtopic": pl.String, "item": pl.String,
                                            "relevance": pl.Int64}, orient="row")
    with pytest.MonkeyPatch.context() as m:
        m.setattr(diversity, "sql_values", spy)
        if budget is not None:
            m.setattr(diversity.sql, "SQL_RANGE_ROWS", budget)
        try:
            got = _quiet(frame, DIVERSITY, qrels=subtopics, by="model", per_query=True, engine=engine, **kwargs)
            return got.sort("model", "query"), statements
        except RankPolarsError as e:
            return e, statements


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=[Phase.explicit, Phase.generate])
@given(data=collections())
def test_sql_diversity_in_ranges_equals_one_statement(data: tuple) -> None:
    """Ranges of 3 run rows: the same bits per query as the one statement (a run ordered by
    score: the filter goes through the ranking window), and as many statements as ranges."""
    (expected, one), (got, ranged) = _sql_diversity(data, None), _sql_diversity(data, 3)
    assert isinstance(expected, pl.DataFrame) and isinstance(got, pl.DataFrame)
    assert one == [1] and len(ranged) == 1
    # the evaluated rankings' rows (the judged queries'): cut unless within the budget or one query
    judged = {q for q, _, _, _ in data[0]}
    held = [q for _, q, _, _ in data[1] if q in judged]
    assert ranged[0] > 1 or len(held) <= 3 or len(set(held)) == 1
    assert got.equals(expected)


def test_sql_diversity_ranges_follow_the_polars_rule() -> None:
    """The SQL ranges are the Polars engine's (one rule, ``polars_engine.query_bounds``), as SQL
    literals: text quoted, integers as they are."""
    from rank_polars.engines.polars_engine import bounds_of, ranges_of
    from rank_polars.engines.sql_engine import range_sql

    universe = pl.DataFrame({"__rp_by0": ["m"] * 6, Q: ["a", "b", "c'd", "e", "f", "g"], N_RET: [4, 4, 4, 4, 4, 4]})
    bounds = bounds_of(universe, 8)
    assert bounds == [(None, "c'd"), ("c'd", "f"), ("f", None)]
    assert [range_sql(lo, hi, '"q"') for lo, hi in bounds] == [
        "\"q\" < 'c''d'", "\"q\" >= 'c''d' AND \"q\" < 'f'", "\"q\" >= 'f'"]
    for part, (lo, hi) in zip(ranges_of(universe, 8), bounds):
        picked = universe.filter(part)[Q].to_list()
        assert picked == [q for q in universe[Q] if (lo is None or q >= lo) and (hi is None or q < hi)]
    numbers = universe.with_columns(pl.Series(Q, [10, 20, 30, 40, 50, 60]))
    assert [range_sql(lo, hi, "q") for lo, hi in bounds_of(numbers, 12)] == ["q < 40", "q >= 40"]
    assert bounds_of(universe, 24) == [(None, None)] and range_sql(None, None, "q") is None


def test_sql_diversity_with_integer_ids_in_ranges(tmp_path) -> None:
    """Integer query ids (a Parquet file read by DuckDB itself): ranges of integer literals."""
    subtopics = pl.DataFrame({"query": [1, 1, 2, 3, 3, 4], "subtopic": [1, 2, 1, 1, 2, 1],
                              "item": ["x", "y", "z", "x", "y", "w"], "relevance": [1, 1, 1, 2, 1, 1]})
    run = pl.DataFrame({"query": [1, 1, 2, 3, 3, 3, 4], "item": ["y", "x", "z", "x", "q", "y", "w"],
                        "position": [1, 2, 1, 1, 2, 3, 1]})
    paths = {}
    for name, frame in (("run", run), ("subtopics", subtopics)):
        paths[name] = str(tmp_path / f"{name}.parquet")
        frame.write_parquet(paths[name])
    names = ["alpha_ndcg@5", "map_ia", "strec@2", "nerr_ia@3"]
    polars = _quiet(run, names, qrels=subtopics, per_query=True).sort("query")
    got = []
    for budget in (None, 2):
        with pytest.MonkeyPatch.context() as m:
            if budget is not None:
                m.setattr(diversity.sql, "SQL_RANGE_ROWS", budget)
            got.append(_quiet(paths["run"], names, qrels=paths["subtopics"], per_query=True, engine="duckdb")
                       .sort("query"))
    assert got[1].equals(got[0])
    assert got[0]["query"].to_list() == polars["query"].to_list() == [1, 2, 3, 4]
    for name in names:
        assert (got[0][name] - polars[name]).abs().max() <= 1e-12, name


BAD_SUBTOPICS = [
    ({"item": ["x", "x", "y", "y"], "subtopic": [1, 1, 2, 2]}, "2 repeated (query, subtopic, item) rows"),
    ({"relevance": [-1, 1, -1, 1]}, "2 rows, e.g. queries ['1', '3']"),
    ({"query": [None, "1", "3", "3"]}, "1 rows with a null query"),
    ({"relevance": [1.0, float("nan"), float("inf"), 1.0]}, "2 rows with a NaN or infinite grade, e.g. queries ['1', '3']"),
]


@pytest.mark.parametrize("bad, message", BAD_SUBTOPICS)
def test_sql_subtopic_checks_in_ranges_equal_one_statement(bad: dict, message: str) -> None:
    """Bad subtopic judgments: DuckDB's message with the statement cut into ranges is the one
    statement's, counted over the whole table, and the Polars engine's (one wording,
    ``diversity.refuse_subtopics``; the examples from a SELECT DISTINCT of three query ids)."""
    subtopics = pl.DataFrame({"query": ["1", "1", "3", "3"], "subtopic": [1, 2, 1, 2], "item": ["x", "y", "x", "y"],
                              "relevance": [1, 1, 1, 1]})
    subtopics = subtopics.with_columns(pl.Series(k, v) for k, v in bad.items())
    run = pl.DataFrame({"query": ["1", "1", "2", "3", "3"], "item": ["x", "y", "z", "x", "y"], "position": [1, 2, 1, 1, 2]})
    spec = rp.measures.parse("alpha_ndcg@5").replace(subtopics=subtopics)
    errors = []
    for engine, budget in (("duckdb", 1), ("duckdb", None), ("polars", None)):
        with pytest.MonkeyPatch.context() as m:
            if budget is not None:
                m.setattr(diversity.sql, "SQL_RANGE_ROWS", budget)
            with pytest.raises(RankPolarsError, match="subtopic judgments") as e:
                _quiet(run, [spec], engine=engine)
        errors.append(str(e.value))
    ranged, whole, polars = errors
    assert message in whole
    assert ranged == whole
    if "repeated" in message:  # the Polars engine's examples of repeats come in no set order
        head, examples = polars.split("e.g. queries ")
        assert whole.startswith(head) and sorted(eval(examples)) == eval(whole.split("e.g. queries ")[1])
    else:
        assert whole == polars


def test_sql_subtopic_examples_are_three_queries_in_id_order() -> None:
    """Many bad queries: the count is every row's, the examples the first three ids (nulls last),
    as the Polars engine words them."""
    subtopics = pl.DataFrame({"query": [f"q{i}" for i in (5, 3, 9, 1, 7)] + [None], "subtopic": [1] * 6,
                              "item": ["x"] * 6, "relevance": [-1, -1, -1, -1, 1, None]})
    run = pl.DataFrame({"query": ["q1"], "item": ["x"], "position": [1]})

    def refused(judgments: pl.DataFrame) -> str:
        spec = rp.measures.parse("alpha_ndcg@5").replace(subtopics=judgments)
        messages = []
        for engine in ("duckdb", "polars"):
            with pytest.raises(RankPolarsError, match="subtopic judgments") as e:
                _quiet(run, [spec], engine=engine)
            messages.append(str(e.value))
        assert messages[0] == messages[1]
        return messages[0]

    assert "1 rows with a null query, subtopic, item or relevance, e.g. queries [None]" in refused(subtopics)
    assert refused(subtopics.filter(pl.col("query").is_not_null())).endswith("4 rows, e.g. queries ['q1', 'q3', 'q5']")


def test_sql_subtopic_errors_never_copy_the_table(monkeypatch) -> None:
    """The DuckDB checks' error path reads counts and three query ids, never the judgments'
    rows (a copy in Polars would hold a 200M-row table)."""
    subtopics = pl.DataFrame({"query": ["1", "1"], "subtopic": [1, 2], "item": ["x", "y"], "relevance": [-1, 1]})
    run = pl.DataFrame({"query": ["1"], "item": ["x"], "position": [1]})
    spec = rp.measures.parse("alpha_ndcg@5").replace(subtopics=subtopics)
    monkeypatch.setattr(diversity.checks, "check_subtopics", lambda *a, **k: pytest.fail("check_subtopics called"))
    from rank_polars.engines.duckdb_engine import DuckDBEngine

    shown: list[int] = []
    original = DuckDBEngine.query

    def query(self, sql):
        out = original(self, sql)
        shown.append(out.height)
        return out

    monkeypatch.setattr(DuckDBEngine, "query", query)
    with pytest.raises(RankPolarsError, match=r"must be >= 0 .* 1 rows, e\.g\. queries \['1'\]"):
        _quiet(run, [spec], engine="duckdb")
    assert max(shown) <= 3


def test_spark_diversity_in_ranges_equals_polars(spark_session) -> None:
    """Spark goes through the same statements (its greedy ideal computed per range by the Polars
    engine's code): cut into ranges of 2 run rows, the Polars engine's values."""
    qrels = pl.DataFrame(
        [("1", "s0", "d1", 1), ("1", "s1", "d2", 2), ("1", "s1", "d1", 1), ("1", "s2", "d3", 0), ("2", "s0", "d3", 1),
         ("2", "s1", "d1", 0), ("3", "s0", "d9", 1), ("4", "s0", "d1", 1), ("4", "s1", "d2", 1)],
        schema={"query": pl.String, "subtopic": pl.String, "item": pl.String, "relevance": pl.Int64}, orient="row")
    run = pl.DataFrame(
        [("a", "1", "d2", 1), ("a", "1", "d1", 2), ("a", "1", "x", 3), ("a", "2", "d1", 1), ("a", "2", "d3", 2),
         ("b", "1", "d1", 1), ("b", "4", "d1", 1), ("b", "4", "d2", 2), ("b", "3", "d9", 1)],
        schema={"model": pl.String, "query": pl.String, "item": pl.String, "position": pl.Int64}, orient="row")
    names = ["alpha_ndcg@3", "err_ia@20", "map_ia", "strec@2", "p_ia@2", "nnrbp"]
    want = _quiet(run, names, qrels=qrels, by="model", per_query=True).sort("model", "query")
    seen: list[int] = []
    original = diversity.sql._sql_ranges

    def spy(tables):
        ranges = original(tables)
        seen.append(len(ranges))
        return ranges

    with pytest.MonkeyPatch.context() as m:
        m.setattr(diversity.sql, "SQL_RANGE_ROWS", 2)
        m.setattr(diversity.sql, "_sql_ranges", spy)
        got = _quiet(run, names, qrels=qrels, by="model", per_query=True, engine="spark", spark=spark_session)
    assert seen and seen[0] > 1
    got = got.sort("model", "query")
    assert got.select("model", "query").equals(want.select("model", "query"))
    for name in names:
        assert (got[name] - want[name]).abs().max() <= 1e-12, name


@pytest.mark.parametrize("fault", ["none", "a repeated judgment"])
def test_subtopic_file_read_once_or_scanned_gives_the_same(tmp_path: Path, fault: str) -> None:
    """The Polars engine reads a subtopic file of at most ``diversity.checks.JUDGMENT_ROWS`` rows into
    memory once (its checks, judged queries and relevant pairs then read the frame); a larger
    file is scanned by each pass: the same values and the same error either way."""
    subtopics = pl.DataFrame({"query": ["1", "1", "1", "3", "3"], "subtopic": [1, 2, 2, 1, 2],
                              "item": ["x", "y", "z", "x", "y"], "relevance": [1, 2, 0, 1, 1]})
    if fault != "none":
        subtopics = pl.concat([subtopics, subtopics.head(1)])
    path = tmp_path / "subtopics.parquet"
    subtopics.write_parquet(path)
    run = pl.DataFrame({"query": ["1", "1", "2", "3", "3"], "item": ["x", "y", "z", "y", "x"], "position": [1, 2, 1, 1, 2]})
    names = ["alpha_ndcg@5", "nnrbp", "map_ia", "strec@2"]
    results = []
    for rows in (10**9, 0):
        with pytest.MonkeyPatch.context() as m:
            m.setattr(diversity.checks, "JUDGMENT_ROWS", rows)
            try:
                results.append(_quiet(run, names, qrels=str(path), per_query=True).sort("query"))
            except RankPolarsError as e:
                results.append(str(e))
    assert isinstance(results[0], pl.DataFrame) == (fault == "none"), results[0]
    assert results[0] == results[1] if isinstance(results[0], str) else results[0].equals(results[1])
