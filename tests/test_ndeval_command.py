"""``rank-polars ndeval`` against ndeval 4.5 built from its vendored source: stdout, stderr and
exit status byte for byte, on generated subtopic qrels and runs under every option."""

from __future__ import annotations

from pathlib import Path

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings

from rank_polars.dropins.ndeval.command import main
from tests import ndeval_reference

DOCS = [f"d{j}" for j in range(14)] + ["D1", "d1x", "clueweb-00"]


@pytest.fixture(scope="module")
def binary() -> Path:
    return ndeval_reference.ndeval()


def ours(args: list[str], cwd: Path) -> tuple[int, str, str]:
    return ndeval_reference.in_process(main, args, cwd)


@st.composite
def files(draw: st.DrawFn) -> tuple[str, str, str]:
    """qrels (grades 0-4, subtopics without relevant docs), a run and a baseline run (ties in
    score, equal scores across docnos, non-consecutive ranks, topics on one side only, deep lists)."""
    qrels = []
    topics = draw(st.lists(st.integers(1, 9), min_size=1, max_size=5, unique=True))
    for t in topics:
        if draw(st.integers(0, 5)) == 0:
            continue  # a topic of the run without judgments
        for s in range(1, draw(st.integers(1, 4)) + 1):
            for d in draw(st.lists(st.sampled_from(DOCS), unique=True, max_size=8)):
                qrels.append(f"{t} {s} {d} {draw(st.integers(0, 4))}")
    if not qrels:
        qrels.append(f"{topics[0]} 1 d0 1")

    def run(runid: str) -> str:
        lines = []
        for t in [*topics, 10] if draw(st.booleans()) else topics:
            if draw(st.integers(0, 4)) == 0:
                continue  # a judged topic missing from the run
            docs = draw(st.lists(st.sampled_from(DOCS + [f"u{j}" for j in range(20)]), unique=True, max_size=30))
            ranks = sorted(draw(st.lists(st.integers(0, 60), unique=True, min_size=len(docs), max_size=len(docs))))
            prefix = draw(st.sampled_from(["", "wt09-"]))
            for d, r in zip(docs, ranks):
                lines.append(f"{prefix}{t} Q0 {d} {r} {draw(st.integers(0, 6)) / 2} {runid}")
        if not lines:
            lines.append(f"{topics[0]} Q0 d0 1 1.0 {runid}")
        return "\n".join(lines) + "\n"

    return "\n".join(qrels) + "\n", run("runA"), run("base")


OPTIONS = [[], ["-c"], ["-traditional"], ["-M", "7"], ["-alpha", "0.3", "-beta", "0.9"], ["-alpha", "1", "-beta", "0"],
           ["-alpha", "0", "-beta", "1"], ["-traditional", "-c", "-M", "3"], ["-baseline", "base", "-riskAlpha", "1.5"],
           ["-c", "-baseline", "base", "-riskAlpha", "0"], ["-baseline", "base", "-traditional", "-alpha", "0.7"]]


# found by this test: topic 7's NRBP is 0.2878785 to the last bits, so ndeval's own arithmetic
# (beta^(r-1) by repeated multiplication, not pow) decides the printed 0.287879
NRBP_AT_A_ROUNDING_EDGE = (
    '2 1 d13 4\n2 1 D1 4\n2 1 d11 1\n2 1 d7 2\n2 1 d6 4\n2 1 d4 4\n2 2 d6 2\n2 2 d2 1\n2 2 d11 2\n2 2 d10 3\n2 2 d8 0\n2 2 d9 4\n2 2 d0 2\n2 2 d7 2\n3 1 d1x 4\n3 1 d8 1\n3 2 d1x 0\n3 2 d0 4\n3 2 d1 2\n3 2 d4 2\n3 2 d5 2\n9 1 d10 3\n9 1 d11 3\n9 1 d13 3\n9 1 d1 0\n9 1 d9 2\n9 1 d0 1\n9 1 d2 1\n9 1 d7 4\n7 3 clueweb-00 2\n7 3 d1 0\n7 3 d12 2\n7 3 d2 2\n7 4 d4 2\n7 4 d13 4\n7 4 d5 0\n7 4 d10 4\n7 4 d11 4\n7 4 d6 1\n7 4 d9 0\n7 4 d3 1\n',
    '4 Q0 d5 22 0.0 runA\n4 Q0 d9 40 0.5 runA\nwt09-7 Q0 u13 1 1.0 runA\nwt09-7 Q0 d2 3 1.5 runA\nwt09-7 Q0 u14 14 0.5 runA\nwt09-7 Q0 D1 22 1.0 runA\nwt09-7 Q0 d10 49 3.0 runA\nwt09-10 Q0 u5 19 2.0 runA\nwt09-10 Q0 u15 23 0.0 runA\n',
    '2 Q0 d5 2 0.0 base\n2 Q0 d12 42 2.0 base\n2 Q0 d7 55 0.5 base\n2 Q0 d6 60 1.0 base\nwt09-3 Q0 d4 0 1.0 base\nwt09-3 Q0 u16 6 1.0 base\nwt09-3 Q0 D1 20 3.0 base\nwt09-3 Q0 u3 28 2.5 base\nwt09-3 Q0 d2 49 2.5 base\nwt09-3 Q0 u12 55 0.0 base\nwt09-3 Q0 u1 58 3.0 base\n9 Q0 u12 18 1.5 base\n9 Q0 d2 48 1.0 base\n9 Q0 d10 49 1.5 base\n9 Q0 u19 58 2.5 base\nwt09-4 Q0 d13 13 1.5 base\nwt09-4 Q0 u9 18 1.5 base\nwt09-4 Q0 u12 27 0.0 base\nwt09-4 Q0 u0 31 0.5 base\nwt09-4 Q0 d12 32 2.5 base\nwt09-4 Q0 u11 56 0.0 base\n7 Q0 u10 11 1.0 base\n7 Q0 d6 30 0.0 base\n7 Q0 u1 37 1.5 base\n7 Q0 d1 38 3.0 base\n7 Q0 d7 47 0.0 base\n7 Q0 u12 49 0.5 base\n7 Q0 d2 51 2.0 base\n7 Q0 u0 52 3.0 base\n7 Q0 d12 53 1.0 base\n7 Q0 u18 57 2.5 base\n',
)

# also found by it: topic 8's nERR-IA@5 against the baseline is -0.4296875 to the last bits:
# ndeval's nERR is the run's ERR over its ideal ideal, over the ideal list's (not ERR over ERR)
NERR_AT_A_ROUNDING_EDGE = (
    '9 1 d12 1\n9 1 d10 2\n9 1 clueweb-00 0\n9 1 d0 2\n6 1 d12 0\n6 1 clueweb-00 2\n6 1 d13 4\n6 2 d7 2\n6 2 d12 4\n6 3 d6 4\n6 3 d2 2\n6 3 D1 4\n6 3 d4 0\n6 3 d7 2\n6 3 d11 1\n6 3 d8 0\n1 1 d12 1\n1 1 d2 4\n1 2 d1x 4\n8 1 d13 2\n8 1 d5 4\n8 2 d2 4\n8 2 d1x 1\n8 2 d11 2\n8 2 d8 4\n8 2 d4 3\n8 2 d0 4\n8 2 d12 3\n8 2 d1 4\n8 3 d12 2\n8 3 d7 2\n8 3 d13 4\n8 3 D1 2\n8 3 d3 1\n8 3 d1 2\n8 3 d11 2\n',
    'wt09-9 Q0 D1 40 1.0 runA\n6 Q0 u0 1 3.0 runA\n6 Q0 d4 5 1.5 runA\n6 Q0 d0 24 2.0 runA\n6 Q0 u15 29 0.5 runA\n6 Q0 u19 33 1.5 runA\n6 Q0 u9 37 3.0 runA\n6 Q0 u11 50 2.0 runA\n6 Q0 clueweb-00 58 1.0 runA\n1 Q0 d4 23 1.0 runA\nwt09-8 Q0 u16 16 0.5 runA\nwt09-8 Q0 u10 26 1.0 runA\nwt09-8 Q0 d0 56 0.5 runA\n',
    'wt09-9 Q0 d7 2 1.0 base\nwt09-9 Q0 d13 9 0.5 base\nwt09-9 Q0 u15 13 0.0 base\nwt09-9 Q0 d1 14 0.5 base\nwt09-9 Q0 u7 17 2.5 base\nwt09-9 Q0 d12 20 3.0 base\nwt09-9 Q0 d4 22 2.5 base\nwt09-9 Q0 d3 23 1.5 base\nwt09-9 Q0 u5 24 2.0 base\nwt09-9 Q0 d9 26 2.0 base\nwt09-9 Q0 u1 27 2.0 base\nwt09-9 Q0 D1 28 3.0 base\nwt09-9 Q0 d10 34 2.0 base\nwt09-9 Q0 u0 35 1.5 base\nwt09-9 Q0 d0 37 1.5 base\nwt09-9 Q0 d1x 38 2.0 base\nwt09-9 Q0 d2 39 3.0 base\nwt09-9 Q0 d8 40 2.0 base\nwt09-9 Q0 d5 42 1.5 base\nwt09-9 Q0 u8 54 2.0 base\nwt09-8 Q0 u16 17 0.0 base\nwt09-8 Q0 u12 25 3.0 base\nwt09-8 Q0 d8 27 2.0 base\nwt09-8 Q0 d5 40 1.0 base\nwt09-8 Q0 d12 47 3.0 base\nwt09-7 Q0 d6 28 0.5 base\nwt09-7 Q0 d13 47 1.5 base\n',
)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
          phases=[Phase.explicit, Phase.generate])  # no shrinking: each example runs ndeval 11 times
@given(data=files())
@example(data=NRBP_AT_A_ROUNDING_EDGE)
@example(data=NERR_AT_A_ROUNDING_EDGE)
def test_byte_for_byte(binary: Path, tmp_path_factory: pytest.TempPathFactory, data: tuple[str, str, str]) -> None:
    where = tmp_path_factory.mktemp("ndeval")
    for name, text in zip(("qrels", "run", "base"), data):
        (where / name).write_text(text)
    for options in OPTIONS:
        args = [*options, "qrels", "run"]
        expected = ndeval_reference.run([str(binary), *args], cwd=where)
        assert ours(args, where) == expected, (options, data)


@pytest.mark.parametrize("qrels, run, args", [
    ("1 1 d1 -1\n", "1 Q0 d1 1 1 r\n", []),                      # a negative judgment: a syntax error
    ("1 1 d1 1\n\n", "1 Q0 d1 1 1 r\n", []),                     # a blank line
    ("1 1 d1 1\n", "1 Q0 d1 1 1 r\n1 Q0 d2 1 2 r\n", []),        # a duplicate rank
    ("1 1 d1 1\n", "1 Q0 d1 1 1 r\n1 Q0 d1 2 2 r\n", []),        # a duplicate docno
    ("1 1 d1 1\n", "1 Q0 d1 1 1 r\n1 Q0 d1 2 2 r\n", ["-M", "1"]),  # ... cut away by -M
    ("1 1 d1 1\n", "1 Q0 d1 x 1 r\n", []),                       # a rank that is not a number
    ("1 1 d1 1\n", "1 Q0 d1 1 1\n", []),                         # five fields
    ("", "1 Q0 d1 1 1 r\n", []),                                 # empty qrels
    ("1 1 d1 1\n", "", []),                                      # empty run
    ("1 1 d1 1\n", "1 Q0 d1 1 1 r\n", ["-alpha", "2"]),          # usage
    ("1 1 d1 1\n", "1 Q0 d1 1 1 r\n", ["-x"]),
    ("1 1 d1 1\n", "1 Q0 d1 1 1 r\n", ["-ca"]),
    ("1 1 d1 1\n", "1 Q0 d1 1 1 r\n", ["-M", "0"]),
    ("1 1 d1 1\n", "1 Q0 d1 1 1 r\n", ["-beta", "abc"]),          # sscanf reads nothing: the default
    ("1 1 d1 1\n", "1 Q0 d1 1 1 r\n", ["-baseline", "missing"]),
    ("1 1 d1 1\n", "2 Q0 d1 1 1 r\n", []),                       # no topic in common: amean 0/0
    ("1 1 d1 1\r\n1 2 d2 1\r\n", "1 Q0 d2 1 1 r\r\n", []),       # CRLF lines
    ("1 1 d1 1 extra\n", "1 Q0 d1 1 1 r extra\n", []),           # fields past the 4th / 6th are ignored
    # -traditional's scores as glibc's %lf reads them: hexadecimal, a prefix ("1_000" is 1), inf
    ("1 1 d1 1\n1 2 d2 1\n1 1 d3 1\n", "1 Q0 d1 1 0x10 r\n1 Q0 d2 2 1_000 r\n1 Q0 d3 3 0x.8p1 r\n", ["-traditional"]),
    ("1 1 d1 1\n1 2 d2 1\n1 1 d3 1\n", "1 Q0 d1 1 -inf r\n1 Q0 d2 2 INFx r\n1 Q0 d3 3 2 r\n", ["-traditional"]),
])
def test_errors_and_edges(binary: Path, tmp_path: Path, qrels: str, run: str, args: list[str]) -> None:
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    full = [*args, "qrels", "run"]
    assert ours(full, tmp_path) == ndeval_reference.run([str(binary), *full], cwd=tmp_path)


@pytest.mark.parametrize("args", [["-help"], ["-version"], ["qrels"], ["qrels", "nofile"], ["nofile", "run"]])
def test_help_version_and_missing_files(binary: Path, tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "qrels").write_text("1 1 d1 1\n")
    (tmp_path / "run").write_text("1 Q0 d1 1 1 r\n")
    assert ours(args, tmp_path) == ndeval_reference.run([str(binary), *args], cwd=tmp_path)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
          phases=[Phase.explicit, Phase.generate])
@given(data=files())
def test_risk_in_python_equals_ndevals_baseline_rows(binary: Path, tmp_path_factory: pytest.TempPathFactory,
                                                     data: tuple[str, str, str]) -> None:
    """rank_polars.dropins.risk over evaluate's per-query values (missing="zero": ndeval's -c)
    against the rows ndeval prints with -c -baseline."""
    import math

    import polars as pl

    import rank_polars as rp
    from rank_polars.dropins.ndeval import command
    from rank_polars.dropins.risk import risk
    from rank_polars.plan import ITEM, Q, RANK

    where = tmp_path_factory.mktemp("risk")
    for name, text in zip(("qrels", "run", "base"), data):
        (where / name).write_text(text)
    code, out, _ = ndeval_reference.run([str(binary), "-c", "-baseline", "base", "-riskAlpha", "1.5", "qrels", "run"],
                                        cwd=where)
    assert code == 0
    header, *rows = [line.split(",") for line in out.splitlines()]
    qrels = command.read_qrels(str(where / "qrels")).rename({Q: "query", ITEM: "item", "rel": "relevance"})
    qrels = qrels.with_columns(pl.col("query").cast(pl.String))
    names = [f"{m}@{k}" for m in ("err_ia", "nerr_ia", "alpha_dcg", "alpha_ndcg") for k in (5, 10, 20)]
    names += ["nrbp", "nnrbp", "map_ia"] + [f"{m}@{k}" for m in ("p_ia", "strec") for k in (5, 10, 20)]
    per_query = []
    for name in ("run", "base"):
        ranked, _ = command.read_run(str(where / name), command.Options())
        log = ranked.select(pl.col(Q).cast(pl.String).alias("query"), pl.col(ITEM).alias("item"),
                            pl.col(RANK).alias("position"))
        per_query.append(rp.evaluate(log, names, qrels=qrels, per_query=True, missing="skip"))
    table = risk(per_query[0], per_query[1], alpha=1.5)
    got = {row[0]: row[1:] for row in table.iter_rows()}
    judged = set(qrels["query"].to_list())
    for row in rows[:-1]:  # the per-topic rows (amean last)
        topic = row[1]
        if topic not in judged:
            continue  # a topic without judgments: ndeval prints zeros, evaluate has no row
        for name, want, value in zip(header[2:], row[2:], got.get(topic, [0.0] * len(names))):
            if "nan" in want:
                continue  # ndeval's 0/0 (nNRBP without a relevant subtopic)
            assert value == pytest.approx(float(want), abs=6e-7), (topic, name)
