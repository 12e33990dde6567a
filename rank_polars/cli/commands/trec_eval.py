"""``rank-polars trec-eval``: trec_eval 10's command line, its arguments passed through untouched."""

from __future__ import annotations

import sys

import click

from rank_polars.dropins.trec_eval import run


@click.command(
    name="trec-eval",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False, "help_option_names": []},
    add_help_option=False,
)
@click.argument("argv", nargs=-1, type=click.UNPROCESSED)
def command(argv: tuple[str, ...]) -> int:
    """trec_eval 10's command line: [-q] [-c] [-n] [-l N] [-M N] [-J] [-m MEASURE[.PARAMS]]... QRELS RUN.

    Prints trec_eval's output byte for byte, with its exit status (-h for the options).
    """
    return run(list(argv), sys.stdout, sys.stderr)
