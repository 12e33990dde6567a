"""What a file holds, from its first bytes: Parquet, a TREC run or qrels, CSV or TSV."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from rank_polars.errors import DataError, RankPolarsError
from rank_polars.io.parquet import PARQUET_MAGIC
from rank_polars.io.text import first_bytes, not_utf8
from rank_polars.io.trec import DECIMAL, SPACE

Format = Literal["parquet", "csv", "tsv", "trec", "qrels"]
FORMATS: tuple[str, ...] = ("parquet", "csv", "tsv", "trec", "qrels")
ACCEPTED_FILES = (
    "Parquet (a file, folder, glob or list), a TREC run (qid Q0 docno rank score runid), "
    "TREC qrels (qid iter docno rel), or CSV/TSV with a header"
)

_BY_SUFFIX = {
    ".parquet": "parquet", ".pq": "parquet",
    ".csv": "csv", ".tsv": "tsv", ".tab": "tsv",
    ".run": "trec", ".trec": "trec", ".txt": "trec",
    ".qrels": "qrels",
}
_ALIASES = {"pq": "parquet", "run": "trec", "trec_run": "trec", "trec_qrels": "qrels", "txt": "trec"}
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*(e[+-]?\d+)?|\.\d+(e[+-]?\d+)?|inf(inity)?|nan)", re.IGNORECASE)


def _first_line(head: bytes, size: int, path: Path, what: str) -> str | None:
    """The first data line of a text file (not blank, not ``#``); refuses non-UTF-8 bytes."""
    complete = size <= len(head)
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as e:
        if complete or e.start < len(head) - 3:  # not a character cut by the sniffing window
            raise not_utf8(path, what, head, e.start) from None
        text = head[: e.start].decode("utf-8")
    # "\n" alone ends a line, as the readers split them (splitlines() also splits on \x1c, \x85, \u2028...)
    lines = [line.removesuffix("\r") for line in text.lstrip("\ufeff").split("\n")]
    if not complete and lines:
        lines = lines[:-1]  # may be cut
    return next((line for line in lines if line.strip(SPACE) and not line.lstrip(SPACE).startswith("#")), None)


def _sniff_text(first: str) -> str | None:
    """The format the first data line says (the reader then checks every line)."""
    fields = re.split(f"[{SPACE}]+", first.strip(SPACE))  # TREC fields: C's isspace, not Unicode spaces
    if len(fields) >= 6 and _NUMBER.fullmatch(fields[3]) and _NUMBER.fullmatch(fields[4]):
        return "trec"
    if len(fields) == 4 and re.fullmatch(DECIMAL, fields[3]):
        return "qrels"
    if "\t" in first:
        return "tsv"
    if "," in first:
        return "csv"
    return None


def sniff(path: str | Path, what: str = "run") -> str:
    """The format of one file from its first bytes (see the module docstring)."""
    p = Path(path)
    head, size = first_bytes(p, what)
    if head.startswith(PARQUET_MAGIC):
        return "parquet"
    if head.startswith(b"\x1f\x8b"):
        raise DataError(f"{what}: {p} is gzip-compressed; decompress it first (`gunzip`)")
    # a BOM, or a NUL in the first character: UTF-16 (Windows PowerShell's `>`, Excel's "Unicode
    # text"), whose BOM-less ASCII is valid UTF-8 with a NUL after each letter
    if head[:2] in (b"\xff\xfe", b"\xfe\xff") or 0 in head[:2]:
        raise DataError(f"{what}: {p} is UTF-16 text, not UTF-8; re-encode it, e.g. `iconv -f utf-16 -t utf-8`")
    named = _BY_SUFFIX.get(p.suffix.lower())
    try:
        first = _first_line(head, size, p, what)
    except DataError:
        if named == "parquet":
            raise DataError(f"{what}: {p} is not a Parquet file (it does not start with PAR1), nor text") from None
        raise
    if first is None:
        raise DataError(f"{what}: {p} has no data lines (only blank or # comment lines)")
    if named in ("trec", "qrels"):  # a ".txt" or ".run" that says nothing: the role decides
        named = "qrels" if what == "qrels" else "trec"
    fmt = _sniff_text(first) or named
    if fmt is None or fmt == "parquet":
        raise DataError(f"{what}: cannot tell the format of {p}: expected {ACCEPTED_FILES}; "
                        f"its first line is {first[:80]!r}")
    return fmt


def detect_format(path: str | Path, override: str | None = None, what: str = "run") -> str:
    """The format of ``path``: ``override`` if given; a folder, glob or missing file is Parquet."""
    if override:
        fmt = _ALIASES.get(override.lower(), override.lower())
        if fmt not in FORMATS:
            raise RankPolarsError(f"unknown input format {override!r}; use one of {', '.join(FORMATS)}")
        return fmt
    p = Path(path)
    if p.is_file():
        return sniff(p, what)
    return "parquet"
