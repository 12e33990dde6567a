"""trec_eval's two input files, read as trec_eval 10 reads them (``get_qrels.c``, ``get_trec_results.c``).

* qrels: ``qid iter docno rel`` — exactly four fields; ``rel`` read with C's ``atol`` ("2.7" -> 2,
  "x" -> 0); a line starting with ``#`` is a comment; a blank line is malformed.
* results: ``qid iter docno rank sim runid`` — at least six fields (more are ignored); ``sim`` read
  with ``atof`` and the rank ignored; blank lines and lines whose first non-blank is ``#`` are
  skipped.  The run id printed on the ``runid`` line is the last line's.

Bytes are decoded as Latin-1, so that every byte is one character and sorting the text sorts the
bytes (trec_eval's ``strcmp``); the output is encoded back the same way.  Lines are split and
parsed by Polars, not one by one in Python.
"""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl

from .options import TrecEvalExit

_WS = r"[ \t\x0B\x0C\r]"
_TOKEN = r"([^ \t\x0B\x0C\r]+)"
_RESULTS_LINE = "^" + _WS + "*" + (_WS + "+").join([_TOKEN] * 6)
_QRELS_LINE = "^" + _WS + "*" + (_WS + "+").join([_TOKEN] * 4) + _WS + "*$"
_ATOF = r"^[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|(?i:inf(?:inity)?|nan))"
_ATOL = r"^[+-]?\d+"


def _read(path: str, what: str, who: str) -> str:
    try:
        data = sys.stdin.buffer.read() if path == "-" and what == "results" else Path(path).read_bytes()
    except OSError:
        data = b""
    if not data:
        if what == "zscores":  # trec_eval returns UNDEF (-1) from main: status 255, no "Quit" line
            raise TrecEvalExit(255, f"trec_eval.{who}: Cannot read {what} file '{path}'\n")
        raise TrecEvalExit(2, f"trec_eval.{who}: Cannot read {what} file '{path}'\ntrec_eval: Quit in file '{path}'\n")
    return data.decode("latin-1")


def _lines(text: str) -> pl.Series:
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return pl.Series("line", lines, dtype=pl.String)


def _malformed(parsed: pl.DataFrame, who: str, path: str, quit_message: bool = True) -> None:
    bad = parsed.select(pl.col("query").is_null().arg_true().first()).item()
    if bad is not None:
        quit = f"trec_eval: Quit in file '{path}'\n" if quit_message else ""
        raise TrecEvalExit(2 if quit_message else 255, f"trec_eval.{who}: Malformed line {bad + 1}\n" + quit)


def read_qrels(path: str) -> pl.DataFrame:
    """``query, item, grade`` of a qrels file (all lines, duplicates kept: trec_eval checks them per query)."""
    lines = _lines(_read(path, "qrels", "get_qrels")).to_frame()
    lines = lines.filter(~pl.col("line").str.starts_with("#"))
    parsed = lines.select(
        pl.col("line").str.extract_groups(_QRELS_LINE).struct.rename_fields(["query", "iter", "item", "rel"])
    ).unnest("line")
    _malformed(parsed, "get_qrels", path)
    return parsed.select(
        "query", "item", grade=pl.col("rel").str.extract(_ATOL, 0).cast(pl.Int64, strict=False).fill_null(0)
    )


def read_zscores(path: str) -> pl.DataFrame:
    """``query, label, mean, sd`` of a ``-Z`` file (``qid measure mean stddev`` lines)."""
    lines = _lines(_read(path, "zscores", "get_zscores")).to_frame()
    parsed = lines.select(
        pl.col("line").str.extract_groups(_QRELS_LINE).struct.rename_fields(["query", "label", "mean", "sd"])
    ).unnest("line")
    _malformed(parsed, "get_zscores", path, quit_message=False)
    number = {c: pl.col(c).str.extract(_ATOF, 0).cast(pl.Float64, strict=False).fill_null(0.0) for c in ("mean", "sd")}
    return parsed.select("query", "label", **number).unique(["query", "label"], keep="first")


def read_results(path: str) -> tuple[pl.DataFrame, str | None]:
    """``query, item, score`` of a results file, and the run id trec_eval prints."""
    lines = _lines(_read(path, "results", "get_results")).to_frame()
    first = pl.col("line").str.strip_chars_start(" \t\x0b\x0c\r")
    lines = lines.filter((first != "") & ~first.str.starts_with("#"))
    parsed = lines.select(
        pl.col("line").str.extract_groups(_RESULTS_LINE)
        .struct.rename_fields(["query", "iter", "item", "rank", "sim", "runid"])
    ).unnest("line")
    _malformed(parsed, "get_results", path)
    runid = parsed.get_column("runid").item(-1) if parsed.height else None
    score = pl.col("sim").str.extract(_ATOF, 0).cast(pl.Float64, strict=False).fill_null(0.0)
    return parsed.select("query", "item", score=score), runid
