"""``to_sql(..., judge=...)`` and ``to_sql(..., bounds=True)``: the judges and the bounds in SQL.

The statement ``to_sql`` writes reads the judgments from one table expression; here it reads
them from a CTE put in front of its own (``__rp_judge_rows``):

* ``judge="llm-a"``: the judgments' rows of that judge;
* ``judge=["people", "llm-a"]``: one statement per judge (SQL cannot know the judges of a table it
  has not read), stacked under a ``judge`` column;
* ``bounds=True``: the statement on the judgments, and the same on the judgments plus every
  (query, item) the table shows for a judged query and nobody judged, at the top grade (at least
  1), joined as ``<metric>_low`` and ``<metric>_high`` (:mod:`rank_polars.judges.calls` says what
  they bound).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from rank_polars.engines.sql_engine import quote
from rank_polars.errors import RankPolarsError
from rank_polars.judges.calls import bounded_labels
from rank_polars.schema import Schema

_JUDGED, _ASSUMED = "__rp_judge_rows", "__rp_judge_rows_high"


def _sql_text(value: object) -> str:
    return "'" + str(value).replace("'", "''") + "'"


def _with(sql: str, name: str, body: str) -> str:
    """``sql`` (to_sql's ``WITH ... SELECT``) with one more CTE in front."""
    assert sql.startswith("WITH\n"), sql[:20]
    return f"WITH\n{quote(name)} AS (\n  {body}\n),\n{sql[len('WITH') + 1:]}"


def judged_sql(to_sql: Callable[..., str], call: Mapping[str, Any], schema: Schema) -> str:
    """``call`` (``to_sql``'s arguments) with its judge chosen or its bounds, in ``call["dialect"]``."""
    judge, bounds, qrels = call["judge"], call["bounds"], call["qrels"]
    if qrels is None:
        raise RankPolarsError("judge= and bounds=True read the judgments: pass qrels=")
    if bounds and call["labels"] != "qrels":
        raise RankPolarsError("bounds=True reads which shown items are unjudged from the judgments: labels='qrels'")
    labels = bounded_labels(call["metrics"]) if bounds else []
    query, item, relevance, who = (quote(schema.judged(r)) for r in ("query", "item", "relevance", "judge"))
    base = {**call, "judge": None, "bounds": False, "dialect": "duckdb", "qrels": _JUDGED, "schema": schema,
            **{k: None for k in ("query", "item", "position", "score", "relevance")}}
    if isinstance(judge, (list, tuple)):
        if not judge or not all(isinstance(j, str) for j in judge):
            raise RankPolarsError(f"judge= takes a judge's name or a list of them, got {judge!r}")
        column = quote(schema.judged("judge"))
        parts = [f"SELECT {_sql_text(j)} AS {column}, * FROM ({judged_sql(to_sql, {**call, 'judge': j, 'dialect': 'duckdb'}, schema)}) AS {quote('__rp_j')}"
                 for j in judge]
        keys = [column, *(quote(c) for c in _by(call))]
        if call["per_query"]:
            keys.append(quote(schema.column("query")))
        sql = f"SELECT * FROM ({' UNION ALL '.join(parts)}) AS {quote('__rp_all')} ORDER BY " + ", ".join(
            f"{k} ASC NULLS LAST" for k in keys)
        return _translate(sql, call["dialect"])
    judged = f"SELECT * FROM {qrels} AS {quote('__rp_qall')}"
    if judge is not None:
        judged += f" WHERE {who} = {_sql_text(judge)}"
    low = _with(to_sql(**base), _JUDGED, judged)
    if not bounds:
        return _translate(low, call["dialect"])
    run_q, run_i = quote(schema.column("query")), quote(schema.column("item"))
    top = f"(SELECT GREATEST(COALESCE(MAX(CAST({relevance} AS DOUBLE)), 1.0), 1.0) FROM {quote(_JUDGED)})"
    assumed = (
        f"SELECT {query}, {item}, CAST({relevance} AS DOUBLE) AS {relevance} FROM {quote(_JUDGED)} UNION ALL "
        f"SELECT DISTINCT r.{run_q} AS {query}, r.{run_i} AS {item}, {top} AS {relevance} "
        f"FROM {call['table']} AS r WHERE r.{run_q} IN (SELECT {query} FROM {quote(_JUDGED)}) AND NOT EXISTS "
        f"(SELECT 1 FROM {quote(_JUDGED)} AS j WHERE j.{query} = r.{run_q} AND j.{item} = r.{run_i})"
    )
    high = _with(_with(to_sql(**{**base, "qrels": _ASSUMED}), _ASSUMED, assumed), _JUDGED, judged)
    keys = [quote(c) for c in _by(call)] + ([quote(schema.column("query"))] if call["per_query"] else [])
    on = " AND ".join(f"l.{k} IS NOT DISTINCT FROM h.{k}" for k in keys) or "TRUE"
    cols = [f"l.{k}" for k in keys] + ([] if call["per_query"] else [f"l.{quote('queries')}"])
    for label in labels:
        cols += [f"l.{quote(label)}", f"l.{quote(label)} AS {quote(label + '_low')}",
                 f"h.{quote(label)} AS {quote(label + '_high')}"]
    order = (" ORDER BY " + ", ".join(f"l.{k} ASC NULLS LAST" for k in keys)) if keys else ""
    sql = f"SELECT {', '.join(cols)} FROM ({low}) AS l LEFT JOIN ({high}) AS h ON {on}{order}"
    return _translate(sql, call["dialect"])


def _by(call: Mapping[str, Any]) -> list[str]:
    by = call["by"]
    return [by] if isinstance(by, str) else list(by or [])


def _translate(sql: str, dialect: str) -> str:
    if dialect == "duckdb":
        return sql
    from sqlglot import exp

    from rank_polars.engines.dialects import transpile

    return transpile(sql, dialect, statement=exp.Select)


__all__ = ["judged_sql"]
