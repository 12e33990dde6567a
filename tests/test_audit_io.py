"""Inputs a real pipeline writes, read as their reference reads them, the same in both engines.

Each expected number comes from pytrec_eval on the run and judgments written out as dicts in
the test (the file's content read by hand), never from our own output; refusals name the file.
"""

from __future__ import annotations

import polars as pl
import pytest
import pytrec_eval

import rank_polars as rp
from rank_polars.errors import DataError, RankPolarsError

ENGINES = ["polars", "duckdb"]
MEASURES = {"map": "map", "ndcg": "ndcg", "P_5": "p@5", "recip_rank": "mrr"}  # pytrec_eval -> ours


def reference(run: dict[str, dict[str, float]], qrels: dict[str, dict[str, int]]) -> dict[str, dict[str, float]]:
    """pytrec_eval's per-query values (it skips judged queries absent from the run: missing="skip")."""
    return pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES)).evaluate(run)


def ours(run: object, qrels: object, engine: str) -> dict[str, dict[str, float]]:
    got = rp.evaluate(run, list(MEASURES.values()), qrels=qrels, engine=engine, per_query=True, missing="skip")
    return {str(r["query"]): {m: r[o] for m, o in MEASURES.items()} for r in got.iter_rows(named=True)}


def assert_close(got: dict[str, dict[str, float]], want: dict[str, dict[str, float]]) -> None:
    assert got.keys() == want.keys()
    for q in want:
        for m in MEASURES:
            assert got[q][m] == pytest.approx(want[q][m], abs=1e-9), (q, m)


def trec_run(run: dict[str, dict[str, float]], sep: str = " ") -> str:
    return "".join(sep.join([q, "Q0", d, str(i + 1), repr(s), "r"]) + "\n"
                   for q, docs in run.items() for i, (d, s) in enumerate(docs.items()))


def trec_qrels(qrels: dict[str, dict[str, int]], sep: str = " ") -> str:
    return "".join(sep.join([q, "0", d, str(g)]) + "\n" for q, docs in qrels.items() for d, g in docs.items())


RUN = {"1": {"a": 1.5, "b": 2.5, "c": 0.5}, "2": {"d": 1.0, "e": 3.0}}
QRELS = {"1": {"a": 1, "b": 0, "c": 2}, "2": {"d": 1, "x": 1}}
OTHER_RUN = {"1": {"a": 9.0, "b": 2.5, "c": 0.5}, "2": {"d": 1.0, "e": 3.0}}  # another ranking of query 1
OTHER_QRELS = {"1": {"b": 2}, "2": {"e": 1}}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("kind", ["trec", "csv", "qrels"])
def test_a_text_file_whose_name_has_glob_characters_is_that_file(tmp_path, kind, engine):
    # Polars' readers expand `run[a].csv` into `runa.csv`: the neighbour's numbers, silently
    if kind == "csv":
        for name, run in (("run[a].csv", RUN), ("runa.csv", OTHER_RUN)):
            rows = "".join(f"{q},{d},{s}\n" for q, docs in run.items() for d, s in docs.items())
            (tmp_path / name).write_text("query,item,score\n" + rows)
    if kind == "trec":
        (tmp_path / "run[a].csv").write_text(trec_run(RUN))
        (tmp_path / "runa.csv").write_text(trec_run(OTHER_RUN))
    qrels: object = QRELS
    if kind == "qrels":
        (tmp_path / "run[a].csv").write_text(trec_run(RUN))
        (tmp_path / "q[s].qrels").write_text(trec_qrels(QRELS))
        (tmp_path / "qs.qrels").write_text(trec_qrels(OTHER_QRELS))
        qrels = tmp_path / "q[s].qrels"
    assert_close(ours(tmp_path / "run[a].csv", qrels, engine), reference(RUN, QRELS))


# docnos trec_eval reads whole: its fields are split on C's isspace (ASCII), not on Unicode spaces
ODD_DOCNOS = ["a\u00a0b", "c\u2028d", "e\x85f", "g\x1fh", "i\u3000j"]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("docno", ODD_DOCNOS, ids=repr)
def test_trec_fields_are_split_on_ascii_whitespace_only(tmp_path, docno, engine):
    run = {"1": {"x": 2.0, docno: 7.0, "y": 1.0}, "2": {"z": 1.0, "w": 2.0}}
    qrels = {"1": {docno: 2, "y": 1}, "2": {"z": 1}}
    # the odd docno first in each file: where the format is told
    (tmp_path / "run.txt").write_text(f"1 Q0 {docno} 5 7.0 r\n" + trec_run(run).replace(f"1 Q0 {docno} 2 7.0 r\n", ""))
    (tmp_path / "qrels.txt").write_text(trec_qrels(qrels))
    want = reference(run, qrels)
    assert_close(ours(tmp_path / "run.txt", qrels, engine), want)  # the run's docno and score
    assert_close(ours(tmp_path / "run.txt", tmp_path / "qrels.txt", engine), want)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_carriage_return_inside_a_trec_run_line_is_refused_with_its_line(tmp_path, engine):
    # old Mac line ends: the whole file is one line, and a run's fields past the sixth are ignored,
    # so all but its first document would be dropped without a word (trec_eval does just that)
    (tmp_path / "run.txt").write_text(trec_run(RUN).replace("\n", "\r"))
    (tmp_path / "qrels.txt").write_text(trec_qrels(QRELS))
    with pytest.raises(DataError) as info:
        ours(tmp_path / "run.txt", tmp_path / "qrels.txt", engine)
    assert "run.txt" in str(info.value) and "line 1" in str(info.value), str(info.value)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_csv_with_two_columns_of_one_name_is_refused(tmp_path, engine):
    # Polars renames the second `score` to `score_duplicated_0`: which one ranks would be a guess
    (tmp_path / "run.csv").write_text("query,item,score,score\n1,a,1.5,0.1\n1,b,2.5,0.2\n2,d,1,3\n")
    with pytest.raises(RankPolarsError) as info:
        ours(tmp_path / "run.csv", QRELS, engine)
    assert "run.csv" in str(info.value) and "'score'" in str(info.value), str(info.value)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("sep", [",", "\t"])
def test_blank_lines_in_a_csv_are_skipped(tmp_path, sep, engine):
    rows = "".join(sep.join([q, d, repr(s)]) + "\r\n" for q, docs in RUN.items() for d, s in docs.items())
    head, tail = rows.split("\r\n", 1)
    name = "run.csv" if sep == "," else "run.tsv"
    (tmp_path / name).write_text(sep.join(["query", "item", "score"]) + "\r\n" + head + "\r\n\r\n" + tail + "\r\n\n\n")
    assert_close(ours(tmp_path / name, QRELS, engine), reference(RUN, QRELS))


@pytest.mark.parametrize("engine", ENGINES)
def test_run_and_qrels_with_tabs_crlf_bom_comments_and_blank_lines(tmp_path, engine):
    run = {"1": {"a": 1.5e0, "b": float("inf"), "c": -float("inf")}, "2": {"d": 1.0, "e": 3.0}}
    text = "\ufeff# made by a pipeline\n" + trec_run(run, "\t").replace("\n", "\r\n") + "\r\n  \r\n"
    (tmp_path / "run.trec").write_text(text.replace("inf", "Infinity"))
    (tmp_path / "qrels.txt").write_text("\ufeff" + trec_qrels(QRELS, "\t").replace("\n", "\r\n") + "\r\n")
    assert_close(ours(tmp_path / "run.trec", tmp_path / "qrels.txt", engine), reference(run, QRELS))


@pytest.mark.parametrize("engine", ENGINES)
def test_a_hive_folder_value_is_compared_with_the_files_column_once_decoded(tmp_path, engine):
    # DuckDB's COPY ... PARTITION_BY (model), WRITE_PARTITION_COLUMNS writes "a b/c" to folder
    # model=a%20b%2Fc and keeps the column in the file: the engines decode the folder name, so
    # the file agrees with it; a file whose column holds the folder's raw text does not
    rows = [(q, d, s) for q, docs in RUN.items() for d, s in docs.items()]
    run = pl.DataFrame(rows, schema=["query", "item", "score"], orient="row")
    folder = tmp_path / "logs" / "model=a%20b%2Fc"
    folder.mkdir(parents=True)
    run.with_columns(model=pl.lit("a b/c")).write_parquet(folder / "data_0.parquet")
    got = rp.evaluate(tmp_path / "logs", list(MEASURES.values()), qrels=QRELS, by="model", engine=engine,
                      per_query=True, missing="skip")
    assert got["model"].unique().to_list() == ["a b/c"]
    assert_close({str(r["query"]): {m: r[o] for m, o in MEASURES.items()} for r in got.iter_rows(named=True)},
                 reference(RUN, QRELS))
    run.with_columns(model=pl.lit("a%20b%2Fc")).write_parquet(folder / "data_0.parquet")
    with pytest.raises(DataError, match="conflicting partition value"):
        rp.evaluate(tmp_path / "logs", ["map"], qrels=QRELS, by="model", engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_null_hive_partition_whose_file_keeps_the_null_column_is_read(tmp_path, engine):
    # DuckDB's COPY ... PARTITION_BY (model), WRITE_PARTITION_COLUMNS writes a null model to
    # model=__HIVE_DEFAULT_PARTITION__ and keeps the null column in the file: they agree
    rows = [(q, d, s, "A" if q == "1" else None) for q, docs in RUN.items() for d, s in docs.items()]
    run = pl.DataFrame(rows, schema=["query", "item", "score", "model"], orient="row")
    for value, part in run.partition_by("model", as_dict=True).items():
        folder = tmp_path / "logs" / f"model={value[0] or '__HIVE_DEFAULT_PARTITION__'}"
        folder.mkdir(parents=True)
        part.write_parquet(folder / "data_0.parquet")
    got = rp.evaluate(tmp_path / "logs", list(MEASURES.values()), qrels=QRELS, by="model", engine=engine,
                      per_query=True, missing="skip")
    assert dict(zip(got["query"], got["model"])) == {"1": "A", "2": None}
    assert_close({str(r["query"]): {m: r[o] for m, o in MEASURES.items()} for r in got.iter_rows(named=True)},
                 reference(RUN, QRELS))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le"])
def test_a_utf16_file_is_named_as_such(tmp_path, encoding, engine):
    # Windows PowerShell's `>` writes UTF-16 (with a BOM); without one, ASCII is valid UTF-8
    # with a NUL after each letter. Re-encoding from latin-1, as said for bytes that are not
    # UTF-8, would keep the NULs
    (tmp_path / "run.csv").write_bytes("query,item,score\n1,a,1.5\n".encode(encoding))
    with pytest.raises(DataError, match="run.csv is UTF-16 text") as info:
        ours(tmp_path / "run.csv", QRELS, engine)
    assert "iconv -f utf-16 -t utf-8" in str(info.value)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_file_named_twice_in_a_list_of_paths_is_refused_by_name(tmp_path, engine):
    # its rows would be read twice: at best "duplicate items" about data that has none
    rows = [(q, d, s) for q, docs in RUN.items() for d, s in docs.items()]
    run = pl.DataFrame(rows, schema=["query", "item", "score"], orient="row")
    run.filter(query="1").write_parquet(tmp_path / "a.parquet")
    run.filter(query="2").write_parquet(tmp_path / "b.parquet")
    with pytest.raises(RankPolarsError, match="a.parquet") as info:
        ours([tmp_path / "a.parquet", str(tmp_path / "*.parquet")], QRELS, engine)
    assert "twice" in str(info.value)



@pytest.mark.parametrize("engine", ENGINES)
def test_a_folder_leaves_out_bookkeeping_names_as_spark_does(tmp_path, engine):
    """A Spark job still writing keeps its part files under _temporary/: read with the folder,
    every row came twice (a "duplicate items" error about clean data); _SUCCESS and hidden files
    are no data either.  A partition folder starting with _ (``_day=1``) is data."""
    run = pl.DataFrame({"query": [q for q, docs in RUN.items() for _ in docs],
                        "item": [d for docs in RUN.values() for d in docs],
                        "score": [s for docs in RUN.values() for s in docs.values()]})
    qrels = pl.DataFrame({"query": [q for q, docs in QRELS.items() for _ in docs],
                          "item": [d for docs in QRELS.values() for d in docs],
                          "relevance": [g for docs in QRELS.values() for g in docs.values()]})
    folder = tmp_path / "run"
    (folder / "_day=1").mkdir(parents=True)
    run.write_parquet(folder / "_day=1" / "part-0.parquet")
    (folder / "_temporary" / "0").mkdir(parents=True)
    run.write_parquet(folder / "_temporary" / "0" / "part-0.parquet")
    run.write_parquet(folder / ".part-1.parquet")
    (folder / "_SUCCESS").write_bytes(b"")
    assert_close(ours(str(folder), qrels, engine), reference(RUN, QRELS))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("as_file", [True, False])
def test_a_trec_qrels_file_or_dict_takes_the_callers_column_names(tmp_path, engine, as_file):
    """A PyTerrier-style run frame (qid, docno) beside TREC qrels or a pytrec_eval dict: those
    have no column names of their own, and the call said "qrels: column 'qid' not found"."""
    run = pl.DataFrame({"qid": [q for q, docs in RUN.items() for _ in docs],
                        "docno": [d for docs in RUN.values() for d in docs],
                        "score": [s for docs in RUN.values() for s in docs.values()]})
    qrels: object = QRELS
    if as_file:
        qrels = tmp_path / "qrels.txt"
        qrels.write_text(trec_qrels(QRELS))
    got = rp.evaluate(run, list(MEASURES.values()), qrels=qrels, query="qid", item="docno", engine=engine,
                      per_query=True, missing="skip")
    assert got.columns[0] == "qid"
    assert_close({str(r["qid"]): {m: r[o] for m, o in MEASURES.items()} for r in got.iter_rows(named=True)},
                 reference(RUN, QRELS))


@pytest.mark.parametrize("engine", ENGINES)
def test_ids_written_two_ways_scoring_0_everywhere_are_told(engine):
    """Item ids with a trailing space in the run ('a ' against 'a'): by the id rule other items,
    so every query scored 0 and nothing said so."""
    run = {q: {f"{d} ": s for d, s in docs.items()} for q, docs in RUN.items()}
    with pytest.warns(rp.CoverageWarning, match=r"map, ndcg: 0 on every one of the 2 queries; .*write the ids alike"):
        out = rp.evaluate(run, ["map", "ndcg"], qrels=QRELS, engine=engine)
    assert out["map"][0] == 0.0
    import warnings

    with warnings.catch_warnings():  # a run that finds something is not warned about
        warnings.simplefilter("error", rp.CoverageWarning)
        rp.evaluate(RUN, ["map", "ndcg"], qrels=QRELS, engine=engine)
