"""The SQL of the diversity measures (DuckDB dialect; the Spark engine runs it too):
:func:`sql_values` (the family hook), one statement per range of query ids past
:data:`SQL_RANGE_ROWS` run rows, each holding one subquery per set of shared parameters
(:func:`_sql_group`); the subtopic judgments checked in the database first (:func:`_sql_checks`).
"""

from __future__ import annotations

import functools
from typing import Any, Sequence

from rank_polars.errors import RankPolarsError
from rank_polars.families.diversity.checks import _check_types, refuse_subtopics, relevant_sql, warn_unjudged
from rank_polars.families.diversity.ideal import ideal_sql, ideal_table, nrbp_depth
from rank_polars.families.diversity.names import IDEAL_KINDS, SUB, _key, _tables
from rank_polars.formula.tree import sql_log2
from rank_polars.measures.diversity import ideal_ideal
from rank_polars.plan import ITEM, Q, RANK


#: The dialects ``to_sql`` writes this family in: its greedy ideal is a recursive CTE over DuckDB's
#: lists and lambdas (``list_transform``, ``list_reduce``), which the other dialects lack or
#: translate into another statement; the DuckDB and Spark engines compute the ideal on the driver.
SQL_DIALECTS = ("duckdb",)


def _sql_sum(kind: str, k: int | None, beta: float | None, rank: str, gain: str, ordered: bool) -> str:
    cut = f"{rank} <= {k}" if k is not None else "TRUE"
    if kind in ("dcg", "ndcg"):
        term = f"{gain} / {sql_log2(f'{rank} + 1')}"
    elif kind in ("err", "nerr"):
        term = f"{gain} / {rank}"
    else:
        term, cut = f"{gain} * POW({float(beta)!r}, {rank} - 1)", "TRUE"
    return f"COALESCE(SUM(CASE WHEN {cut} THEN {term} END{_order(rank, ordered)}), 0.0)"


def _rank_gain(alpha: float, ordered: bool) -> str:
    """The gain at a rank: its subtopics' (1 - alpha)^c summed (in ascending order when ``ordered``)."""
    term = f"POW({1.0 - alpha!r}, c)"
    return f"list_sum(list_sort(LIST({term})))" if ordered else f"SUM({term})"


def _order(column: str, ordered: bool) -> str:
    """An ordered aggregate's ``ORDER BY`` in the engines' statements (``FamilySql.ordered``)."""
    return f" ORDER BY {column}" if ordered else ""


#: The run rows one diversity statement of the SQL engines may read.  Past it (in an engine's
#: session) the statement runs once per range of query ids (:func:`_sql_ranges`), as the
#: Polars engine's :data:`RANGE_ROWS`: at 200M rows one statement ran out of DuckDB's default
#: 1.5 GiB (8.9 GiB of RSS under an 8 GB limit).  The statement holds ~80 bytes a run row
#: (measured on the 200M-row log, 2 threads: 10M rows ran in 768 MiB, 12.5M in 1 GiB but not
#: 768 MiB, 20M in 1.4 GiB but not 1.2 GiB, 25M not in 1.5 GiB): 10M leaves half the default
#: limit spare, and smaller statements cost no more time on a log sorted by query.
SQL_RANGE_ROWS = 10_000_000


def sql_values(outputs: Sequence[tuple[str, Any]], tables: Any) -> str | list[str]:
    """The family hook for the SQL engines: a ``SELECT`` (DuckDB dialect), the measures of each
    set of shared parameters in a subquery, full-joined on the keys.  In an engine's session,
    a run of more than :data:`SQL_RANGE_ROWS` rows gives one statement per range of query ids
    (:func:`_sql_ranges`), the run rows and the judgments of that range alone: a ranking lies
    in one range, so the rows of the statements concatenated are those of the one statement.
    The judgments are checked once, over the whole table (:func:`_sql_checks`)."""
    from rank_polars.engines.sql_engine import quote

    groups: dict[tuple[Any, ...], list[tuple[str, Any]]] = {}
    for label, spec in outputs:
        groups.setdefault(_key(spec), []).append((label, spec))
    for same in groups.values():
        _sql_checks(same, tables, quote)
    universe = getattr(tables, "universe_frame", None)
    if tables.qrels is None and tables.query is not None and universe is not None:
        # no qrels: the universe is the run's queries (with qrels, bind_subtopics compares them)
        for same in _tables(outputs).values():
            judged = tables.query(f"SELECT DISTINCT {quote(Q)} FROM {tables.source(same[0][1], 'subtopics')} AS t")
            warn_unjudged([label for label, _ in same], universe.select(Q), judged)
    statements = [_sql_statement(outputs, list(groups.values()), tables, quote, part) for part in _sql_ranges(tables)]
    return statements[0] if len(statements) == 1 else statements


def _sql_ranges(tables: Any) -> list[str | None]:
    """SQL predicates on ``Q`` cutting the evaluated queries into ranges of about
    :data:`SQL_RANGE_ROWS` run rows each, by the Polars engine's rule
    (:func:`rank_polars.engines.polars_engine.bounds_of` over ``tables.universe_frame``);
    ``[None]``: one statement (a run within the budget, or ``to_sql``, which has no session)."""
    universe = getattr(tables, "universe_frame", None)
    if tables.query is None or universe is None:
        return [None]
    from rank_polars.engines.polars_engine import bounds_of
    from rank_polars.engines.sql_engine import quote, range_sql

    return [range_sql(lo, hi, quote(Q)) for lo, hi in bounds_of(universe, SQL_RANGE_ROWS)]


def _sql_statement(outputs: Sequence[tuple[str, Any]], groups: Sequence[Sequence[tuple[str, Any]]], tables: Any,
                   quote: Any, part: str | None) -> str:
    """One statement of :func:`sql_values`, over the queries ``part`` selects (None: all)."""
    from rank_polars.engines.base import REPEATS

    keys = [quote(k) for k in tables.keys]
    selects = [_sql_group(same, tables, quote, part, i) for i, same in enumerate(groups)]
    if len(selects) == 1:
        return selects[0]
    sql = f"SELECT * FROM ({selects[0]}) AS d0"
    for i, select in enumerate(selects[1:], 1):
        sql += f" FULL JOIN ({select}) AS d{i} USING ({', '.join(keys)})"
    # a ranking with relevant rows under one set of parameters only scores 0 under the others
    filled = ", ".join(f"COALESCE({quote(label)}, 0.0) AS {quote(label)}" for label, _ in outputs)
    counted = "".join(f", {quote(f'{REPEATS}{i}')}" for i in range(len(groups))) if tables.repeats is not None else ""
    return f"SELECT {', '.join(keys)}, {filled}{counted} FROM ({sql}) AS d"


def _sql_checks(outputs: Sequence[tuple[str, Any]], tables: Any, quote: Any) -> None:
    """:func:`check_subtopics` in the database, over the whole subtopic table (an engine's
    session; to_sql's SQL checks nothing): its columns, then the counts in one statement.  A
    problem is worded by :func:`refuse_subtopics`, its examples from a ``SELECT DISTINCT`` of
    three query ids: the table never leaves the database (a copy of it in Polars, to word the
    message, would hold every row of a 200M-row table)."""
    if tables.query is None:
        return
    first = outputs[0][1]
    column, relevance = first.params["subtopic"], tables.columns.relevance
    source = tables.source(first, "subtopics")
    q, item, col, grade = quote(Q), quote(ITEM), quote(column), quote(relevance)
    schema = tables.query(f"SELECT * FROM {source} AS t LIMIT 0").schema
    names = schema.names()
    for need, what in ((Q, tables.columns.query), (column, column), (ITEM, tables.columns.item), (relevance, relevance)):
        if need not in names:
            raise RankPolarsError(f"{first.NAME}: the subtopic judgments have no column {what!r} "
                                  f"(columns: {', '.join(n for n in names if not n.startswith('__rp'))})")
    _check_types(schema, column, relevance)
    where = {
        "nulls": f"{q} IS NULL OR {col} IS NULL OR {item} IS NULL OR {grade} IS NULL",
        # NaN and infinities: x - x is 0 for every finite number (a dialect-neutral isfinite)
        "nonfinite": f"CAST({grade} AS DOUBLE) - CAST({grade} AS DOUBLE) <> 0",
        "negative": f"{grade} < 0",
    }
    counted = ", ".join(f"COUNT(*) FILTER (WHERE {cond}) AS {name}" for name, cond in where.items())
    # repeats among the judgments the measures read (check_subtopics), every row under strict
    read = "" if tables.checks == "strict" else f" WHERE {relevant_sql(grade, first.params['rel'])}"
    stats = tables.query(
        f"SELECT {counted},"
        # rows sharing a row hash beyond the first: plain counts, which DuckDB spills (a
        # SELECT DISTINCT of the rows ran out of the default 1.5 GiB at 186M judgments); a
        # collision only sends the table to the exact count below
        f" (SELECT COALESCE(SUM(n - 1), 0) FROM (SELECT COUNT(*) AS n FROM {source} AS u{read}"
        f" GROUP BY hash({q}, {col}, {item}) HAVING COUNT(*) > 1) AS d) AS repeated"
        f" FROM {source} AS t")
    counts = {name: int(value or 0) for name, value in stats.row(0, named=True).items()}
    if not any(counts.values()):
        return
    repeats = f"SELECT {q} FROM {source} AS u{read} GROUP BY {q}, {col}, {item} HAVING COUNT(*) > 1"
    if counts["repeated"] and not any(counts[name] for name in where):
        # the rows themselves compared (as check_subtopics: a hash collision is no repeat)
        exact = tables.query(f"SELECT COALESCE(SUM(n - 1), 0) AS n FROM (SELECT COUNT(*) AS n FROM {source} AS u{read}"
                             f" GROUP BY {q}, {col}, {item} HAVING COUNT(*) > 1) AS d")
        counts["repeated"] = int(exact.item() or 0)

    def examples(problem: str) -> list[Any]:
        rows = repeats if problem == "repeated" else f"SELECT {q} FROM {source} AS t WHERE {where[problem]}"
        return tables.query(f"SELECT DISTINCT {q} FROM ({rows}) AS e ORDER BY {q} NULLS LAST LIMIT 3")[Q].to_list()

    refuse_subtopics(counts, examples, column, relevance)


def _sql_group(outputs: Sequence[tuple[str, Any]], tables: Any, quote: Any, part: str | None = None,
               index: int = 0) -> str:
    """The measures of one set of shared parameters; ``part``: a predicate on ``Q`` (over the
    run and the judgments), the queries of one statement of :func:`sql_values` (None: all).
    With ``tables.repeats``, also the column ``REPEATS<index>``: per ranking, its relevant rows
    to ``tables.repeat_depth`` beyond one per item (distinct ranks less distinct item hashes:
    the ranks are distinct, the run's checks proved it), as :func:`_count_repeats`."""
    first = outputs[0][1]
    alpha, rel, column = first.params["alpha"], first.params["rel"], first.params["subtopic"]
    source = tables.source(first, "subtopics")
    relevance = tables.columns.relevance
    q, sub, item, rank = quote(Q), quote(SUB), quote(ITEM), quote(RANK)
    col, grade = quote(column), quote(relevance)
    run_rows = tables.run
    if part is not None:  # the filters reach the Parquet readers (row groups skipped)
        run_rows = f"(SELECT * FROM {tables.run} AS {quote('__rp_range')} WHERE {part})"
        source = f"(SELECT * FROM {source} AS {quote('__rp_range')} WHERE {part})"
    keys = [quote(k) for k in tables.keys]
    keylist = ", ".join(keys)
    ordered = tables.ordered  # sums in a fixed order in the engines' statements
    where = relevant_sql(grade, rel)
    run = f"(SELECT {keylist}, {item}, {rank} FROM {run_rows})"
    if first.params["judged_only"]:
        run = (f"(SELECT {keylist}, {item}, ROW_NUMBER() OVER (PARTITION BY {keylist} ORDER BY {rank}) AS {rank}"
               f" FROM {run_rows} AS r WHERE EXISTS (SELECT 1 FROM {source} AS j WHERE j.{q} = r.{q}"
               f" AND j.{item} = r.{item}))")
    kinds = {spec.KIND for _, spec in outputs}
    pairs_sql = f"SELECT DISTINCT {q}, {col} AS {sub}, {item} FROM {source} AS t WHERE {where}"
    from rank_polars.engines.base import REPEATS

    counting = tables.repeats is not None
    ctes = [
        f"__rp_pairs AS ({pairs_sql})",
        f"__rp_size AS (SELECT {q}, CAST(COUNT(DISTINCT {sub}) AS DOUBLE) AS s FROM __rp_pairs GROUP BY {q})",
        f"__rp_rows AS (SELECT {', '.join('r.' + k for k in keys)}, r.{rank}, p.{sub},"
        + (f" hash(r.{item}) AS ih," if counting else "") +
        f" ROW_NUMBER() OVER (PARTITION BY {', '.join('r.' + k for k in keys)}, p.{sub} ORDER BY r.{rank}) - 1 AS c"
        f" FROM {run} AS r JOIN __rp_pairs AS p ON r.{q} = p.{q} AND r.{item} = p.{item})",
        # a rank's few subtopic terms added in ascending order in the engines (a sorted list's
        # left fold: cheaper than an ordered SUM per group, the same bits as the Polars engine)
        f"__rp_gains AS (SELECT {keylist}, {rank}, {_rank_gain(alpha, ordered)} AS g FROM __rp_rows"
        f" GROUP BY {keylist}, {rank})",
    ]
    recursive = False
    if kinds & IDEAL_KINDS:
        depth: int | None = max((spec.k or 0 for _, spec in outputs if spec.KIND in ("ndcg", "nerr")), default=0)
        if "nnrbp" in kinds:
            # the depth bound for any query of up to a million subtopics (no round trip; the
            # recursion also ends where a query's relevant items run out)
            deep = [nrbp_depth(spec.params["beta"], 10**6) for _, spec in outputs if spec.KIND == "nnrbp"]
            depth = None if None in deep else max([depth or 0, *[d for d in deep if d is not None]])
        if getattr(tables, "on_driver", None) is not None:  # an engine's session: the driver's array steps
            ideal = tables.on_driver(pairs_sql, functools.partial(ideal_table, alpha=alpha, depth=depth))
            ctes.append(f"__rp_ideal AS (SELECT q, pos, g FROM {ideal} AS t)")
        else:  # to_sql: the same steps as a recursive CTE (ideal_sql)
            ctes.append(f"__rp_state(q, item, subs, ws, step, picked, g) AS ({ideal_sql('__rp_pairs', alpha, depth)})")
            ctes.append("__rp_ideal AS (SELECT q, step AS pos, g FROM __rp_state WHERE picked)")
            recursive = True
    sums, ideal_sums, counts = [], [], []
    for i, (label, spec) in enumerate(outputs):
        kind, k, beta = spec.KIND, spec.k, spec.params.get("beta")
        if kind in ("dcg", "ndcg", "err", "nerr", "nrbp", "nnrbp"):
            sums.append(f"{_sql_sum(kind, k, beta, rank, 'g', ordered)} AS v{i}")
        if kind in ("ndcg", "nerr", "nnrbp"):
            ideal_sums.append(f"{_sql_sum(kind, k, beta, 'pos', 'g', ordered)} AS i{i}")
        if kind == "p":
            counts.append(f"CAST(COUNT(*) FILTER (WHERE {rank} <= {k}) AS DOUBLE) AS v{i}")
        elif kind == "strec":
            counts.append(f"CAST(COUNT(DISTINCT {sub}) FILTER (WHERE {rank} <= {k}) AS DOUBLE) AS v{i}")
    parts = []
    if sums:
        parts.append(f"(SELECT {keylist}, {', '.join(sums)} FROM __rp_gains GROUP BY {keylist})")
    if counts:
        parts.append(f"(SELECT {keylist}, {', '.join(counts)} FROM __rp_rows GROUP BY {keylist})")
    if "map" in kinds:
        parts.append(
            f"(SELECT {keylist}, SUM(ap{_order(sub, ordered)}) AS vmap FROM (SELECT {', '.join('w.' + k for k in keys)},"
            f" w.{sub}, SUM((w.c + 1.0) / w.{rank}{_order('w.' + rank, ordered)}) / ANY_VALUE(n.r) AS ap FROM __rp_rows AS w JOIN"
            f" (SELECT {q}, {sub}, CAST(COUNT(*) AS DOUBLE) AS r FROM __rp_pairs GROUP BY {q}, {sub}) AS n"
            f" ON w.{q} = n.{q} AND w.{sub} = n.{sub} GROUP BY {', '.join('w.' + k for k in keys)}, w.{sub}) AS a"
            f" GROUP BY {keylist})")
    if counting:
        cut = f" WHERE {rank} <= {tables.repeat_depth}" if tables.repeat_depth is not None else ""
        parts.append(f"(SELECT {keylist}, COUNT(DISTINCT {rank}) - COUNT(DISTINCT ih) AS {quote(f'{REPEATS}{index}')}"
                     f" FROM __rp_rows{cut} GROUP BY {keylist})")
    # every ranking with a relevant row; the others score 0 (the engine fills them in)
    body = f"(SELECT DISTINCT {keylist} FROM __rp_rows) AS b"
    body += "".join(f" LEFT JOIN {p} AS x{j} USING ({keylist})" for j, p in enumerate(parts))
    body += f" LEFT JOIN __rp_size AS z ON z.{q} = b.{q}"
    if ideal_sums:
        body += (f" LEFT JOIN (SELECT q, {', '.join(ideal_sums)} FROM __rp_ideal GROUP BY q) AS ii"
                 f" ON ii.q = b.{q}")
    values = []
    for i, (label, spec) in enumerate(outputs):
        kind, k = spec.KIND, spec.k
        v = "vmap" if kind == "map" else f"v{i}"
        if kind == "dcg":
            out = f"{v} / (z.s * {ideal_ideal(alpha, k, 'log2')!r})" if k > 1 else v
        elif kind == "err":
            out = f"{v} / (z.s * {ideal_ideal(alpha, k, 'rank')!r})" if k > 1 else v
        elif kind in ("ndcg", "nerr", "nnrbp"):
            out = f"CASE WHEN {v} > 0 THEN {v} / i{i} ELSE 0.0 END"
        elif kind == "nrbp":
            out = f"{v} * ({1.0 - (1.0 - alpha) * spec.params['beta']!r} / z.s)"
        elif kind == "p":
            out = f"{v} / ({k} * z.s)"
        else:
            out = f"{v} / z.s"
        values.append(f"COALESCE(CAST({out} AS DOUBLE), 0.0) AS {quote(label)}")
    with_ = "WITH RECURSIVE " if recursive else "WITH "
    if counting:
        values.append(f"COALESCE({quote(f'{REPEATS}{index}')}, 0) AS {quote(f'{REPEATS}{index}')}")
    inner = f"{with_}{', '.join(ctes)} SELECT {', '.join('b.' + k for k in keys)}, {', '.join(values)} FROM {body}"
    return f"SELECT * FROM ({inner}) AS __rp_diversity"
