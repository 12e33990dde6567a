"""Subtopic judgments in ndeval's file format: ``topic subtopic docno judgment``, one a line."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from ..errors import DataError


def looks_like_subtopic_qrels(path: str | Path) -> bool:
    """True when ``path`` is a text file whose first data line has ndeval's four fields with
    an integer subtopic and judgment (TREC qrels share the layout: the measures asking
    for subtopics decide which it is)."""
    p = Path(path)
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
        A line without exactly four fields or a judgment that is not an integer (with the
        line number).

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
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise DataError(f"subtopic qrels: cannot read {p}: {e}") from None
    rows = []
    for lineno, line in enumerate(text.splitlines(), 1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) != 4 or not fields[3].lstrip("+-").isdigit():
            raise DataError(f"subtopic qrels: {p} line {lineno}: expected 'topic subtopic docno judgment' "
                            f"with an integer judgment, got {line[:80]!r}")
        rows.append((fields[0], fields[1], fields[2], int(fields[3])))
    return pl.DataFrame(rows, schema={"query": pl.String, "subtopic": pl.String, "item": pl.String,
                                      "relevance": pl.Int64}, orient="row")


__all__ = ["looks_like_subtopic_qrels", "read_subtopic_qrels"]
