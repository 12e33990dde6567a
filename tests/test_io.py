"""Files that are odd: every fault a clear error naming the file, the same in both engines.

Each row of ``FAULTS`` writes files into a fresh folder and says what ``evaluate`` must
raise; every row runs in both engines.  ``READABLE`` are odd files that are read, and must
give the numbers of the same log given as a DataFrame.
"""

from __future__ import annotations

import gzip
import random
from pathlib import Path
from typing import Callable

import polars as pl
import pytest
from click.testing import CliRunner
from polars.testing import assert_frame_equal

import rank_polars as rp
from rank_polars import io as rio
from rank_polars.errors import DataError, RankPolarsError

ENGINES = ["polars", "duckdb"]
BASE = pl.DataFrame({
    "query": ["q1", "q1", "q1", "q2", "q2"], "item": list("abcde"),
    "position": [1, 2, 3, 1, 2], "relevance": [1, 0, 2, 0, 1],
})
METRICS = ["ndcg@3", "ap", "p@2"]


def parquet(df: pl.DataFrame, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    df.write_parquet(path)
    return path


def text(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


def _truncated(d: Path) -> Path:
    full = parquet(BASE, d / "full.parquet").read_bytes()
    return text(d / "run.parquet", full[: len(full) // 2])


def _noise(n: int) -> bytes:
    """``n`` fixed pseudo-random bytes.  Fresh random ones failed 1 run in ~100: a NUL among the
    first two bytes is UTF-16 to the format sniffer, a rightly different error."""
    return random.Random(n).randbytes(n)


def _corrupt_footer(d: Path) -> Path:
    return text(d / "run.parquet", b"PAR1" + _noise(64) + b"\x10\x00\x00\x00PAR1")


def _mixed_types(d: Path) -> Path:
    parquet(BASE.filter(query="q1"), d / "logs" / "a.parquet")
    parquet(BASE.filter(query="q2").with_columns(query=pl.lit(2)), d / "logs" / "b.parquet")
    return d / "logs"


def _missing_column(d: Path) -> Path:
    parquet(BASE.filter(query="q1"), d / "logs" / "a.parquet")
    parquet(BASE.filter(query="q2").drop("relevance"), d / "logs" / "b.parquet")
    return d / "logs"


def _hive_conflict(d: Path) -> Path:
    parquet(BASE.with_columns(model=pl.lit("Z")), d / "logs" / "model=A" / "part-0.parquet")
    return d / "logs"


def _hive_levels(d: Path) -> Path:
    parquet(BASE.filter(query="q1"), d / "logs" / "model=A" / "part-0.parquet")
    parquet(BASE.filter(query="q2"), d / "logs" / "part-1.parquet")
    return d / "logs"


def _mixed_folder(d: Path) -> Path:
    parquet(BASE, d / "logs" / "a.parquet")
    text(d / "logs" / "b.parquet", "query,item\nq1,a\n")
    return d / "logs"


CSV_HEAD = "query,item,position,relevance\n"
# name: (make files in a folder -> run path, error type, message fragments)
FAULTS: dict[str, tuple[Callable[[Path], object], type[Exception], list[str]]] = {
    "empty folder": (lambda d: (d / "logs").mkdir() or d / "logs", RankPolarsError, ["has no .parquet files", "logs"]),
    "glob matching nothing": (lambda d: str(d / "nothing-*.parquet"), RankPolarsError, ["no file matches", "nothing-*"]),
    "missing file": (lambda d: d / "absent.parquet", RankPolarsError, ["no such file", "absent.parquet"]),
    "zero-byte parquet": (lambda d: text(d / "run.parquet", b""), DataError, ["run.parquet", "empty (0 bytes)"]),
    "zero-byte parquet in a folder": (
        lambda d: (parquet(BASE, d / "logs" / "a.parquet"), text(d / "logs" / "b.parquet", b""))[1].parent,
        DataError, ["b.parquet", "empty (0 bytes)"]),
    "truncated parquet": (_truncated, DataError, ["run.parquet"]),
    "truncated parquet in a glob": (
        lambda d: (_truncated(d), str(d / "*.parquet"))[1], DataError, ["run.parquet", "truncated"]),
    "garbage parquet": (lambda d: text(d / "run.parquet", b"garbage " + _noise(200).replace(b"P", b"Q")), DataError,
                        ["run.parquet", "not a Parquet file"]),
    "corrupt footer": (_corrupt_footer, DataError, ["run.parquet", "corrupt Parquet file"]),
    "text file in a parquet folder": (_mixed_folder, DataError, ["b.parquet", "not a Parquet file"]),
    "folder whose files disagree on a type": (
        _mixed_types, DataError, ["disagree on column 'query'", "String", "a.parquet", "Int32", "b.parquet"]),
    "folder whose files disagree on columns": (
        _missing_column, DataError, ["'relevance' is in", "a.parquet", "not in", "b.parquet"]),
    "hive folder contradicted by the file": (
        _hive_conflict, DataError, ["conflicting partition value", "part-0.parquet", "model=A", "'Z'"]),
    "hive folders at different levels": (_hive_levels, DataError, ["disagree on partition folders"]),
    "CSV with an extra field": (
        lambda d: text(d / "run.csv", CSV_HEAD + "q1,a,1,1\nq1,b,2,0,9\n"), DataError,
        ["run.csv", "line 3 has 5 fields", "header has 4"]),
    "latin-1 CSV": (lambda d: text(d / "run.csv", (CSV_HEAD + "q1,café,1,1\n").encode("latin-1")), DataError,
                    ["run.csv", "not UTF-8", "line 2"]),
    "latin-1 CSV beyond the first 64 KiB": (
        lambda d: text(d / "run.csv", (CSV_HEAD + "q1,a,1,1\n" * 9000 + "q1,café,1,1\n").encode("latin-1")),
        DataError, ["run.csv", "not UTF-8", "line 9002"]),
    "header-only CSV": (lambda d: text(d / "run.csv", CSV_HEAD), DataError, ["run.csv", "no rows", "empty log"]),
    "CSV position not an integer": (
        lambda d: text(d / "run.csv", CSV_HEAD + "q1,a,1,1\nq1,b,2.5,0\n"), DataError,
        ["run.csv", "line 3", "'position'", "'2.5'", "not an integer"]),
    "CSV label not a number": (
        lambda d: text(d / "run.csv", CSV_HEAD + "q1,a,1,yes\n"), DataError, ["run.csv", "line 2", "'relevance'"]),
    "zero-byte CSV": (lambda d: text(d / "run.csv", b""), DataError, ["run.csv", "empty (0 bytes)"]),
    "only comments": (lambda d: text(d / "run.txt", "# nothing\n\n"), DataError, ["run.txt", "no data lines"]),
    "unrecognised text": (lambda d: text(d / "run.dat", "hello world\n"), DataError,
                          ["run.dat", "cannot tell the format", "TREC run", "CSV/TSV with a header", "'hello world'"]),
    "gzip file": (lambda d: text(d / "run.csv.gz", gzip.compress(CSV_HEAD.encode())), DataError,
                  ["run.csv.gz", "gzip"]),
    "TREC run with a malformed line": (
        lambda d: text(d / "run.trec", "q1 Q0 a 1 2.0 r\n\nq1 Q0 b 2 1.0\n"), DataError,
        ["run.trec", "line 3 is not a TREC run line"]),
    "TREC run with a bad score": (
        lambda d: text(d / "run.trec", "q1 Q0 a 1 2.0 r\nq1 Q0 b 2 high r\n"), DataError,
        ["run.trec", "line 2", "score", "'high'"]),
    "TREC run with duplicate docs": (
        lambda d: text(d / "run.trec", "q1 Q0 a 1 2.0 r\nq1 Q0 b 2 1.0 r\nq1 Q0 a 3 0.5 r\n"), DataError,
        ["run.trec", "duplicate docs", "query 'q1' doc 'a'", "lines 1, 3"]),
    "folder of TREC files": (
        lambda d: (text(d / "runs" / "a.txt", "q1 Q0 a 1 2.0 r\n"), str(d / "runs" / "*.txt"))[1], DataError,
        ["a.txt", "not a Parquet file"]),
}


def _evaluate(run, engine, **kwargs):
    return rp.evaluate(run, METRICS, engine=engine, per_query=True, **kwargs)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", list(FAULTS))
def test_file_fault_gives_a_clear_error_naming_the_file(tmp_path, name, engine):
    make, error, fragments = FAULTS[name]
    run = make(tmp_path)
    with pytest.raises(error) as info:
        _evaluate(run, engine)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message


QRELS_FAULTS = {
    "TREC qrels with five fields": ("q1 0 a 1\nq1 0 b 1 x\n", ["qrels.txt", "line 2 is not a TREC qrels line"]),
    "TREC qrels with a word for a grade": ("q1 0 a 1\nq1 0 b yes\n", ["qrels.txt"]),
    "TREC qrels judging a doc twice": ("q1 0 a 1\nq1 0 a 0\n", ["qrels.txt", "duplicate docs", "'a'"]),
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", list(QRELS_FAULTS))
def test_qrels_file_fault_names_the_file_and_line(tmp_path, name, engine):
    content, fragments = QRELS_FAULTS[name]
    qrels = text(tmp_path / "qrels.txt", content)
    with pytest.raises(DataError) as info:
        _evaluate(BASE.drop("relevance"), engine, qrels=qrels)
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)


def _bracket_name(d: Path) -> Path:
    parquet(BASE.with_columns(relevance=0), d / "runa.parquet")  # what a glob 'run[a].parquet' would match
    return parquet(BASE, d / "run[a].parquet")


def _backslash_folder(d: Path) -> Path:
    parquet(BASE.filter(query="q1"), d / "back\\slash" / "model=A" / "p0.parquet")
    parquet(BASE.filter(query="q2"), d / "back\\slash" / "model=A" / "p1.parquet")
    return d / "back\\slash"


def _int_widths(d: Path) -> Path:
    parquet(BASE.filter(query="q1").with_columns(pl.col("position").cast(pl.Int32)), d / "logs" / "a.parquet")
    parquet(BASE.filter(query="q2"), d / "logs" / "b.parquet")
    return d / "logs"


def _hive_agrees(d: Path) -> Path:
    return parquet(BASE.with_columns(model=pl.lit("A")), d / "logs" / "model=A" / "p.parquet").parent.parent


# odd files that are read as documented: the numbers of BASE
READABLE: dict[str, Callable[[Path], object]] = {
    "a file named run[a].parquet is that file, not a glob": _bracket_name,
    "a folder with a backslash in its name": _backslash_folder,
    "files differing only in integer width are widened": _int_widths,
    "a hive file whose own column agrees with its folder": _hive_agrees,
    "TREC-looking content under a .parquet name": lambda d: text(
        d / "run.parquet", "".join(f"{q} Q0 {i} {p} {10 - p} r\n" for q, i, p in BASE.select("query", "item", "position").iter_rows())),
    "CSV with a byte-order mark and CRLF lines": lambda d: text(
        d / "run.csv", "\ufeff" + BASE.write_csv().replace("\n", "\r\n")),
    "TSV": lambda d: text(d / "run.tsv", BASE.write_csv(separator="\t")),
    "a list of paths": lambda d: [parquet(BASE.filter(query="q1"), d / "a.parquet"),
                                  str(parquet(BASE.filter(query="q2"), d / "b.parquet"))],
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", list(READABLE))
def test_odd_file_is_read_as_documented(tmp_path, name, engine):
    run = READABLE[name](tmp_path)
    if "TREC" in name:  # ordered by score: qrels from BASE's labels
        got = _evaluate(run, engine, qrels=BASE.select("query", "item", "relevance"))
    else:
        got = _evaluate(run, engine)
    want = _evaluate(BASE, "polars")
    assert_frame_equal(got.select("query", *METRICS).sort("query"), want, abs_tol=1e-12)


@pytest.mark.parametrize("engine", ENGINES)
def test_hive_partition_values_are_text_in_both_engines(tmp_path, engine):
    parquet(BASE.filter(query="q1"), tmp_path / "logs" / "model=007" / "p.parquet")
    parquet(BASE.filter(query="q1"), tmp_path / "logs" / "model=7" / "p.parquet")
    got = rp.evaluate(tmp_path / "logs", ["p@1"], by="model", engine=engine)
    assert got["model"].to_list() == ["007", "7"]  # two versions, not one merged "7"


# --- ids are text ------------------------------------------------------------------------

@pytest.mark.parametrize("engine", ENGINES)
def test_csv_ids_are_not_inferred_as_numbers(tmp_path, engine):
    # once '007' was read as 7 and matched the judgment of '7'; '1e3' read as 1000.0; '001' as 1
    run = text(tmp_path / "zi.csv", "query,item,position\n001,007,1\n001,7,2\n001,1e3,3\n")
    qrels = text(tmp_path / "zi.qrels", "001 0 007 1\n001 0 1000 1\n")
    got = rp.evaluate(run, ["ndcg@3", "ap", "p@1"], qrels=qrels, engine=engine, per_query=True)
    assert got["query"].to_list() == ["001"]
    assert got["p@1"].item() == 1.0
    assert got["ap"].item() == 0.5  # 1000 is not 1e3: one of the two relevant items is retrieved


def test_cli_csv_run_with_trec_qrels_keeps_leading_zeros(tmp_path):
    from rank_polars.cli import main

    run = text(tmp_path / "zi.csv", "query,item,position\nq1,007,1\nq1,7,2\n")
    qrels = text(tmp_path / "zi.qrels", "q1 0 007 1\n")
    result = CliRunner().invoke(main, ["evaluate", str(run), "--qrels", str(qrels), "-m", "ndcg@3", "-m", "map",
                                       "--format", "csv"])
    assert result.exit_code == 0, result.output
    table = pl.read_csv(result.stdout.encode())
    assert table["ndcg@3"].item() == 1.0 and table["map"].item() == 1.0


@pytest.mark.parametrize("engine", ENGINES)
def test_integer_ids_in_parquet_match_text_ids_in_trec_qrels(tmp_path, engine):
    run = parquet(pl.DataFrame({"query": [7, 7, 8], "item": [1, 2, 1], "position": [1, 2, 1]}), tmp_path / "r.parquet")
    qrels = text(tmp_path / "qrels", "7 0 2 1\n8 0 1 2\n")
    got = rp.evaluate(run, ["p@1", "rr"], qrels=qrels, engine=engine, per_query=True)
    assert got.rows() == [("7", 0.0, 0.5), ("8", 1.0, 1.0)]


@pytest.mark.parametrize("engine", ENGINES)
def test_float_ids_against_text_ids_are_refused(engine):
    run = pl.DataFrame({"query": [7.0], "item": ["a"], "position": [1]})
    qrels = pl.DataFrame({"query": ["7"], "item": ["a"], "relevance": [1]})
    with pytest.raises(RankPolarsError, match="column 'query' is String but the run's is Float64"):
        rp.evaluate(run, ["p@1"], qrels=qrels, engine=engine)


def test_id_casts_rule():
    s = pl.Schema
    assert rio.id_casts(s({"q": pl.Int32}), s({"q": pl.Int64}), ["q"]) == {"q": pl.Int64}
    assert rio.id_casts(s({"q": pl.Int64}), s({"q": pl.String}), ["q"]) == {"q": pl.String}
    assert rio.id_casts(s({"q": pl.Categorical()}), s({"q": pl.String}), ["q"]) == {"q": pl.String}
    assert rio.id_casts(s({"q": pl.UInt64}), s({"q": pl.Int64}), ["q"]) == {"q": pl.String}
    assert rio.id_casts(s({"q": pl.String}), s({"q": pl.String}), ["q"]) == {}


# --- sniffing and the TREC readers -------------------------------------------------------

def test_formats_are_recognised_by_content(tmp_path):
    assert rio.sniff(parquet(BASE, tmp_path / "log.txt")) == "parquet"
    assert rio.sniff(text(tmp_path / "a", "301 Q0 d1 1 2.5 run\n")) == "trec"
    assert rio.sniff(text(tmp_path / "b", "# judged\n301 0 d1 1\n301 0 d2 -1\n")) == "qrels"
    assert rio.sniff(text(tmp_path / "c", "query\titem\tposition\nq\td\t1\n")) == "tsv"
    assert rio.sniff(text(tmp_path / "d.txt", "query,item,position\nq,d,1\n")) == "csv"


def test_read_trec_run_follows_trec_eval(tmp_path):
    path = text(tmp_path / "run", "# c\n  # indented comment\n1 Q0 d1 9 0.5 runA extra fields\n\n1\tQ0\td#2\tx\t1e1\trunA\n")
    got = rp.read_trec_run(path)
    assert got.schema == pl.Schema({"query": pl.String, "item": pl.String, "score": pl.Float64, "runid": pl.String})
    assert got.rows() == [("1", "d1", 0.5, "runA"), ("1", "d#2", 10.0, "runA")]


def test_read_trec_qrels_truncates_grades_like_atol(tmp_path):
    path = text(tmp_path / "qrels", "1 0 a 2.7\n1 0 b -0.5\n1 0 c -1\n1 0 d .9\n1 0 e +3\n")
    got = rp.read_trec_qrels(path)
    assert got["relevance"].to_list() == [2, 0, -1, 0, 3]
    assert got["relevance"].dtype == pl.Int64


def test_scan_keeps_parquet_lazy_and_checks_only_footers(tmp_path):
    path = parquet(BASE, tmp_path / "run.parquet")
    opened = rio.open_path(path)
    assert isinstance(opened, rio.ParquetFiles) and opened.files == (str(path),)
    assert isinstance(rio.scan(path), pl.LazyFrame)
