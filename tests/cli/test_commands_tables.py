"""--history, --catalog, --features, --subtopics: the tables beyond-accuracy and diversity metrics
read, named on the command line.  Expected values: the Python API with the same tables (itself
checked against recommenders, RecBole's and Elliot's formulas and pyndeval elsewhere)."""

from __future__ import annotations

import io
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import rank_polars as rp
from rank_polars.datasets import chatbot_history, chatbot_log, chatbot_subtopics, chatbot_videos

from tests.cli.helpers import invoke, one_line_error


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("tables")
    out = {"log": d / "log.parquet", "history": d / "history.parquet", "history_csv": d / "history.csv",
           "videos": d / "videos.parquet", "subtopics": d / "subtopics.parquet", "ndeval": d / "subtopics.txt"}
    chatbot_log().write_parquet(out["log"])
    chatbot_history().write_parquet(out["history"])
    chatbot_history().write_csv(out["history_csv"])
    chatbot_videos().write_parquet(out["videos"])
    subtopics = chatbot_subtopics()
    subtopics.write_parquet(out["subtopics"])
    out["ndeval"].write_text("".join(f"{q} {s} {i} {int(r)}\n" for q, s, i, r in
                                     subtopics.select("query", "subtopic", "item", "relevance").iter_rows()))
    return out


def _csv(result: object) -> pl.DataFrame:
    return pl.read_csv(io.StringIO(result.stdout))  # type: ignore[attr-defined]


@pytest.mark.parametrize("history", ["history", "history_csv"])
@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_beyond_accuracy_tables_from_files(tables: dict[str, Path], history: str, engine: str) -> None:
    """``novelty``, ``arp``, ``ils`` and ``catalog_coverage`` by name, their tables as options
    (a CSV history too), beside ``ndcg@5``: the numbers of ``rp.evaluate`` with those tables."""
    result = invoke("evaluate", tables["log"], "-m", "novelty(unseen=zero)@5", "-m", "arp@5", "-m", "ils@5",
                    "-m", "catalog_coverage@5", "-m", "ndcg@5", "--by", "model", "--history", tables[history],
                    "--features", tables["videos"], "--catalog", tables["videos"], "--engine", engine, "--format", "csv")
    past, videos = chatbot_history(), chatbot_videos()
    want = rp.evaluate(chatbot_log(), [rp.novelty(k=5, history=past, unseen="zero"), rp.arp(k=5, history=past),
                                       rp.ils(k=5, features=videos), rp.catalog_coverage(k=5, catalog=videos), "ndcg@5"],
                       by="model")
    assert_frame_equal(_csv(result), want, check_dtypes=False, abs_tol=1e-12)


@pytest.mark.parametrize("source", ["subtopics", "ndeval"])
def test_subtopic_judgments_from_a_file(tables: dict[str, Path], source: str) -> None:
    """``--subtopics`` (a Parquet table, or ndeval's text file read by its content) beside the flat
    judgments' metric: the numbers of the spec carrying the same table."""
    result = invoke("evaluate", tables["log"], "-m", "alpha_ndcg@5", "-m", "strec@5", "-m", "ndcg@5", "--by", "model",
                    "--subtopics", tables[source], "--format", "csv")
    subtopics = chatbot_subtopics()
    specs = [rp.measures.parse(name).replace(subtopics=subtopics) for name in ("alpha_ndcg@5", "strec@5")]
    want = rp.evaluate(chatbot_log(), [*specs, "ndcg@5"], by="model")
    assert_frame_equal(_csv(result), want, check_dtypes=False, abs_tol=1e-12)


def test_compare_reads_the_tables_too(tables: dict[str, Path]) -> None:
    result = invoke("compare", tables["log"], "-m", "arp@5", "--by", "model", "--baseline", "bot-v1",
                    "--history", tables["history"], "--format", "csv")
    want = rp.compare(chatbot_log(), [rp.arp(k=5, history=chatbot_history())], by="model", baseline="bot-v1")
    got = _csv(result)
    for column in ("mean_baseline", "mean_version", "diff", "p_value"):
        assert got[column].to_list() == pytest.approx(want[column].to_list(), abs=1e-12), column


@pytest.mark.parametrize("metric, options, said", [
    ("novelty@5", [], "novelty@5 needs --history FILE (past interactions"),
    ("ils@5", ["--history", "history"], "ils@5 needs --features FILE (item -> a vector or categories"),
    ("serendipity@5", [], "serendipity@5 needs --features FILE (item -> a vector or categories (item, ...)) and --history FILE"),
    ("alpha_ndcg@5", [], "alpha_ndcg@5 needs --subtopics FILE (subtopic judgments (query, subtopic, item, relevance)) "
                         "or --qrels FILE with a 'subtopic' column"),
])
def test_a_missing_table_is_named_by_its_option(tables: dict[str, Path], metric: str, options: list[str], said: str) -> None:
    """The library's message names a keyword (``history=``) and a Python call; the command line
    names its option."""
    args = [tables[o] if o in tables else o for o in options]
    line = one_line_error(invoke("evaluate", tables["log"], "-m", metric, "--by", "model", *args, code=None))
    assert said in line, line
    assert "rp." not in line and "=frame" not in line, line


def test_a_table_no_metric_reads_is_said(tables: dict[str, Path]) -> None:
    """``--catalog`` beside novelty alone (novelty reads no catalogue): a warning, not silence."""
    result = invoke("evaluate", tables["log"], "-m", "novelty(unseen=zero)@5", "--by", "model",
                    "--history", tables["history"], "--catalog", tables["videos"])
    assert "warning: --catalog is read by no metric of this call (novelty(unseen=zero)@5)" in result.stderr
    assert "--history" not in result.stderr
