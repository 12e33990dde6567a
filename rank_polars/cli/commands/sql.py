"""``rank-polars sql``: print the SQL that computes the metrics (nothing is run)."""

from __future__ import annotations

import click

from rank_polars.cli.options import column_options, file_options, metric_option, missing_option, order_option, schema
from rank_polars.cli.output import check_output, write_file


@click.command(name="sql")
@metric_option("Metric; repeat -m, or give a comma list (-m ndcg@10,map).")
@click.option("--table", required=True, help="The table (or view) holding the log.")
@click.option("--by", multiple=True, help="Grouping column; repeat for more.")
@click.option("--qrels", "qrels", metavar="TABLE", help="Table of judgments (query, item, relevance).")
@click.option("--dialect", default="duckdb", show_default=True, help="SQL dialect: duckdb, spark, postgres, bigquery, snowflake, ...")
@click.option("--per-query", is_flag=True, help="One row per (group, query) instead of means.")
@click.option("--judge", "judges", multiple=True, metavar="NAME", help="With --qrels holding several judges' labels: the judge whose labels count; repeat for a statement per judge, stacked under a judge column.")
@click.option("--bounds", is_flag=True, help="With --qrels: add <metric>_low and <metric>_high, the values with every unjudged shown item not relevant and relevant.")
@missing_option
@click.option("--compact", is_flag=True, help="Print the query on one line (default: pretty-printed, one clause or column a line).")
@order_option(default="position")
@column_options
@file_options("the SQL")
def command(metrics: tuple[str, ...], table: str, by: tuple[str, ...], qrels: str | None, dialect: str, per_query: bool,
            missing: str, compact: bool, order: str,
            output: str | None, force: bool, judges: tuple[str, ...] = (), bounds: bool = False) -> None:
    """Print the SQL that computes the metrics over --table (nothing is run).

    \b
    Example:
      rank-polars sql -m ndcg@10 -m mrr --table logs --by model --dialect spark
    """
    from rank_polars.sqlgen import to_sql

    check_output(output, "sql", force)
    text = to_sql(
        list(metrics), table=table, by=list(by) or None, qrels=qrels, per_query=per_query, missing=missing,
        dialect=dialect, order=order, schema=schema(), bounds=bounds,
        judge=None if not judges else judges[0] if len(judges) == 1 else list(judges),
    )
    text = layout(text, dialect, compact).rstrip("\n") + "\n"
    if output:
        write_file(output, text, force=force)
        click.echo(f"wrote the SQL to {output}", err=True)
    else:
        click.echo(text, nl=False)


def layout(sql: str, dialect: str, compact: bool) -> str:
    """The query pretty-printed by sqlglot (one clause or column a line), or on one line.

    >>> print(layout("SELECT a, b FROM t WHERE a > 1", "duckdb", compact=False))
    SELECT
      a,
      b
    FROM t
    WHERE
      a > 1
    """
    import sqlglot

    return ";\n".join(sqlglot.transpile(sql, read=dialect, write=dialect, pretty=not compact))
