"""Compatibility (:mod:`rank_polars.measures.compat`) in SQL: one set-based statement (DuckDB's
dialect; the Spark engine and ``to_sql`` translate it), the computation of
:mod:`rank_polars.families.compat.polars` step by step: the relevant judgments per grade (how
many lie above each grade, and R), the retrieved relevant items with their ideal rank (a
``row_number`` within their grade) and entry depth ``m``, the rankings' ``D``, and the table of
running sums ``S``, ``C``, ``W`` over ``generate_series(0, deepest D)``, joined at ``m - 1``,
``D`` and ``R``.  In the engines' statements (``FamilySql.ordered``) each ranking's sum is added
in rank order, as the Polars engine adds it.
"""

from __future__ import annotations

from rank_polars.engines.base import FamilySql, Outputs
from rank_polars.engines.sql_engine import quote
from rank_polars.families.compat.polars import persistences
from rank_polars.plan import GRADE, ITEM, Q, RANK

QQ, I, RK, G = quote(Q), quote(ITEM), quote(RANK), quote(GRADE)
CUMULATIVE = "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
#: The digits of the depths the table of running sums reaches: to 10^DIGITS - 1.  A ranking
#: deeper (a position or an R of 10^10) stops the statement (:func:`sql_values`).
DIGITS = 10
TOO_DEEP = (f"rank_polars: compat: a ranking is deeper than {10 ** DIGITS - 1} (its last position or its relevant "
            "judgments), past the depths its SQL tabulates")


def _on(a: str, b: str, columns: list[str]) -> str:
    return " AND ".join(f"{a}.{c} IS NOT DISTINCT FROM {b}.{c}" for c in columns)


def _cols(alias: str, columns: list[str]) -> str:
    return ", ".join(f"{alias}.{c}" for c in columns)


def depth_table_sql(rankings: str, ps: list[float]) -> str:
    """``n`` = 0 .. the largest ``D`` of ``rankings``, with the running sums ``s{j}``, ``c{j}``,
    ``w{j}`` of each persistence ``ps[j]`` (as :func:`~rank_polars.families.compat.polars.depth_table`)."""
    terms = ", ".join(f"CASE WHEN n > 0 THEN POWER({p!r}, n - 1) / n ELSE 0.0 END AS t{j}, "
                      f"CASE WHEN n > 0 THEN POWER({p!r}, n - 1) ELSE 0.0 END AS v{j}" for j, p in enumerate(ps))
    sums = ", ".join(f"SUM(t{j}) OVER (ORDER BY n ASC NULLS FIRST {CUMULATIVE}) AS s{j}, "
                     f"SUM(v{j}) OVER (ORDER BY n ASC NULLS FIRST {CUMULATIVE}) AS w{j}" for j in range(len(ps)))
    c = ", ".join(f"s{j}, SUM(s{j}) OVER (ORDER BY n ASC NULLS FIRST {CUMULATIVE}) - s{j} AS c{j}, w{j}"
                  for j in range(len(ps)))
    # the range as sums of decimal digits, each digit table cut at the depth it can reach
    # (2,000 rows for a depth of 1,234): one form every dialect of to_sql and Spark translate
    # alike (an UNNEST of a series is a join in some, a lateral view or a projection in others)
    digits = ("(SELECT CAST(d AS BIGINT) AS d FROM (VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9)) "
              "AS v(d))")
    joins = " ".join(f"JOIN {digits} AS d{i} ON d{i}.d * {10 ** i} <= x.deepest" for i in range(1, DIGITS))
    n = " + ".join(["d0.d", *(f"d{i}.d * {10 ** i}" for i in range(1, DIGITS))])
    series = (f"SELECT n FROM (SELECT {n} AS n, x.deepest FROM (SELECT CAST(coalesce(max(d), 0) AS BIGINT) AS deepest "
              f"FROM {rankings}) AS x CROSS JOIN {digits} AS d0 {joins}) AS y WHERE n <= deepest")
    return f"SELECT n, {c} FROM (SELECT n, {sums} FROM (SELECT n, {terms} FROM ({series}) AS y) AS z) AS t"


def sql_values(outputs: Outputs, tables: FamilySql) -> str:
    """One statement: the keys and one column per label, a row per ranking with a relevant item
    retrieved (the others score 0, the family's ``ABSENT``)."""
    keys = [quote(k) for k in tables.keys]
    evaluated = (f"SELECT r.* FROM {tables.run} AS r WHERE EXISTS (SELECT 1 FROM {tables.universe} AS u "
                 f"WHERE {_on('r', 'u', keys)})")
    if tables.qrels is not None:
        by = [QQ]
        judged = f"SELECT {QQ}, {I}, max({G}) AS {G} FROM {tables.qrels} WHERE {G} > 0 GROUP BY {QQ}, {I}"
        hits = (f"SELECT {_cols('r', keys)}, r.{I}, r.{RK}, j.{G} FROM __rp_c_run AS r JOIN __rp_c_judged AS j "
                f"ON r.{QQ} = j.{QQ} AND r.{I} = j.{I}")
    else:  # the run's labels are the judgments: each ranking's own relevant rows
        by = keys
        judged = f"SELECT {', '.join(keys)}, {I}, {RK}, {G} FROM __rp_c_run WHERE {G} > 0"
        hits = f"SELECT {', '.join(keys)}, {I}, {RK}, {G} FROM __rp_c_judged"
    part = ", ".join(by)
    grades = (f"SELECT {part}, {G}, CAST(SUM(nj) OVER (PARTITION BY {part} ORDER BY {G} DESC NULLS LAST {CUMULATIVE}) - nj "
              f"AS BIGINT) AS above, CAST(SUM(nj) OVER (PARTITION BY {part}) AS BIGINT) AS rr FROM (SELECT {part}, {G}, count(*) AS nj "
              f"FROM __rp_c_judged GROUP BY {part}, {G}) AS g")
    entered = (f"SELECT {_cols('h', keys)}, h.{RK}, GREATEST(h.{RK}, g.above + row_number() OVER (PARTITION BY "
               f"{_cols('h', keys)}, h.{G} ORDER BY h.{RK} ASC NULLS FIRST)) AS m FROM __rp_c_hits AS h "
               f"JOIN __rp_c_grades AS g ON {_on('h', 'g', by)} AND h.{G} = g.{G}")
    rankings = (f"SELECT {_cols('e', keys)}, e.hits, q.rr, GREATEST(l.nr, q.rr) AS d "
                f"FROM (SELECT {', '.join(keys)}, count(*) AS hits FROM __rp_c_entered GROUP BY {', '.join(keys)}) AS e "
                f"JOIN (SELECT {', '.join(keys)}, max({RK}) AS nr FROM __rp_c_run GROUP BY {', '.join(keys)}) AS l "
                f"ON {_on('e', 'l', keys)} "
                f"JOIN (SELECT DISTINCT {part}, rr FROM __rp_c_grades) AS q ON {_on('e', 'q', by)}")
    ps = persistences(outputs)
    table = depth_table_sql("__rp_c_rankings", ps)

    def added(column: str) -> str:
        return f"sum({column} ORDER BY x.{RK})" if tables.ordered else f"sum({column})"

    sums = (f"SELECT {_cols('x', keys)}, {', '.join(added(f't.s{j}') + f' AS e{j}' for j in range(len(ps)))} "
            f"FROM __rp_c_entered AS x JOIN __rp_c_table AS t ON t.n = x.m - 1 GROUP BY {_cols('x', keys)}")
    values = []
    for label, spec in outputs:
        j = ps.index(float(spec.params["p"]))
        overlap = f"(k.hits * d.s{j} - s.e{j})"
        divisor = f"(k.rr * d.s{j} - b.c{j})" if spec.params["normalize"] else f"d.w{j}"
        values.append(f"CASE WHEN d.n IS NULL THEN error('{TOO_DEEP}') ELSE {overlap} / {divisor} END AS {quote(label)}")
    final = (f"SELECT {_cols('k', keys)}, {', '.join(values)} FROM __rp_c_rankings AS k "
             f"JOIN __rp_c_sums AS s ON {_on('k', 's', keys)} LEFT JOIN __rp_c_table AS d ON d.n = k.d "
             f"LEFT JOIN __rp_c_table AS b ON b.n = k.rr")
    ctes = [("__rp_c_run", evaluated), ("__rp_c_judged", judged), ("__rp_c_grades", grades), ("__rp_c_hits", hits),
            ("__rp_c_entered", entered), ("__rp_c_rankings", rankings), ("__rp_c_table", table), ("__rp_c_sums", sums)]
    # its own CTEs inside a subquery: the engines place the statement after theirs (one WITH)
    inner = "WITH " + ", ".join(f"{name} AS ({body})" for name, body in ctes) + " " + final
    return f"SELECT * FROM ({inner}) AS {quote('__rp_compat')}"


__all__ = ["depth_table_sql", "sql_values"]
