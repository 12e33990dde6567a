"""``rank-polars agreement``: how far the judges of a judgments table agree."""

from __future__ import annotations

import click

from rank_polars.cli.options import column, output_options, schema
from rank_polars.cli.output import check_output, emit


@click.command(name="agreement")
@click.argument("judgments", metavar="JUDGMENTS")
@click.option("--judge", "judges", multiple=True, metavar="NAME", help="A judge to compare (default: every judge); repeat for more.")
@click.option("--per-query", is_flag=True, help="Per pair of judges and query: the share of items given the same grade, and Cohen's kappa.")
@click.option("--confusion", is_flag=True, help="Per pair of judges: how many items each pair of grades has (the first judge's grade, the second's).")
@click.option("--ci", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.95, show_default=True, help="Level of the percentile bootstrap interval over queries.")
@click.option("--n-resamples", type=click.IntRange(min=1), default=1000, show_default=True, help="Bootstrap resamples of the queries.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the resamples (the same seed, the same interval).")
# the judgments' own names (the project file's [judgments], else its [columns], else the role)
@column("--query", "query", "The judgments' query id column.", judged=True)
@column("--item", "item", "The judgments' item id column.", judged=True)
@column("--relevance", "relevance", "The judgments' grade column.", judged=True)
@column("--judge-column", "judge", "The column saying who judged.", judged=True)
@output_options
def command(judgments: str, judges: tuple[str, ...], per_query: bool, confusion: bool, ci: float, n_resamples: int,
            seed: int, fmt: str | None, output: str | None, force: bool) -> None:
    """Agreement between the judges of JUDGMENTS (query, item, relevance, judge; Parquet, CSV, TSV).

    Per pair of judges ("a|b") and over all of them ("all"): Cohen's kappa (unweighted, linear,
    quadratic), Krippendorff's alpha (nominal, ordinal, interval) and Fleiss' kappa, on the items
    both judged, each with a bootstrap interval over queries.

    \b
    Examples:
      rank-polars agreement judgments.parquet
      rank-polars agreement judgments.parquet --judge people --judge llm-a --confusion
    """
    from rank_polars.judges.agreement import agreement, agreement_per_query, grade_confusion

    if per_query and confusion:
        raise click.UsageError("--per-query and --confusion are two tables: ask for one")
    fmt = check_output(output, fmt, force)
    mapping = schema()
    chosen = list(judges) or None
    if per_query:
        table = agreement_per_query(judgments, judges=chosen, schema=mapping)
    elif confusion:
        table = grade_confusion(judgments, judges=chosen, schema=mapping)
    else:
        table = agreement(judgments, judges=chosen, ci=ci, n_resamples=n_resamples, seed=seed, schema=mapping)
    emit(table, fmt, output, force=force)
