"""Hypothesis strategies for trec_eval's two input files, aimed at its edges.

Ties in score, graded and negative judgments, queries judged but not ranked and ranked but not
judged, huge, tiny and odd score spellings, documents ranked twice, and option combinations.
Query ids mix digits and letters so that byte order differs from numeric order.
"""

from __future__ import annotations

from hypothesis import strategies as st

QUERIES = ("1", "10", "2", "q3", "Q4")
DOCS = tuple(f"d{i}" for i in range(12)) + ("D1", "a_b")
GRADES = st.sampled_from([-1, 0, 0, 1, 1, 2, 3, 4, 12])
# scores as trec_eval reads them with atof: ties, huge, tiny, signed zero, exponents, junk
SCORES = st.one_of(
    st.sampled_from(["1", "1.0", "2", "0", "-0", "0.5", "1e300", "-1e300", "1e-300", "3.25E2", "7x", "+4"]),
    st.integers(-3, 3).map(str),
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False).map(repr),
)
FLAGS = ("-q", "-c", "-l2", "-M3", "-M0", "-J", "-m all_trec", "-m relstring.10", "-m official",
         "-m ndcg_cut.3,5", "-m P.2")


@st.composite
def qrels_lines(draw, queries: list[str]) -> str:  # type: ignore[no-untyped-def]
    lines = []
    for q in queries:
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=8, unique=True))
        lines += [f"{q} 0 {d} {draw(GRADES)}" for d in docs]
    return "\n".join(draw(st.permutations(lines))) + "\n"


@st.composite
def run_lines(draw, queries: list[str], allow_duplicates: bool) -> str:  # type: ignore[no-untyped-def]
    lines = []
    for q in queries:
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=10, unique=not allow_duplicates))
        lines += [f"{q} Q0 {d} {i} {draw(SCORES)} run{draw(st.integers(0, 1))}" for i, d in enumerate(docs)]
    return "\n".join(draw(st.permutations(lines))) + "\n"


@st.composite
def cases(draw, duplicates: bool = False) -> tuple[str, str, list[str]]:  # type: ignore[no-untyped-def]
    """``(qrels text, run text, options)``."""
    judged = draw(st.lists(st.sampled_from(QUERIES), min_size=1, max_size=4, unique=True))
    ranked = draw(st.lists(st.sampled_from(QUERIES), min_size=1, max_size=4, unique=True))
    flags = draw(st.lists(st.sampled_from(FLAGS), max_size=4, unique=True))
    args = [a for f in flags for a in f.split(" ")]
    return draw(qrels_lines(judged)), draw(run_lines(ranked, duplicates)), args
