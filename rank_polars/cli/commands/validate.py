"""``rank-polars validate``: what is wrong or suspicious in a run (and judgments)."""

from __future__ import annotations

import json

import click

from rank_polars import io as rio
from rank_polars.presentation import count
from rank_polars.cli.errors import FAILED, OK, cli_wording
from rank_polars.cli.options import input_options, judge_option, schema, order_option, progress_option
from rank_polars.cli.progress import choose


@click.command(name="validate")
@input_options
@click.option("--by", multiple=True, help="Grouping column(s) that, with the query, identify one ranking (e.g. model).")
@click.option("-k", "--depth", "k", type=click.IntRange(min=1), default=10, show_default=True, help="Depth for the unjudged share.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="table: the report for people; json: every finding as an object, for scripts.")
@click.option("--engine", type=click.Choice(["polars", "duckdb", "spark"]), default="polars", show_default=True,
              help="Where the checks run. duckdb/spark: evaluate's own checks in that engine, and coverage; "
                   "not ties, gaps, labels or the unjudged share.")
@judge_option
@order_option()
@progress_option
def command(run: str, qrels: str | None, format_in: str | None, qrels_format: str | None,
            by: tuple[str, ...], k: int, fmt: str, engine: str, order: str,
            progress: bool | None, judge: str | None = None) -> int:
    """Report what is wrong or suspicious in RUN (and QRELS).

    Errors (exit code 1): duplicates, null/NaN values, bad positions, missing columns.
    Warnings (exit code 0): tied scores, queries missing on either side, unjudged items.

    \b
    Examples:
      rank-polars validate log/ --by model
      rank-polars validate log/ --by model --engine spark
      rank-polars validate log/ --qrels judgments.parquet --by model     # each judge's labels
    """
    from rank_polars.diagnose import diagnose

    mapping = schema()
    query, item, position, score, relevance = (mapping.column(r) for r in ("query", "item", "position", "score", "relevance"))
    numeric = rio.numeric_roles(position, score, relevance)
    run_lf = rio.scan(run, format_in, what="run", numeric=numeric)
    qrels_numeric = rio.numeric_roles(position, score, mapping.judged("relevance"))
    qrels_lf = rio.scan(qrels, qrels_format, what="qrels", numeric=qrels_numeric) if qrels else None
    run_schema = run_lf.collect_schema()
    run_src, qrels_src = run_lf, qrels_lf
    if qrels_lf is not None and not mapping.judgments_differ and {query, item} <= set(run_schema.names()):
        run_src, qrels_src = rio.harmonise_ids(run_lf, qrels_lf, (query, item))
    if engine != "polars":  # Parquet paths as paths: the engine reads them itself
        if run_src is run_lf and rio.detect_format(run, format_in) == "parquet":
            run_src = run
        if qrels and qrels_src is qrels_lf and rio.detect_format(qrels, qrels_format) == "parquet":
            qrels_src = qrels
    hint = ""
    if not by:
        for col in ("model", "version", "system"):
            if col in run_schema:
                hint = f"note: the run has a {col!r} column; pass --by {col} if each of its values is a separate ranking"
                break
    n_files = len(rio.files_of(run))
    with choose(progress).phase(f"validating {run}" + (f" ({count(n_files)} files)" if n_files > 1 else "")):
        found = diagnose(run_src, qrels=qrels_src, by=list(by), k=k, order=order, engine=engine,
                         schema=mapping, judge=judge)
    findings, facts, errors, warns = found.findings, found.facts, found.errors, found.warnings
    if fmt == "json":
        click.echo(json.dumps({"run": run, "qrels": qrels, "facts": facts, "errors": errors, "warnings": warns,
                               "findings": [{**f.__dict__, "message": cli_wording(f.message)} for f in findings]}, indent=2, default=str))
    else:
        head = f"{run}"
        if facts:
            head += (f": {count(facts['rows'])} rows, {count(facts['rankings'])} rankings, {count(facts['queries'])} queries"
                     + (f", {count(facts['groups'])} groups by {', '.join(by)}" if by else ""))
        if "judgments" in facts:
            head += f"; qrels: {count(facts['judgments'])} judgments for {count(facts['judged_queries'])} queries"
        elif "judges" in facts:  # several judges, each diagnosed on its own
            each = ", ".join(f"{count(f['judgments'])} by {who}" for who, f in facts["judges"].items())
            queries = facts.get("judged_queries")
            head += f"; qrels: judgments {each}" + (f", for {count(queries)} queries" if queries is not None else "")
        click.echo(head)
        if hint and errors:
            click.echo(hint)
        for f in findings:
            click.echo(f"{f.level:<8}{f.check:<11}{cli_wording(f.message)}")
        summary = f"{errors} error{'s' * (errors != 1)}, {warns} warning{'s' * (warns != 1)}"
        click.echo(("clean: " if not errors and not warns else "") + summary)
    return FAILED if errors else OK

