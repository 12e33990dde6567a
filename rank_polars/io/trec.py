"""TREC runs (``qid Q0 docno rank score runid``) and qrels (``qid iter docno rel``), read as trec_eval 10 does."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from rank_polars.errors import DataError, examples
from rank_polars.io.text import first_bytes, not_utf8

DECIMAL = r"[+-]?(\d+\.?\d*|\.\d+)"

# Fields are split on C's isspace (the "C" locale), as trec_eval splits them: a no-break space or
# any other Unicode space is part of a docno (the regex's \s would split there, and a run line
# "q Q0 a<NBSP>b 1 9.5 r" would be read as docno "a" with score 1).
SPACE = " \t\x0b\x0c\r"
_WS, _FIELD = f"[{SPACE}]", f"([^{SPACE}]+)"
# A TREC run line has six fields or more (trec_eval ignores the rest), a qrels line exactly four.
_TREC_RUN = f"^{_WS}*" + f"{_WS}+".join([_FIELD] * 6) + f"(?:{_WS}.*)?$"
TREC_QRELS = f"^{_WS}*" + f"{_WS}+".join([_FIELD] * 4) + f"{_WS}*$"


def _read_lines(path: Path, what: str) -> pl.DataFrame:
    r"""``line``: the file's lines, without a BOM or a CRLF's ``\r``.

    Polars' CSV reader with a separator no text line holds reads them fastest; a line that
    does hold it (the byte 0x1f) is split in Python instead, exactly.
    """
    try:  # glob=False: a file named "run[a].txt" is that file, not "runa.txt"
        return pl.read_csv(path, has_header=False, new_columns=["line"], separator="\x1f", quote_char=None,
                           schema_overrides={"line": pl.String}, truncate_ragged_lines=False, glob=False)
    except pl.exceptions.PolarsError:  # a 0x1f in a line, or bytes that are not UTF-8 (said below)
        pass
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise not_utf8(path, what, data, e.start) from None
    lines = pl.Series("line", text.removeprefix("\ufeff").split("\n"), pl.String)
    return lines.str.strip_suffix("\r").to_frame()


def _lines(path: Path, what: str) -> pl.DataFrame:
    """``lineno, line`` of the data lines (blank and ``#`` lines dropped, numbers kept)."""
    first_bytes(path, what)
    lines = _read_lines(path, what).with_row_index("lineno", offset=1)
    text = pl.col("line").str.strip_chars(SPACE)
    lines = lines.filter(text.is_not_null() & (text != "") & ~text.str.starts_with("#"))
    # a lone \r ends no line here (nor in trec_eval): a file with old Mac line ends is one line,
    # and a run's fields after the sixth are ignored, so all but its first document would vanish
    inner = lines.filter(pl.col("line").str.strip_chars_end("\r").str.contains("\r", literal=True))
    if inner.height:
        row = inner.row(0, named=True)
        raise DataError(f"{what}: {path}: line {row['lineno']} holds a carriage return (\\r) inside it: lines "
                        f"must end with \\n (old Mac line ends? convert them, e.g. `tr '\\r' '\\n'`): "
                        f"{row['line'][:80]!r}")
    return lines


def trec_fields(path: Path, pattern: str, n: int, what: str, layout: str) -> pl.DataFrame:
    lines = _lines(path, what)
    if lines.height == 0:
        raise DataError(f"{what}: {path} has no {layout} lines (only blank or # comment lines)")
    parts = lines.with_columns(pl.col("line").str.extract_groups(pattern).alias("f"))
    bad = parts.filter(pl.col("f").struct.field("1").is_null())
    if bad.height:
        row = bad.row(0, named=True)
        more = f" ({bad.height} bad lines)" if bad.height > 1 else ""
        raise DataError(f"{what}: {path}: line {row['lineno']} is not a TREC {what} line ({layout}): "
                        f"{row['line'][:80]!r}{more}")
    return parts.select("lineno", *(pl.col("f").struct.field(str(i + 1)).alias(f"c{i}") for i in range(n)))


def bad_field(df: pl.DataFrame, ok: pl.Expr, field: str, path: Path, what: str, expected: str) -> None:
    bad = df.filter(~ok)
    if bad.height:
        row = bad.row(0, named=True)
        more = f" ({bad.height} lines)" if bad.height > 1 else ""
        raise DataError(f"{what}: {path}: line {row['lineno']}: the {field} {row['value']!r} is not {expected}{more}")


def _no_duplicates(df: pl.DataFrame, path: Path, what: str) -> None:
    dup = df.filter(pl.struct("query", "item").is_duplicated())
    if dup.height:
        pairs = dup.group_by("query", "item", maintain_order=True).agg(pl.col("lineno"))
        shown = (f"query {q!r} doc {d!r} (lines {', '.join(map(str, lines))})" for q, d, lines in pairs.iter_rows())
        raise DataError(f"{what}: {path}: duplicate docs, as trec_eval refuses: {examples(shown, 3, quote=False)}")


def read_trec_run(path: str | Path) -> pl.DataFrame:
    """Read a TREC run file (``qid Q0 docno rank score runid``) as trec_eval 10 does.

    Blank lines and lines whose first non-blank character is ``#`` are skipped; fields are
    separated by any whitespace and fields after the sixth are ignored.  The rank column is
    ignored (items are ordered by score, ties by docno descending, as trec_eval), ids are
    text, and the run's name (``runid``) is kept per line.

    Parameters
    ----------
    path
        The run file.

    Returns
    -------
    pl.DataFrame
        ``query`` (str), ``item`` (str), ``score`` (f64), ``runid`` (str), in file order.

    Raises
    ------
    DataError
        A malformed line or a score that is not a number (with the file and line number),
        or a document listed twice for a query (trec_eval: "duplicate docs").

    Examples
    --------
    >>> import rank_polars as rp, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.txt"
    >>> _ = path.write_text("# my run\\n1 Q0 d7 1 2.5 bm25\\n1 Q0 007 2 1.5 bm25\\n")
    >>> rp.read_trec_run(path)
    shape: (2, 4)
    ┌───────┬──────┬───────┬───────┐
    │ query ┆ item ┆ score ┆ runid │
    │ ---   ┆ ---  ┆ ---   ┆ ---   │
    │ str   ┆ str  ┆ f64   ┆ str   │
    ╞═══════╪══════╪═══════╪═══════╡
    │ 1     ┆ d7   ┆ 2.5   ┆ bm25  │
    │ 1     ┆ 007  ┆ 1.5   ┆ bm25  │
    └───────┴──────┴───────┴───────┘
    """
    p = Path(path)
    df = trec_fields(p, _TREC_RUN, 6, "run", "qid Q0 docno rank score runid")
    df = df.select("lineno", query="c0", item="c2", value="c4", runid="c5")
    score = pl.col("value").cast(pl.Float64, strict=False)
    bad_field(df, score.is_not_null(), "score (5th field)", p, "run", "a number")
    _no_duplicates(df, p, "run")
    return df.select("query", "item", score.alias("score"), "runid")


def read_trec_qrels(path: str | Path) -> pl.DataFrame:
    """Read TREC qrels (``qid iter docno rel``) as trec_eval 10 does.

    Blank lines and lines whose first non-blank character is ``#`` are skipped.  The grade
    is read like C's ``atol``: a decimal grade is truncated toward zero (``2.7`` is 2,
    ``-0.5`` is 0); negative grades are kept (judged, not relevant).  Ids are text.

    Parameters
    ----------
    path
        The qrels file.

    Returns
    -------
    pl.DataFrame
        ``query`` (str), ``item`` (str), ``relevance`` (i64), in file order.

    Raises
    ------
    DataError
        A line without exactly four fields, a grade that is not a number or whose integer
        part is beyond 64 bits (with the file and line number), or a document judged twice
        for a query.

    Examples
    --------
    >>> import rank_polars as rp, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels"
    >>> _ = path.write_text("1 0 d7 2.7\\n1 0 007 1\\n1 0 d9 -1\\n")
    >>> rp.read_trec_qrels(path)
    shape: (3, 3)
    ┌───────┬──────┬───────────┐
    │ query ┆ item ┆ relevance │
    │ ---   ┆ ---  ┆ ---       │
    │ str   ┆ str  ┆ i64       │
    ╞═══════╪══════╪═══════════╡
    │ 1     ┆ d7   ┆ 2         │
    │ 1     ┆ 007  ┆ 1         │
    │ 1     ┆ d9   ┆ -1        │
    └───────┴──────┴───────────┘
    """
    p = Path(path)
    df = trec_fields(p, TREC_QRELS, 4, "qrels", "qid iter docno rel")
    df = df.select("lineno", query="c0", item="c2", value="c3")
    bad_field(df, pl.col("value").str.contains(f"^{DECIMAL}$"), "grade (4th field)", p, "qrels", "a number")
    digits = pl.col("value").str.extract(r"^([+-]?\d+)")  # atol: the integer part (".5" has none: 0)
    whole = digits.cast(pl.Int64, strict=False)
    bad_field(df, digits.is_null() | whole.is_not_null(), "grade (4th field)", p, "qrels",
               "within the 64-bit integer range (-9223372036854775808 to 9223372036854775807)")
    _no_duplicates(df, p, "qrels")
    return df.select("query", "item", whole.fill_null(0).alias("relevance"))
