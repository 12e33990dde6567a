"""``rank-polars ndeval``: ndeval 4.5's command line (TREC Web track diversity), its arguments
passed through untouched."""

from __future__ import annotations

import sys

import click

from rank_polars.dropins.ndeval.command import main


@click.command(
    name="ndeval",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False, "help_option_names": []},
    add_help_option=False,
)
@click.argument("argv", nargs=-1, type=click.UNPROCESSED)
def command(argv: tuple[str, ...]) -> int:
    """ndeval's command line: [-alpha A] [-beta B] [-traditional] [-M N] [-c] [-baseline RUN -riskAlpha R] QRELS RUN.

    Prints ndeval's CSV byte for byte (alpha-nDCG, ERR-IA, NRBP, MAP-IA, P-IA, strec), with its
    exit status (-help for the options).
    """
    return main(list(argv), sys.stdout, sys.stderr)
