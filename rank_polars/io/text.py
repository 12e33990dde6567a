"""What the text readers share: the first bytes of a file and the error that names the line of a bad byte."""

from __future__ import annotations

from pathlib import Path

from rank_polars.errors import DataError

_SNIFF_BYTES = 1 << 16


def first_bytes(path: Path, what: str) -> tuple[bytes, int]:
    """The first 64 KiB of a file and its size; an empty file is refused here, for every format."""
    size = path.stat().st_size
    if size == 0:
        raise DataError(f"{what}: {path} is empty (0 bytes)")
    with open(path, "rb") as f:
        return f.read(_SNIFF_BYTES), size


def not_utf8(path: Path, what: str, data: bytes, start: int) -> DataError:
    """The error for bytes that are not UTF-8, with the line they are on."""
    line = data[:start].count(b"\n") + 1
    return DataError(
        f"{what}: {path} is not UTF-8 text (byte 0x{data[start]:02x} on line {line}); "
        "re-encode it as UTF-8, e.g. `iconv -f latin1 -t utf-8`"
    )

