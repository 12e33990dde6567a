"""The ``rank-polars`` click group: one-line errors on stderr, ``--debug`` for tracebacks.

The commands live in :mod:`rank_polars.cli.commands` (one module each) and are registered
at the bottom of this file from the list ``commands.COMMANDS``.
"""

from __future__ import annotations

import importlib
import sys
import time
import traceback
import warnings
from typing import Any, Sequence

import click

from rank_polars.errors import CoverageWarning
from rank_polars.cli.commands import COMMANDS
from rank_polars.cli.errors import FAILED, OK, cli_wording, expected_errors, one_line
from rank_polars.cli.progress import COMMAND_STARTED

_NO_ARGS_IS_HELP: Any = getattr(click.exceptions, "NoArgsIsHelpError", ())  # click >= 8.2


def _message(e: BaseException) -> str:
    if isinstance(e, OSError) and e.strerror:
        return e.strerror + (f": {e.filename!r}" if e.filename else "")
    return str(e)


class RankPolarsGroup(click.Group):
    """A click group whose errors are one line each on stderr."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None, **extra: Any) -> Any:  # type: ignore[override]
        argv = list(sys.argv[1:] if args is None else args)
        # only the group's own options count: those before the command name (``trec-eval --debug`` is trec_eval's)
        command_at = next((i for i, a in enumerate(argv) if a == "--" or not a.startswith("-")), len(argv))
        debug = "--debug" in argv[:command_at]
        extra.pop("standalone_mode", None)
        code = OK
        with warnings.catch_warnings():
            warnings.simplefilter("always", CoverageWarning)
            warnings.showwarning = _show_warning
            try:
                rv = super().main(argv, prog_name=prog_name or "rank-polars", standalone_mode=False, **extra)
                code = rv if isinstance(rv, int) else OK
            except _NO_ARGS_IS_HELP as e:
                click.echo(e.ctx.get_help() if e.ctx else e.format_message())
            except click.ClickException as e:
                code = _fail(e.format_message(), debug, e.exit_code)
            except click.exceptions.Abort:
                code = _fail("aborted", False)
            except expected_errors() as e:
                code = _fail(cli_wording(_message(e)), debug)
            except Exception as e:  # a bug: still one line, the traceback with --debug
                hint = "" if debug else " (rerun with --debug for the traceback)"
                code = _fail(f"internal error: {type(e).__name__}: {one_line(str(e))}{hint}", debug)
        sys.exit(code)


def _fail(message: str, debug: bool, code: int = FAILED) -> int:
    if debug:
        traceback.print_exc()
    click.echo(f"error: {one_line(message)}", err=True)
    return code


def _show_warning(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
    click.echo(f"warning: {cli_wording(one_line(str(message)))}", err=True)


@click.group(name="rank-polars", cls=RankPolarsGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks on errors.")
@click.version_option(package_name="rank-polars", prog_name="rank-polars", message="%(prog)s %(version)s")
def main(debug: bool) -> None:
    """Ranking metrics (nDCG, MAP, MRR, ...) over ranking logs, with trec_eval's numbers.

    A log has one row per shown item: query, item, position (or score), relevance (or
    separate judgments via --qrels), and any grouping column such as model.  Inputs are
    Parquet (file, glob or hive-partitioned folder), CSV, TSV, TREC runs and TREC qrels.

    Start with `rank-polars demo`.
    """
    COMMAND_STARTED[0] = time.time()  # --progress's last line accounts for the time before this


for _name in COMMANDS:  # each module in commands/ defines ``command``; list new ones in commands.COMMANDS
    main.add_command(importlib.import_module(f"{__package__}.commands.{_name}").command)


__all__ = ["RankPolarsGroup", "main"]
