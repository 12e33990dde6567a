"""``rank-polars gdeval``: gdeval 1.3's command line (TREC Web track nDCG@k and ERR@k), its arguments
passed through untouched."""

from __future__ import annotations

import sys

import click

from rank_polars.dropins.gdeval import main


@click.command(
    name="gdeval",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False, "help_option_names": []},
    add_help_option=False,
)
@click.argument("argv", nargs=-1, type=click.UNPROCESSED)
def command(argv: tuple[str, ...]) -> int:
    """gdeval's command line: [-k K] [-c] [-baseline RUN -riskAlpha R] QRELS RUN.

    Prints gdeval's CSV byte for byte (nDCG@k with gain 2^g - 1, ERR@k), with its
    exit status (-help for the options).
    """
    return main(list(argv), sys.stdout, sys.stderr)
