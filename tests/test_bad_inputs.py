"""A table of bad inputs, each with the error it must give (never a silent wrong number)."""

from __future__ import annotations

import polars as pl
import pytest

import rank_polars as rp
from rank_polars.errors import DataError, MetricNameError, RankPolarsError


def run(**overrides) -> pl.DataFrame:
    base = {
        "model": ["a", "a", "a", "b"],
        "query": ["q1", "q1", "q2", "q1"],
        "item": ["x", "y", "z", "x"],
        "position": [1, 2, 1, 1],
        "relevance": [1.0, 0.0, 1.0, 1.0],
    }
    base.update(overrides)
    return pl.DataFrame(base)


QRELS = pl.DataFrame({"query": ["q1", "q2"], "item": ["x", "z"], "relevance": [1, 2]})

CASES = [
    # (id, run, metrics, kwargs, error type, message fragments)
    ("unknown metric", run(), ["ndgc@10"], {}, MetricNameError, ["unknown metric 'ndgc@10'", "did you mean 'ndcg'"]),
    ("k zero", run(), ["ndcg@0"], {}, MetricNameError, ["cutoff k must be a positive integer"]),
    ("k negative", run(), ["p@-3"], {}, MetricNameError, ["cutoff k must be a positive integer"]),
    ("k not a number", run(), ["p@ten"], {}, MetricNameError, ["cutoff k must be a positive integer"]),
    ("unknown parameter", run(), ["ndcg(gian=exp)@10"], {}, MetricNameError, ["unknown parameter 'gian'", "gain"]),
    ("bad choice", run(), ["ndcg(gain=cubic)"], {}, MetricNameError, ["gain='cubic'", "linear, exp"]),
    ("rbp p out of range", run(), ["rbp(p=1.5)"], {}, MetricNameError, ["p must be in (0, 1)"]),
    ("rprec with k", run(), ["rprec@5"], {}, MetricNameError, ["rprec takes no cutoff"]),
    ("metric twice", run(), ["ndcg@10", "ndcg@10"], {}, MetricNameError, ["requested twice"]),
    ("no metric", run(), [], {}, MetricNameError, ["no metric requested"]),
    ("missing column", run().drop("item"), ["p@1"], {}, RankPolarsError, ["column 'item' (item id) not found"]),
    ("no order", run().drop("position"), ["p@1"], {}, RankPolarsError, ["needs a position column 'position' or a score column"]),
    ("float position", run(position=[1.0, 2.0, 1.0, 1.0]), ["p@1"], {}, RankPolarsError, ["'position' (position) must be an integer"]),
    ("text relevance", run(relevance=["1", "0", "1", "1"]), ["p@1"], {}, RankPolarsError, ["'relevance' must be numeric"]),
    ("no labels, no qrels", run().drop("relevance"), ["p@1"], {}, RankPolarsError, ["'relevance' (relevance label; or pass qrels=) not found"]),
    ("duplicate items", run(item=["x", "x", "z", "x"], relevance=[1.0, 1.0, 1.0, 1.0]), ["p@1"], {"by": "model"},
     DataError, ["'item': duplicate items within a ranking", "query 'q1' (model='a')", "duplicates='first'"]),
    # strict: also a repeated item that contributes once (labelled 1, then 0)
    ("duplicate items, strict", run(item=["x", "x", "z", "x"]), ["p@1"], {"by": "model", "checks": "strict"},
     DataError, ["'item': duplicate items within a ranking", "query 'q1' (model='a')"]),
    ("duplicate items, by score", run(item=["x", "x", "z", "x"]).drop("position").with_columns(score=pl.lit(1.0)),
     ["p@1"], {"by": "model"}, DataError, ["'item': duplicate items within a ranking", "query 'q1' (model='a')"]),
    ("duplicate items, length read", run(item=["x", "x", "z", "x"]), ["p"], {"by": "model"},
     DataError, ["'item': duplicate items within a ranking", "query 'q1' (model='a')"]),
    ("duplicate positions", run(position=[1, 1, 1, 1], relevance=[1.0, 1.0, 1.0, 1.0]), ["p@1"], {"by": "model"},
     DataError, ["'position': duplicate positions within a ranking", "'q1' (model='a')"]),
    ("duplicate positions, strict", run(position=[1, 1, 1, 1]), ["p@1"], {"by": "model", "checks": "strict"},
     DataError, ["'position': duplicate positions within a ranking", "'q1' (model='a')"]),
    ("duplicate relevant items, qrels", run(item=["x", "x", "z", "x"]).drop("relevance"), ["p@1"],
     {"by": "model", "qrels": QRELS}, DataError, ["'item': duplicate items within a ranking", "'q1' (model='a')"]),
    ("position zero", run(position=[0, 1, 1, 1]), ["p@1"], {"by": "model"}, DataError, ["positions must be >= 1", "'q1'"]),
    ("null position", run(position=[None, 2, 1, 1]), ["p@1"], {"by": "model"}, DataError, ["null positions", "'q1'"]),
    # a null position of a row that is not relevant cannot change a value; strict refuses it
    ("null position, strict", run(position=[1, None, 1, 1]), ["p@1"], {"by": "model", "checks": "strict"},
     DataError, ["null positions", "'q1'"]),
    ("null position, length read", run(position=[1, None, 1, 1]), ["p"], {"by": "model"},
     DataError, ["null positions", "'q1'"]),
    ("null relevance", run(relevance=[1.0, None, 1.0, 1.0]), ["p@1"], {"by": "model"}, DataError,
     ["'relevance': null or NaN relevance labels", "'q1' (model='a')"]),
    ("NaN relevance", run(relevance=[1.0, float("nan"), 1.0, 1.0]), ["p@1"], {}, DataError, ["null or NaN relevance"]),
    ("null query", run(query=["q1", None, "q2", "q1"]), ["p@1"], {}, DataError, ["'query' has null query ids"]),
    ("null item", run(item=["x", None, "z", "y"], relevance=[1.0, 1.0, 1.0, 1.0]), ["p@1"], {}, DataError,
     ["'item': null item ids", "'q1'"]),
    ("null item, strict", run(item=["x", None, "z", "y"]), ["p@1"], {"checks": "strict"}, DataError,
     ["'item': null item ids", "'q1'"]),
    ("null item, by score", run(item=["x", None, "z", "y"]).drop("position").with_columns(score=pl.lit(1.0)), ["p@1"],
     {}, DataError, ["'item': null item ids", "'q1'"]),
    ("NaN score", run().drop("position").with_columns(score=pl.Series([1.0, float("nan"), 1.0, 1.0])), ["p@1"], {},
     DataError, ["'score': null or NaN scores", "'q1'"]),
    ("duplicate judgments", run(), ["p@1"], {"qrels": pl.concat([QRELS, QRELS])}, DataError,
     ["qrels: duplicate judgments", "'q1'"]),
    ("duplicate judgments, one not relevant, strict", run(), ["p@1"],
     {"qrels": pl.concat([QRELS, QRELS.with_columns(relevance=pl.lit(0, pl.Int64))]), "checks": "strict"}, DataError,
     ["qrels: duplicate judgments", "(2 rows)", "'q1', 'q2'"]),
    ("null query in qrels", run(), ["p@1"], {"qrels": QRELS.with_columns(query=pl.Series(["q1", None]))}, DataError,
     ["qrels: column 'query' has 1 null values"]),
    ("null grade in qrels", run(), ["p@1"], {"qrels": QRELS.with_columns(relevance=pl.Series([1, None]))}, DataError,
     ["qrels: column 'relevance' has 1 null values", "'q2'"]),
    ("bad missing", run(), ["p@1"], {"missing": "drop"}, RankPolarsError, ["missing must be 'zero' or 'skip'"]),
    ("bad checks", run(), ["p@1"], {"checks": "none"}, RankPolarsError, ["checks must be 'full', 'strict' or 'fast'"]),
    ("bad engine", run(), ["p@1"], {"engine": "nope"}, RankPolarsError, ["engine must be 'polars', 'duckdb'"]),
    ("same ranking twice", run(), ["p@1"], {"by": None}, DataError, ["duplicate positions", "'q1'"]),
    ("by is the query", run(), ["p@1"], {"by": "query"}, RankPolarsError, ["'query' is the query or item column"]),
    ("by unknown", run(), ["p@1"], {"by": "version"}, RankPolarsError, ["column 'version' (a 'by' grouping column) not found"]),
    ("missing file", "/nonexistent/run.parquet", ["p@1"], {}, RankPolarsError, ["no such file"]),
    ("not a frame", 42, ["p@1"], {}, RankPolarsError, ["run: cannot read a builtins.int; expected a Polars DataFrame"]),
]


@pytest.mark.parametrize(("data", "metrics", "kwargs", "error", "fragments"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_gives_a_clear_error(data, metrics, kwargs, error, fragments):
    if isinstance(data, pl.DataFrame):
        kwargs = {"by": "model", **kwargs}  # two models share query q1
    with pytest.raises(error) as info:
        rp.evaluate(data, metrics, **kwargs)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message


def test_duplicates_first_keeps_the_first_shown():
    dup = run(item=["x", "x", "z", "x"], relevance=[1.0, 0.0, 1.0, 1.0])
    got = rp.evaluate(dup, ["p@2"], by="model", per_query=True, duplicates="first")
    assert got.filter(model="a", query="q1")["p@2"].item() == 0.5


def test_negative_grades_are_not_relevant():
    got = rp.evaluate(run(relevance=[-1.0, 1.0, -2.0, 1.0]), ["p@1", "ndcg"], by="model", per_query=True)
    assert got.filter(model="a")["p@1"].to_list() == [0.0, 0.0]
    assert got.filter(model="a", query="q2")["ndcg"].item() == 0.0


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_full_checks_ignore_a_repeated_row_that_cannot_change_a_value(engine):
    # x and y (neither relevant) share position 2: no metric can tell; strict refuses it
    dup = run(position=[2, 2, 1, 1], relevance=[0.0, 0.0, 1.0, 1.0])
    full = rp.evaluate(dup, ["p@1", "ndcg@10", "ap", "rr"], by="model", engine=engine)
    fast = rp.evaluate(dup, ["p@1", "ndcg@10", "ap", "rr"], by="model", engine=engine, checks="fast")
    assert full.equals(fast)
    with pytest.raises(DataError, match="duplicate positions"):
        rp.evaluate(dup, ["p@1"], by="model", engine=engine, checks="strict")


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_fast_checks_skip_only_the_duplicate_counts(engine):
    dup = run(position=[1, 1, 2, 1], relevance=[1.0, 1.0, 1.0, 1.0])  # positions repeat in model a, query q1
    with pytest.raises(DataError, match="duplicate positions"):
        rp.evaluate(dup, ["p@1"], by="model", engine=engine)
    rp.evaluate(dup, ["p@1"], by="model", engine=engine, checks="fast")
    with pytest.raises(DataError, match="null or NaN relevance"):
        rp.evaluate(run(relevance=[1.0, None, 1.0, 1.0]), ["p@1"], by="model", engine=engine, checks="fast")


# ------------------------------------------------------------------ no silent wrong number

import math  # noqa: E402
import warnings  # noqa: E402

import duckdb  # noqa: E402
import pytrec_eval  # noqa: E402

from .sql_cases import sql_frame  # noqa: E402

ENGINES = ["polars", "duckdb"]
# the log: two queries, graded labels in the run
BASE = pl.DataFrame({"query": ["q1", "q1", "q1", "q2", "q2"], "item": list("abcde"), "position": [1, 2, 3, 1, 2],
                     "relevance": [1, 0, 2, 0, 1]})


def trec_means(log: pl.DataFrame, measures: dict[str, str]) -> dict[str, float]:
    """pytrec_eval's means over ``log`` (its labels as the judgments, positions as scores)."""
    qrels: dict = {}
    run: dict = {}
    for q, i, p, r in log.select("query", "item", "position", "relevance").iter_rows():
        qrels.setdefault(q, {})[i] = int(r)
        run.setdefault(q, {})[i] = float(-p)
    per_query = pytrec_eval.RelevanceEvaluator(qrels, set(measures.values())).evaluate(run)
    return {ours: sum(v[theirs] for v in per_query.values()) / len(per_query) for ours, theirs in measures.items()}


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def run_sql(sql: str, **tables: pl.DataFrame) -> pl.DataFrame:
    con = duckdb.connect()
    for name, frame in tables.items():
        con.register(name, frame.to_arrow())
    return sql_frame(con, sql)


@pytest.mark.parametrize("engine", [*ENGINES, "to_sql"])
def test_a_null_group_key_is_a_group_like_any_other(engine):
    log = pl.concat([BASE.with_columns(model=pl.lit("A")), BASE.with_columns(model=pl.lit(None, pl.String))])
    want = trec_means(BASE, {"ndcg@3": "ndcg_cut_3", "map": "map"})
    if engine == "to_sql":
        got = run_sql(rp.to_sql(["ndcg@3", "map"], table="logs", by="model"), logs=log)
    else:
        got = rp.evaluate(log, ["ndcg@3", "map"], by="model", engine=engine)
    assert got["model"].to_list() == ["A", None]
    for metric, value in want.items():
        assert got[metric].to_list() == pytest.approx([value, value], abs=1e-12)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_hive_default_partition_is_the_null_group(engine, tmp_path):
    for model in ["A", "__HIVE_DEFAULT_PARTITION__"]:
        (tmp_path / f"model={model}").mkdir()
        BASE.write_parquet(tmp_path / f"model={model}" / "part.parquet")
    judgments = BASE.drop("position")
    want = trec_means(BASE, {"ndcg@3": "ndcg_cut_3", "map": "map", "bpref": "bpref"})
    for kwargs in ({}, {"qrels": judgments}, {"qrels": judgments, "labels": "run"}):
        got = quiet(rp.evaluate, tmp_path, list(want), by="model", engine=engine, **kwargs)
        assert got["model"].to_list() == ["A", None], kwargs
        for metric, value in want.items():
            assert got[metric].to_list() == pytest.approx([value, value], abs=1e-12), (metric, kwargs)


INF = float("inf")
NON_FINITE_GRADES = [
    # (id, run labels, qrels, metrics, message fragments)
    ("inf label", [INF, 0, 2, 0, 1], None, ["ndcg", "err"], ["'relevance': null or NaN relevance labels or infinite", "'q1'"]),
    ("-inf label", [1, -INF, 2, 0, 1], None, ["ndcg"], ["'relevance': null or NaN relevance labels or infinite", "'q1'"]),
    ("inf judgment", None, [INF, 1.0], ["ndcg", "err"], ["qrels: column 'relevance' has 1 NaN grades or infinite", "'q1'"]),
    ("grade 2000, exp gain", [2000, 0, 2, 0, 1], None, ["ndcg(gain=exp)"],
     ["'ndcg(gain=exp)' is not a finite number", "'q1'", "largest grade there is 2000", "1024"]),
    ("grade 1100, err", [1100, 0, 2, 0, 1], None, ["err"], ["'err' is not a finite number", "1100"]),
    ("grade 1100 judged, exp gain", None, [1100.0, 1.0], ["ndcg(gain=exp)@2"], ["not a finite number", "1100"]),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("labels", "judgments", "metrics", "fragments"), [c[1:] for c in NON_FINITE_GRADES],
                         ids=[c[0] for c in NON_FINITE_GRADES])
def test_grades_that_make_a_metric_non_finite_are_refused(engine, labels, judgments, metrics, fragments):
    log = BASE.with_columns(relevance=pl.Series(labels, dtype=pl.Float64)) if labels else BASE.drop("relevance")
    qrels = None if judgments is None else pl.DataFrame({"query": ["q1", "q1"], "item": ["a", "c"], "relevance": judgments})
    with pytest.raises(DataError) as info:
        quiet(rp.evaluate, log, metrics, qrels=qrels, engine=engine)
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)


def test_grade_1023_with_exp_gain_is_still_a_number():
    # 2^1023 is the largest power of two in float64: nDCG of that one relevant item first is 1
    log = BASE.with_columns(relevance=pl.Series([1023, 0, 0, 0, 1], dtype=pl.Float64))
    for engine in ENGINES:
        got = rp.evaluate(log, ["ndcg(gain=exp)@3"], per_query=True, engine=engine)
        assert got["ndcg(gain=exp)@3"].to_list() == [1.0, pytest.approx(trec_means(BASE.filter(query="q2"), {"n": "ndcg_cut_3"})["n"])]


@pytest.mark.parametrize("checks", ["full", "fast", "strict"])
@pytest.mark.parametrize("engine", ENGINES)
def test_a_contributing_item_judged_twice_is_refused_whatever_the_checks(engine, checks):
    # grades 1 and 0 for item a: bpref reads both (judged), so the value would depend on row order
    ranked = BASE.drop("relevance")
    for grades in ([1, 0, 1], [0, 1, 1]):
        judgments = pl.DataFrame({"query": ["q1", "q1", "q1"], "item": ["a", "a", "c"], "relevance": grades})
        with pytest.raises(DataError, match="qrels: duplicate judgments .* e.g. query 'q1'"):
            quiet(rp.evaluate, ranked, ["bpref"], qrels=judgments, checks=checks, engine=engine)


def _rows(rows: list[tuple]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=["query", "item", "position", "relevance"], orient="row")


REPEATS = [
    # (id, run, what the default checks must say): a repeat with one contributing row changes the number
    ("item shown twice, once relevant", _rows([("q1", "a", 1, 0), ("q1", "a", 2, 1), ("q1", "b", 3, 1)]),
     "'item': duplicate items within a ranking"),
    ("relevant and non-relevant row at one position", _rows([("q1", "a", 1, 1), ("q1", "b", 1, 0), ("q1", "c", 2, 0)]),
     "'position': duplicate positions within a ranking"),
]


@pytest.mark.parametrize("labels", ["run labels", "qrels", "labels='run'"])
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("log", "message"), [c[1:] for c in REPEATS], ids=[c[0] for c in REPEATS])
def test_default_checks_report_a_repeat_that_involves_a_contributing_row(log, message, engine, labels):
    judgments = log.filter(pl.col("relevance") > 0).drop("position").unique()
    kwargs = {"run labels": {}, "qrels": {"qrels": judgments}, "labels='run'": {"qrels": judgments, "labels": "run"}}[labels]
    if labels == "qrels":
        log = log.drop("relevance")
    for metrics in (["ndcg@3"], ["ap", "rr"], ["p@2"]):
        with pytest.raises(DataError, match=message + r".* e\.g\. query 'q1'"):
            quiet(rp.evaluate, log, metrics, engine=engine, **kwargs)


@pytest.mark.parametrize("engine", ENGINES)
def test_the_repeat_checks_see_groups_and_null_groups(engine):
    # the same repeat, in the null group only; model A is clean
    log = pl.concat([BASE.with_columns(model=pl.lit("A")),
                     BASE.with_columns(model=pl.lit(None, pl.String), position=pl.Series([1, 1, 3, 1, 2]))])
    with pytest.raises(DataError, match=r"duplicate positions .* \(1 repeated row in 1 ranking, .*\), e\.g\. query 'q1' \(model=None\)"):
        rp.evaluate(log, ["ndcg@3"], by="model", engine=engine)


SAME_IN_BOTH_ENGINES = [
    # (id, run, metrics, kwargs, error type, message fragment): once a crash or an engine disagreement
    ("NUL in a column name", BASE.rename({"item": "it\x00em"}), ["p@1"], {"item": "it\x00em"}, RankPolarsError,
     "item: a column name must be a non-empty string without NUL"),
    ("empty column name", BASE.rename({"item": ""}), ["p@1"], {"item": ""}, RankPolarsError,
     "item: a column name must be a non-empty string"),
    ("query and item one column", BASE, ["p@1"], {"item": "query"}, RankPolarsError,
     "query and item are the same column 'query'"),
    ("by named queries", BASE.with_columns(queries=pl.lit("x")), ["p@1"], {"by": "queries"}, RankPolarsError,
     "two columns named 'queries'"),
    ("by named like a metric", BASE.with_columns(pl.lit("x").alias("p@1")), ["p@1"], {"by": "p@1"}, RankPolarsError,
     "two columns named 'p@1'"),
    ("by not a name", BASE, ["p@1"], {"by": 3}, RankPolarsError, "by: expected a column name or a list of them"),
    ("metrics=None", BASE, None, {}, MetricNameError, "metrics: expected a metric name"),
    ("metrics a class", BASE, rp.ndcg, {}, MetricNameError, "metrics: expected a metric name"),
    ("p(rel=inf)", BASE, ["p(rel=inf)@5"], {}, MetricNameError, "parameter rel must be a finite number"),
    ("p(rel=nan)", BASE, ["p(rel=nan)@5"], {}, MetricNameError, "parameter rel must be a finite number"),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("log", "metrics", "kwargs", "error", "fragment"), [c[1:] for c in SAME_IN_BOTH_ENGINES],
                         ids=[c[0] for c in SAME_IN_BOTH_ENGINES])
def test_odd_arguments_get_one_clear_error_in_both_engines(engine, log, metrics, kwargs, error, fragment):
    with pytest.raises(error, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        rp.evaluate(log, metrics, engine=engine, **kwargs)


def test_an_unused_column_with_a_nul_name_is_harmless_in_both_engines():
    log = BASE.with_columns(pl.lit(1).alias("odd\x00name"))
    want = trec_means(BASE, {"ndcg@3": "ndcg_cut_3"})["ndcg@3"]
    for engine in ENGINES:
        assert rp.evaluate(log, ["ndcg@3"], engine=engine)["ndcg@3"].item() == pytest.approx(want, abs=1e-12)


def test_bool_labels_are_0_and_1_in_both_engines_and_to_sql():
    log = BASE.with_columns(relevance=pl.col("relevance") > 0)
    want = trec_means(BASE.with_columns(relevance=(pl.col("relevance") > 0).cast(pl.Int64)),
                      {"ndcg": "ndcg", "p@2": "P_2"})
    for engine in ENGINES:
        got = rp.evaluate(log, list(want), engine=engine)
        assert [got[m].item() for m in want] == pytest.approx(list(want.values()), abs=1e-12)


def test_the_ndcg_k_spelling_is_the_cutoff():
    got = rp.evaluate(BASE, ["ndcg(k=3)"])
    assert got["ndcg(k=3)"].item() == pytest.approx(trec_means(BASE, {"n": "ndcg_cut_3"})["n"], abs=1e-12)


def test_duckdb_out_of_memory_says_what_to_do():
    big = pl.DataFrame({"query": [f"q{i // 50}" for i in range(200_000)], "item": [f"d{i}" for i in range(200_000)],
                        "position": [i % 50 + 1 for i in range(200_000)], "relevance": [i % 7 == 0 for i in range(200_000)]})
    with pytest.raises(RankPolarsError, match="duckdb_memory_limit"):
        rp.evaluate(big, ["ndcg@10", "ap"], engine="duckdb", checks="strict", duckdb_memory_limit="2MB")


INJECTIONS = [
    "t AS x) SELECT 1; DROP TABLE sentinel; SELECT * FROM (SELECT 1",  # three statements, the second drops a table
    "logs; DROP TABLE sentinel",
    "logs AS x",
    "logs, sentinel",
    "logs WHERE 1 = 1",
    "(SELECT * FROM logs)",
    "logs -- the rest of the line",  # would comment out what the generated SQL puts after it
    "logs /* a comment */",
]


@pytest.mark.parametrize("table", INJECTIONS)
@pytest.mark.parametrize("side", ["table", "qrels"])
def test_to_sql_refuses_anything_but_one_table_reference(table, side):
    kwargs = {"table": table} if side == "table" else {"table": "logs", "qrels": table}
    with pytest.raises(RankPolarsError, match="is not one table name or table function"):
        rp.to_sql(["p@1"], **kwargs)


def test_to_sql_accepts_table_names_and_table_functions(tmp_path):
    BASE.write_parquet(tmp_path / "log.parquet")
    con = duckdb.connect()
    con.execute("CREATE SCHEMA s; CREATE TABLE s.logs AS SELECT * FROM read_parquet(?)", [str(tmp_path / "log.parquet")])
    want = trec_means(BASE, {"ndcg@3": "ndcg_cut_3"})["ndcg@3"]
    (tmp_path / "a--b.parquet").write_bytes((tmp_path / "log.parquet").read_bytes())  # "--" in a string: no comment
    for table in ["s.logs", '"s"."logs"', f"read_parquet('{tmp_path / 'log.parquet'}')", f"read_parquet('{tmp_path / 'a--b.parquet'}')"]:
        sql = rp.to_sql(["ndcg@3"], table=table)
        assert len(__import__("sqlglot").parse(sql, read="duckdb")) == 1
        assert con.sql(sql).fetchall()[0][1] == pytest.approx(want, abs=1e-12)


def test_bigquery_refuses_a_name_it_would_read_as_a_path():
    for kwargs in ({"by": "a.b_q"}, {"item": "x.y"}):
        with pytest.raises(RankPolarsError, match="cannot be said in bigquery"):
            rp.to_sql(["p@1"], table="logs", dialect="bigquery", **kwargs)
    # other dialects quote it as one name
    tree = __import__("sqlglot").parse_one(rp.to_sql(["p@1"], table="logs", dialect="trino", by="a.b_q"), read="trino")
    assert "a.b_q" in {i.name for i in tree.find_all(__import__("sqlglot").exp.Identifier)}


# --- inputs that raised an engine's own exception ----------------------------------------------

def test_a_qrels_grade_beyond_int64_names_the_file_and_line(tmp_path):
    from click.testing import CliRunner

    from rank_polars.cli import main

    qrels = tmp_path / "judged.qrels"
    qrels.write_text("q1 0 x 1\nq1 0 y 9223372036854775808\n")
    run_file = tmp_path / "run.txt"
    run_file.write_text("q1 Q0 x 1 2.0 r\nq1 Q0 y 2 1.0 r\n")
    fragment = rf"{qrels}: line 2: the grade \(4th field\) '9223372036854775808' is not within the 64-bit integer range"
    with pytest.raises(DataError, match=fragment):
        rp.read_trec_qrels(qrels)
    for engine in ENGINES:
        with pytest.raises(DataError, match=fragment):
            rp.evaluate(run_file, ["p@1"], qrels=qrels, engine=engine)
    result = CliRunner().invoke(main, ["evaluate", str(run_file), "--qrels", str(qrels), "-m", "p@1"])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "judged.qrels: line 2:" in result.stderr and "64-bit integer range" in result.stderr
    # the largest grade that fits is read, as atol reads it
    qrels.write_text("q1 0 x 9223372036854775807\n")
    assert rp.read_trec_qrels(qrels)["relevance"].to_list() == [9223372036854775807]


def test_pandas_inputs_that_arrow_cannot_convert_are_named():
    pd = pytest.importorskip("pandas")
    judgments = pd.DataFrame({"query": ["1", "1"], "item": ["a", "b"], "relevance": [1, 0]})
    mixed = pd.DataFrame({"query": [1, "1"], "item": ["a", "b"], "score": [1.0, 2.0]})
    twice = pd.DataFrame([["1", "a", 1.0, 2.0]], columns=["query", "item", "score", "score"])
    index_and_column = pd.DataFrame({"query": ["1"], "item": ["a"], "score": [1.0]},
                                    index=pd.Index(["1"], name="query"))
    huge = pd.DataFrame({"query": ["1", "1"], "item": ["a", "b"], "score": [1.0, 2.0], "relevance": [2**64, 1]})
    cases = [
        (mixed, {"qrels": judgments}, "run: pandas column 'query' mixes int 1 and str '1'"),
        (twice, {"qrels": judgments}, "run: the pandas DataFrame has more than one column (or index level) named 'score'"),
        (index_and_column, {"qrels": judgments}, "named 'query'"),
        (huge, {}, "run: cannot read column 'relevance' (object) of the pandas DataFrame: OverflowError"),
    ]
    for log, kwargs, fragment in cases:
        for engine in ENGINES:
            with pytest.raises(RankPolarsError) as e:
                rp.evaluate(log, ["p@1"], engine=engine, **kwargs)
            assert fragment in str(e.value)
    with pytest.raises(RankPolarsError, match="qrels: pandas column 'query' mixes int 1 and str '1'"):
        rp.evaluate(judgments, ["p@1"], qrels=mixed.rename(columns={"score": "relevance"}))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("side", ["run", "qrels", "both"])
def test_a_list_id_column_is_refused_with_its_role(engine, side):
    run_log = pl.DataFrame({"query": ["1", "1"], "item": ["a", "b"], "score": [2.0, 1.0]})
    judged = pl.DataFrame({"query": ["1"], "item": ["a"], "relevance": [1]})
    listed = {"run": run_log, "qrels": judged}
    for name in (["run", "qrels"] if side == "both" else [side]):
        listed[name] = listed[name].with_columns(pl.concat_list("item"))
    with pytest.raises(RankPolarsError, match=r"column 'item' \(item id\) is List\(String\); it must hold one text "
                                              r"or number per row; explode it first"):
        rp.evaluate(listed["run"], ["p@1"], qrels=listed["qrels"], engine=engine)
    with pytest.raises(RankPolarsError, match=r"run: column 'model' \(a 'by' grouping column\) is Struct"):
        rp.evaluate(run_log.with_columns(model=pl.struct(pl.lit(1).alias("x"))), ["p@1"], qrels=judged, by="model",
                    engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_128_bit_integer_columns_are_read_like_64_bit_ones(engine):
    # found by the input-form fuzz: Arrow has no 128-bit integers, so DuckDB raised pyarrow's ArrowInvalid
    log = pl.DataFrame({"query": [1, 1, 2], "item": [5, 6, 5], "position": [1, 2, 1], "relevance": [0, 1, 2]})
    wide = log.with_columns(pl.col("query", "relevance").cast(pl.Int128))
    want = trec_means(log.with_columns(pl.col("query", "item").cast(pl.String)), {"ndcg": "ndcg", "p@2": "P_2"})
    got = rp.evaluate(wide, list(want), engine=engine)
    assert [got[m].item() for m in want] == pytest.approx(list(want.values()), abs=1e-12)
    judged = rp.evaluate(log.drop("relevance"), list(want), qrels=wide.drop("position"), engine=engine)
    assert [judged[m].item() for m in want] == pytest.approx(list(want.values()), abs=1e-12)


@pytest.mark.parametrize("engine", ENGINES)
def test_duplicate_counts_say_what_they_count_and_python_gets_the_by_hint(engine):
    # two versions evaluated as one: every ranking repeats its positions
    log = rp.datasets.sample_log()
    with pytest.raises(DataError) as full:
        quiet(rp.evaluate, log, ["ndcg@10"], engine=engine)
    with pytest.raises(DataError) as strict:
        quiet(rp.evaluate, log, ["ndcg@10"], engine=engine, checks="strict")
    assert "counting the rows that can change a value; checks='strict' counts every row" in str(full.value)
    assert str(full.value).endswith("""; the run has a 'model' column: did you mean by="model"?""")
    # strict counts what validate counts, in the same words
    counted = str(strict.value).split("(")[1].split(")")[0]
    assert counted == "2,000 repeated rows in 200 rankings, counting every row"
    found = [f.message for f in rp.diagnose(log).findings if "duplicate positions" in f.message]
    assert found and f": {counted}, e.g." in found[0]
    # one of each: singular nouns
    one = pl.DataFrame({"query": ["q1", "q1"], "item": ["a", "b"], "position": [1, 1], "relevance": [1, 0]})
    with pytest.raises(DataError, match=r"\(1 repeated row in 1 ranking, counting every row\)"):
        quiet(rp.evaluate, one, ["p@1"], engine=engine, checks="strict")


@pytest.mark.parametrize("engine", ENGINES)
def test_dict_keys_that_are_one_id_as_text_are_refused(engine):
    # the dict form of "1 and '1'": read as text they were merged into one query (or one item) silently
    judged = {"1": {"a": 1, "b": 1}}
    with pytest.raises(RankPolarsError, match=r"run: the dict's queries 1 and '1' are one id once read as text"):
        rp.evaluate({1: {"a": 1.0}, "1": {"b": 2.0}}, ["p@2"], qrels=judged, engine=engine)
    with pytest.raises(RankPolarsError, match=r"qrels: the dict's items of query '1' 7 and '7' are one id"):
        rp.evaluate({"1": {"a": 1.0}}, ["p@2"], qrels={"1": {7: 1, "7": 0}}, engine=engine)
    # one key of each kind is fine: ids become text
    got = rp.evaluate({1: {"a": 2.0, "b": 1.0}}, ["p@2"], qrels=judged, engine=engine)
    assert got["p@2"].item() == 1.0


def test_every_bad_metric_name_is_said_at_once() -> None:
    """Only the first bad name was reported: a user fixed one and met the next (ir_measures
    lists them all)."""
    import rank_polars as rp

    with pytest.raises(rp.MetricNameError) as caught:
        rp.evaluate({"q": {"a": 1.0}}, ["ndcgg@10", "map", "p@x"], qrels={"q": {"a": 1}})
    message = str(caught.value)
    assert message.startswith("2 metrics are not understood")
    assert "'ndcgg@10'" in message and "'p@x'" in message and "'map'" not in message
