"""``rp.diagnose(..., engine="duckdb" | "spark")`` and ``rank-polars validate --engine``.

The engines compute their own check statistics (the statements ``evaluate`` runs in them)
and report every failed check as a finding.  On each bad input below:

- the engine's findings are the Polars path's findings minus those that need the Polars
  reader (gaps, ties, labels, unjudged share), plus one ``engine`` note saying so;
- the facts (rows, rankings, queries, groups, judgments) are the same;
- the findings name the problem the case plants (the expected check and words);
- ``diagnose`` reports an error exactly when ``evaluate(..., checks="strict")`` in that
  engine refuses the input (the engine's own checks are the oracle of "error").

Spark runs on a real local session, one per module (the fixture of tests/test_spark.py).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import polars as pl
import pytest

import rank_polars as rp
from rank_polars.diagnose import Diagnosis, Finding
from rank_polars.errors import RankPolarsError

from .cli.helpers import invoke
from .test_spark import spark  # noqa: F401  (the module's session fixture)

BASE = pl.DataFrame({
    "model": ["A"] * 5 + ["B"] * 5,
    "query": ["q1", "q1", "q1", "q2", "q2"] * 2,
    "item": list("abcde") * 2,
    "position": [1, 2, 3, 1, 2] * 2,
    "score": [3.0, 2.0, 1.0, 2.0, 1.0] * 2,
    "relevance": [1.0, 0.0, 2.0, 0.0, 1.0] * 2,
})
QRELS = pl.DataFrame({"query": ["q1", "q1", "q2", "q2"], "item": ["a", "c", "e", "x"], "relevance": [1.0, 2.0, 1.0, 0.0]})


def at(frame: pl.DataFrame, row: int, **values: object) -> pl.DataFrame:
    """``frame`` with the given columns set on one row (by index)."""
    idx = pl.int_range(pl.len()) == row
    return frame.with_columns(pl.when(idx).then(pl.lit(v)).otherwise(pl.col(c)).alias(c) for c, v in values.items())


def by_position(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.drop("score")


def by_score(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.drop("position")


# name -> (run, keyword arguments, [(level, check, words in one message, ...)] the case plants)
CASES = {
    "clean": (by_position(BASE), {}, []),
    "duplicate item": (by_position(at(BASE, 1, item="a")), {}, [("error", "duplicates", "duplicate items within a ranking")]),
    "null item": (by_position(at(BASE, 2, item=None)), {}, [("error", "nulls", "null item ids")]),
    "null position": (by_position(at(BASE, 2, position=None)), {}, [("error", "nulls", "null positions")]),
    "position 0": (by_position(at(BASE, 0, position=0)), {}, [("error", "positions", "positions < 1")]),
    "repeated position": (by_position(at(BASE, 1, position=1)), {}, [("error", "duplicates", "duplicate positions")]),
    "null and NaN scores": (by_score(at(at(BASE, 0, score=None), 6, score=float("nan"))), {},
                            [("error", "nulls", "null or NaN scores in 'score': 2 rows in 2 rankings, counting every row")]),
    "null, NaN and infinite labels": (
        by_position(at(at(at(BASE, 0, relevance=None), 4, relevance=float("nan")), 6, relevance=float("inf"))), {},
        [("error", "nulls", "null or NaN relevance labels or infinite ones in 'relevance'", "3 rows in 3 rankings")]),
    "null query": (by_position(at(BASE, 3, query=None)), {}, [("error", "nulls", "1 row has a null query id")]),
    "null group": (by_position(at(BASE, 0, model=None)), {}, [("warning", "nulls", "null 'model'")]),
    "group lacks a query": (by_position(BASE.filter(~((pl.col("model") == "B") & (pl.col("query") == "q2")))), {},
                            [("warning", "coverage", "B lacks 1")]),
    "several at once": (by_position(at(at(BASE, 1, item="a"), 7, position=0)), {},
                        [("error", "duplicates", "duplicate items within a ranking"), ("error", "positions", "positions < 1")]),
    "qrels: clean": (by_position(BASE).drop("relevance"), {"qrels": QRELS}, []),
    "qrels: duplicate judgments": (by_position(BASE).drop("relevance"), {"qrels": pl.concat([QRELS, QRELS.head(1)])},
                                   [("error", "duplicates", "judged more than once, e.g. query 'q1'")]),
    "qrels: null item and grade": (by_position(BASE).drop("relevance"),
                                   {"qrels": at(at(QRELS, 3, item=None), 2, relevance=None)},
                                   [("error", "qrels", "1 null values in 'item'"),
                                    ("error", "qrels", "1 null values in 'relevance'")]),
    "qrels: NaN grade": (by_position(BASE).drop("relevance"), {"qrels": at(QRELS, 1, relevance=float("nan"))},
                         [("error", "qrels", "NaN or infinite grades")]),
    "qrels: null query": (by_position(BASE).drop("relevance"), {"qrels": at(QRELS, 3, query=None)},
                          [("error", "qrels", "qrels: 1 null values in 'query'")]),
    "qrels: coverage both ways": (
        by_position(at(BASE, 4, query="q9")).filter(~((pl.col("model") == "B") & (pl.col("query") == "q2"))).drop("relevance"),
        {"qrels": QRELS},
        [("warning", "coverage", "1 queries of the run have no judgments"), ("warning", "coverage", "B lacks 1")]),
    "ids typed differently": (by_position(BASE).drop("relevance").with_columns(pl.col("query").str.slice(1).cast(pl.Int64)),
                              {"qrels": QRELS.with_columns(pl.col("query").str.slice(1))},
                              [("warning", "columns", "query/item ids are Int64/String in the run and String/String")]),
    "missing columns": (by_position(BASE).rename({"item": "itme"}), {"by": "modle"},
                        [("error", "columns", "run has no item column 'item'; did you mean 'itme'?"),
                         ("error", "columns", "run has no 'by' column 'modle'; did you mean 'model'?")]),
}
POLARS_ONLY = {"ties", "labels", "judged"}  # and the gaps note (check "positions", level "info")


def polars_only(f: Finding) -> bool:
    return f.check in POLARS_ONLY or (f.check == "positions" and f.level == "info")


def rows(found: Diagnosis) -> list[tuple[str, str, str]]:
    return [(f.level, f.check, f.message) for f in found.findings]


def check_case(name: str, engine: str, spark_session=None) -> None:
    run, kwargs, planted = CASES[name]
    kwargs = {"by": "model", **kwargs}
    extra = {"spark": spark_session} if engine == "spark" else {}
    want = rp.diagnose(run, **kwargs)
    got = rp.diagnose(run, engine=engine, **kwargs, **extra)
    wanted = [(f.level, f.check, f.message) for f in want.findings if not polars_only(f)]
    findings = rows(got)
    if want.facts:  # the columns were found: the engine ran its statistics, and says what it did not compute
        assert findings[-1][:2] == ("info", "engine") and f"not computed in the {engine} engine" in findings[-1][2]
        findings = findings[:-1]
    assert findings == wanted
    for level, check, *words in planted:
        assert any(f[:2] == (level, check) and all(w in f[2] for w in words) for f in findings), (level, check, words, findings)
    assert got.errors == sum(level == "error" for level, *_ in planted)
    shared = {key: value for key, value in want.facts.items() if key not in ("rankings_with_tied_scores", "unjudged_at_k")}
    assert got.facts == shared
    # the oracle of "error": evaluate's own checks in that engine
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            rp.evaluate(run, ["ndcg@10", "ap"], checks="strict", engine=engine, **kwargs, **extra)
            refused = False
        except RankPolarsError:
            refused = True
    assert refused == (got.errors > 0), (name, findings)


@pytest.mark.parametrize("name", CASES)
def test_duckdb_findings_equal_the_polars_path(name):
    check_case(name, "duckdb")


def test_spark_findings_equal_the_polars_path(spark):
    # one test over every case: the session is shared, each case is a few small Spark jobs
    for name in CASES:
        check_case(name, "spark", spark)


def test_score_order_and_parquet_sources_read_by_the_engines(spark, tmp_path):
    run = by_score(at(BASE, 1, item="a"))
    run.write_parquet(tmp_path / "run.parquet")
    QRELS.write_parquet(tmp_path / "qrels.parquet")
    want = [f for f in rows(rp.diagnose(run, by="model")) if f[1] not in POLARS_ONLY]
    for engine in ("duckdb", "spark"):
        got = rp.diagnose(str(tmp_path / "run.parquet"), by="model", engine=engine, spark=spark)
        assert rows(got)[:-1] == want and "tied scores" in rows(got)[-1][2]
    frame = spark.createDataFrame(run.drop("relevance").to_arrow())
    spark.createDataFrame(QRELS.to_arrow()).createOrReplaceTempView("rp_diagnose_qrels")
    got = rp.diagnose(frame, qrels="rp_diagnose_qrels", by="model", engine="spark")  # the active session
    want = [f for f in rows(rp.diagnose(run.drop("relevance"), qrels=QRELS, by="model")) if f[1] not in POLARS_ONLY]
    assert rows(got)[:-1] == want and got.facts["judgments"] == QRELS.height


def test_bool_labels_and_an_unknown_engine():
    run = by_position(BASE).with_columns(pl.col("relevance") > 0)
    assert rows(rp.diagnose(run, by="model", engine="duckdb"))[:-1] == []
    with pytest.raises(RankPolarsError, match="engine must be 'polars', 'duckdb' or 'spark', got 'sqlite'"):
        rp.diagnose(run, engine="sqlite")  # type: ignore[arg-type]


@pytest.mark.parametrize("engine", ["duckdb", "spark"])
def test_cli_validate_engine(engine, spark, tmp_path: Path):
    bad = by_position(at(BASE, 1, item="a"))
    bad.write_parquet(tmp_path / "bad.parquet")
    result = invoke("validate", tmp_path / "bad.parquet", "--by", "model", "--engine", engine, code=1)
    assert "10 rows, 4 rankings, 2 queries, 2 groups by model" in result.stdout
    assert "duplicate items within a ranking" in result.stdout and "--duplicates first" in result.stdout
    assert f"not computed in the {engine} engine" in result.stdout and "1 error, 0 warnings" in result.stdout
    as_json = json.loads(invoke("validate", tmp_path / "bad.parquet", "--by", "model", "--engine", engine,
                                "--format", "json", code=1).stdout)
    polars = json.loads(invoke("validate", tmp_path / "bad.parquet", "--by", "model", "--format", "json", code=1).stdout)
    assert as_json["errors"] == polars["errors"] == 1
    assert [f for f in as_json["findings"] if f["level"] == "error"] == [f for f in polars["findings"] if f["level"] == "error"]
    BASE.drop("relevance").write_csv(tmp_path / "run.csv")
    QRELS.write_csv(tmp_path / "qrels.csv")
    clean = invoke("validate", tmp_path / "run.csv", "--qrels", tmp_path / "qrels.csv", "--by", "model",
                   "--engine", engine)
    assert "; qrels: 4 judgments for 2 queries" in clean.stdout and "0 errors" in clean.stdout
