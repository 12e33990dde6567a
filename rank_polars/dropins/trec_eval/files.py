"""trec_eval's two input files, read as trec_eval 10 reads them (``get_qrels.c``, ``get_trec_results.c``).

* qrels: ``qid iter docno rel`` — exactly four fields; ``rel`` read with C's ``atol`` ("2.7" -> 2,
  "x" -> 0); a blank line is malformed.  A line starting with ``#`` is a comment, but trec_eval
  10 reads the line after a skipped comment as data whatever it starts with: in a run of comment
  lines the 1st, 3rd, ... are skipped and the 2nd, 4th, ... parsed (usually as a malformed line).
* the other relevance formats (``-R``) follow the same rules: ``prefs`` (``qid jg jsg docno
  rel_level``, five fields, the level read with ``atof``), ``qrels_prefs`` (a qrels file read as
  prefs: the iter field is the judgment group, one sub-group ``0``, the grade read with ``atof``)
  and ``qrels_jg`` (a qrels file whose iter field names the judgment group; a docno twice in one
  group is an error when the file is read).
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

from rank_polars.dropins.trec_eval.options import TrecEvalExit

_WS = r"[ \t\x0B\x0C\r]"
_TOKEN = r"([^ \t\x0B\x0C\r]+)"
_RESULTS_LINE = "^" + _WS + "*" + (_WS + "+").join([_TOKEN] * 6)
_QRELS_LINE = "^" + _WS + "*" + (_WS + "+").join([_TOKEN] * 4) + _WS + "*$"
_PREFS_LINE = "^" + _WS + "*" + (_WS + "+").join([_TOKEN] * 5) + _WS + "*$"
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


def _data_lines(text: str) -> pl.DataFrame:
    """The lines trec_eval's qrels readers parse: a ``#`` line is skipped, and so is every other
    line of a run of them (the reader jumps over one comment, then parses the next line as data)."""
    comment = pl.col("line").str.starts_with("#")
    run = (comment != comment.shift(1)).fill_null(True).cum_sum()
    skipped = comment & (pl.int_range(pl.len()).over(run) % 2 == 0)
    return _lines(text).to_frame().filter(~skipped)


def _fields(lines: pl.DataFrame, pattern: str, names: list[str], who: str, path: str,
            quit_message: bool = True) -> pl.DataFrame:
    """The lines split into ``names``; the first line that does not match is trec_eval's "Malformed line"."""
    parsed = lines.select(pl.col("line").str.extract_groups(pattern).struct.rename_fields(names)).unnest("line")
    bad = parsed.select(pl.col(names[0]).is_null().arg_true().first()).item()
    if bad is not None:
        quit = f"trec_eval: Quit in file '{path}'\n" if quit_message else ""
        raise TrecEvalExit(2 if quit_message else 255, f"trec_eval.{who}: Malformed line {bad + 1}\n" + quit)
    return parsed


def _number(column: str, pattern: str, dtype: type[pl.DataType], zero: float) -> pl.Expr:
    """C's ``atol`` / ``atof`` of a text column: its leading number, ``zero`` when there is none."""
    return pl.col(column).str.extract(pattern, 0).cast(dtype, strict=False).fill_null(zero)


def _atol(column: str) -> pl.Expr:
    """C's ``atol`` (glibc's ``strtol``): the leading integer, clamped to the ``long`` range when it
    does not fit (``9223372036854775808`` -> 9223372036854775807), 0 when there is none."""
    digits = pl.col(column).str.extract(_ATOL, 0)
    clamped = pl.when(digits.str.starts_with("-")).then(pl.lit(-(2**63), pl.Int64)).otherwise(2**63 - 1)
    return (pl.when(digits.is_null()).then(pl.lit(0, pl.Int64))
            .otherwise(digits.cast(pl.Int64, strict=False).fill_null(clamped)))


def read_qrels(path: str) -> pl.DataFrame:
    """``query, item, grade`` of a qrels file (all lines, duplicates kept: trec_eval checks them per query)."""
    lines = _data_lines(_read(path, "qrels", "get_qrels"))
    parsed = _fields(lines, _QRELS_LINE, ["query", "iter", "item", "rel"], "get_qrels", path)
    return parsed.select("query", "item", grade=_atol("rel"))


def read_prefs(path: str, rel_format: str) -> pl.DataFrame:
    """``query, jg, jsg, item, level`` of a ``-R prefs`` or ``-R qrels_prefs`` file (``level`` a float)."""
    who = "get_prefs" if rel_format == "prefs" else "get_qrels_prefs"
    lines = _data_lines(_read(path, "prefs", "get_prefs"))
    if rel_format == "prefs":
        fields, pattern = ["query", "jg", "jsg", "item", "rel"], _PREFS_LINE
    else:
        fields, pattern = ["query", "jg", "item", "rel"], _QRELS_LINE
    parsed = _fields(lines, pattern, fields, who, path)
    jsg = pl.col("jsg") if rel_format == "prefs" else pl.lit("0")
    return parsed.select("query", "jg", jsg.alias("jsg"), "item", level=_number("rel", _ATOF, pl.Float64, 0.0))


def read_qrels_jg(path: str) -> pl.DataFrame:
    """``query, jg, item, grade`` of a ``-R qrels_jg`` file (the iter field names the judgment group)."""
    lines = _data_lines(_read(path, "qrels", "get_qrels_jg"))
    parsed = _fields(lines, _QRELS_LINE, ["query", "jg", "item", "rel"], "get_qrels_jg", path)
    frame = parsed.select("query", "jg", "item", grade=_atol("rel"))
    dups = frame.group_by("query", "jg", "item").len().filter(pl.col("len") > 1).sort("query", "jg", "item")
    if dups.height:
        raise TrecEvalExit(2, f"trec_eval.get_qrels: duplicate docs {dups.item(0, 'item')}\n"
                              f"trec_eval: Quit in file '{path}'\n")
    return frame


def read_zscores(path: str) -> pl.DataFrame:
    """``query, label, mean, sd`` of a ``-Z`` file (``qid measure mean stddev`` lines)."""
    lines = _lines(_read(path, "zscores", "get_zscores")).to_frame()
    parsed = _fields(lines, _QRELS_LINE, ["query", "label", "mean", "sd"], "get_zscores", path, quit_message=False)
    number = {c: _number(c, _ATOF, pl.Float64, 0.0) for c in ("mean", "sd")}
    return parsed.select("query", "label", **number).unique(["query", "label"], keep="first")


def read_results(path: str) -> tuple[pl.DataFrame, str | None]:
    """``query, item, score`` of a results file, and the run id trec_eval prints."""
    lines = _lines(_read(path, "results", "get_results")).to_frame()
    first = pl.col("line").str.strip_chars_start(" \t\x0b\x0c\r")
    lines = lines.filter((first != "") & ~first.str.starts_with("#"))
    parsed = _fields(lines, _RESULTS_LINE, ["query", "iter", "item", "rank", "sim", "runid"], "get_results", path)
    runid = parsed.get_column("runid").item(-1) if parsed.height else None
    return parsed.select("query", "item", score=_number("sim", _ATOF, pl.Float64, 0.0)), runid
