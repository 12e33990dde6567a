"""evaluate(judge=), evaluate(by_judge=True), evaluate(bounds=True) and to_sql(judge=, bounds=)
against pytrec_eval on generated logs and judgments of several judges, in Polars, DuckDB and the
SQL of to_sql; every judgments format; the errors that keep label sets from mixing."""

from __future__ import annotations

from typing import Any

import duckdb
import numpy as np
import polars as pl
import pytest
import pytrec_eval
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rank_polars as rp

TOL = 1e-9
METRICS = {"ndcg@10": "ndcg_cut_10", "p@5": "P_5", "ap": "map", "recall@5": "recall_5", "judged@5": None}


@st.composite
def cases(draw: Any) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A log of two versions and the judgments of two or three judges over part of what they show."""
    n_queries = draw(st.integers(1, 4))
    items = [f"d{i}" for i in range(8)]
    rows = []
    for model in ("v1", "v2"):
        for q in range(n_queries):
            shown = draw(st.lists(st.sampled_from(items), min_size=1, max_size=6, unique=True))
            for item in shown:
                rows.append((model, f"q{q}", item, float(draw(st.integers(0, 5)))))  # tied scores too
    log = pl.DataFrame(rows, schema=["model", "query", "item", "score"], orient="row")
    judged = []
    for judge in [f"j{i}" for i in range(draw(st.integers(2, 3)))]:
        for q in range(n_queries + 1):  # one query may be judged and never shown
            for item in draw(st.lists(st.sampled_from(items), min_size=int(q == 0), max_size=6, unique=True)):
                judged.append((f"q{q}", item, draw(st.integers(0, 3)), judge))
    qrels = pl.DataFrame(judged, schema={"query": pl.String, "item": pl.String, "relevance": pl.Int64,
                                         "judge": pl.String}, orient="row")
    return log, qrels


@st.composite
def batches(draw: Any, size: tuple[int, int]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Several :func:`cases` in one, their query ids prefixed apart: per-query values do not
    depend on the other queries, so one call checks them all (a call's cost is its fixed part)."""
    logs, judged = [], []
    for b in range(draw(st.integers(*size))):
        log, qrels = draw(cases())
        logs.append(log.with_columns(pl.format("b{}{}", pl.lit(b), "query").alias("query")))
        judged.append(qrels.with_columns(pl.format("b{}{}", pl.lit(b), "query").alias("query")))
    return pl.concat(logs), pl.concat(judged)


def reference(log: pl.DataFrame, qrels: pl.DataFrame) -> pl.DataFrame:
    """pytrec_eval's per-query values of each version, over the judged queries each version ranks."""
    truth: dict[str, dict[str, int]] = {}
    for q, item, grade in qrels.select("query", "item", "relevance").iter_rows():
        truth.setdefault(q, {})[item] = int(grade)
    measures = {m for m in METRICS.values() if m}
    out = []
    for (model,), part in log.group_by(["model"]):
        run: dict[str, dict[str, float]] = {}
        for q, item, score in part.select("query", "item", "score").iter_rows():
            run.setdefault(q, {})[item] = score
        got = pytrec_eval.RelevanceEvaluator(truth, measures).evaluate({q: r for q, r in run.items() if q in truth})
        for q, values in got.items():
            out.append({"model": model, "query": q, **{ours: values[theirs] for ours, theirs in METRICS.items() if theirs}})
    return pl.DataFrame(out)


def assumed(log: pl.DataFrame, qrels: pl.DataFrame) -> pl.DataFrame:
    """The judgments plus every shown (query, item) of a judged query nobody judged, at the top grade (at least 1)."""
    top = max(int(qrels["relevance"].max() or 0), 1)
    shown = log.select("query", "item").unique().filter(pl.col("query").is_in(qrels["query"].implode()))
    extra = shown.join(qrels, on=["query", "item"], how="anti").with_columns(pl.lit(top, pl.Int64).alias("relevance"))
    return pl.concat([qrels.select("query", "item", "relevance"), extra.select("query", "item", "relevance")])


def _same(got: pl.DataFrame, want: pl.DataFrame, columns: list[str]) -> None:
    keys = ["model", "query"]
    joined = want.join(got, on=keys, how="left", suffix="_got")
    assert got.height == want.height, (got, want)
    for col in columns:
        a, b = joined[f"{col}_got"].to_numpy(), joined[col].to_numpy()
        assert np.allclose(a, b, atol=TOL, rtol=0), (col, joined)


def _sql(log: pl.DataFrame, qrels: pl.DataFrame, **kwargs: Any) -> pl.DataFrame:
    con = duckdb.connect()
    con.register("logs", log.to_arrow())
    con.register("judgments", qrels.to_arrow())
    return con.sql(rp.to_sql(kwargs.pop("metrics"), table="logs", qrels="judgments", **kwargs)).pl()


# 10 batches of 2-4 cases: as many cases as 30 single ones, a third of the calls
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches((2, 4)))
def test_each_judge_alone_as_pytrec_eval_reads_its_judgments(case: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    log, qrels = case
    metrics = [m for m, theirs in METRICS.items() if theirs]
    stacked = {}
    for engine in ("polars", "duckdb"):
        stacked[engine] = rp.evaluate(log, metrics, qrels=qrels, by="model", by_judge=True, per_query=True,
                                      missing="skip", engine=engine, order="score")
    for judge in qrels["judge"].unique().to_list():
        mine = qrels.filter(pl.col("judge") == judge)
        want = reference(log, mine) if mine.height else pl.DataFrame()
        for engine in ("polars", "duckdb"):
            got = rp.evaluate(log, metrics, qrels=qrels, judge=judge, by="model", per_query=True, missing="skip",
                              engine=engine, order="score")
            if want.height:
                _same(got, want, metrics)
                _same(stacked[engine].filter(pl.col("judge") == judge).drop("judge"), want, metrics)
            else:
                assert got.height == 0
        sql = _sql(log, qrels, metrics=metrics, judge=judge, by="model", per_query=True, missing="skip", order="score")
        if want.height:
            _same(sql, want, metrics)


# 12 batches of 1-4 cases: as many cases as 30 single ones (some alone, so that the judgments'
# top grade, which the high bound reads, is not always the batch's 3)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches((1, 4)))
def test_bounds_are_pytrec_eval_with_unjudged_items_not_relevant_and_relevant(case: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    log, qrels = case
    metrics = [m for m, theirs in METRICS.items() if theirs]
    judge = "j0"
    mine = qrels.filter(pl.col("judge") == judge)
    if mine.height == 0:
        return
    low, high = reference(log, mine.drop("judge")), reference(log, assumed(log, mine.drop("judge")))
    if low.height == 0:
        return
    for engine in ("polars", "duckdb", "sql"):
        args = dict(judge=judge, by="model", per_query=True, missing="skip", order="score", bounds=True)
        got = (_sql(log, qrels, metrics=metrics, **args) if engine == "sql"
               else rp.evaluate(log, metrics, qrels=qrels, engine=engine, **args))
        _same(got.select("model", "query", *(pl.col(f"{m}_low").alias(m) for m in metrics)), low, metrics)
        _same(got.select("model", "query", *(pl.col(f"{m}_high").alias(m) for m in metrics)), high, metrics)
        _same(got.select("model", "query", *metrics), low, metrics)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.data())
def test_precision_bounds_hold_every_assignment_of_the_unjudged_items(case: tuple[pl.DataFrame, pl.DataFrame],
                                                                      data: Any) -> None:
    """P@5 and judged@5: every grading of the unjudged shown items lands between the bounds."""
    log, qrels = case
    mine = qrels.filter(pl.col("judge") == "j0").drop("judge")
    if mine.height == 0:
        return
    bounds = rp.evaluate(log, ["p@5", "judged@5"], qrels=mine, by="model", bounds=True, missing="skip", order="score")
    full = assumed(log, mine)
    extra = full.join(mine, on=["query", "item"], how="anti")
    grades = data.draw(st.lists(st.integers(0, 3), min_size=extra.height, max_size=extra.height))
    world = pl.concat([mine, extra.with_columns(pl.Series("relevance", grades, dtype=pl.Int64))])
    got = rp.evaluate(log, ["p@5", "judged@5"], qrels=world, by="model", missing="skip", order="score")
    joined = got.join(bounds, on="model", suffix="_b")
    for m in ("p@5", "judged@5"):
        assert (joined[f"{m}_low"] <= joined[m] + TOL).all() and (joined[m] <= joined[f"{m}_high"] + TOL).all()


LOG = pl.DataFrame({"model": ["a", "a", "b", "b"], "query": ["q1", "q1", "q1", "q1"], "item": ["x", "y", "y", "x"],
                    "position": [1, 2, 1, 2]})
TWO = pl.DataFrame({"query": ["q1"] * 4, "item": ["x", "y"] * 2, "relevance": [1, 0, 0, 1],
                    "judge": ["people", "people", "llm", "llm"]})


def _formats(tmp_path: Any) -> dict[str, Any]:
    """The two judges' judgments in every format the judgments are read from."""
    parquet, csv, tsv = tmp_path / "j.parquet", tmp_path / "j.csv", tmp_path / "j.tsv"
    TWO.write_parquet(parquet)
    TWO.write_csv(csv)
    TWO.write_csv(tsv, separator="\t")
    folder = tmp_path / "hive"
    for judge in ("people", "llm"):
        (folder / f"judge={judge}").mkdir(parents=True)
        TWO.filter(pl.col("judge") == judge).drop("judge").write_parquet(folder / f"judge={judge}" / "part.parquet")
    trec = {}
    for judge in ("people", "llm"):
        path = tmp_path / f"{judge}.qrels"
        path.write_text("".join(f"{q} 0 {i} {g}\n" for q, i, g, j in TWO.iter_rows() if j == judge))
        trec[judge] = str(path)
    dicts = {j: {"q1": {i: g for q, i, g, jj in TWO.iter_rows() if jj == j}} for j in ("people", "llm")}
    return {"frame": TWO, "lazy": TWO.lazy(), "parquet": str(parquet), "csv": str(csv), "tsv": str(tsv),
            "hive": str(folder), "pandas": TWO.to_pandas(), "arrow": TWO.to_arrow(), "trec files": trec,
            "dicts": dicts}


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_every_format_reads_its_judges(tmp_path: Any, engine: str) -> None:
    """p@1 of a: people judged x (its first) relevant, the llm judged it not."""
    for name, source in _formats(tmp_path).items():
        got = {j: rp.evaluate(LOG, "p@1", qrels=source, judge=j, by="model", engine=engine)["p@1"].to_list()
               for j in ("people", "llm")}
        assert got == {"people": [1.0, 0.0], "llm": [0.0, 1.0]}, name
        table = rp.evaluate(LOG, "p@1", qrels=source, by="model", by_judge=True, engine=engine)
        assert table.select("judge", "model", "p@1").rows() == [("llm", "a", 0.0), ("llm", "b", 1.0),
                                                                ("people", "a", 1.0), ("people", "b", 0.0)], name
        with pytest.raises(rp.RankPolarsError, match=r"holds 2 judges \('llm', 'people'\).*judge="):
            rp.evaluate(LOG, "p@1", qrels=source, by="model", engine=engine)


def test_a_judge_column_of_another_name_and_one_judge_alone() -> None:
    renamed = TWO.rename({"judge": "rater", "relevance": "grade"})
    schema = rp.Schema(judgments=rp.Schema(judge="rater", relevance="grade"))
    got = rp.evaluate(LOG, "p@1", qrels=renamed, judge="llm", by="model", schema=schema)
    assert got["p@1"].to_list() == [0.0, 1.0]
    one = TWO.filter(pl.col("judge") == "people")  # one judge: read as the judgments, no judge= needed
    assert rp.evaluate(LOG, "p@1", qrels=one, by="model")["p@1"].to_list() == [1.0, 0.0]


@pytest.mark.parametrize("call, message", [
    (dict(judge="robot"), r"judge='robot' is not among the judges of column 'judge': 'llm', 'people'"),
    (dict(judge="llm", by_judge=True), "give one"),
    (dict(bounds=True, ci=0.95, judge="llm"), "ask for one per call"),
    (dict(bounds=True, judge="llm", labels="run"), "labels='qrels'"),
])
def test_calls_that_would_mix_or_clash_are_refused(call: dict[str, Any], message: str) -> None:
    with pytest.raises(rp.RankPolarsError, match=message):
        rp.evaluate(LOG, "p@1", qrels=TWO, by="model", **call)


def test_the_bounds_of_a_diversity_measure_are_refused_not_left_equal() -> None:
    """An unjudged item relevant at the top grade: to which subtopics?  Its high side would
    otherwise read the judged subtopics alone and say the metric is settled."""
    subtopics = pl.DataFrame({"query": ["q1"] * 2, "subtopic": [1, 2], "item": ["x", "x"], "relevance": [1, 1]})
    for call in (dict(qrels=subtopics), dict(qrels=TWO.filter(pl.col("judge") == "llm"),
                                             metrics=[rp.measures.parse("alpha_ndcg@2").replace(subtopics=subtopics)])):
        metrics = call.pop("metrics", ["alpha_ndcg@2"])
        with pytest.raises(rp.RankPolarsError, match="alpha_ndcg@2 reads subtopic judgments, .* bounds are not defined"):
            rp.evaluate(LOG, [*metrics, "p@1"], by="model", bounds=True, **call)


def test_judge_without_a_judge_column_or_without_judgments_is_refused() -> None:
    with pytest.raises(rp.RankPolarsError, match="no judge column 'judge'"):
        rp.evaluate(LOG, "p@1", qrels=TWO.drop("judge"), judge="llm", by="model")
    with pytest.raises(rp.RankPolarsError, match="pass qrels="):
        rp.evaluate(LOG.with_columns(relevance=pl.lit(1)), "p@1", judge="llm", by="model")
    with pytest.raises(rp.RankPolarsError, match="no judge column"):
        rp.evaluate(LOG, "p@1", qrels=TWO.drop("judge"), by_judge=True, by="model")


def test_to_sql_stacks_the_judges_it_is_given_and_translates() -> None:
    got = _sql(LOG, TWO, metrics=["p@1"], judge=["people", "llm"], by="model", order="position")
    assert got.select("judge", "model", "p@1").rows() == [("llm", "a", 0.0), ("llm", "b", 1.0),
                                                          ("people", "a", 1.0), ("people", "b", 0.0)]
    for dialect in ("spark", "trino", "postgres"):
        assert "__rp_judge_rows" in rp.to_sql(["ndcg@10"], table="logs", qrels="j", judge="llm", bounds=True,
                                              by="model", dialect=dialect)


def test_spark_reads_one_judge_of_a_spark_dataframe(spark_session: Any) -> None:
    qrels = spark_session.createDataFrame(TWO.to_pandas())
    got = rp.evaluate(LOG, "p@1", qrels=qrels, judge="llm", by="model", engine="spark", spark=spark_session)
    assert got["p@1"].to_list() == [0.0, 1.0]
    with pytest.raises(rp.RankPolarsError, match="holds 2 judges"):
        rp.evaluate(LOG, "p@1", qrels=qrels, by="model", engine="spark", spark=spark_session)
    table = rp.evaluate(LOG, "p@1", qrels=qrels, by="model", by_judge=True, engine="spark", spark=spark_session)
    assert table.select("judge", "model", "p@1").rows() == [("llm", "a", 0.0), ("llm", "b", 1.0),
                                                            ("people", "a", 1.0), ("people", "b", 0.0)]


def test_a_stream_of_judgments_is_read_once_with_or_without_judges() -> None:
    """An Arrow RecordBatchReader can be read once: with a judge column it is read and filtered, without
    one it is read and handed on (not read a second time by the engines)."""
    import pyarrow as pa

    def stream(frame: pl.DataFrame) -> pa.RecordBatchReader:
        table = frame.to_arrow()
        return pa.RecordBatchReader.from_batches(table.schema, table.to_batches())

    assert rp.evaluate(LOG, "p@1", qrels=stream(TWO), judge="llm", by="model")["p@1"].to_list() == [0.0, 1.0]
    people = TWO.filter(pl.col("judge") == "people").drop("judge")
    assert rp.evaluate(LOG, "p@1", qrels=stream(people), by="model")["p@1"].to_list() == [1.0, 0.0]


def test_to_sqls_judges_and_bounds_run_in_spark_as_evaluate_computes_them(spark_session: Any) -> None:
    log = LOG
    some = TWO.filter(~((pl.col("judge") == "llm") & (pl.col("item") == "y")))  # y unjudged by the llm
    spark_session.createDataFrame(log.to_pandas()).createOrReplaceTempView("judges_logs")
    spark_session.createDataFrame(some.to_pandas()).createOrReplaceTempView("judges_judgments")
    sql = rp.to_sql(["p@1", "ndcg@2"], table="judges_logs", qrels="judges_judgments", by="model",
                    judge=["llm", "people"], bounds=True, dialect="spark")
    got = pl.from_pandas(spark_session.sql(sql).toPandas())
    want = rp.evaluate(log, ["p@1", "ndcg@2"], qrels=some, by="model", by_judge=True, bounds=True)
    assert got.columns == want.columns
    assert np.allclose(got.select(pl.exclude("judge", "model").cast(pl.Float64)).to_numpy(),
                       want.select(pl.exclude("judge", "model").cast(pl.Float64)).to_numpy(), atol=TOL, rtol=0)
    assert got.select("judge", "model").rows() == want.select("judge", "model").rows()


@pytest.mark.parametrize("engine", ["polars", "duckdb", "sql"])
def test_bounds_with_judgments_named_otherwise(engine: str) -> None:
    """z (shown by b at 2) is unjudged: P@2 of b is 0 with it not relevant, 1/2 with it relevant."""
    log = pl.DataFrame({"model": ["a", "a", "b", "b"], "sid": ["q1"] * 4, "item": ["x", "y", "y", "z"],
                        "position": [1, 2, 1, 2]})
    judged = pl.DataFrame({"qid": ["q1", "q1"], "item": ["x", "y"], "grade": [1, 0], "rater": ["p", "p"]})
    schema = rp.Schema(query="sid", judgments=rp.Schema(query="qid", relevance="grade", judge="rater"))
    args = {"by": "model", "schema": schema, "judge": "p", "bounds": True}
    if engine == "sql":
        con = duckdb.connect()
        con.register("logs", log.to_arrow())
        con.register("judged", judged.to_arrow())
        got = con.sql(rp.to_sql(["p@2"], table="logs", qrels="judged", **args)).pl()
    else:
        got = rp.evaluate(log, ["p@2"], qrels=judged, engine=engine, **args)
    assert got.select("model", "p@2_low", "p@2_high").rows() == [("a", 0.5, 0.5), ("b", 0.0, 0.5)]
