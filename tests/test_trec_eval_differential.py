"""``rank-polars trec-eval`` against the trec_eval 10 binary built from its vendored source.

The binary is built once per session (``tests/treceval/binary.py``); each case writes a qrels
and a run file, runs the binary on them (one short process) and our command in-process, and
compares stdout bytes and exit status.  Generated cases (``tests/treceval/generate.py``) cover
ties, graded and negative judgments, queries on one side only, huge and odd scores and documents
ranked twice, under ``-q -c -l2 -M -J -m all_trec -m relstring.10`` and their combinations; the
cases written out are the differences found when these tests were written (commit 8ab7726), each
failing on the code before its fix.
"""

from __future__ import annotations

import ctypes
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from rank_polars.dropins.trec_eval import run
from rank_polars.dropins.trec_eval.files import read_qrels
from tests.treceval.binary import build
from tests.treceval.generate import cases


@pytest.fixture(scope="session")
def trec_eval_binary() -> Path:
    return build()


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("trec_eval_cases")


def ours(args: list[str]) -> tuple[int, bytes]:
    out, err = io.BytesIO(), io.StringIO()
    stdout = io.TextIOWrapper(out, encoding="latin-1", write_through=True)
    code = run(args, stdout, err)
    stdout.flush()
    return code, out.getvalue()


def both(binary: Path, folder: Path, qrels: str, results: str, args: list[str]) -> tuple[tuple, tuple]:
    """(trec_eval's (status, stdout), ours) on the two texts."""
    q, r = folder / "qrels", folder / "run"
    q.write_bytes(qrels.encode("latin-1"))
    r.write_bytes(results.encode("latin-1"))
    done = subprocess.run([str(binary), *args, str(q), str(r)], capture_output=True, timeout=60)
    return (done.returncode, done.stdout), ours([*args, str(q), str(r)])


_SETTINGS = settings(deadline=None, derandomize=True, database=None,
                     suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@settings(_SETTINGS, max_examples=80)
@given(case=cases())
def test_generated_runs_give_trec_eval_bytes_and_status(trec_eval_binary, folder, case) -> None:
    qrels, results, args = case
    theirs, mine = both(trec_eval_binary, folder, qrels, results, args)
    assert mine == theirs, args


@settings(_SETTINGS, max_examples=25)
@given(case=cases(duplicates=True))
def test_generated_runs_with_documents_ranked_twice(trec_eval_binary, folder, case) -> None:
    qrels, results, args = case
    theirs, mine = both(trec_eval_binary, folder, qrels, results, args)
    assert mine == theirs, args


QRELS = "q1 0 a 3\nq1 0 b 2\nq1 0 c 1\nq1 0 d 0\nq1 0 e -1\nq2 0 a 1\nq2 0 b 0\n"
RUN = "".join(f"q1 Q0 x{i} {i} {10 - i} r\n" for i in range(5)) + "q1 Q0 d 6 4 r\nq2 Q0 b 1 2 r\nq2 Q0 a 2 1 r\n"

KNOWN = {
    # '-J' checks duplicates before dropping unjudged documents (status 4)
    "J_duplicate": ("q1 0 a 1\n", "q1 Q0 a 1 2 r\nq1 Q0 z 2 1 r\nq1 Q0 z 3 0 r\n", ["-J"]),
    # '-nan' of iprec_at_recall and 11pt_avg for a query with no ranked document
    "M0_nan": (QRELS, RUN, ["-q", "-M0", "-m", "all_trec"]),
    "J_all_unjudged": (QRELS, "q1 Q0 zz 1 1 r\nq2 Q0 a 1 1 r\n", ["-q", "-J", "-m", "official", "-m", "11pt_avg"]),
    # set_F.-1: 0 / (R - P): '-0.0000', and '-nan' when P == R
    "set_F_minus_1": (QRELS, RUN, ["-q", "-m", "set_F.-1"]),
    "set_F_minus_1_nan": ("q1 0 a 1\nq1 0 b 1\n", "q1 Q0 a 1 2 r\nq1 Q0 c 2 1 r\n", ["-q", "-m", "set_F.-1"]),
    # the first query judged only below 0: trec_eval cannot allocate its levels (status 4)
    "all_negative_first": ("a 0 d1 -1\nb 0 d1 1\n", "a Q0 d1 1 1 r\nb Q0 d1 1 1 r\n", []),
    # relstring of an empty ranking is ''
    "relstring_M0": (QRELS, RUN, ["-q", "-M0", "-m", "relstring.10"]),
    # the Rndcg query found then (grades 3..-1, the one judged document at rank 6)
    "Rndcg_zero": (QRELS, RUN, ["-q", "-c", "-l2", "-m", "all_trec"]),
    # infAP of 0.075 / 4 = 0.01875, on a rounding boundary: trec_eval's double is just below it
    "infAP_boundary": ("q 0 a 2\nq 0 b 2\nq 0 c 2\nq 0 d 2\nq 0 u -1\n",
                       "".join(f"q Q0 n{i} {i} {100 - i} r\n" for i in range(18)) + "q Q0 u 19 5 r\nq Q0 a 20 4 r\n",
                       ["-q", "-l2", "-m", "infAP"]),
    # pair parameters trec_eval ignores (not an integer level) or reads
    "ndcg_a": (QRELS, RUN, ["-q", "-m", "ndcg.a=1", "-m", "Rndcg.+2=5,b=1", "-m", "rbp.p=0.5,x=2"]),
}


@pytest.mark.parametrize("name", list(KNOWN))
def test_known_differences_now_match(trec_eval_binary, folder, name) -> None:
    qrels, results, args = KNOWN[name]
    theirs, mine = both(trec_eval_binary, folder, qrels, results, args)
    assert mine == theirs


def test_grade_beyond_int64_is_clamped_like_atol(tmp_path: Path) -> None:
    # C's atol (glibc's strtol) is the reference: it saturates at the long range
    libc = ctypes.CDLL(None)
    libc.atol.restype, libc.atol.argtypes = ctypes.c_long, [ctypes.c_char_p]
    grades = ["9223372036854775808", "-99999999999999999999", "12x", "x", "+7", "2.9"]
    path = tmp_path / "qrels"
    path.write_text("".join(f"q 0 d{i} {g}\n" for i, g in enumerate(grades)))
    assert read_qrels(str(path)).get_column("grade").to_list() == [libc.atol(g.encode()) for g in grades]


def test_same_bytes_every_run_and_thread_count(trec_eval_binary, folder) -> None:
    """The same input gives the same bytes: in-process four times, and from the command line
    with 1 and 2 Polars threads (the thread count is read when Polars loads)."""
    lines = []
    for q in range(40):
        lines += [f"{q} 0 d{d} {(q * 7 + d * 3) % 5 - 1}" for d in range(30)]
    qrels = "\n".join(lines) + "\n"
    results = "".join(f"{q} Q0 d{d} {d} {((q + 1) * (d + 3)) % 11 / 7} r\n" for q in range(42) for d in range(25))
    args = ["-q", "-c", "-l2", "-m", "all_trec"]
    theirs, first = both(trec_eval_binary, folder, qrels, results, args)
    assert first == theirs
    paths = [str(folder / "qrels"), str(folder / "run")]
    assert all(ours([*args, *paths]) == first for _ in range(3))
    for threads in ("1", "2"):
        env = {**os.environ, "POLARS_MAX_THREADS": threads}
        done = subprocess.run([sys.executable, "-c", "from rank_polars.cli import main; main()", "trec-eval",
                               *args, *paths],
                              capture_output=True, env=env, timeout=300)
        assert (done.returncode, done.stdout) == first
