"""Progress on long work: phases, files or rows read, resamples done.

The library reports progress through one small interface, :class:`Progress`, and shows
nothing unless asked (``progress=True`` in :func:`rank_polars.evaluate` /
:func:`rank_polars.compare`; the command line asks when stderr is a terminal).  The display is
`rich <https://rich.readthedocs.io>`_'s, which draws in terminals and in Jupyter alike; rich
is imported only when a display is shown.

Code that does long work takes a ``Progress`` and wraps each phase::

    with progress.phase("resampling ndcg@10", total=10_000, unit="resamples") as advance:
        for chunk in chunks:
            ...
            advance(len(chunk))

``advance`` is thread-safe (the resampling runs on threads).  A phase with ``total=None``
shows a spinner and the elapsed time.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from typing import IO, Any, Callable, Iterator, Protocol, Union

Advance = Callable[[int], None]


class Progress(Protocol):
    """Where long work reports how far it has got."""

    def phase(self, description: str, total: int | None = None, unit: str = "") -> contextlib.AbstractContextManager[Advance]:
        """A context for one phase; the value it gives advances the phase by n units."""
        ...


def _ignore(n: int) -> None:
    pass


class NoProgress:
    """Shows nothing (the default of every library call)."""

    @contextlib.contextmanager
    def phase(self, description: str, total: int | None = None, unit: str = "") -> Iterator[Advance]:
        yield _ignore


class RichProgress:
    """A rich display: one line per phase with a bar (when the total is known), the count,
    the rate and the elapsed time.  Phases nest: an inner phase shows below its outer one."""

    def __init__(self, file: IO[str] | None = None, *, transient: bool = False) -> None:
        self._file = file
        self._transient = transient
        self._display: Any = None
        self._depth = 0
        self._lock = threading.Lock()

    def _start(self) -> Any:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress as _RichProgress,
            SpinnerColumn,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        console = Console(file=self._file if self._file is not None else sys.stderr)
        display = _RichProgress(
            SpinnerColumn(),
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            TaskProgressColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[unit]}"),
            TimeElapsedColumn(),
            console=console,
            transient=self._transient,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        display.start()
        return display

    @contextlib.contextmanager
    def phase(self, description: str, total: int | None = None, unit: str = "") -> Iterator[Advance]:
        with self._lock:
            if self._display is None:
                self._display = self._start()
            self._depth += 1
            display = self._display
        task = display.add_task(description, total=total, unit=unit)
        lock = threading.Lock()

        def advance(n: int) -> None:
            with lock:
                display.advance(task, n)

        try:
            yield advance
            if total is None:
                display.update(task, total=1, completed=1)
            else:
                display.update(task, completed=total)
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0:
                    display.stop()
                    self._display = None


ProgressLike = Union[bool, Progress, None]


def resolve(progress: ProgressLike) -> Progress:
    """``False``/``None``: nothing shown; ``True``: a rich display on stderr (or in the
    notebook); a :class:`Progress` object: used as given."""
    if progress is None or progress is False:
        return NoProgress()
    if progress is True:
        return RichProgress()
    if hasattr(progress, "phase"):
        return progress
    raise TypeError(f"progress must be True, False or a Progress object, got {type(progress).__name__}")


__all__ = ["Advance", "NoProgress", "Progress", "ProgressLike", "RichProgress", "resolve"]
