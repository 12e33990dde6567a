"""The command line's choice of progress display.

``--progress`` shows it, ``--no-progress`` hides it; by default it is shown only when stderr
is a terminal, so pipes and logs get no progress text.  A terminal gets rich's live display
(:class:`rank_polars.progress.RichProgress`, cleared when the work is done); ``--progress``
on a pipe or a log file gets plain lines, one when a phase starts and one when it ends.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from typing import IO, Iterator

from ..presentation import count
from ..progress import Advance, NoProgress, Progress, RichProgress


def is_terminal(stream: IO[str] | None = None) -> bool:
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class LineProgress:
    """Phases as plain lines on stderr, for logs: ``description ...`` and ``description: done``."""

    def __init__(self, file: IO[str] | None = None) -> None:
        self._file = file

    def _write(self, text: str) -> None:
        stream = self._file if self._file is not None else sys.stderr
        stream.write(text + "\n")
        stream.flush()

    @contextlib.contextmanager
    def phase(self, description: str, total: int | None = None, unit: str = "") -> Iterator[Advance]:
        done = [0]
        lock = threading.Lock()

        def advance(n: int) -> None:
            with lock:
                done[0] += n

        size = f" ({count(total)} {unit})".rstrip() if total is not None else ""
        self._write(f"{description}{size} ...")
        start = time.monotonic()
        yield advance
        amount = f"{count(done[0])} {unit}, ".lstrip() if total is not None else ""
        self._write(f"{description}: done ({amount}{time.monotonic() - start:.1f} s)")


def choose(show: bool | None) -> Progress:
    """The display for ``--progress`` (True), ``--no-progress`` (False) or neither (None)."""
    terminal = is_terminal()
    if show is None:
        show = terminal
    if not show:
        return NoProgress()
    return RichProgress(transient=True) if terminal else LineProgress()


__all__ = ["LineProgress", "choose", "is_terminal"]
