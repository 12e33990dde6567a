"""``rank-polars trec-eval`` against trec_eval 10's own expected output files, byte for byte.

The expected files and the commands that wrote them are trec_eval's (``tests/trec_eval_files.py``);
error cases check trec_eval's exit status and message, read from its v10 source.  The expected
texts of the preference and judgment-group cases written here (``TREC_EVAL_10_SAYS``) are what
trec_eval 10.0 printed for the same inputs (built from usnistgov/trec_eval at f425365, the
release's commit).
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner

import rank_polars
from rank_polars.cli import main
from rank_polars.dropins.trec_eval import run
from .trec_eval_files import COMMANDS, TEST_DIR

CORE = ["out.test", "out.test.a", "out.test.aq", "out.test.aqc", "out.test.aqcM", "out.test.aql",
        "out.test.meas_params"]
STRETCH = ["out.test.aqZ", "out.test.prefs", "out.test.qrels_prefs", "out.test.qrels_jg"]
OFFICIAL = {"runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
            "recip_rank"}


def trec_eval(args: list[str]) -> tuple[int, bytes, str]:
    """``run`` in the test folder: exit status, stdout bytes, stderr text."""
    out, err = io.BytesIO(), io.StringIO()
    stdout = io.TextIOWrapper(out, encoding="latin-1", write_through=True)
    paths = [a if not (TEST_DIR / a).exists() else str(TEST_DIR / a) for a in args]
    code = run(paths, stdout, err)
    stdout.flush()
    return code, out.getvalue(), err.getvalue()


def expected_lines(name: str, keep) -> bytes:  # type: ignore[no-untyped-def]
    """The lines of an expected file that ``keep(measure, query)`` selects."""
    lines = (TEST_DIR / name).read_bytes().splitlines(keepends=True)
    return b"".join(ln for ln in lines if keep(*_key(ln)))


def _key(line: bytes) -> tuple[str, str]:
    label, query, _ = line.decode().split("\t")
    return label.strip(), query


def official(label: str) -> bool:
    return label in OFFICIAL or label.startswith(("P_", "iprec_at_recall_"))


@pytest.mark.parametrize("name", CORE + STRETCH)
def test_expected_file_byte_for_byte(name: str) -> None:
    args, qrels, results = COMMANDS[name]
    code, out, err = trec_eval([*args, qrels, results])
    assert (code, err) == (0, "")
    assert out == (TEST_DIR / name).read_bytes()


@pytest.mark.parametrize("name", CORE + STRETCH)
def test_click_entry_point_byte_for_byte(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    args, qrels, results = COMMANDS[name]
    monkeypatch.chdir(TEST_DIR)
    result = CliRunner().invoke(main, ["trec-eval", *args, qrels, results])
    assert result.exit_code == 0, result.output
    assert result.stdout_bytes == (TEST_DIR / name).read_bytes()


def test_comment_lines_in_qrels() -> None:
    # trec_eval's Makefile: qrels.test.with-comments gives out.test, qrels.comments.123 out.test.qrels_jg
    code, out, _ = trec_eval(["qrels.test.with-comments", "results.test"])
    assert (code, out) == (0, (TEST_DIR / "out.test").read_bytes())
    code, out, _ = trec_eval(["-m", "qrels_jg", "-q", "-R", "qrels_jg", "qrels.comments.123", "results.test"])
    assert (code, out) == (0, (TEST_DIR / "out.test.qrels_jg").read_bytes())


def test_comment_lines_in_prefs(tmp_path: Path) -> None:
    # trec_eval's Makefile: prefs.comment.test (prefs.test with comment lines) gives out.test.prefs
    lines = (TEST_DIR / "prefs.test").read_text().splitlines(keepends=True)
    commented = "".join(f"# comment {i}\n{line}" if i % 7 == 0 else line for i, line in enumerate(lines))
    prefs = _write(tmp_path / "prefs.comment.test", commented)
    code, out, _ = trec_eval(["-m", "all_prefs", "-q", "-R", "prefs", prefs, "prefs.results.test"])
    assert (code, out) == (0, (TEST_DIR / "out.test.prefs").read_bytes())


@pytest.mark.parametrize("fmt, text", [("qrels", "{}"), ("qrels_prefs", "{}"), ("qrels_jg", "{}"),
                                       ("prefs", "{} s")])
def test_second_of_two_comment_lines_is_data(tmp_path: Path, fmt: str, text: str) -> None:
    # get_qrels*.c / get_prefs.c skip one '#' line, then parse the next line whatever it starts with
    # (trec_eval 10 prints the same for qrels: "result qid '#b' not found", status 4)
    body = "# a\n" + text.format("#b c d") + " 1\n" + text.format("301 0 CR93E-1282") + " 1\n"
    code, out, err = trec_eval(["-R", fmt, _write(tmp_path / "rel", body), "results.test"])
    assert (code, out, err) == (4, b"", "trec_eval: result qid '#b' not found in qrels\n")
    lone = _write(tmp_path / "rel2", "# a\n# b\n" + text.format("301 0 x") + " 1\n")
    reader = {"qrels": "get_qrels", "qrels_jg": "get_qrels_jg", "prefs": "get_prefs"}.get(fmt, "get_qrels_prefs")
    assert trec_eval(["-R", fmt, lone, "results.test"])[0::2] == (
        2, f"trec_eval.{reader}: Malformed line 1\ntrec_eval: Quit in file '{lone}'\n")


@pytest.mark.parametrize("argv", [
    ["-q", "-n", "qrels.test", "results.test"],
    ["qrels.test", "-nq", "results.test"],          # options after a file name, combined flags
    ["--query_eval_wanted", "--nosummary", "--measure=official", "qrels.test", "results.test"],
    ["-q", "-n", "--", "qrels.test", "results.test"],
])
def test_option_spellings_no_summary(argv: list[str]) -> None:
    code, out, _ = trec_eval(argv)
    assert code == 0
    assert out == expected_lines("out.test.aq", lambda m, q: official(m) and q != "all")


def test_measure_option_spellings() -> None:
    a = trec_eval(["-mP.5,10", "-m", "map", "qrels.test", "results.test"])
    b = trec_eval(["-m", "P.10,5", "-mmap", "qrels.test", "results.test"])
    assert a == b
    assert a[1] == expected_lines("out.test", lambda m, q: m in ("map", "P_5", "P_10"))


def test_judged_query_missing_from_run_stops_with_status_4() -> None:
    # trec_eval.c: "result qid '%s' not found in qrels", exit(4), after printing the queries before it
    code, out, err = trec_eval(["-q", "qrels.test", "results.trunc"])
    assert code == 4
    assert err == "trec_eval: result qid '302' not found in qrels\n"
    assert out == expected_lines("out.test.aqc", lambda m, q: official(m) and q == "301")


@pytest.mark.parametrize("argv, status, message", [
    (["-m", "nope", "qrels.test", "results.test"], 1, "trec_eval: illegal measure 'nope'\n"),
    (["-m", "P.", "qrels.test", "results.test"], 1,
     "trec_eval: improper measure in parameter 'P'\ntrec_eval: illegal measure 'P'\n"),
    (["-m", "P.0,5", "qrels.test", "results.test"], 2,
     "trec_eval: Negative cutoff detected\ntrec_eval: Cannot initialize measure 'P'\n"),
    (["-m", "P.5,5", "qrels.test", "results.test"], 2,
     "trec_eval: duplicate cutoffs detected\ntrec_eval: Cannot initialize measure 'P'\n"),
    (["-m", "ndcg.1=2,3", "qrels.test", "results.test"], 2,
     "trec_eval: malformed pair parameters in '1=2,3'\ntrec_eval: Cannot initialize measure 'ndcg'\n"),
    (["-m", "utility.1,2", "qrels.test", "results.test"], 4,
     "trec_eval.calc_utility: improper number of coefficients\ntrec_eval: Can't calculate measure 'utility'\n"),
    (["no_such_qrels", "results.test"], 2,
     "trec_eval.get_qrels: Cannot read qrels file 'no_such_qrels'\ntrec_eval: Quit in file 'no_such_qrels'\n"),
    (["qrels.test", "no_such_run"], 2,
     "trec_eval.get_results: Cannot read results file 'no_such_run'\ntrec_eval: Quit in file 'no_such_run'\n"),
    (["-R", "nope", "qrels.test", "results.test"], 2, "trec_eval: Illegal rel_format 'nope'\n"),
    (["-T", "nope", "qrels.test", "results.test"], 2, "trec_eval: Illegal retrieval results format 'nope'\n"),
    (["-Z", "no_such_file", "qrels.test", "results.test"], 255,
     "trec_eval.get_zscores: Cannot read zscores file 'no_such_file'\n"),
])
def test_trec_eval_errors(argv: list[str], status: int, message: str) -> None:
    code, out, err = trec_eval(argv)
    assert (code, out, err) == (status, b"", message)


@pytest.mark.parametrize("argv, first", [
    (["qrels.test"], "Usage: trec_eval"),
    (["-x", "qrels.test", "results.test"], "trec_eval: invalid option -- 'x'\nUsage: trec_eval"),
    (["qrels.test", "results.test", "-m"], "trec_eval: option requires an argument -- 'm'\nUsage: trec_eval"),
])
def test_usage_errors_exit_1(argv: list[str], first: str) -> None:
    code, out, err = trec_eval(argv)
    assert code == 1 and out == b"" and err.startswith(first)


def _write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def test_malformed_lines_are_numbered_as_trec_eval_numbers_them(tmp_path: Path) -> None:
    # results: blank and '#' lines are skipped and not counted; six fields are needed
    run_file = _write(tmp_path / "run", "# c\n1 Q0 a 1 2.0 r\n\n1 Q0 b 2 1.0\n")
    qrels = _write(tmp_path / "qrels", "1 0 a 1\n")
    assert trec_eval([qrels, run_file])[0::2] == (
        2, f"trec_eval.get_results: Malformed line 2\ntrec_eval: Quit in file '{run_file}'\n")
    # qrels: four fields exactly; a blank line is malformed
    bad_qrels = _write(tmp_path / "qrels2", "1 0 a 1\n\n")
    assert trec_eval([bad_qrels, run_file])[0::2] == (
        2, f"trec_eval.get_qrels: Malformed line 2\ntrec_eval: Quit in file '{bad_qrels}'\n")


def test_duplicate_document_in_a_judged_query(tmp_path: Path) -> None:
    qrels = _write(tmp_path / "qrels", "1 0 a 1\n2 0 a 1\n")
    run_file = _write(tmp_path / "run", "1 Q0 a 1 2.0 r\n2 Q0 b 1 3.0 r\n2 Q0 b 2 1.0 r\n3 Q0 c 1 1 r\n3 Q0 c 1 1 r\n")
    code, out, err = trec_eval(["-q", "-m", "P.1", qrels, run_file])
    # form_res_rels.c prints the message without a newline; query 3 is not judged, so never checked
    assert (code, err) == (4, "trec_eval.form_res_qrels: duplicate docs btrec_eval: Can't calculate measure 'P'\n")
    assert out == b"P_1                   \t1\t1.0000\n"


def test_ties_order_and_run_file_details(tmp_path: Path) -> None:
    # ties: docno descending, byte-wise ('b' > 'B' > 'A'); the rank column is ignored; sim read by atof
    qrels = _write(tmp_path / "qrels", "q 0 A 1\nq 0 b 0\n")
    run_file = _write(tmp_path / "run", "q Q0 A 1 1.0 x\n  q Q0 B 9 1.0e0 x extra\nq Q0 b 5 1 last\n")
    code, out, _ = trec_eval(["-q", "-m", "relstring.3", "-m", "recip_rank", "-m", "runid", qrels, run_file])
    assert code == 0
    assert out.decode() == (
        "recip_rank            \tq\t0.3333\n"
        "relstring_3           \tq\t'0-1'\n"
        "runid                 \tall\tlast\n"
        "recip_rank            \tall\t0.3333\n"
    )


def python_calls(args: list[str]) -> tuple[int, tuple[int, bytes, str]]:
    """The calls of rank_polars' own Python functions while ``trec_eval(args)`` runs, and its
    result: a loop per query or per pair in Python shows as a count that grows with them."""
    package = str(Path(rank_polars.__file__).parent)
    calls = 0

    def count(frame, event, arg):  # type: ignore[no-untyped-def]
        nonlocal calls
        if event == "call" and frame.f_code.co_filename.startswith(package):
            calls += 1

    sys.setprofile(count)
    try:
        result = trec_eval(args)
    finally:
        sys.setprofile(None)
    return calls, result


def _big_files(folder: Path, nq: int, nd: int) -> list[str]:
    rng = np.random.default_rng(7)
    docs = (np.arange(nq * nd) % 997).astype(str)
    pl.DataFrame({"q": np.repeat(np.arange(nq), nd).astype(str), "i": "Q0", "d": docs,
                  "r": 0, "s": rng.random(nq * nd).round(3), "t": "big"}).write_csv(
        folder / "run", separator=" ", include_header=False)
    pl.DataFrame({"q": np.repeat(np.arange(nq), 10).astype(str), "i": "0",
                  "d": (np.arange(nq * 10) % 997).astype(str), "g": rng.integers(0, 3, nq * 10)}).write_csv(
        folder / "qrels", separator=" ", include_header=False)
    return [str(folder / "qrels"), str(folder / "run")]


def test_large_input_is_vectorised(tmp_path: Path) -> None:
    """No Python loop per query: ten times the queries, the same number of rank_polars' own
    Python calls (how fast 2M rows are is benchmarks/', not a wall-clock bound here)."""
    counts = []
    # a first run imports what the command imports lazily (module bodies count as calls): how
    # many depended on which tests the worker ran before (6815 against 6776 once)
    (tmp_path / "warm").mkdir()
    python_calls(_big_files(tmp_path / "warm", 6, 10))
    for nq in (60, 600):
        (tmp_path / str(nq)).mkdir()
        calls, (code, out, err) = python_calls(_big_files(tmp_path / str(nq), nq, 100))
        assert (code, err) == (0, "")
        assert f"num_q                 \tall\t{nq}\n".encode() in out
        assert f"num_ret               \tall\t{nq * 100}\n".encode() in out
        counts.append(calls)
    assert counts[0] == counts[1] > 0, counts


def test_level_zero_judged_only_and_collection_size(tmp_path: Path) -> None:
    # by hand from trec_eval's rules: with -l0 grade 0 is relevant, not-in-qrels (-1 inside trec_eval)
    # and negative grades (-2) are not; -J drops both before ranking; utility's d counts -N docs
    qrels = _write(tmp_path / "qrels", "q 0 a 0\nq 0 b 1\nq 0 c -1\n")
    run_file = _write(tmp_path / "run", "q Q0 a 1 5 r\nq Q0 x 2 4 r\nq Q0 c 3 3 r\nq Q0 b 4 2 r\n")
    code, out, _ = trec_eval(["-n", "-q", "-l0", "-m", "P.1,2,3,4", "-m", "num_rel", qrels, run_file])
    assert (code, out.decode()) == (0, "num_rel               \tq\t2\nP_1                   \tq\t1.0000\n"
                                       "P_2                   \tq\t0.5000\nP_3                   \tq\t0.3333\n"
                                       "P_4                   \tq\t0.5000\n")
    code, out, _ = trec_eval(["-n", "-q", "-J", "-m", "P.1,2", "-m", "num_ret", "-m", "relstring", qrels, run_file])
    assert out.decode() == ("num_ret               \tq\t2\nP_1                   \tq\t0.0000\n"
                            "P_2                   \tq\t0.5000\nrelstring             \tq\t'01'\n")
    # utility.1,-1,0,1 with -N 100: 1*rel_ret - 1*nonrel_ret + 0 + 1*(100 + rel_ret - ret - rel) = 1 - 3 + 96
    code, out, _ = trec_eval(["-n", "-q", "-m", "utility.1,-1,0,1", "-N", "100", qrels, run_file])
    assert out.decode() == "utility_1,-1,0,1      \tq\t94.0000\n"


# --- preferences and judgment groups, against trec_eval 10.0's own output for the same inputs ---

# get_prefs.c's examples: q1 is one sub-group (13 preferences: 5 for d4, 4 for d1, 2 each for d2, d6);
# q2's user u1 has two sub-groups (1>2, 1>3, 2>3, 2>4 and the transitive 1>4), user u2 one (3>9>1)
PREFS = ("q1 u1 s1 d1 3.0\nq1 u1 s1 d2 2.0\nq1 u1 s1 d3 0.0\nq1 u1 s1 d4 6.0\nq1 u1 s1 d5 0.0\n"
         "q1 u1 s1 d6 2.0\nq2 u1 sub1 d1 3\nq2 u1 sub1 d2 2\nq2 u1 sub1 d3 1\nq2 u1 sub2 d2 5\n"
         "q2 u1 sub2 d4 4\nq2 u2 a d3 2\nq2 u2 a d1 0\nq2 u2 a d9 1\n")
PREFS_RUN = ("q1 Q0 d4 1 3 r\nq1 Q0 d1 2 2 r\nq1 Q0 d2 3 1 r\nq1 Q0 zz 4 1 r\nq2 Q0 d4 1 5 r\n"
             "q2 Q0 d3 2 4 r\nq2 Q0 d1 3 4 r\nq2 Q0 d9 4 1 r\n")
TREC_EVAL_10_SAYS = {
    ("-q", "-m", "prefs"): """\
prefs_num_prefs_poss  \tq1\t13
prefs_num_prefs_ful   \tq1\t11
prefs_num_prefs_ful_ret\tq1\t3
prefs_simp            \tq1\t0.8462
prefs_pair            \tq1\t0.8462
prefs_avgjg           \tq1\t0.8462
prefs_num_prefs_poss  \tq2\t8
prefs_num_prefs_ful   \tq2\t3
prefs_num_prefs_ful_ret\tq2\t2
prefs_simp            \tq2\t0.3750
prefs_pair            \tq2\t0.3571
prefs_avgjg           \tq2\t0.3667
runid                 \tall\tr
num_q                 \tall\t2
prefs_num_prefs_poss  \tall\t21
prefs_num_prefs_ful   \tall\t14
prefs_num_prefs_ful_ret\tall\t5
prefs_simp            \tall\t0.6106
prefs_pair            \tall\t0.6016
prefs_avgjg           \tall\t0.6064
""",
    ("-q", "-c", "-M2", "-m", "prefs_avgjg_Rnonrel", "-m", "prefs_avgjg_Rnonrel_ret", "-m", "prefs_pair_imp",
     "-m", "prefs_simp_ret"): """\
prefs_avgjg_Rnonrel   \tq1\t0.6190
prefs_simp_ret        \tq1\t1.0000
prefs_avgjg_Rnonrel_ret\tq1\t0.5556
prefs_pair_imp        \tq1\t1.0000
prefs_avgjg_Rnonrel   \tq2\t0.2381
prefs_simp_ret        \tq2\t0.0000
prefs_avgjg_Rnonrel_ret\tq2\t0.0000
prefs_pair_imp        \tq2\t0.3000
prefs_avgjg_Rnonrel   \tall\t0.4286
prefs_simp_ret        \tall\t0.5000
prefs_avgjg_Rnonrel_ret\tall\t0.2778
prefs_pair_imp        \tall\t0.6500
""",
}


@pytest.mark.parametrize("args", list(TREC_EVAL_10_SAYS))
def test_preferences_as_trec_eval_10_prints_them(tmp_path: Path, args: tuple[str, ...]) -> None:
    prefs, run_file = _write(tmp_path / "prefs", PREFS), _write(tmp_path / "run", PREFS_RUN)
    code, out, err = trec_eval([*args, "-R", "prefs", prefs, run_file])
    assert (code, err, out.decode()) == (0, "", TREC_EVAL_10_SAYS[args])


PREFS_RUN_2 = "q0 Q0 a 1 1 r\nq1 Q0 a 1 1 r\nq1 Q0 b 1 2 r\n"


@pytest.mark.parametrize("rel, run_text, args, status, message", [
    # one sub-group giving a document two levels
    ("q1 g s a 2\nq1 g s b 1\nq1 g s a 1\n", PREFS_RUN_2, ["-R", "prefs", "-m", "prefs"], 4,
     "trec_eval.form_prefs_counts: Internal docid 1 occurs with different rel_level in same jsg\n"
     "trec_eval: Can't calculate measure 'prefs_num_prefs_poss'\n"),
    # level 0 in one sub-group, above 0 in another of the same group
    ("q1 g s1 a 2\nq1 g s1 b 0\nq1 g s2 b 1\nq1 g s2 c 0\n", PREFS_RUN_2, ["-R", "prefs", "-m", "prefs"], 4,
     "trec_eval.form_prefs_counts: doc 'b' has both 0 and non-0 rel_level assigned\n"
     "trec_eval: Can't calculate measure 'prefs_num_prefs_poss'\n"),
    # a>b in one sub-group, b>a in another: trec_eval calls abort() (status 134 in a shell)
    ("q1 g s1 a 2\nq1 g s1 b 1\nq1 g s2 b 2\nq1 g s2 a 1\n", PREFS_RUN_2, ["-R", "prefs", "-m", "prefs"], 134,
     "trec_eval.form_prefs_counts: Pref inconsistency found\n"
     "      internal rank 0 and internal rank 1 are conflicted\n"),
    # a docno twice in a ranking (printed without a newline)
    ("q1 g s a 1\nq1 g s b 0\n", "q1 Q0 b 1 2 r\nq1 Q0 b 1 1 r\n", ["-R", "prefs", "-m", "prefs"], 4,
     "trec_eval.form_prefs_counts: duplicate docs btrec_eval: Can't calculate measure 'prefs_num_prefs_poss'\n"),
    # a docno twice in one judgment group, found when the file is read
    ("q0 0 a 1\nq0 0 b 0\nq0 1 a 0\nq0 1 a 1\n", PREFS_RUN_2, ["-R", "qrels_jg", "-m", "qrels_jg"], 2,
     "trec_eval.get_qrels: duplicate docs a\ntrec_eval: Quit in file '{rel}'\n"),
    # measures that read another format stop at the first query, the first such measure named
    ("q1 g s1 a 2\nq1 g s1 b 0\n", PREFS_RUN_2, ["-R", "prefs", "-m", "map", "-m", "prefs_simp"], 4,
     "trec_eval.form_res_qrels: rel_info format not qrels or results format not trec_results\n"
     "trec_eval: Can't calculate measure 'map'\n"),
    ("q0 0 a 1\nq0 0 b 0\n", PREFS_RUN_2, ["-R", "qrels_jg", "-m", "P_avgjg.5", "-m", "prefs_simp"], 4,
     "trec_eval.form_prefs_info: prefs_info format not (prefs or qrels_prefs) or results format not "
     "trec_results\ntrec_eval: Can't calculate measure 'prefs_simp'\n"),
    ("q0 0 a 1\nq0 0 b 0\n", PREFS_RUN_2, ["-m", "map_avgjg"], 4,
     "trec_eval: rel_info format not qrels_jg or results format not trec_results\n"
     "trec_eval: Can't calculate measure 'map_avgjg'\n"),
    # qrels_prefs reads four fields; the official measures need a qrels file
    ("q0 g s a\n", PREFS_RUN_2, ["-R", "qrels_prefs"], 4,
     "trec_eval.form_res_qrels: rel_info format not qrels or results format not trec_results\n"
     "trec_eval: Can't calculate measure 'num_ret'\n"),
    ("q0 g s a\n", PREFS_RUN_2, ["-R", "prefs"], 2,
     "trec_eval.get_prefs: Malformed line 1\ntrec_eval: Quit in file '{rel}'\n"),
    ("q1 g s1 a 2\nq1 g s1 b 0\n", "q0 Q0 a 1 1 r\n", ["-R", "prefs", "-m", "prefs_simp"], 4,
     "trec_eval: result qid 'q1' not found in qrels\n"),
])
def test_preference_errors_as_trec_eval_10_reports_them(tmp_path: Path, rel: str, run_text: str, args: list[str],
                                                         status: int, message: str) -> None:
    rel_file, run_file = _write(tmp_path / "rel", rel), _write(tmp_path / "run", run_text)
    code, out, err = trec_eval([*args, rel_file, run_file])
    assert (code, out, err) == (status, b"", message.format(rel=rel_file))


def test_queries_before_a_preference_error_are_printed(tmp_path: Path) -> None:
    # trec_eval 10 printed q0's lines, then stopped at q1 (its 0/non-0 check)
    rel = _write(tmp_path / "rel", "q0 g s a 1\nq0 g s b 0\nq1 g s1 a 2\nq1 g s1 b 0\nq1 g s2 b 1\n")
    code, out, err = trec_eval(["-q", "-m", "prefs_simp", "-R", "prefs", rel, _write(tmp_path / "run", PREFS_RUN_2)])
    assert (code, out.decode()) == (4, "prefs_simp            \tq0\t1.0000\n")
    assert err.startswith("trec_eval.form_prefs_counts: doc 'b' has both 0 and non-0")


def test_judgment_groups_average_the_groups(tmp_path: Path) -> None:
    # by hand: group 0 judges a relevant (map 1, P_2 0.5), group 1 judges b relevant (map 0.5, P_2 0.5)
    rel = _write(tmp_path / "rel", "q 0 a 1\nq 0 b 0\nq 1 a 0\nq 1 b 1\n")
    run_file = _write(tmp_path / "run", "q Q0 a 1 2 r\nq Q0 b 2 1 r\n")
    code, out, _ = trec_eval(["-q", "-n", "-R", "qrels_jg", "-m", "map_avgjg", "-m", "P_avgjg.1,2", rel, run_file])
    assert (code, out.decode()) == (0, "map_avgjg             \tq\t0.7500\nP_avgjg_1             \tq\t0.5000\n"
                                       "P_avgjg_2             \tq\t0.5000\n")


def test_prefs_are_vectorised(tmp_path: Path) -> None:
    """qrels_prefs without a Python loop per query or per preference pair: 12 and 48 queries
    x 300 judged documents (about 270k and 1.1M pairs), the same number of rank_polars' own
    Python calls."""
    rng = np.random.default_rng(3)
    nd = 300
    counts = []
    for nq in (12, 48):
        docs = np.tile(np.arange(nd), nq).astype(str)
        qids = np.repeat(np.arange(nq), nd).astype(str)
        folder = tmp_path / str(nq)
        folder.mkdir()
        pl.DataFrame({"q": qids, "i": "0", "d": docs, "g": rng.integers(0, 3, nq * nd)}).write_csv(
            folder / "qrels", separator=" ", include_header=False)
        pl.DataFrame({"q": qids, "i": "Q0", "d": docs, "r": 0, "s": rng.random(nq * nd).round(3), "t": "big"}).write_csv(
            folder / "run", separator=" ", include_header=False)
        calls, (code, out, err) = python_calls(["-m", "all_prefs", "-R", "qrels_prefs", str(folder / "qrels"),
                                                str(folder / "run")])
        assert (code, err) == (0, "")
        assert f"num_q                 \tall\t{nq}\n".encode() in out
        counts.append(calls)
    assert counts[0] == counts[1] > 0, counts


def test_debug_after_the_command_is_trec_evals_argument() -> None:
    # trec_eval has no --debug (its long option is --Debug_level): a usage error, not rank-polars' flag
    result = CliRunner().invoke(main, ["trec-eval", "--debug", "qrels", "run"])
    assert result.exit_code == 1
    assert result.stderr.startswith("trec_eval: unrecognized option '--debug'\nUsage: trec_eval")
    assert "Traceback" not in result.output


def test_help_is_complete_without_the_docs_folder() -> None:
    # a pip user has no docs/ folder: the help itself says where the output differs from trec_eval
    code, out, _ = trec_eval(["-h"])
    text = out.decode()
    assert code == 0 and "docs/" not in text and ".md" not in text
    assert "Where they differ:" in text and "yaap" in text and "nan scores" in text
