"""Subtopic judgments in ndeval's file format: ``topic subtopic docno judgment``, one a line."""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl

from rank_polars.io.trec import TREC_QRELS, bad_field, trec_fields


def looks_like_subtopic_qrels(source: object) -> bool:
    """True when ``source`` is the path of a text file whose first data line has ndeval's four
    fields with an integer subtopic and judgment (TREC qrels share the layout: the measures
    asking for subtopics decide which it is); False for any other source (a frame, a table)."""
    if not isinstance(source, (str, os.PathLike)):
        return False
    p = Path(source)
    if not p.is_file():
        return False
    with open(p, "rb") as f:
        head = f.read(4096)
    if head.startswith(b"PAR1"):
        return False
    for line in head.decode("utf-8", "replace").splitlines():
        fields = line.split()
        if fields and not fields[0].startswith("#"):
            return len(fields) == 4 and fields[1].lstrip("-").isdigit() and fields[3].lstrip("-").isdigit()
    return False


def read_subtopic_qrels(path: str | Path) -> pl.DataFrame:
    """Read subtopic judgments in ndeval's format (``topic subtopic docno judgment``).

    Blank lines and ``#`` lines are skipped.  Ids are text; the judgment an integer (ndeval
    itself refuses a negative one; the measures refuse it too, naming the queries).

    Parameters
    ----------
    path
        The qrels file.

    Returns
    -------
    pl.DataFrame
        ``query``, ``subtopic``, ``item`` (str) and ``relevance`` (i64), in file order.

    Raises
    ------
    DataError
        No data line, a line without exactly four fields, or a judgment that is not a 64-bit
        integer (with the file and line number).

    Examples
    --------
    >>> import rank_polars as rp, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels"
    >>> _ = path.write_text("1 1 d7 1\\n1 2 d7 0\\n1 2 d9 2\\n")
    >>> rp.read_subtopic_qrels(path)
    shape: (3, 4)
    ┌───────┬──────────┬──────┬───────────┐
    │ query ┆ subtopic ┆ item ┆ relevance │
    │ ---   ┆ ---      ┆ ---  ┆ ---       │
    │ str   ┆ str      ┆ str  ┆ i64       │
    ╞═══════╪══════════╪══════╪═══════════╡
    │ 1     ┆ 1        ┆ d7   ┆ 1         │
    │ 1     ┆ 2        ┆ d7   ┆ 0         │
    │ 1     ┆ 2        ┆ d9   ┆ 2         │
    └───────┴──────────┴──────┴───────────┘
    """
    p = Path(path)
    # the same vectorised line reader as TREC qrels (ndeval's file has their four-field layout)
    df = trec_fields(p, TREC_QRELS, 4, "subtopic qrels", "topic subtopic docno judgment")
    df = df.select("lineno", query="c0", subtopic="c1", item="c2", value="c3")
    judgment = pl.col("value").cast(pl.Int64, strict=False)
    bad_field(df, pl.col("value").str.contains(r"^[+-]?\d+$") & judgment.is_not_null(), "judgment (4th field)",
              p, "subtopic qrels", "a 64-bit integer")
    return df.select("query", "subtopic", "item", judgment.alias("relevance"))

__all__ = ["looks_like_subtopic_qrels", "read_subtopic_qrels"]
