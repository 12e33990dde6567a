"""The plan of :mod:`rank_polars.plan` as one set-based SQL query (DuckDB dialect).

This mirrors :mod:`rank_polars.engines.polars_engine` step by step, as CTEs:

1. ``__rp_run``: the user's table with internal column names (the only place user names
   are read), ranked by (score desc, item text desc) only when ordering by score;
2. ``__rp_labelled``: the *contributing* rows, after an inner join with the filtered
   judgments; ``__rp_rows``: those within the deepest cutoff.  Every window below runs
   over these rows or over the judgments only, never over the log;
3. ``__rp_stats``: the universe of (group, query) pairs with per-query judgment aggregates;
4. ``__rp_rowagg``: per-query aggregates of the contributing rows (running sums first);
5. ``__rp_per_query``: each metric's formula, compiled from the spec by :func:`_dsl.to_sql`.

No formula is written here: every value and aggregate comes from the metric specs via the
DSL, so the SQL and Polars engines cannot drift.  Every identifier is quoted; the only text
placed as given is the table expression the caller passes (a table name, view, or a
function such as ``read_parquet('logs/*.parquet')``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

from rank_polars.formula import tree as d
from rank_polars.errors import RankPolarsError
from rank_polars.inputs import CLICK, reads_run_labels
from rank_polars.plan import GRADE, IRANK, ITEM, JUDGED, N_RET, Q, QGRADE, RANK, SCORE, Plan, by_name, key_names
from rank_polars.validate import check_column, repeat_checks

# Names of the CTEs: prefixed so that they cannot shadow a user's table named "rows".
RUN, RAW, QRELS, UNIVERSE, STATS = "__rp_run", "__rp_raw", "__rp_qrels", "__rp_universe", "__rp_stats"
JUDGMENTS = "__rp_judgments"  # the contributing judgments
LABELLED, ROWS = "__rp_labelled", "__rp_rows"
LABEL = "__rp_label"  # the run's relevance label as stored (GRADE is its DOUBLE cast)
GLOB, ROWX, ROWAGG, TABLE, PER_QUERY = "__rp_glob", "__rp_rowx", "__rp_rowagg", "__rp_table", "__rp_per_query"


def quote(name: str) -> str:
    """A quoted SQL identifier (DuckDB/ANSI double quotes; sqlglot re-quotes per dialect)."""
    if not isinstance(name, str) or not name:
        raise RankPolarsError(f"a column name must be a non-empty string, got {name!r}")
    if "\x00" in name:
        raise RankPolarsError(f"column name {name!r} contains a NUL character, which SQL cannot quote")
    return '"' + name.replace('"', '""') + '"'


def quoted_examples(values: str) -> str:
    """The first five of a SQL list of texts ``values``, each in single quotes, joined by ``, ``:
    the examples of a check's message (DuckDB's list functions; Spark's through the translation)."""
    return f"array_to_string(list_transform(list_slice({values}, 1, 5), lambda v: '''' || v || ''''), ', ')"


def literal(text: str) -> str:
    """A SQL string literal (quotes doubled; DuckDB strings have no backslash escapes)."""
    if "\x00" in text:
        raise RankPolarsError(f"string {text!r} contains a NUL character, which SQL cannot hold")
    return "'" + text.replace("'", "''") + "'"


def id_literal(value: object) -> str:
    """A query or item id as a SQL literal: text quoted (:func:`literal`), an integer as is
    (the id rule: ids are text or 64-bit integers)."""
    if isinstance(value, str):
        return literal(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise RankPolarsError(f"an id must be text or an integer to be written in SQL, got {value!r}")


def range_sql(lo: object, hi: object, column: str) -> str | None:
    """``lo <= column < hi`` (a None bound: no term; None: no predicate at all), the SQL form
    of a range of ``polars_engine.query_bounds``; ``column``: SQL text, already quoted."""
    terms = ([f"{column} >= {id_literal(lo)}"] if lo is not None else []) + (
        [f"{column} < {id_literal(hi)}"] if hi is not None else [])
    return " AND ".join(terms) or None


def metric_column(i: int) -> str:
    """Internal name of the i-th metric's column (labels such as ``ndcg@10`` only at the end)."""
    return f"__rp_m{i}"


# The validation statistics in SQL, the same columns as validate._STATS computes in Polars
# (DuckDB dialect: only the DuckDB engine runs them).
# Polars' n_unique counts null as a value; the null checks run first, so COUNT(DISTINCT)
# only decides when there are no nulls.
STATS_SQL = {
    "rank_null": f"COUNT(*) - COUNT({quote(RANK)})",
    "rank_lt1": f"COUNT_IF({quote(RANK)} < 1)",
    "rank_dup": f"COUNT(*) - COUNT(DISTINCT {quote(RANK)}) - MAX(CASE WHEN {quote(RANK)} IS NULL THEN 1 ELSE 0 END)",
    "score_bad": f"COUNT_IF({quote(SCORE)} IS NULL OR isnan({quote(SCORE)}))",
    "item_null": f"COUNT(*) - COUNT({quote(ITEM)})",
    # distinct 64-bit hashes, as validate does (hash(NULL) is a value there and here)
    "item_dup": f"COUNT(*) - COUNT(DISTINCT hash({quote(ITEM)}))",
    "grade_bad": f"COUNT_IF({quote(GRADE)} IS NULL OR isnan({quote(GRADE)}) OR isinf({quote(GRADE)}))",
    "label_mismatch": f"COUNT_IF({quote(QGRADE)} IS NULL OR {quote(QGRADE)} <> {quote(GRADE)})",
}


def stat_sql(name: str, depth: int | None = None) -> str:
    """``STATS_SQL[name]``; with ``depth`` (``validate.repeat_depth``) the repeats are counted
    among the rows at positions 1..depth only (a null position is no row of the top)."""
    if depth is None or name not in ("rank_dup", "item_dup"):
        return STATS_SQL[name]
    top = f"{quote(RANK)} <= {int(depth)}"
    value = quote(RANK) if name == "rank_dup" else f"hash({quote(ITEM)})"
    return f"COUNT_IF({top}) - COUNT(DISTINCT CASE WHEN {top} THEN {value} END)"


def distinct_sql(name: str, keys: Sequence[str], relation: str, depth: int | None = None) -> str:
    """``rank_dup`` / ``item_dup`` of :func:`stat_sql` for the rankings that have a repeat,
    as two GROUP BYs of plain counts (rows sharing a value beyond the first, summed): DuckDB
    spills those, not ``COUNT(DISTINCT)``'s states, which ran out of the default 1.5 GiB at
    200M rows when every row is checked.  A null value is one value, as in Polars."""
    cols = ", ".join(quote(k) for k in keys)
    value = quote(RANK) if name == "rank_dup" else f"hash({quote(ITEM)})"
    top = f" WHERE {quote(RANK)} <= {int(depth)}" if depth is not None else ""
    shared = (f"SELECT {cols}, COUNT(*) - 1 AS __rp_n FROM {relation}{top} GROUP BY {cols}, {value}"
              " HAVING COUNT(*) > 1")
    return f"SELECT {cols}, CAST(SUM(__rp_n) AS BIGINT) AS {quote(name)} FROM ({shared}) AS d GROUP BY {cols}"


# Positions 1..POS_TOP as the bits of one 128-bit integer per ranking (BIT_OR): a ranking
# whose rows set as many bits as it has rows repeats no position, so no position a
# contributing row shares (``rank_dup`` of the metric pass is then 0 without its semi-join
# over every row).  A fixed-size state, so DuckDB's aggregate spills it: ``bitstring_agg``
# (1,024 bits) was as cheap but its states do not spill, and 6M rankings (600M rows) ran
# out of a 2 GB memory_limit.  Costs ~0.9 s at 200M rows (DuckDB only).
POS_TOP = 127
POSITIONS_DISTINCT = "__rp_positions_distinct"


def positions_distinct_sql() -> str:
    """1 if the ranking's positions are provably distinct (all in 1..POS_TOP), else 0."""
    r = quote(RANK)
    bits = f"BIT_OR(CASE WHEN {r} BETWEEN 1 AND {POS_TOP} THEN 1::HUGEINT << CAST({r} - 1 AS INTEGER) END)"
    return (f"CASE WHEN COUNT({r}) = COUNT(*) AND MIN({r}) >= 1 AND MAX({r}) <= {POS_TOP} "
            f"AND bit_count({bits}) = COUNT(*) THEN 1 ELSE 0 END")


def qrels_stats_sql(checks: str, contributes: str) -> str:
    """Per-query statistics of the judgments, as ``validate.qrels_stats_polars`` (``contributes``:
    the plan's predicate over the ``QRELS`` CTE)."""
    item, grade = quote(ITEM), quote(GRADE)
    aggs = {
        "q_n": "COUNT(*)",
        "q_item_null": f"COUNT(*) - COUNT({item})",
        "q_grade_null": f"COUNT(*) - COUNT({grade})",
        "q_grade_nan": f"COUNT_IF(isnan({grade}) OR isinf({grade}))",
    }
    cols = ", ".join(f"CAST({sql} AS BIGINT) AS {name}" for name, sql in aggs.items())
    q = quote(Q)
    # repeated judgments: "full" and "fast" among the contributing ones (validate.qrels_stats_polars).
    # Counted from the (query, item) pairs judged more than once, a group-by of its own, not
    # COUNT(DISTINCT) per query (200M-row benchmark: 1.9 s against 2.7 s, of a 28 s evaluation)
    where = "" if checks == "strict" else f" WHERE {contributes}"
    repeated = (f"SELECT {q}, SUM(k - 1) AS q_dup FROM (SELECT {q}, {item}, COUNT(*) AS k FROM {quote(QRELS)}{where} "
                f"GROUP BY {q}, {item} HAVING COUNT(*) > 1) AS p GROUP BY {q}")
    return (f"SELECT s.*, CAST(COALESCE(d.q_dup, 0) AS BIGINT) AS q_dup FROM "
            f"(SELECT {q}, {cols} FROM {quote(QRELS)} GROUP BY {q}) AS s "
            f"LEFT JOIN ({repeated}) AS d ON s.{q} IS NOT DISTINCT FROM d.{q}")

def _leaf(n: d.Node) -> str:
    if isinstance(n, d.Col):
        return quote(n.name)
    if isinstance(n, (d.IdealCum, d.TieSum)):  # joined onto the rows / added where ranked (per_query_query)
        return quote(n.column)
    raise TypeError(f"unexpected {n!r} after planning")


def _raw_label_leaf(n: d.Node) -> str:
    # the contributing predicate over the run's label column as stored, ``judged`` spelled out
    if isinstance(n, d.Col) and n.name == GRADE:
        return quote(LABEL)
    if isinstance(n, d.Col) and n.name == JUDGED:
        return f"({quote(LABEL)} >= 0)"
    return _leaf(n)


def compile_expr(node: d.Node) -> str:
    """SQL text of a planned formula (aggregates and running sums already named columns)."""
    for n in d.walk(node):
        # repr(inf) would read as a column named "inf": refuse rather than emit it
        if isinstance(n, d.Lit) and not isinstance(n.value, bool) and not math.isfinite(n.value):
            raise RankPolarsError(f"metric parameter {n.value!r} is not a finite number; SQL cannot express it")
    return d.to_sql(node, _leaf)


def _ideal_sql(table: str, order: d.Node, jkeys: Sequence[str]) -> str:
    """The judgments with ``order > 0``, numbered by ``order`` descending (the ideal rank)."""
    key = compile_expr(order)
    irank = f"row_number() OVER (PARTITION BY {_cols(jkeys)} ORDER BY {key} DESC)"
    return f"SELECT *, {irank} AS {quote(IRANK)} FROM {quote(table)} WHERE {key} > 0"


def _ideal_cum_sql(q: Query, alias: str, icum: d.IdealCum, table: str, jkeys: Sequence[str], cte: str,
                   ordered: bool = False) -> tuple[str, str]:
    """The joins that bring ``icum`` onto the rows of ``alias`` (its CTE added to ``q``), and
    the selected column.  One nested in ``icum.arg`` is joined onto the ideal ranking first."""
    # the ideal ranking once per ordering (every running sum over it reads the same CTE)
    ideal = f"SELECT * FROM {quote(q.shared(cte + '_ideal', _ideal_sql(table, icum.order, jkeys)))}"
    inner = d.ideal_cums([icum.arg])
    if inner:
        parts = [_ideal_cum_sql(q, "j", n, table, jkeys, f"{cte}_{k}", ordered) for k, n in enumerate(inner.values())]
        ideal = f"SELECT j.*{''.join(c for _, c in parts)} FROM ({ideal}) AS j{''.join(j for j, _ in parts)}"
    window = f"PARTITION BY {_cols(jkeys)} ORDER BY {quote(IRANK)} ASC NULLS FIRST ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
    arg = compile_expr(icum.arg)
    # the total in ideal order too: a window without one adds its partition in arrival order
    whole = f" ORDER BY {quote(IRANK)} ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING" if ordered else ""
    table_name = q.shared(cte, (
        f"SELECT {_cols(jkeys)}, {quote(IRANK)}, SUM({arg}) OVER ({window}) AS c, "
        f"SUM({arg}) OVER (PARTITION BY {_cols(jkeys)}{whole}) AS t FROM ({ideal}) AS j"
    ))
    at = d.to_sql(icum.at, lambda n: f"{alias}.{quote(n.name)}")
    # aliases named after the sum itself, so that equal nested reads give equal CTE text (shared)
    pos, tot = quote(icum.column + "_at"), quote(icum.column + "_total")
    join = (
        f" LEFT JOIN {quote(table_name)} AS {pos} ON {_on(alias, pos, jkeys)} AND {pos}.{quote(IRANK)} = {at}"
        f" LEFT JOIN (SELECT DISTINCT {_cols(jkeys)}, t FROM {quote(table_name)}) AS {tot} ON {_on(alias, tot, jkeys)}"
    )
    return join, f", CASE WHEN {at} < 1 THEN 0.0 ELSE COALESCE({pos}.c, {tot}.t, 0.0) END AS {quote(icum.column)}"


#: The Polars engine's fixed point (``polars_engine.fixed_sum``): each term as the integer
#: ``floor(x * 2^64)``, summed as a HUGEINT, one rounding to a double; the same integers, so the
#: same bits as Polars wherever the terms are.  Exact while the terms are below 2^40 and fewer
#: than 2^22 (the bound column, ``polars_engine.fixed_bound``, below 2^62); a larger term adds
#: NULL rather than overflowing the HUGEINT (DuckDB raises on that), and is out of bound.
FIXED_SCALE = "18446744073709551616.0"  # 2^64
FIXED_BOUND = "4611686018427387904.0"  # 2^62
_TERMS, _TERM = "4194304.0", "1099511627776.0"  # 2^22 terms, |term| < 2^40
BOUND = "__rp_bound_"  # a fixed-point sum's bound column: its name after this prefix
EXACT = "__rp_exact"  # per query: every fixed-point sum within its bound


def _aggregate(agg: d.Agg, name: str, order: str | None = None, fixed: bool = False) -> str:
    """``agg`` per group; with ``fixed`` a sum of fractions in fixed point, with its bound
    column; else with ``order`` (a column, or ``""`` for the values themselves) a sum adds its
    values in that order (see ``Source.ordered``)."""
    arg = compile_expr(agg.arg)
    if agg.kind != "sum":
        return f"MAX({arg}) AS {quote(name)}"
    if fixed and not d.integral(agg.arg):
        total = f"SUM({_fixed(arg)})"
        bound = f"GREATEST(COALESCE(MAX(ABS({arg})), 0.0) * {_TERMS}, COUNT({arg}) * {_TERM})"
        return f"CAST({total} AS DOUBLE) / {FIXED_SCALE} AS {quote(name)}, {bound} AS {quote(BOUND + name)}"
    # a count is exact in any order (_dsl.integral): no ORDER BY to pay for
    by = "" if order is None or d.integral(agg.arg) else f" ORDER BY {quote(order) if order else arg}"
    return f"SUM({arg}{by}) AS {quote(name)}"


def _fixed(arg: str) -> str:
    """A term in fixed point: ``floor(x * 2^64)`` as a HUGEINT, NULL from 2^40 on (out of bound)."""
    return f"CASE WHEN ABS({arg}) < {_TERM} THEN CAST(FLOOR(({arg}) * {FIXED_SCALE}) AS HUGEINT) END"


def _bounds(aggs: dict[str, d.Agg], fixed: bool) -> list[str]:
    """The bound columns :func:`_aggregate` adds beside ``aggs``' fixed-point sums."""
    return [BOUND + n for n, a in aggs.items() if fixed and a.kind == "sum" and not d.integral(a.arg)]


def _cols(names: Sequence[str], alias: str | None = None) -> str:
    prefix = f"{alias}." if alias else ""
    return ", ".join(prefix + quote(n) for n in names)


def _on(left: str, right: str, names: Sequence[str]) -> str:
    # a null group key is a group like any other (as the Polars engine's nulls_equal joins);
    # query and item ids are never null where they are joined (the checks refuse them)
    return " AND ".join(
        f"{left}.{quote(n)} {'=' if n in (Q, ITEM) else 'IS NOT DISTINCT FROM'} {right}.{quote(n)}"
        for n in names
    )


@dataclass
class Source:
    """Where the run and the judgments come from, and the user's column names."""

    run: str  # a table expression, placed as given
    qrels: str | None
    by: list[str]
    order: str  # "position" or "score"
    query: str = "query"
    item: str = "item"
    position: str = "position"
    score: str = "score"
    relevance: str = "relevance"
    dedupe: bool = False  # duplicates="first": keep each (ranking, item)'s first row
    labels: str = "qrels"  # with qrels: "run" takes the shown rows' grades from the run's labels
    unlabelled: bool = False  # no relevance column, none needed: every shown row's grade is 1
    # sums added in a fixed order (``SUM(x ORDER BY rank)``), so that every run gives the same
    # bits whatever the threads (the Spark engine, whose translation collects, sorts and folds:
    # dialects._ordered_sum; DuckDB where a fixed-point sum is out of bound)
    ordered: bool = False
    # sums of fractions in fixed point (HUGEINT, :func:`_aggregate`), the same bits in any order
    # at no sort's cost, with an EXACT column per query saying where they held (DuckDB)
    fixed: bool = False
    # the judgments' query, item and relevance columns, where they are named otherwise than the
    # log's (to_sql with Schema(judgments=...); the engines rename the judgments when they read them)
    judged: tuple[str, str, str] | None = None
    # the click column the call's click metrics read, carried as CLICK beside the labels (None:
    # no click metric); read whatever the labels are (measures.clicks: one reading per call)
    click: str | None = None
    # to_sql(judged_only=True): the unjudged rows removed before ranks are numbered
    # (:func:`judged_run_cte`; evaluate filters them where it reads the inputs)
    judged_only: bool = False

    @property
    def run_labels(self) -> bool:
        return reads_run_labels(self.qrels is not None, self.labels)

    @property
    def keys(self) -> list[str]:
        return key_names(len(self.by))


@dataclass
class Query:
    """A WITH list under construction."""

    ctes: list[tuple[str, str]] = field(default_factory=list)

    def add(self, name: str, body: str) -> None:
        self.ctes.append((name, body))

    def shared(self, name: str, body: str) -> str:
        """The name of a CTE with this ``body``: an earlier one's if the WITH list has it (the
        ideal's running sums repeat across a formula's nested ideal reads: Rndcg's SQL held three
        copies of the same window; Spark's planning time and sqlglot's grow with the text)."""
        earlier = next((n for n, b in self.ctes if b == body), None)
        if earlier is None:
            self.add(name, body)
        return earlier or name

    def render(self, final: str) -> str:
        body = ",\n".join(f"{quote(name)} AS (\n  {sql}\n)" for name, sql in self.ctes)
        return f"WITH\n{body}\n{final}"


def run_cte(src: Source) -> str:
    """The run with internal names; the one place user column names are read."""
    select = [f"{quote(c)} AS {quote(by_name(i))}" for i, c in enumerate(src.by)]
    select += [f"{quote(src.query)} AS {quote(Q)}", f"{quote(src.item)} AS {quote(ITEM)}"]
    if src.order == "position":
        select.append(f"CAST({quote(src.position)} AS BIGINT) AS {quote(RANK)}")
    else:
        select.append(f"CAST({quote(src.score)} AS DOUBLE) AS {quote(SCORE)}")
    if src.unlabelled:  # measures of what is shown alone (inputs.prepare): every row counts
        select.append(f"CAST(1 AS DOUBLE) AS {quote(GRADE)}")
        select.append(f"CAST(1 AS DOUBLE) AS {quote(LABEL)}")
    elif src.run_labels:
        select.append(f"CAST({quote(src.relevance)} AS DOUBLE) AS {quote(GRADE)}")
        select.append(f"{quote(src.relevance)} AS {quote(LABEL)}")
    if src.click is not None:
        select.append(f"CAST({quote(src.click)} AS DOUBLE) AS {quote(CLICK)}")
    return f"SELECT {', '.join(select)} FROM {src.run} AS {quote('__rp_src')}"


SHOWN = "__rp_shown"  # judged_only: the run as shown, before the unjudged rows are removed


def judged_run_cte(src: Source) -> str:
    """The judged rows of :data:`SHOWN` (a judgment ``>= 0``; without judgments, a label
    ``>= 0``), positions numbered anew by ``RANK()`` as ``inputs.judged_rows`` does."""
    if src.qrels is not None:
        on = " AND ".join(f"j.{quote(c)} = s.{quote(c)}" for c in (Q, ITEM))
        judged = f"EXISTS (SELECT 1 FROM {quote(QRELS)} AS j WHERE {on} AND j.{quote(JUDGED)})"
    else:
        judged = f"(s.{quote(GRADE)} IS NULL OR s.{quote(GRADE)} >= 0)"
    if src.order != "position":
        return f"SELECT s.* FROM {quote(SHOWN)} AS s WHERE {judged}"
    names = [*src.keys, ITEM]
    names += [GRADE, LABEL] if src.unlabelled or src.run_labels else []
    names += [CLICK] if src.click is not None else []
    rank = f"RANK() OVER (PARTITION BY {_cols(src.keys, 's')} ORDER BY s.{quote(RANK)})"
    return f"SELECT {_cols(names, 's')}, {rank} AS {quote(RANK)} FROM {quote(SHOWN)} AS s WHERE {judged}"


def dedupe_cte(src: Source) -> str:
    """Keep the first row of each (ranking, item), ordered as evaluate's ``_keep_first``.

    Polars sorts nulls first and NaN last; the same order here, so the checks that follow
    see the same rows.
    """
    if src.order == "position":
        order = f"{quote(RANK)} ASC NULLS FIRST"
    else:
        s = quote(SCORE)
        order = f"({s} IS NULL) DESC, isnan({s}) ASC, {s} DESC"
    part = _cols([*src.keys, ITEM])
    return f"SELECT * FROM {quote(RAW)} QUALIFY row_number() OVER (PARTITION BY {part} ORDER BY {order}) = 1"


def _window_sum(arg: str, window: str, src: Source) -> str:
    """``SUM(arg) OVER (window)`` with the engines' same bits every run: in fixed point (DuckDB,
    as :func:`_aggregate`; the tie weights it adds are at most 1, far within the bound), in rank
    order (Spark), or plain (``to_sql``)."""
    if src.fixed:
        return f"CAST(SUM({_fixed(arg)}) OVER ({window}) AS DOUBLE) / {FIXED_SCALE}"
    if src.ordered:
        return f"SUM({arg}) OVER ({window} ORDER BY {quote(RANK)} ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)"
    return f"SUM({arg}) OVER ({window})"


def ranked_cte(src: Source, ties: dict[str, d.TieSum] | None = None) -> str:
    """Ranks: the position as given, or trec_eval's order (score desc, item text desc);
    ``ties``: the :class:`~rank_polars.formula.tree.TieSum` columns, windows over the rows tied
    in score (by position every row is a tie of its own)."""
    if src.order == "position":
        body = f"SELECT * FROM {quote(RUN)}"
    else:
        rank = (
            f"row_number() OVER (PARTITION BY {_cols(src.keys)} ORDER BY {quote(SCORE)} DESC, "
            f"CAST({quote(ITEM)} AS VARCHAR) DESC)"
        )
        body = f"SELECT *, {rank} AS {quote(RANK)} FROM {quote(RUN)}"
    if ties:  # -0.0 + 0.0 is 0.0: one tie with 0.0, as the order has it
        tie = f"PARTITION BY {_cols(src.keys)}, {quote(SCORE) + ' + 0.0' if src.order == 'score' else quote(RANK)}"
        sums = ", ".join(f"{_window_sum(compile_expr(t.arg), tie, src)} AS {quote(c)}" for c, t in ties.items())
        body = f"SELECT *, {sums} FROM ({body}) AS {quote('__rp_ranked')}"
    return body


def qrels_cte(src: Source) -> str:
    assert src.qrels is not None
    judged = compile_expr(d.GRADE >= 0)
    query, item, relevance = src.judged or (src.query, src.item, src.relevance)
    grade = f"CAST({quote(relevance)} AS DOUBLE)"
    inner = (
        f"SELECT {quote(query)} AS {quote(Q)}, {quote(item)} AS {quote(ITEM)}, {grade} AS {quote(GRADE)} "
        f"FROM {src.qrels} AS {quote('__rp_qsrc')}"
    )
    return f"SELECT *, {judged} AS {quote(JUDGED)} FROM ({inner}) AS {quote('__rp_q')}"


def universe_sql(src: Source, missing: str) -> str:
    """The (group, query) pairs to evaluate with each ranking's length, as in ``validate.universe``."""
    keys, by = src.keys, src.keys[:-1]
    stats = f"SELECT {_cols(keys)}, COUNT(*) AS {quote(N_RET)} FROM {quote(RUN)} GROUP BY {_cols(keys)}"
    if src.judged_only:  # a ranking of unjudged rows alone has length 0: still a ranking of the run
        rows = f"SELECT {_cols(keys)}, 1 AS n FROM {quote(RUN)} UNION ALL SELECT {_cols(keys)}, 0 AS n FROM {quote(SHOWN)}"
        stats = f"SELECT {_cols(keys)}, SUM(n) AS {quote(N_RET)} FROM ({rows}) AS s GROUP BY {_cols(keys)}"
    if src.qrels is None:
        return stats
    judged = f"SELECT DISTINCT {quote(Q)} FROM {quote(QRELS)}"
    present = f"SELECT s.* FROM ({stats}) AS s WHERE s.{quote(Q)} IN ({judged})"
    if missing == "skip":
        return present
    shown = SHOWN if src.judged_only else RUN
    groups = f"(SELECT DISTINCT {_cols(by)} FROM {quote(shown)}) AS g CROSS JOIN " if by else ""
    expected = f"SELECT {_cols(by, 'g') + ', ' if by else ''}j.{quote(Q)} FROM {groups}({judged}) AS j"
    return (
        f"SELECT {_cols(keys, 'e')}, COALESCE(p.{quote(N_RET)}, 0) AS {quote(N_RET)} "
        f"FROM ({expected}) AS e LEFT JOIN ({present}) AS p ON {_on('e', 'p', keys)}"
    )


def per_query_query(
    plan: Plan, src: Source, universe: str | None, missing: str = "zero", checks: Sequence[str] = (),
    proven: Sequence[str] = (),
) -> Query:
    """The CTEs whose last, ``__rp_per_query``, has the keys and one column per metric.

    ``universe``: a table holding the (group, query, n_ret) rows to evaluate (the DuckDB
    engine registers the one :func:`validate.universe` computed), or None to compute it in SQL.
    ``checks``: validation statistics to count over the contributing rows (DuckDB only),
    added as ``validate.check_column(stat)`` columns.  ``proven``: those of them already
    known to be 0 everywhere (:func:`positions_distinct_sql`), selected as 0.
    """
    keys = src.keys
    q = Query()
    shown = SHOWN if src.judged_only else RUN
    if src.dedupe:
        q.add(RAW, run_cte(src))
        q.add(shown, dedupe_cte(src))
    else:
        q.add(shown, run_cte(src))
    contributes = compile_expr(plan.contributes)
    if src.qrels is not None:
        q.add(QRELS, qrels_cte(src))
        # every judgment aggregate adds 0 for a judgment that does not contribute (plan.Plan)
        q.add(JUDGMENTS, f"SELECT * FROM {quote(QRELS)} WHERE {contributes}")
    if src.judged_only:
        q.add(RUN, judged_run_cte(src))
    q.add(UNIVERSE, universe_sql(src, missing) if universe is None else f"SELECT * FROM {universe}")

    ties = plan.tie_columns()
    ranked = ranked_cte(src, ties)
    tied = "".join(f", r.{quote(c)}" for c in ties)  # carried with the rank (formula.tree.TieSum)
    if not src.run_labels:
        q.add(
            LABELLED,
            f"SELECT {_cols(keys, 'r')}, r.{quote(ITEM)}, r.{quote(RANK)}{tied}, j.{quote(GRADE)}, j.{quote(JUDGED)} "
            f"FROM ({ranked}) AS r JOIN {quote(JUDGMENTS)} AS j "
            f"ON {_on('r', 'j', [Q, ITEM])}",
        )
    else:
        judged = compile_expr(d.GRADE >= 0)
        # the predicate reads the label as stored (not the DOUBLE cast), so that it reaches
        # the Parquet reader as a filter and only contributing rows are decoded
        on_label = d.to_sql(plan.contributes, _raw_label_leaf)
        contributing = (
            f"SELECT {_cols([*keys, ITEM, RANK, GRADE, *ties])}, {judged} AS {quote(JUDGED)} FROM ({ranked}) AS r "
            f"WHERE {on_label}"
        )
        if src.qrels is not None:  # labels="run": the grade of the (contributing) judgment, to check
            contributing = (
                f"SELECT c.*, j.{quote(GRADE)} AS {quote(QGRADE)} FROM ({contributing}) AS c "
                f"LEFT JOIN {quote(JUDGMENTS)} AS j ON {_on('c', 'j', [Q, ITEM])}"
            )
        q.add(LABELLED, contributing)
    # the contributing rows are the run's own judgments (labels, or ideal=run): uncut.  The
    # row aggregates may stop at the deepest cutoff any metric looks at (their formulas hold
    # the cutoffs), unless the same group-by also counts the checks over every contributing
    # row (as the Polars engine)
    if checks:
        q.add(ROWS, f"SELECT * FROM {quote(LABELLED)}")
    else:
        cut = "" if plan.depth is None else f" WHERE {quote(RANK)} <= {int(plan.depth)}"
        q.add(ROWS, f"SELECT {_cols([*keys, RANK, GRADE, JUDGED, *ties])} FROM {quote(LABELLED)}{cut}")

    # per-query judgment aggregates, 0 where a query has none
    joins, fills = [], []
    for source in sorted(plan.sources()):
        aggs = {n: a for n, a in plan.judgment_aggs.items() if a.source == source}
        table, jkeys = (JUDGMENTS, [Q]) if source == "judgments" and src.qrels is not None else (LABELLED, keys)
        # the ideal rank numbers the positively graded judgments only (Plan.ideal_split)
        # (one window per ideal order: the grade, or a gain map's gain, see _dsl.IRank)
        split = [(o, sub) for ideal, part in plan.ideal_split(aggs)
                 for o, sub in (d.ideal_orders(part) if ideal else [(None, part)])]
        for order, part in split:
            if order is not None:
                judg = _ideal_sql(table, order, jkeys)
                picked = f", j.{quote(IRANK)}"
            else:
                judg, picked = f"SELECT * FROM {quote(table)}", ""
            part_keys = jkeys
            if plan.judgments_need_n_ret():
                judg = (
                    f"SELECT {_cols(keys, 'u')}, u.{quote(N_RET)}, j.{quote(GRADE)}, j.{quote(JUDGED)}{picked} "
                    f"FROM ({judg}) AS j JOIN {quote(UNIVERSE)} AS u ON {_on('j', 'u', jkeys)}"
                )
                part_keys = keys
            alias = f"a{len(joins)}"
            by = None if not src.ordered else IRANK if order is not None else ""
            grouped = ", ".join(_aggregate(a, n, by, src.fixed) for n, a in part.items())
            joins.append(
                f"LEFT JOIN (SELECT {_cols(part_keys)}, {grouped} FROM ({judg}) AS j GROUP BY {_cols(part_keys)}) "
                f"AS {alias} ON {_on('u', alias, part_keys)}"
            )
            fills += [f"COALESCE({alias}.{quote(n)}, 0.0) AS {quote(n)}" for n in [*part, *_bounds(part, src.fixed)]]
    q.add(STATS, f"SELECT {', '.join(['u.*', *fills])} FROM {quote(UNIVERSE)} AS u {' '.join(joins)}")

    if plan.global_aggs:
        # ERR's top grade: over the contributing judgments, as the Polars engine
        everything = JUDGMENTS if src.qrels is not None else LABELLED
        q.add(GLOB, f"SELECT {', '.join(_aggregate(a, n, fixed=src.fixed) for n, a in plan.global_aggs.items())} "
                    f"FROM {quote(everything)}")

    # contributing rows with the per-query and global aggregates they read, then running sums
    refs = plan.row_refs
    judgment_refs = [n for n in plan.judgment_aggs if n in refs]
    global_refs = [n for n in plan.global_aggs if n in refs]
    picked = "".join(", s." + quote(n) for n in judgment_refs) + "".join(", g." + quote(n) for n in global_refs)
    rowx = f"SELECT r.*{picked} FROM {quote(ROWS)} AS r"
    if judgment_refs:
        rowx += f" JOIN {quote(STATS)} AS s ON {_on('r', 's', keys)}"
    if global_refs:
        rowx += f" CROSS JOIN {quote(GLOB)} AS g"
    # values read off the ideal ranking at a row's rank (_dsl.IdealCum), joined by rank
    icum_cols, icum_joins = [], []
    for i, icum in enumerate(d.ideal_cums([*plan.row_aggs.values(), *plan.cums.values()]).values()):
        table, jkeys = (JUDGMENTS, [Q]) if src.qrels is not None else (LABELLED, keys)
        join, col = _ideal_cum_sql(q, "r", icum, table, jkeys, f"__rp_icum{i}", src.ordered)
        icum_joins.append(join)
        icum_cols.append(col)
    if icum_cols:
        rowx = rowx.replace(f"SELECT r.*{picked} FROM", f"SELECT r.*{picked}{''.join(icum_cols)} FROM", 1)
        rowx += "".join(icum_joins)
    window = f"PARTITION BY {_cols(keys)} ORDER BY {quote(RANK)} ASC NULLS FIRST ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
    for i, level in enumerate(plan.cum_levels()):  # a running sum may read an earlier one
        cums = "".join(f", SUM({compile_expr(arg)}) OVER ({window}) AS {quote(n)}" for n, arg in level.items())
        rowx = f"SELECT *{cums} FROM ({rowx}) AS x{i or ''}"
    if plan.tie_maxes:  # after the running sums, which they may read (formula.tree.TieMax)
        tie = f"PARTITION BY {_cols(keys)}, {compile_expr(d.TIE)}"
        maxes = "".join(f", MAX({compile_expr(arg)}) OVER ({tie}) AS {quote(n)}" for n, arg in plan.tie_maxes.items())
        rowx = f"SELECT *{maxes} FROM ({rowx}) AS xt"
    q.add(ROWX, rowx if plan.cums or plan.tie_maxes else f"SELECT * FROM ({rowx}) AS x")

    # the repeats of validate.repeat_checks: rows of the whole run at a contributing row's
    # position (or with its item), a semi-join against the contributing rows
    repeats = repeat_checks(src.run_labels, list(checks))
    in_pass = [c for c in checks if c not in repeats]
    repeats = [c for c in repeats if c not in proven]
    # An explicit SEMI JOIN: DuckDB decorrelates a correlated EXISTS into a DISTINCT over every
    # (keys, position) of the run first (10x the cost at 2M rows).  The run is read again
    # rather than shared: a CTE read twice is materialised, every row of the log with its
    # strings (unless it is deduplicated, a window over every row anyway).
    run = ranked if src.dedupe else run_cte(src)
    for c in repeats:
        col = RANK if c == "rank_dup" else ITEM
        shown = f"SELECT {_cols([*keys, col])} FROM {quote(LABELLED)} WHERE {quote(col)} IS NOT NULL"
        q.add(f"__rp_rep_{c}", f"SELECT {_cols(keys, 'r')}, {STATS_SQL[c]} AS {quote(check_column(c))} "
                               f"FROM ({run}) AS r SEMI JOIN ({shown}) AS l ON {_on('r', 'l', [*keys, col])} "
                               f"GROUP BY {_cols(keys, 'r')}")
    row_bounds = _bounds(plan.row_aggs, src.fixed)
    table = f"SELECT s.*{''.join(', COALESCE(ra.' + quote(n) + ', 0.0) AS ' + quote(n) for n in [*plan.row_aggs, *row_bounds])}"
    table += "".join(", COALESCE(ra." + quote(check_column(c)) + ", 0) AS " + quote(check_column(c)) for c in in_pass)
    table += "".join(f", COALESCE(rep{i}.{quote(check_column(c))}, 0) AS {quote(check_column(c))}" for i, c in enumerate(repeats))
    table += "".join(f", 0 AS {quote(check_column(c))}" for c in proven if c in checks)
    table += "".join(", g." + quote(n) for n in [*plan.global_aggs, *_bounds(plan.global_aggs, src.fixed)])
    table += f" FROM {quote(STATS)} AS s"
    if plan.row_aggs or checks:
        grouped = [_aggregate(a, n, RANK if src.ordered else None, src.fixed) for n, a in plan.row_aggs.items()]
        grouped += [f"{STATS_SQL[c]} AS {quote(check_column(c))}" for c in in_pass]
        q.add(ROWAGG, f"SELECT {_cols(keys)}, {', '.join(grouped)} FROM {quote(ROWX)} GROUP BY {_cols(keys)}")
        table += f" LEFT JOIN {quote(ROWAGG)} AS ra ON {_on('s', 'ra', keys)}"
    table += "".join(f" LEFT JOIN {quote('__rp_rep_' + c)} AS rep{i} ON {_on('s', f'rep{i}', keys)}" for i, c in enumerate(repeats))
    if plan.global_aggs:
        table += f" CROSS JOIN {quote(GLOB)} AS g"
    q.add(TABLE, table)

    values = [
        f"CAST({compile_expr(v)} AS DOUBLE) AS {quote(metric_column(i))}" for i, v in enumerate(plan.values.values())
    ]
    values += [quote(check_column(c)) for c in checks]
    if src.fixed:
        bounds = [*(b for part in (plan.judgment_aggs, plan.row_aggs, plan.global_aggs) for b in _bounds(part, True))]
        within = " AND ".join(f"{quote(b)} < {FIXED_BOUND}" for b in bounds) or "TRUE"
        values.append(f"({within}) AS {quote(EXACT)}")
    q.add(PER_QUERY, f"SELECT {_cols(keys)}, {', '.join(values)} FROM {quote(TABLE)}")
    return q


__all__ = [
    "EXACT", "POSITIONS_DISTINCT", "Query", "Source", "compile_expr", "id_literal", "literal", "metric_column", "per_query_query",
    "positions_distinct_sql", "qrels_stats_sql", "quote", "range_sql", "universe_sql",
]
