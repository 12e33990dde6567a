"""trec_eval 10's own expected output files (``tests/data/conformance/trec_eval/test/out.test*``).

Each line is ``measure<pad>\\tquery\\tvalue`` as trec_eval printed it (``%-22s\\t%s\\t%6.4f`` for
floats, ``%ld`` for counts, text for ``runid`` / ``relstring``).  Tests compare our values with
these to trec_eval's printed precision (half a unit in the 4th decimal).

The commands that wrote each file (trec_eval's Makefile ``test`` target):
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

TEST_DIR = Path(__file__).resolve().parent / "data" / "conformance" / "trec_eval" / "test"

# expected file -> (trec_eval arguments, qrels file, run file)
COMMANDS: dict[str, tuple[list[str], str, str]] = {
    "out.test": ([], "qrels.test", "results.test"),
    "out.test.a": (["-m", "all_trec"], "qrels.test", "results.test"),
    "out.test.aq": (["-m", "all_trec", "-q"], "qrels.test", "results.test"),
    "out.test.aqc": (["-m", "all_trec", "-q", "-c"], "qrels.test", "results.trunc"),
    "out.test.aqcM": (["-m", "all_trec", "-q", "-c", "-M100"], "qrels.test", "results.trunc"),
    "out.test.aql": (["-m", "all_trec", "-mrelstring.20", "-q", "-l2"], "qrels.rel_level", "results.test"),
    "out.test.meas_params": (
        ["-q", "-miprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3", "-m", "recall.20,2000",
         "-m", "Rprec_mult.5.0,0.2,0.35", "-mutility.2,-1,0,0", "-m", "11pt_avg..25,.5,.75",
         "-mndcg.1=3,2=9,4=4.5", "-mndcg_cut.10,20,23.4", "-msuccess.2,5,20"],
        "qrels.test", "results.test",
    ),
    "out.test.aqZ": (["-q", "-m", "all_trec", "-Z", "zscores_file"], "qrels.test", "results.test"),
    "out.test.prefs": (["-m", "all_prefs", "-q", "-R", "prefs"], "prefs.test", "prefs.results.test"),
    "out.test.qrels_prefs": (["-m", "all_prefs", "-q", "-R", "qrels_prefs"], "qrels.test", "results.test"),
    "out.test.qrels_jg": (["-m", "qrels_jg", "-q", "-R", "qrels_jg"], "qrels.123", "results.test"),
}


def read_expected(name: str) -> pl.DataFrame:
    """``measure, query, text, value`` of one expected file (``value`` null for text measures)."""
    rows = []
    for line in (TEST_DIR / name).read_text().splitlines():
        measure, query, text = line.split("\t")
        rows.append((measure.strip(), query, text))
    frame = pl.DataFrame(rows, schema={"measure": pl.String, "query": pl.String, "text": pl.String}, orient="row")
    return frame.with_columns(value=pl.col("text").cast(pl.Float64, strict=False))
