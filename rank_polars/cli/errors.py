"""Exit codes, one-line error messages, and the library's wording turned into the CLI's.

Exit codes, the same in every command (also in ``docs/cli.md``):

* ``OK`` (0): done; ``validate`` found warnings at most; ``gate``: the candidate passes.
* ``FAILED`` (1): bad data or arguments (one ``error: ...`` line on stderr, nothing on stdout;
  ``gate``: ``BAD_INPUT``), or the check a command makes failed: ``validate`` found errors,
  ``gate`` found a regression (its summary on stdout, no ``error:`` line).
* ``USAGE`` (2): the command line itself is wrong (unknown option, bad choice, a missing
  required option): click's code.
* ``BAD_INPUT`` (3): bad data or arguments in ``gate``, whose ``FAILED`` means a regression: a CI
  job never reads broken input as a regression (one ``error: ...`` line on stderr, nothing on
  stdout, no summary file).
"""

from __future__ import annotations

import contextlib
import re
import shlex
import functools
from typing import Any, Callable, Iterator, TypeVar, cast

import click
import polars as pl

from rank_polars.errors import RankPolarsError
from rank_polars.presentation import did_you_mean

F = TypeVar("F", bound=Callable[..., Any])

OK = 0
FAILED = 1  # bad input in every command, and a failed check (validate's errors, gate's regression)
USAGE = 2
BAD_INPUT = 3  # gate: its FAILED is a regression, so bad input has a status of its own


class CLIError(click.ClickException):
    """A user error found by the command line itself (exit code ``FAILED``)."""

    exit_code = FAILED


class BadInput(click.ClickException):
    """Bad data or arguments in ``gate`` (exit code ``BAD_INPUT``)."""

    exit_code = BAD_INPUT


@contextlib.contextmanager
def bad_input_status() -> Iterator[None]:
    """The library's and the readers' errors (:func:`expected_errors`) as :class:`BadInput`, in
    the command line's words: ``gate``'s body runs inside it."""
    try:
        yield
    except CLIError as e:
        raise BadInput(e.message) from None
    except expected_errors() as e:
        message = e.strerror + (f": {e.filename!r}" if e.filename else "") if isinstance(e, OSError) and e.strerror else str(e)
        raise BadInput(cli_wording(message)) from None


def bad_input_exits_3(command: F) -> F:
    """A command's body run inside :func:`bad_input_status` (its bad input exits ``BAD_INPUT``)."""
    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        with bad_input_status():
            return command(*args, **kwargs)

    return cast(F, run)


def one_line(message: str) -> str:
    """The first non-empty line of a message."""
    lines = [ln.strip() for ln in str(message).splitlines() if ln.strip()]
    return lines[0] if lines else "unknown error"


def expected_errors() -> tuple[type[BaseException], ...]:
    """Errors that are the user's to fix: printed as one line, without ``internal error``."""
    types: list[type[BaseException]] = [RankPolarsError, OSError, pl.exceptions.PolarsError]
    with contextlib.suppress(ImportError):
        import duckdb

        types.append(duckdb.Error)
    return tuple(types)


# The library speaks Python (``pass duplicates='first'``); the CLI speaks options.  Each
# pattern matches a keyword argument as the library's messages spell it.
_PARAMETERS = {
    "duplicates": "--duplicates", "labels": "--labels", "checks": "--checks", "missing": "--missing",
    "engine": "--engine", "order": "--order", "qrels": "--qrels", "by": "--by", "test": "--test",
    "correction": "--correction", "baseline": "--baseline", "n_resamples": "--n-resamples", "alpha": "--alpha",
    "confidence": "--confidence", "per_query": "--per-query", "dialect": "--dialect", "table": "--table",
    "query": "--query", "item": "--item", "position": "--position", "score": "--score", "relevance": "--relevance",
    "ci": "--ci", "ci_method": "--ci-method", "interval": "--interval", "pairs": "--pairs", "seed": "--seed",
    "catalog_resamples": "--catalog-resamples", "judge": "--judge", "by_judge": "--by-judge", "bounds": "--bounds",
}
_FLAGS = {"per_query", "by_judge", "bounds"}  # options without a value
_KEYWORD = re.compile(r"\b(" + "|".join(_PARAMETERS) + r")=(?:'([^']*)'|\"([^\"]*)\"|([\w.@-]+)|(?=[\s,;:)]|$))")


def cli_wording(message: str) -> str:
    """Rewrite the library's ``name='value'`` into the option spelling ``--name value``.

    >>> cli_wording("duplicate items (keep one row per query and item, or pass duplicates='first')")
    'duplicate items (keep one row per query and item, or pass --duplicates first)'
    >>> cli_wording("label every row, or pass qrels=")
    'label every row, or pass --qrels'
    >>> cli_wording("labels='run' needs every relevant row judged; pass labels='qrels'")
    '--labels run needs every relevant row judged; pass --labels qrels'
    >>> cli_wording("left out of its mean; per_query=True shows them")
    'left out of its mean; --per-query shows them'
    >>> cli_wording("table='my logs' is not one table name")
    "--table 'my logs' is not one table name"
    """

    def option(m: re.Match[str]) -> str:
        value = next((g for g in m.groups()[1:] if g is not None), "")
        if m.group(1) in _FLAGS and value == "True":  # per_query=True is the flag itself
            value = ""
        return _PARAMETERS[m.group(1)] + (f" {shlex.quote(value)}" if value else "")  # as typed in a shell

    return _KEYWORD.sub(option, message)


__all__ = ["CLIError", "FAILED", "OK", "USAGE", "cli_wording", "did_you_mean", "expected_errors", "one_line"]
