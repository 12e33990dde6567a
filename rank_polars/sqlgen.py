"""``to_sql``: the metrics of a ranking log as one self-contained SQL query.

The query is generated in DuckDB's dialect from the same plan the Polars engine runs
(:mod:`rank_polars.engines.sql_engine`) and translated with sqlglot to other dialects.
A translation that sqlglot cannot express, or that does not parse back, raises
:class:`RankPolarsError` rather than returning SQL that would compute something else.
"""

from __future__ import annotations

from typing import Literal, Sequence

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from rank_polars.errors import RankPolarsError
from rank_polars.measures import MetricLike, parse_all
from rank_polars.measures.clicks import click_column, clicks_named, is_click
from rank_polars.measures.base import GM_FLOOR, FamilyMeasure, Measure, refuse_ties_by_position
from rank_polars.measures.counts import NumQ
from rank_polars.plan import ITEM, N_RET, Q, build_plan
from rank_polars.engines.base import FamilySql, split_outputs
from rank_polars.engines.sql_engine import PER_QUERY, Query, Source, metric_column, per_query_query, quote
from rank_polars.inputs import Columns
from rank_polars.schema import Schema, as_schema

Dialect = Literal["duckdb", "spark", "databricks", "trino", "presto", "bigquery", "snowflake", "postgres"]
DIALECTS: tuple[str, ...] = ("duckdb", "spark", "databricks", "trino", "presto", "bigquery", "snowflake", "postgres")


def to_sql(
    metrics: MetricLike | Sequence[MetricLike],
    *,
    table: str,
    by: str | Sequence[str] | None = None,
    qrels: str | None = None,
    labels: Literal["qrels", "run"] = "qrels",
    per_query: bool = False,
    missing: Literal["zero", "skip"] = "zero",
    dialect: str = "duckdb",
    order: Literal["position", "score"] = "position",
    schema: Schema | None = None,
    query: str | None = None,
    item: str | None = None,
    position: str | None = None,
    score: str | None = None,
    relevance: str | None = None,
    judged_only: bool = False,
    judge: str | Sequence[str] | None = None,
    bounds: bool = False,
) -> str:
    """One SELECT computing the metrics over a long-format ranking log, per group.

    Parameters
    ----------
    metrics
        Metric names or specs, as for :func:`rank_polars.evaluate`; output columns are
        named by the string given (quoted).
    table, qrels
        SQL table expressions placed in the query **as given** (not quoted, not checked):
        a table or view name (``logs``, ``db.schema.logs``) or a table function such as
        ``read_parquet('logs/*.parquet')``; no alias.  Never build them from untrusted
        input.  Without ``qrels`` the run's ``relevance`` column gives the grades and the
        ideal ranking comes from the run's own labels; with ``qrels`` only judged queries
        are evaluated and the run's relevance column is not read.  The click metrics
        (``ctr@10``, ``click_rr``, ...) read the table's ``click`` column (the schema's
        ``click=``) whatever ``qrels`` and ``labels`` say; clicks given as ``qrels`` are not read
        as clicks.
    labels
        With ``qrels``: ``"run"`` takes the grades of the shown rows from the run's
        ``relevance`` column instead of joining the run with the judgments (the judgments
        still give the ideal ranking, R and the judged queries).  The SQL does not check
        that the two agree; :func:`rank_polars.evaluate` does.
    by
        Grouping column(s), e.g. ``"model"``.
    per_query
        One row per (group, query) instead of the means.
    missing
        A judged query absent from a group's run: ``"zero"`` scores it 0, ``"skip"`` leaves
        it out (only with ``qrels``).
    dialect
        ``"duckdb"`` (generated), or any sqlglot dialect, e.g. ``"spark"``, ``"trino"``,
        ``"bigquery"``, ``"snowflake"``, ``"postgres"``.
    order
        ``"position"``: rank = the ``position`` column as given; ``"score"``: rank by score
        descending, ties by item id (as text) descending, as trec_eval.
    schema, query, item, position, score, relevance
        The column names, as for :func:`rank_polars.evaluate` (a :class:`rank_polars.Schema`,
        whose ``judgments=`` names the judgments' columns, or the flat keywords); quoted in the
        SQL: any name works.
    judged_only
        ``True``: the rows not judged ``>= 0`` (without ``qrels``: labelled below 0) are removed
        before ranks are numbered (by position: renumbered 1, 2, ... in their order), as
        :func:`rank_polars.evaluate`'s ``judged_only``, trec_eval's ``-J``.

    judge, bounds
        ``judge="llm-a"``: the judgments' rows of that judge (their ``judge`` column, the schema's
        ``judge`` role); a list of judges: one block per judge under a ``judge`` column.
        ``bounds=True``: ``<metric>_low`` and ``<metric>_high`` after each metric, as
        ``evaluate(..., bounds=True)`` (:mod:`rank_polars.judges.sql`).  The SQL reads every row
        of ``qrels`` without ``judge=``: it cannot refuse a table of several judges, as ``evaluate`` does.

    The SQL does not validate the data (use :func:`rank_polars.evaluate` for that):
    positions must be unique per ranking, items unique per ranking, labels non-null, and one
    judgment per (query, item): a table of several judges needs ``judge=``, else every shown
    item joins each judge's grade.

    Returns
    -------
    str
        The ``by`` columns, ``queries`` and one column per metric (the mean over queries),
        or with ``per_query=True`` the ``by`` columns, the query column and the metrics,
        ordered by the ``by`` columns (and query).

    Examples
    --------
    >>> import duckdb, rank_polars as rp
    >>> con = duckdb.connect()
    >>> _ = con.execute("CREATE TABLE logs AS SELECT * FROM (VALUES "
    ...     "('a', 'q1', 'x', 1, 0), ('a', 'q1', 'y', 2, 1), ('b', 'q1', 'y', 1, 1)) "
    ...     "t(model, query, item, position, relevance)")
    >>> con.sql(rp.to_sql(["ndcg@10", "mrr"], table="logs", by="model")).fetchall()
    [('a', 1, 0.6309297535714574, 0.5), ('b', 1, 1.0, 1.0)]
    """
    call = dict(locals())  # the arguments, for rank_polars.judges to write the statement again
    if missing not in ("zero", "skip"):
        raise RankPolarsError(f"missing must be 'zero' or 'skip', got {missing!r}")
    if order not in ("position", "score"):
        raise RankPolarsError(f"order must be 'position' or 'score', got {order!r}")
    for name, value in (("table", table), ("qrels", qrels)):
        if value is not None:
            check_table_expression(name, value)
    mapping = as_schema(schema, query=query, item=item, position=position, score=score, relevance=relevance)
    if judge is not None or bounds:  # one judge's labels, each judge's, or the bounds unjudged items leave open
        from rank_polars.judges.sql import judged_sql

        return judged_sql(to_sql, call, mapping)
    query, item, position, score = (mapping.column(r) for r in ("query", "item", "position", "score"))
    outputs = clicks_named(parse_all(metrics), mapping.click)
    # one reading per call: the click metrics read the table's click column, every other metric
    # the labels or the judgments (measures.clicks), as evaluate in every engine
    click = click_column(outputs)
    relevance = mapping.column("relevance")
    by_cols = [by] if isinstance(by, str) else list(by or [])
    if len(set(by_cols)) != len(by_cols):
        raise RankPolarsError(f"by: a column is named twice in {by_cols!r}")
    for col in by_cols:
        if col in (query, item):
            raise RankPolarsError(f"by: {col!r} is the query or item column; group by other columns")
    if labels not in ("qrels", "run"):
        raise RankPolarsError(f"labels must be 'qrels' or 'run', got {labels!r}")
    if labels == "run" and qrels is None:
        raise RankPolarsError("labels='run' takes the shown rows' grades from the run and the ideal from qrels: pass qrels=")
    # measures whose grades never come from the run (diversity's subtopic judgments): the
    # statement reads no relevance column, which the table may not have
    unlabelled = qrels is None and not any(spec.READS_RUN_LABELS for _, spec in outputs)
    if all(is_click(spec) for _, spec in outputs):
        labels = "qrels"  # click metrics alone read no label, whatever labels= says (as evaluate)
    judged = Columns.of(mapping).judged
    src = Source(table, qrels, by_cols, order, query, item, position, score, relevance, labels=labels,
                 unlabelled=unlabelled, judged=(judged.query, judged.item, judged.relevance), click=click,
                 judged_only=judged_only)
    refuse_ties_by_position(outputs, order)
    plan_outputs, families = split_outputs(outputs)
    _check_family_dialects(families, dialect)
    if families and per_query and any(spec.AGGREGATE == "catalog" for _, spec in families):
        raise RankPolarsError("a catalogue-level metric is one value per group: it has no per-query value")
    plan = build_plan(plan_outputs or [("__rp_universe_only", NumQ())])
    q = per_query_query(plan, src, None, missing)
    # the plan's metrics by their column, a measure family's by its statement joined below
    value = {label: f"p.{quote(metric_column(i))}" for i, (label, _) in enumerate(plan_outputs)}
    joins = _families_sql(q, families, src, value)
    joins += _leave_out_missing(outputs, src, missing, joins, value)

    internal = [f"p.{quote(k)}" for k in src.keys[:-1]]
    groups = [f"{k} AS {quote(c)}" for k, c in zip(internal, by_cols)]
    labels = [label for label, _ in outputs]
    source = f"{quote(PER_QUERY)} AS p{joins}"
    if per_query:
        cols = [*groups, f"p.{quote(Q)} AS {quote(query)}"]
        cols += [f"{value[label]} AS {quote(label)}" for label in labels]
        order_by = ", ".join(f"{k} ASC NULLS LAST" for k in [*internal, f"p.{quote(Q)}"])
        final = f"SELECT {', '.join(cols)} FROM {source} ORDER BY {order_by}"
    else:
        cols = [*groups, f"COUNT(*) AS {quote('queries')}"]
        cols += [f"{aggregate_sql(value[label], spec)} AS {quote(label)}" for label, spec in outputs]
        final = f"SELECT {', '.join(cols)} FROM {source}"
        if by_cols:
            order_by = ", ".join(f"{k} ASC NULLS LAST" for k in internal)
            final += f" GROUP BY {', '.join(internal)} ORDER BY {order_by}"
    sql = q.render(final)
    # Another dialect's translation parses both texts and checks each is one SELECT
    # (engines.dialects).  DuckDB's text is not parsed again here: it is one SELECT by
    # construction (the tables given are checked by check_table_expression, every name quoted),
    # tests/test_sql_engine.py parses it for every metric, and parsing a statement of every
    # metric took 70% of to_sql's time (0.19 of 0.27 s).
    return translate(sql, dialect)


def _leave_out_missing(outputs: list, src: Source, missing: str, joins: str, value: dict[str, str]) -> str:
    """The lower-is-better measures null where a judged query's ranking is missing (``missing="zero"``),
    as ``validate.leave_out_missing`` in the engines: a missing list would score their best value.
    Returns the join of the universe the condition reads, unless the families' joins hold it."""
    from rank_polars.engines.sql_engine import UNIVERSE

    lower = [label for label, spec in outputs if spec.missing_scores_best]
    if not lower or src.qrels is None or missing != "zero":
        return ""
    for label in lower:
        value[label] = f"CASE WHEN u.{quote(N_RET)} > 0 THEN {value[label]} END"
    if f"{quote(UNIVERSE)} AS u ON" in joins:
        return ""
    condition = " AND ".join(f"p.{quote(k)} IS NOT DISTINCT FROM u.{quote(k)}" for k in src.keys)
    return f" LEFT JOIN {quote(UNIVERSE)} AS u ON {condition}"


def _check_family_dialects(families: list, dialect: str) -> None:
    """Refuse, naming the measures, a family whose SQL exists in some dialects only (its module's
    ``SQL_DIALECTS``): the translation would otherwise fail with a generic message."""
    from rank_polars.engines.base import family_groups

    for module, _, outputs in family_groups(families):
        only = getattr(module, "SQL_DIALECTS", None)
        if only is not None and dialect.lower() not in only:
            names = ", ".join(label for label, _ in outputs)
            raise RankPolarsError(f"{names}: to_sql writes these measures for {', '.join(only)} only (their greedy "
                                  f"ideal needs its lists and lambdas), not {dialect!r}; evaluate(..., engine='spark') "
                                  "computes them on a Spark cluster")


class _Tables(FamilySql):
    """A family's tables in ``to_sql``: each auxiliary table a SQL table expression carried by
    the spec (``rp.novelty(k=10, history="train")``), placed as given; nothing is read."""

    def source(self, spec: FamilyMeasure, name: str) -> str:
        table = spec.sources.get(name)
        if table is None:
            raise RankPolarsError(f"{spec.NAME} needs {name}= ({spec.SOURCES.get(name, name)}): in to_sql a table name")
        check_table_expression(f"{spec.name} {name}", table)
        ids = [(self.columns.query, Q)] if name in ("history", "subtopics") else []
        extra = ", ".join(f"{quote(user)} AS {quote(internal)}" for user, internal in [*ids, (self.columns.item, ITEM)])
        return f"(SELECT *, {extra} FROM {table} AS {quote('__rp_t')})"


def _families_sql(q: Query, families: list, src: Source, value: dict[str, str]) -> str:
    """Each measure family's statement as a CTE (its ``sql_values``, over the ranked run, the
    judgments and the universe), and the joins that bring its values to the per-query rows:
    0 where it returned no row (as ``engines.base.attach``), per group for catalogue ones.
    A family's data checks stop the statement in every dialect (``engines.dialects``)."""
    if not families:
        return ""
    from rank_polars.engines.base import family_groups
    from rank_polars.engines.sql_engine import QRELS, UNIVERSE, ranked_cte

    run = "__rp_family_run"
    q.add(run, ranked_cte(Source(run="", qrels=None, by=list(src.by), order=src.order)))
    columns = Columns(src.query, src.item, src.position, src.score, src.relevance, click=src.click)
    tables = _Tables(run=quote(run), qrels=quote(QRELS) if src.qrels is not None else None, universe=quote(UNIVERSE),
                     keys=src.keys, columns=columns, relation=None, query=None)  # type: ignore[arg-type]
    joins = []
    groups = family_groups(families)
    if any(spec.ABSENT is None for _, catalog, outputs in groups if not catalog for _, spec in outputs):
        # whether the (group, query) has rows in the run: a ranking the family returned no row for
        # is then undefined (FamilyMeasure.ABSENT, engines.base.attach), else 0
        condition = " AND ".join(f"p.{quote(k)} IS NOT DISTINCT FROM u.{quote(k)}" for k in src.keys)
        joins.append(f" LEFT JOIN {quote(UNIVERSE)} AS u ON {condition}")
    for i, (module, catalog, outputs) in enumerate(groups):
        name, alias = f"__rp_family{i}", f"f{i}"
        q.add(name, f"SELECT *, TRUE AS {quote('__rp_row')} FROM ({module.sql_values(outputs, tables)}) AS {quote('__rp_f')}")
        on = [quote(k) for k in (src.keys[:-1] if catalog else src.keys)]
        condition = " AND ".join(f"p.{k} IS NOT DISTINCT FROM {alias}.{k}" for k in on) or "TRUE"
        joins.append(f" LEFT JOIN {quote(name)} AS {alias} ON {condition}")
        for label, spec in outputs:
            got = f"{alias}.{quote(label)}"
            absent = (f"CASE WHEN u.{quote(N_RET)} > 0 THEN NULL ELSE 0.0 END" if spec.ABSENT is None
                      else repr(float(spec.ABSENT)))
            value[label] = got if catalog else f"CASE WHEN {alias}.{quote('__rp_row')} IS NULL THEN {absent} ELSE {got} END"
    return "".join(joins)


def check_table_expression(name: str, value: object) -> None:
    """``value`` is one table reference (a name, ``db.schema.name`` or a table function such
    as ``read_parquet('logs/*.parquet')``), with nothing after it: no alias, join, clause,
    second statement or comment (a ``--`` comment would swallow the rest of its line in the
    generated SQL).  It is placed in the SQL as given, so anything else is refused."""
    if not isinstance(value, str) or not value.strip():
        raise RankPolarsError(f"{name} must be a SQL table expression (a non-empty string), got {value!r}")
    try:
        statements = sqlglot.parse(f"SELECT * FROM {value}", read="duckdb")
    except SqlglotError:
        statements = []
    tree = statements[0] if len(statements) == 1 else None
    clauses = set(tree.args) - {"expressions", "from_"} if tree is not None else set()
    ok = (
        isinstance(tree, exp.Select)
        and not any(tree.args.get(c) for c in clauses)
        and isinstance(tree.args["from_"].this, exp.Table)
        and tree.args["from_"].this.args.get("alias") is None
        and not any(node.comments for node in tree.walk())
    )
    if not ok:
        raise RankPolarsError(
            f"{name}={value!r} is not one table name or table function (such as logs, db.schema.logs or "
            "read_parquet('logs/*.parquet')); it is placed in the SQL as given, so nothing else is accepted"
        )


def aggregate_sql(column: str, measure: Measure) -> str:
    """The SQL of ``evaluate.aggregate_expr``: AVG, SUM (``num_*``), or trec_eval's geometric
    mean floored at 1e-5 (``gm_map``, ``gm_bpref``), as the spec's ``AGGREGATE`` says."""
    if measure.AGGREGATE == "catalog":  # one value per group, on each of its rows
        return f"MAX({column})"
    if measure.AGGREGATE == "sum":
        return f"COALESCE(SUM({column}), 0.0)"  # a count over no queries is 0, as in Polars
    if measure.AGGREGATE == "gmean":
        return f"EXP(AVG(LN(GREATEST({column}, CAST({GM_FLOOR!r} AS DOUBLE)))))"
    return f"AVG({column})"


def translate(sql: str, dialect: str) -> str:
    """``sql`` (DuckDB) in another dialect, checked to parse back with the same structure."""
    if dialect == "duckdb":
        return sql
    from rank_polars.engines.dialects import transpile

    return transpile(sql, dialect, statement=exp.Select)


__all__ = ["DIALECTS", "to_sql", "translate"]
