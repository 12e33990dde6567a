"""The judges on the command line: ``--judge``, ``--by-judge`` and ``--bounds`` give the library's
numbers; ``agreement`` and ``pool`` print the library's tables; the errors speak in options."""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import rank_polars as rp
from tests.cli.helpers import invoke, one_line_error

METRICS = ["ndcg@10", "p@10"]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sample log without its labels, its two judges' judgments, and the same with the judge
    column named ``rater``."""
    folder = tmp_path_factory.mktemp("judges")
    out = {"log": folder / "log.parquet", "judgments": folder / "judgments.parquet", "raters": folder / "raters.csv"}
    rp.datasets.sample_log().drop("relevance").write_parquet(out["log"])
    judgments = rp.datasets.sample_judgments()
    judgments.write_parquet(out["judgments"])
    judgments.rename({"judge": "rater"}).write_csv(out["raters"])
    return out


def _csv(*args: object) -> pl.DataFrame:
    from io import StringIO

    return pl.read_csv(StringIO(invoke(*args, "--format", "csv").stdout))


def _args(metrics: list[str] = METRICS) -> list[str]:
    return [a for m in metrics for a in ("-m", m)]


def _same(got: pl.DataFrame, want: pl.DataFrame) -> None:
    assert_frame_equal(got, want.select(got.columns), check_dtypes=False, rel_tol=1e-12, abs_tol=1e-12)


def test_evaluate_under_one_judge_each_judge_and_with_the_bounds(files: dict[str, Path]) -> None:
    log, judgments = str(files["log"]), str(files["judgments"])
    for who in ("people", "llm"):
        _same(_csv("evaluate", log, "--qrels", judgments, "--judge", who, *_args(), "--by", "model"),
              rp.evaluate(log, METRICS, qrels=judgments, judge=who, by="model"))
    _same(_csv("evaluate", log, "--qrels", judgments, "--by-judge", *_args(), "--by", "model"),
          rp.evaluate(log, METRICS, qrels=judgments, by_judge=True, by="model"))
    bounds = _csv("evaluate", log, "--qrels", judgments, "--judge", "people", "--bounds", *_args(), "--by", "model")
    assert {"p@10_low", "p@10_high", "ndcg@10_high"} <= set(bounds.columns)
    _same(bounds, rp.evaluate(log, METRICS, qrels=judgments, judge="people", bounds=True, by="model"))
    # a judge column of another name, from a CSV file
    _same(_csv("evaluate", log, "--qrels", str(files["raters"]), "--qrels-judge", "rater", "--judge", "llm", *_args(),
               "--by", "model"),
          rp.evaluate(log, METRICS, qrels=judgments, judge="llm", by="model"))


def test_several_judges_without_a_choice_say_the_options(files: dict[str, Path]) -> None:
    line = one_line_error(invoke("evaluate", files["log"], "--qrels", files["judgments"], "-m", "p@5", "--by", "model",
                                 code=None))
    assert "holds 2 judges ('llm', 'people')" in line and "--judge" in line and "--by-judge" in line
    line = one_line_error(invoke("evaluate", files["log"], "--qrels", files["judgments"], "-m", "p@5", "--by", "model",
                                 "--judge", "robot", code=None))
    assert "judge='robot'" not in line and "--judge robot is not among the judges" in line


def test_compare_and_gate_under_one_judge(files: dict[str, Path], tmp_path: Path) -> None:
    log, judgments = str(files["log"]), str(files["judgments"])
    table = _csv("compare", log, "--qrels", judgments, "--judge", "llm", "-m", "ndcg@10", "--baseline", "bot-v1")
    want = rp.compare(log, "ndcg@10", qrels=judgments, judge="llm", baseline="bot-v1")
    assert table["diff"].to_list() == pytest.approx(want["diff"].to_list(), abs=1e-12)
    report = tmp_path / "r.html"
    invoke("compare", log, "--qrels", judgments, "--judge", "llm", "-m", "ndcg@10", "--baseline", "bot-v1",
           "--report", report)
    assert "the labels of judge <code>llm</code>" in report.read_text()
    # bot-v1 loses to bot-v2 under both judges: the gate fails (exit 1) whoever judged
    gate = ["gate", log, "--qrels", judgments, "-m", "ndcg@10", "--baseline", "bot-v2", "--candidate", "bot-v1",
            "--margin", "0.01"]
    for who in ("people", "llm"):
        assert "**FAIL**" in invoke(*gate, "--judge", who, code=1).stdout
    assert "--judge" in one_line_error(invoke(*gate, code=3))


def test_the_sql_of_two_judges_is_by_judge(files: dict[str, Path]) -> None:
    sql = invoke("sql", "-m", "p@5", "--table", "logs", "--qrels", "judgments", "--by", "model", "--judge", "people",
                 "--judge", "llm").stdout
    con = duckdb.connect()
    con.register("logs", pl.read_parquet(files["log"]).to_arrow())
    con.register("judgments", pl.read_parquet(files["judgments"]).to_arrow())
    got = con.sql(sql).pl().sort("judge", "model")
    want = rp.evaluate(str(files["log"]), "p@5", qrels=str(files["judgments"]), by="model", by_judge=True)
    assert got["judge"].to_list() == want["judge"].to_list()
    assert got["p@5"].to_list() == pytest.approx(want["p@5"].to_list(), abs=1e-12)


def test_agreement_prints_the_librarys_tables(files: dict[str, Path]) -> None:
    judgments = str(files["judgments"])
    _same(_csv("agreement", judgments, "--n-resamples", "50", "--seed", "3"),
          rp.agreement(judgments, n_resamples=50, seed=3))
    _same(_csv("agreement", judgments, "--confusion"), rp.grade_confusion(judgments))
    _same(_csv("agreement", judgments, "--per-query"), rp.agreement_per_query(judgments))
    _same(_csv("agreement", str(files["raters"]), "--judge-column", "rater", "--n-resamples", "50"),
          rp.agreement(judgments, n_resamples=50))
    assert "two judges or more" in one_line_error(invoke("agreement", judgments, "--judge", "people", code=None))


def test_pool_and_the_judging_queue(files: dict[str, Path]) -> None:
    log, judgments = str(files["log"]), str(files["judgments"])
    _same(_csv("pool", log, "--depth", "3"), rp.pool(log, depth=3))
    queue = _csv("pool", log, "--qrels", judgments, "--judge", "people", "--strategy", "impact", "--budget", "50")
    _same(queue, rp.pool(log, depth=10, judgments=judgments, judge="people", strategy="impact", budget=50))
    assert queue.height == 50
    assert "give --qrels" in invoke("pool", log, "--budget", "5", code=2).output


def test_validate_diagnoses_each_judge_on_its_own(files: dict[str, Path]) -> None:
    out = invoke("validate", files["log"], "--qrels", files["judgments"], "--by", "model").stdout
    assert "qrels: judgments 3,013 by llm, 1,647 by people, for 200 queries" in out
    assert "judged more than once" not in out and "0 errors, 1 warning" in out
    assert "judge 'people': unjudged share of the top 10: bot-v1 39.1%" in out
    one = invoke("validate", files["log"], "--qrels", files["judgments"], "--by", "model", "--judge", "llm").stdout
    assert "qrels: 3,013 judgments for 200 queries" in one and "judge 'llm'" not in one
