"""The command line's choice of progress display.

``--progress`` shows it, ``--no-progress`` hides it; by default it is shown only when stderr
is a terminal, so pipes and logs get no progress text.  A terminal gets rich's live display
(:class:`rank_polars.progress.RichProgress`, cleared when the work is done); ``--progress``
on a pipe or a log file gets plain lines, one when a phase starts and one when it ends.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from pathlib import Path
from typing import IO, Iterator

import click

from rank_polars.presentation import count
from rank_polars.progress import Advance, NoProgress, Progress, RichProgress


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

        size = f" ({counted(total, unit)})" if total is not None else ""
        self._write(f"{description}{size} ...")
        start = time.monotonic()
        yield advance
        amount = f"{counted(done[0], unit)}, " if total is not None else ""
        self._write(f"{description}: done ({amount}{time.monotonic() - start:.1f} s)")


def counted(n: int, unit: str) -> str:
    """``1 query range``, ``3 query ranges``: the unit (given plural) agreeing with the count."""
    if not unit:
        return count(n)
    return f"{count(n)} {unit[:-1] if n == 1 and unit.endswith('s') else unit}"


def _process_started() -> float:
    """``time.time()`` when this process started: Linux's /proc, else when the CLI was imported."""
    try:
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        booted_ago = float(Path("/proc/uptime").read_text().split()[0])
        return time.time() - booted_ago + int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: starttime
    except (OSError, ValueError, IndexError, AttributeError):
        return _IMPORTED


_IMPORTED = time.time()


class Accounted:
    """A display that also accounts for the whole command's time when it ends.

    The top-level phases are timed; the summary line says how long the process ran and
    names the rest: the start (Python and the imports of polars, duckdb, ..., before the
    command ran) and what is between the phases (reading the files' schemas, writing the
    output).
    """

    def __init__(self, inner: Progress, command_started: float, file: IO[str] | None = None) -> None:
        self._inner = inner
        self._file = file
        self._depth = 0
        self._phases: list[tuple[str, float]] = []
        self._command_started = command_started
        self._failed = False

    @contextlib.contextmanager
    def phase(self, description: str, total: int | None = None, unit: str = "") -> Iterator[Advance]:
        self._depth += 1
        start = time.monotonic()
        try:
            with self._inner.phase(description, total, unit) as advance:
                yield advance
        except BaseException:
            self._failed = True  # the error line says what happened: no summary after it
            raise
        finally:
            self._depth -= 1
            if self._depth == 0:
                self._phases.append((description, time.monotonic() - start))

    @property
    def inner(self) -> Progress:
        return self._inner

    def summary(self) -> str:
        now = time.time()
        started = min(_process_started(), self._command_started)
        parts = [f"{self._command_started - started:.1f} s starting (Python, importing polars and the engines)"]
        parts += [f"{seconds:.1f} s {description}" for description, seconds in self._phases]
        rest = now - self._command_started - sum(seconds for _, seconds in self._phases)
        parts.append(f"{max(rest, 0.0):.1f} s reading schemas, checking options and writing the output")
        return f"done in {now - started:.1f} s: " + "; ".join(parts)

    def close(self) -> None:
        if self._failed or sys.exc_info()[0] is not None:
            return
        stream = self._file if self._file is not None else sys.stderr
        stream.write(self.summary() + "\n")
        stream.flush()


def choose(show: bool | None) -> Progress:
    """The display for ``--progress`` (True), ``--no-progress`` (False) or neither (None).

    A shown display ends with one line accounting for the whole command's time
    (:class:`Accounted`), printed when the command's click context closes.
    """
    terminal = is_terminal()
    if show is None:
        show = terminal
    if not show:
        return NoProgress()
    display = Accounted(RichProgress(transient=True) if terminal else LineProgress(), COMMAND_STARTED[0])
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.call_on_close(display.close)
    return display


# when the command began (set by the group's callback); the process start is before it
COMMAND_STARTED = [time.time()]


__all__ = ["Accounted", "COMMAND_STARTED", "LineProgress", "choose", "counted", "is_terminal"]
