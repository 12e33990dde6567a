"""Option bundles shared by several commands, as decorators."""

from __future__ import annotations

from typing import Any, Callable

import click

from rank_polars import io as rio
from rank_polars.cli.formatters import FORMATTERS

F = Callable[..., Any]


def _apply(f: F, options: list[Callable[[F], F]]) -> F:
    for option in reversed(options):
        f = option(f)
    return f


def input_options(f: F) -> F:
    """RUN, --qrels, formats and column names, shared by evaluate, compare and validate."""
    return _apply(f, [
        click.argument("run", metavar="RUN"),
        click.option("--qrels", "qrels", metavar="QRELS", help="Judgments file (query, item, relevance); when given they alone decide relevance."),
        click.option("--format-in", type=click.Choice(rio.FORMATS), help="Format of RUN (default: from its extension; folders are Parquet)."),
        click.option("--qrels-format", type=click.Choice(rio.FORMATS), help="Format of QRELS (default: from its extension)."),
        *_columns(run_help=True),
    ])


#: The tables a metric may read beside the run (docs/data-model.md), each an option naming a file.
TABLES = {
    "history": "Past interactions (the run's query and item columns) for novelty, arp, aplt, aclt, epc, efd, "
               "pop_reo, pop_rsp, serendipity and ils/diversity(sim=cooccurrence).",
    "catalog": "The items that could be shown (an item column) for catalog_coverage, pop_reo and pop_rsp "
               "(default: the history's items, or the log's).",
    "features": "Item features (an item column, and a vector or a category column) for ils, diversity and serendipity.",
    "subtopics": "Subtopic judgments (query, subtopic, item, relevance; or ndeval's file) for alpha_ndcg, err_ia, "
                 "... when --qrels holds the flat ones.",
}


def metric_input_options(f: F) -> F:
    """:func:`input_options`, then --history, --catalog, --features, --subtopics (the tables of
    the metrics that read one): the inputs of a command that evaluates metrics (evaluate, compare)."""
    return input_options(_apply(f, [click.option(f"--{role}", role, metavar="FILE", help=text)
                                    for role, text in TABLES.items()]))


def column_options(f: F) -> F:
    """--query, --item, --position, --score, --relevance (for ``sql``, which reads no file)."""
    return _apply(f, _columns())


def _columns(run_help: bool = False) -> list[Callable[[F], F]]:
    return [
        click.option("--query", default="query", show_default=True, help="Query id column."),
        click.option("--item", default="item", show_default=True, help="Item id column."),
        click.option("--position", default="position", show_default=True, help="Position column (1 = first); used when present unless --order score." if run_help else "Position column (1 = first), read with --order position."),
        click.option("--score", default="score", show_default=True, help="Score column (higher first); used when there is no position column, or with --order score." if run_help else "Score column (higher first), read with --order score."),
        click.option("--relevance", default="relevance", show_default=True, help="Relevance label column (in the run, or in QRELS)." if run_help else "Relevance label column."),
    ]


def order_option(default: str = "auto") -> Callable[[F], F]:
    if default == "auto":
        choices = ["auto", "position", "score"]
        text = "Rank items by the position column or by score; auto: position when the column exists, else score."
    else:  # the SQL is written before any table is seen: no auto
        choices = ["position", "score"]
        text = "Rank items by the position column or by score (the SQL cannot look at the table to choose)."
    return click.option("--order", type=click.Choice(choices), default=default, show_default=True, help=text)


def engine_option(what: str = "The engine that computes the metrics") -> Callable[[F], F]:
    return click.option(
        "--engine", type=click.Choice(["polars", "duckdb", "spark"]), default="polars", show_default=True,
        help=f"{what}: polars (in process), duckdb (bounded memory on Parquet) or spark (needs pyspark and Java).",
    )


def missing_option(f: F) -> F:
    """--missing: what a judged query absent from a group's run counts as."""
    return click.option(
        "--missing", type=click.Choice(["zero", "skip"]), default="zero", show_default=True,
        help="A judged query absent from a group's run scores 0 (zero, as trec_eval -c) or is left out (skip).",
    )(f)


def output_options(f: F) -> F:
    """--format, -o/--output, --force."""
    return _apply(f, [
        click.option("--format", "fmt", type=click.Choice(list(FORMATTERS)), default=None,
                     help="Output format (default: the one -o's extension names: .parquet .csv .tsv .json .jsonl .md "
                          ".tex .html; else table). An extension naming another format is refused."),
        *_file("the output (needed for parquet)"),
    ])


def file_options(what: str) -> Callable[[F], F]:
    """-o/--output and --force, for a command with one output format."""
    return lambda f: _apply(f, _file(what))


def _file(what: str) -> list[Callable[[F], F]]:
    return [
        # "-" is stdout, as for every Unix tool (it wrote a file named "-")
        click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True),
                     callback=lambda _ctx, _param, value: None if value == "-" else value,
                     help=f"Write {what} to FILE instead of stdout ('-': stdout)."),
        click.option("--force", is_flag=True, help="Overwrite an existing output file."),
    ]


def progress_option(f: F) -> F:
    """--progress/--no-progress (default: shown only when stderr is a terminal)."""
    return click.option(
        "--progress/--no-progress", "progress", default=None,
        help="Show a progress display on stderr (default: only when stderr is a terminal).",
    )(f)


def columns(query: str, item: str, position: str, score: str, relevance: str) -> dict[str, str]:
    return {"query": query, "item": item, "position": position, "score": score, "relevance": relevance}


def tables(history: str | None, catalog: str | None, features: str | None, subtopics: str | None) -> dict[str, str | None]:
    """The files of :func:`metric_input_options`' table options, by role."""
    return {"history": history, "catalog": catalog, "features": features, "subtopics": subtopics}


__all__ = ["column_options", "columns", "engine_option", "file_options", "input_options", "metric_input_options",
           "missing_option", "order_option", "output_options", "progress_option", "tables"]
