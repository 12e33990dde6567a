"""Option bundles shared by several commands, as decorators."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence

import click

from rank_polars import io as rio
from rank_polars.schema import Schema
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


class ColumnOption(click.Option):
    """A column-name option whose default is the project file's name for its role (``[columns]``
    or ``[judgments]`` of :mod:`rank_polars.project`), else the role's own name: ``--help`` shows
    the file's value, and a flag given beats it."""

    def __init__(self, *args: Any, role: str, judged: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, default=None, expose_value=False, callback=_keep, **kwargs)
        self.role, self.judged = role, judged

    def get_default(self, ctx: click.Context, call: bool = True) -> Any:
        schema = project(ctx)[1]
        if self.judged:  # None: the run's column, whatever --query/--item/--relevance says
            return None if schema.judgments is None else getattr(schema.judgments, self.role)
        return schema.column(self.role)


def project(ctx: click.Context) -> tuple[Path | None, Schema]:
    """The project file found from the working directory upward and its schema, read once per command."""
    root = ctx.find_root()
    if "rank_polars.project" not in root.meta:
        from rank_polars.project import find_project_file, read_schema

        found = find_project_file()
        root.meta["rank_polars.project"] = (found, Schema() if found is None else read_schema(found))
    return root.meta["rank_polars.project"]  # type: ignore[no-any-return]


def _keep(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    ctx.meta.setdefault("rank_polars.columns", {})[param.name] = value
    return value


def column(flag: str, role: str, text: str, judged: bool = False) -> Callable[[F], F]:
    """A column-name option (:class:`ColumnOption`) for ``role``: the log's, or with ``judged``
    the judgments' own (read by :func:`schema` as ``judgments=``)."""
    return click.option(flag, f"{'qrels_' if judged else ''}{role}", cls=ColumnOption, role=role, judged=judged,
                        show_default=True, help=text)


def _columns(run_help: bool = False) -> list[Callable[[F], F]]:
    options = [
        column("--query", "query", "Query id column."),
        column("--item", "item", "Item id column."),
        column("--position", "position", "Position column (1 = first); used when present unless --order score." if run_help else "Position column (1 = first), read with --order position."),
        column("--score", "score", "Score column (higher first); used when there is no position column, or with --order score." if run_help else "Score column (higher first), read with --order score."),
        column("--relevance", "relevance", "Relevance label column (in the run, and in QRELS unless --qrels-relevance)." if run_help else "Relevance label column."),
    ]
    judged = [column(f"--qrels-{role}", role, f"The judgments' {what} column (default: the run's).", True)
              for role, what in (("query", "query id"), ("item", "item id"), ("relevance", "relevance grade"))]
    judged.append(column("--qrels-judge", "judge", "The judgments' column saying who judged, when they hold several "
                         "judges' labels (choose one with --judge).", True))
    verbose = click.option("-v", "--verbose", is_flag=True, expose_value=False, callback=_keep,
                           help="Say which project file (rank-polars.toml, pyproject.toml) gave the column names.")
    return [*options, *judged, verbose]


def schema(ctx: click.Context | None = None) -> Schema:
    """The column mapping of this command: its flags, else the project file's names, else the
    defaults.  With ``-v`` (or ``--progress``) says on stderr which project file it read."""
    ctx = ctx or click.get_current_context()
    given = ctx.meta.get("rank_polars.columns", {})
    found, _ = project(ctx)
    if found is not None and (given.get("verbose") or ctx.params.get("progress")):
        click.echo(f"rank-polars: column names from {found}", err=True)
    judged = {role: given.get(f"qrels_{role}") for role in ("query", "item", "relevance", "judge")}
    log = {role: given.get(role) for role in ("query", "item", "position", "score", "relevance")}
    judgments = Schema(**judged) if any(v is not None for v in judged.values()) else None
    return Schema(**log, judgments=judgments)


def metric_names(values: Sequence[str]) -> list[str]:
    """The metric names of repeated ``-m`` options, each also a comma list (``-m 'ndcg@10,map'``):
    split at the commas outside brackets (``utility(a=2, b=-1)`` stays whole), and a part that
    starts with a digit stays with the name before it (trec_eval's ``P.5,10`` is one name).

    >>> metric_names(["ndcg@10,map", "utility(a=2, b=-1)", "P.5,10", "mrr"])
    ['ndcg@10', 'map', 'utility(a=2, b=-1)', 'P.5,10', 'mrr']
    """
    out: list[str] = []
    for value in values:
        parts, depth, start = [], 0, 0
        for i, char in enumerate(value):
            depth += char in "([{"
            depth -= char in ")]}"
            if char == "," and depth == 0:
                parts.append(value[start:i])
                start = i + 1
        parts.append(value[start:])
        names: list[str] = []
        for part in (p.strip() for p in parts):
            if names and (not part or part[0].isdigit()):
                names[-1] += "," + part
            else:
                names.append(part)
        out += [name for name in names if name]
    return out


def judge_option(f: F) -> F:
    """--judge: one judge's labels of judgments with several (a judge column)."""
    return click.option("--judge", metavar="NAME", help="With --qrels holding several judges' labels (a judge column): "
                        "the judge whose labels count (people, llm-a, ...).")(f)


def metric_option(text: str) -> Callable[[F], F]:
    """-m/--metric, repeatable, each value a name or a comma list of names (:func:`metric_names`)."""
    return click.option("-m", "--metric", "metrics", multiple=True, required=True, help=text,
                        callback=lambda _ctx, _param, values: tuple(metric_names(values)))


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


def columns(mapping: Schema) -> dict[str, str]:
    """The run's column names of ``mapping``, by role."""
    return {role: mapping.column(role) for role in ("query", "item", "position", "score", "relevance")}


def tables(history: str | None, catalog: str | None, features: str | None, subtopics: str | None) -> dict[str, str | None]:
    """The files of :func:`metric_input_options`' table options, by role."""
    return {"history": history, "catalog": catalog, "features": features, "subtopics": subtopics}


__all__ = ["ColumnOption", "column", "column_options", "columns", "metric_names", "metric_option", "project", "schema", "engine_option", "file_options", "input_options", "metric_input_options",
           "judge_option", "missing_option", "order_option", "output_options", "progress_option", "tables"]
