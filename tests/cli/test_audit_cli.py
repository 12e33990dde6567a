"""Audit of the command line's output formats and messages against the Python API.

Each test here failed on the code it was written against (a CI column labelled with a rounded
level, LaTeX cells that OT1 fonts print wrongly, library keywords left in Python spelling, a
write failure naming the temporary file, long ids cut in the text table, a click log refused,
``--baseline 2`` not finding version 2 of an integer column), except two guards: per-query output
with two --by columns read back exactly, and a closed stdout giving no traceback.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import rank_polars as rp

from tests.cli.helpers import invoke, one_line_error


def test_the_ci_column_names_the_level_asked_for(files: dict[str, Path], log: pl.DataFrame) -> None:
    """--confidence 0.999 is a 99.9% interval, not a "100% CI"; 0.975 is not "98%"."""
    for level, label in ((0.999, "99.9% CI"), (0.975, "97.5% CI"), (0.95, "95% CI")):
        md = invoke("compare", files["parquet"], "-m", "ndcg@10", "--baseline", "bot-v1", "--confidence", level,
                    "--format", "markdown").stdout
        header = [c.strip() for c in md.splitlines()[0].strip("|").split("|")]
        assert label in header, header
        row = rp.compare(log, ["ndcg@10"], by="model", baseline="bot-v1", confidence=level).row(0, named=True)
        cells = [c.strip() for c in md.splitlines()[2].strip("|").split("|")]
        assert cells[header.index(label)] == f"[{row['ci_low']:+.4f}, {row['ci_high']:+.4f}]"


def test_latex_cells_print_as_written(tmp_path: Path, log: pl.DataFrame) -> None:
    """``|``, ``<`` and ``>`` are other glyphs in LaTeX's default (OT1) fonts (an em dash, ¡, ¿), and a
    blank line inside a cell ends the paragraph mid-table: all are written as commands or spaces."""
    names = {"bot-v1": "a|b <new>", "bot-v2": "c\n\nd_%"}
    log.with_columns(pl.col("model").replace(names)).write_parquet(tmp_path / "odd.parquet")
    tex = invoke("evaluate", tmp_path / "odd.parquet", "-m", "ndcg@10", "--by", "model", "--format", "latex").stdout
    want = rp.evaluate(log, ["ndcg@10"], by="model")
    rows = tex.splitlines()[4:-2]
    assert rows == [
        rf"a\textbar{{}}b \textless{{}}new\textgreater{{}} & 30 & {want['ndcg@10'][0]:.4f} \\",
        rf"c  d\_\% & 30 & {want['ndcg@10'][1]:.4f} \\",
    ]


@pytest.mark.parametrize(
    ("args", "said", "python"),
    [
        (["evaluate", "{parquet}", "-m", "ndcg@10", "--by", "model", "--per-query", "--ci", "0.9"], "--ci", "ci="),
        (["compare", "{parquet}", "-m", "ndcg@10", "--test", "delta", "--interval", "t"], "--interval delta", "interval="),
    ],
)
def test_library_keywords_are_said_as_options(args: list[str], said: str, python: str, files: dict[str, Path]) -> None:
    line = one_line_error(invoke(*[a.format(**files) for a in args], code=1))
    assert said in line and python not in line, line


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc, where no file can be created")
def test_a_write_that_fails_names_the_output_file(files: dict[str, Path]) -> None:
    line = one_line_error(invoke("evaluate", files["parquet"], "-m", "ndcg@10", "--by", "model", "-o", "/proc/means.csv", code=1))
    assert "'/proc/means.csv'" in line and ".tmp" not in line, line


def test_output_and_column_messages(files: dict[str, Path]) -> None:
    """An output 'folder' that is a file is said to be one; a column list follows a separator."""
    line = one_line_error(invoke("evaluate", files["parquet"], "-m", "ndcg@10", "--by", "model",
                                 "-o", files["parquet"] / "means.csv", code=1))
    assert "not a folder" in line and "does not exist" not in line, line
    line = one_line_error(invoke("evaluate", files["parquet"], "-m", "ndcg@10", "--by", "zzz", code=1))
    assert "no column 'zzz' (--by); columns are 'model'" in line, line


def test_long_ids_are_not_cut_in_the_text_table(tmp_path: Path, log: pl.DataFrame) -> None:
    """A query column holding the question itself: the text table shows each id whole."""
    long = log.filter(pl.col("model") == "bot-v1").with_columns(query=pl.col("query") + " " + "why " * 70 + "END")
    long.write_parquet(tmp_path / "long.parquet")
    out = invoke("evaluate", tmp_path / "long.parquet", "-m", "ndcg@10", "--per-query").stdout
    want = rp.evaluate(long, ["ndcg@10"], per_query=True)
    assert out.count("END") == want.height and "…" not in out
    for q, v in want.iter_rows():
        assert re.search(re.escape(q) + r"\s*\S\s*" + re.escape(f"{v:.4f}"), out), q


def test_per_query_by_two_columns_in_every_text_format_is_the_api(files: dict[str, Path], log: pl.DataFrame) -> None:
    """--per-query with two --by columns, written as CSV, TSV and JSON Lines, reads back as evaluate's frame."""
    with_day = log.with_columns(day=pl.when(pl.col("query") < "q0016").then(pl.lit("007")).otherwise(pl.lit("1e3")))
    want = rp.evaluate(with_day, ["ndcg@10", "map"], by=["model", "day"], per_query=True)
    path = files["parquet"].parent / "with_day.csv"
    with_day.write_csv(path)
    for fmt, read in (("csv", lambda s: pl.read_csv(io.StringIO(s), infer_schema=False)),
                      ("tsv", lambda s: pl.read_csv(io.StringIO(s), separator="\t", infer_schema=False)),
                      ("jsonl", lambda s: pl.read_ndjson(io.StringIO(s)))):
        out = invoke("evaluate", path, "-m", "ndcg@10", "-m", "map", "--by", "model", "--by", "day", "--per-query",
                     "--engine", "duckdb", "--format", fmt).stdout
        got = read(out).with_columns(pl.col("ndcg@10", "map").cast(pl.Float64))
        assert got["day"].to_list()[:1] == ["007"]  # an id that looks like a number stays text
        assert_frame_equal(got, want, check_dtypes=False, check_exact=True)


def test_a_click_log_needs_no_relevance_column(tmp_path: Path) -> None:
    """As in ``rp.evaluate``, click metrics on a log without labels read its ``click`` column, and
    ``--relevance click`` makes the clicks the labels of ``rr`` (never unasked: one reading per call)."""
    clicks = pl.DataFrame({"query": ["a", "a", "a", "b", "b"], "item": ["x", "y", "z", "x", "y"],
                           "position": [1, 2, 3, 11, 12], "click": [0, 1, 1, 0, 1]})
    clicks.write_parquet(tmp_path / "clicks.parquet")
    out = invoke("evaluate", tmp_path / "clicks.parquet", "-m", "ctr@10", "-m", "rr", "--relevance", "click",
                 "--per-query", "--format", "json").stdout
    want = rp.evaluate(clicks, ["ctr@10", "rr"], relevance="click", per_query=True)
    assert_frame_equal(pl.read_json(io.StringIO(out)), want, check_dtypes=False)  # b's ctr@10 is null, not 0
    line = one_line_error(invoke("evaluate", tmp_path / "clicks.parquet", "-m", "ndcg@10", code=1))
    assert "'relevance'" in line and "--qrels" in line and "--relevance click" in line, line


def test_a_value_in_an_error_is_quoted_as_a_shell_takes_it() -> None:
    line = one_line_error(invoke("sql", "-m", "ndcg@10", "--table", "my logs", code=1))
    assert "--table 'my logs' is not one table name" in line, line


def test_stdout_closed_early_is_no_traceback(files: dict[str, Path]) -> None:
    """``rank-polars evaluate ... | head -1``: the reader is gone; nothing is said on stderr."""
    import os
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)  # closed before the first byte: every write fails with EPIPE
    try:
        done = subprocess.run([sys.executable, "-c", "from rank_polars.cli import main; main()", "evaluate",
                               str(files["parquet"]), "-m", "ndcg@10", "--by", "model", "--per-query"],
                              stdout=write, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write)
    assert done.stderr == "" and done.returncode in (0, 1), done.stderr


def test_baseline_in_an_integer_version_column(tmp_path: Path, log: pl.DataFrame) -> None:
    """--baseline 2 names the version 2 of an integer column, as ``baseline=2`` does in Python."""
    numbered = log.with_columns(pl.col("model").replace({"bot-v1": "1", "bot-v2": "2"}).cast(pl.Int64))
    numbered.write_parquet(tmp_path / "numbered.parquet")
    out = invoke("compare", tmp_path / "numbered.parquet", "-m", "ndcg@10", "--baseline", "2", "--format", "csv").stdout
    want = rp.compare(numbered, ["ndcg@10"], by="model", baseline=2)
    assert_frame_equal(pl.read_csv(io.StringIO(out)), want, check_dtypes=False)
    line = one_line_error(invoke("compare", tmp_path / "numbered.parquet", "-m", "ndcg@10", "--baseline", "v2", code=1))
    assert "versions are 1, 2" in line, line


def test_a_warning_names_a_flag_as_typed(tmp_path: Path) -> None:
    """The library's ``per_query=True`` is the flag ``--per-query``: no ``True`` after it."""
    clicks = pl.DataFrame({"query": ["a", "b"], "item": ["x", "x"], "position": [1, 11], "click": [1, 1],
                           "relevance": [1, 1]})
    clicks.write_parquet(tmp_path / "clicks.parquet")
    result = invoke("evaluate", tmp_path / "clicks.parquet", "-m", "ctr@10")
    warning = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert warning and warning[0].endswith("--per-query shows them"), result.stderr


def test_dash_as_the_output_is_stdout(files: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``-o -`` wrote a file named "-" (every Unix tool reads it as stdout)."""
    monkeypatch.chdir(tmp_path)
    result = invoke("evaluate", files["parquet"], "-m", "ndcg@10", "--by", "model", "--format", "csv", "-o", "-")
    assert not (tmp_path / "-").exists()
    got = pl.read_csv(io.StringIO(result.stdout))
    want = rp.evaluate(pl.read_parquet(files["parquet"]), ["ndcg@10"], by="model")
    assert got["ndcg@10"].to_list() == want["ndcg@10"].to_list()


def test_evaluate_reads_ndeval_qrels_for_a_diversity_metric(tmp_path: Path) -> None:
    """``--qrels`` in ndeval's format with ``-m alpha_ndcg@20``: the command read it as TREC qrels
    (the subtopic field dropped) and said the measure needs subtopics; the library reads it."""
    log = pl.DataFrame({"query": ["1"] * 4 + ["2"] * 3, "item": ["a", "b", "c", "d", "a", "e", "f"],
                        "position": [1, 2, 3, 4, 1, 2, 3]})
    log.write_parquet(tmp_path / "log.parquet")
    (tmp_path / "subtopics.txt").write_text("1 1 a 1\n1 2 b 1\n1 1 c 1\n1 3 d 0\n1 3 x 1\n2 1 e 1\n2 2 f 2\n")
    result = invoke("evaluate", tmp_path / "log.parquet", "--qrels", tmp_path / "subtopics.txt",
                    "-m", "alpha_ndcg@20", "-m", "ndcg@10", "--format", "csv")
    got = pl.read_csv(io.StringIO(result.stdout))
    want = rp.evaluate(str(tmp_path / "log.parquet"), ["alpha_ndcg@20", "ndcg@10"], qrels=str(tmp_path / "subtopics.txt"))
    assert got["alpha_ndcg@20"].to_list() == want["alpha_ndcg@20"].to_list()
    assert got["ndcg@10"].to_list() == want["ndcg@10"].to_list()
    assert 0.0 < want["alpha_ndcg@20"][0] < 1.0
