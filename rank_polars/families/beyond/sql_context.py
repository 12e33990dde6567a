"""What the beyond-accuracy measures of the SQL engines share
(:mod:`rank_polars.families.beyond.sql`): the quoted column names, one statement's
:class:`Ctx` (its tables, its range of query ids, each measure's top rows, the history, the
catalogue, the labels), ordered sums and the grouping SELECT, and the checks that stop a
statement (shown items missing from a table, history ids written another way) joined to a
measure's SELECT.
"""

from __future__ import annotations

from typing import Any

from rank_polars.engines.base import FamilySql
from rank_polars.engines.sql_engine import quote, quoted_examples, range_sql
from rank_polars.measures.beyond import Beyond
from rank_polars.plan import GRADE, ITEM, Q, RANK
from rank_polars.families.beyond.checks import ID_DIGITS, ID_SPACE, MARKER, catalogue


I, QQ, R, G = quote(ITEM), quote(Q), quote(RANK), quote(GRADE)


class Ctx:
    """One statement's tables and checked specs; ``bounds``: the range of query ids it
    evaluates (:func:`ranges`; None, None: every query), ``first``: whether it carries the
    checks of the shown and history items (over every query: the statements run in turn)."""

    def __init__(self, tables: FamilySql, checked: dict[str, dict[str, Any]],
                 bounds: tuple[Any, Any] = (None, None), first: bool = True) -> None:
        self.t, self.checked = tables, checked
        self.keys = [quote(k) for k in tables.keys]
        self.groups = [quote(k) for k in tables.groups]
        self.bounds, self.first = bounds, first
        self.matched: set[int] = set()  # the history tables whose check one measure already carries

    def within(self, column: str) -> str:
        """`` AND lo <= column < hi`` for this statement's range of query ids (else nothing)."""
        cond = range_sql(*self.bounds, column)
        return f" AND {cond}" if cond else ""

    def cols(self, alias: str, which: list[str] | None = None) -> str:
        return ", ".join(f"{alias}.{k}" for k in (self.keys if which is None else which))

    def on(self, a: str, b: str, which: list[str] | None = None) -> str:
        return " AND ".join(f"{a}.{k} IS NOT DISTINCT FROM {b}.{k}" for k in (self.keys if which is None else which))

    def top(self, spec: Beyond, whole: bool = False) -> str:
        """The evaluated lists' rows at ranks <= k (of this statement's range unless ``whole``)."""
        cut = f" AND r.{R} <= {spec.k}" if spec.k is not None else ""
        cut += "" if whole else self.within(f"r.{QQ}")
        # EXISTS rather than DuckDB's SEMI JOIN: it translates to every dialect of to_sql
        return (f"(SELECT r.* FROM {self.t.run} AS r WHERE EXISTS (SELECT 1 FROM {self.t.universe} AS u "
                f"WHERE {self.on('r', 'u')}){cut})")

    def history(self, spec: Beyond) -> str:
        return f"(SELECT {QQ}, {I} FROM {self.t.source(spec, 'history')})"

    def items(self, spec: Beyond) -> str:
        """The catalogue: ``catalog=``, else the history's distinct items, else the log's."""
        name = catalogue(spec)
        return f"(SELECT DISTINCT {I} FROM {self.t.run if name == 'log' else self.t.source(spec, name)})"

    def labelled(self, top: str) -> str:
        """``__rp_rel``: 1.0 for a relevant row: the judgments' grade when there are judgments
        (with ``labels="run"`` the run's labels agree with them on every relevant row: checked),
        else the run's label."""
        if self.t.qrels is None:
            return f"(SELECT *, CASE WHEN {G} > 0 THEN 1.0 ELSE 0.0 END AS __rp_rel FROM {top})"
        grades = f"(SELECT {QQ}, {I}, max({G}) AS __rp_grade FROM {self.t.qrels} GROUP BY {QQ}, {I})"
        return (f"(SELECT x.*, CASE WHEN coalesce(j.__rp_grade, 0) > 0 THEN 1.0 ELSE 0.0 END AS __rp_rel FROM {top} AS x "
                f"LEFT JOIN {grades} AS j ON x.{QQ} = j.{QQ} AND x.{I} = j.{I})")

    def relevant(self) -> str:
        """(keys, ITEM): each evaluated list's relevant items (its judgments, or its relevant rows)."""
        if self.t.qrels is not None:
            return (f"(SELECT {self.cols('u')}, j.{I} FROM {self.t.universe} AS u JOIN "
                    f"(SELECT DISTINCT {QQ}, {I} FROM {self.t.qrels} WHERE {G} > 0) AS j ON u.{QQ} = j.{QQ})")
        return f"(SELECT DISTINCT {', '.join(self.keys)}, {I} FROM {self.t.run} WHERE {G} > 0)"


def ordered(ctx: Ctx, value: str, order: str | None = None) -> str:
    """``sum(value)`` added in the order of ``order``, or of the values themselves (ascending),
    in the engines' statements; a plain ``sum`` in ``to_sql``'s."""
    return f"sum({value} ORDER BY {order or value})" if ctx.t.ordered else f"sum({value})"


def by(ctx: Ctx, frm: str, value: str, label: str, on: list[str]) -> str:
    cols = ", ".join(on)
    return f"SELECT {cols + ', ' if cols else ''}{value} AS {quote(label)} FROM {frm} AS x" + (f" GROUP BY {cols}" if cols else "")


def check_missing(label: str, shown: str, table: str, what: str, consequence: str) -> str:
    """A one-row relation whose column ``__rp_check`` is 0.0, or stops the statement with the
    message of :func:`rank_polars.families.beyond.polars.missing_message`."""
    absent = f"(SELECT DISTINCT {I} FROM {shown} AS s WHERE {I} NOT IN (SELECT {I} FROM {table} AS t WHERE {I} IS NOT NULL))"
    text = (f"{MARKER}{label}: %d shown items have no row in the {what} table, e.g. %s: {consequence}").replace("'", "''")
    some = quoted_examples(f"list_sort(list(CAST({I} AS VARCHAR)))")
    return (f"(SELECT CASE WHEN count(*) > 0 THEN error(printf('{text}', count(*), {some})) ELSE 0.0 END AS __rp_check "
            f"FROM {absent} AS a)")


def check_matched(label: str, spec: Beyond, ctx: Ctx) -> str:
    """A one-row relation whose ``__rp_check`` is 0.0, or stops the statement when items of the
    log without a row in the history match one of its items once the ids are written alike
    (``ID_SPACE`` / ``ID_DIGITS``), with the message of
    :func:`rank_polars.families.beyond.polars.unmatched_message`."""
    past = f"(SELECT {I} FROM {ctx.history(spec)} AS h WHERE {I} IS NOT NULL)"
    space = " || ".join(f"chr({ord(c)})" for c in ID_SPACE)
    text = f"trim(CAST({I} AS VARCHAR), {space})"
    pattern = ID_DIGITS.replace("'", "''")
    # the digits before the point without their leading zeros (no regexp_extract: PostgreSQL has none)
    digits = f"coalesce(nullif(ltrim(split_part({text}, '.', 1), '0'), ''), '0')"
    canon = f"CASE WHEN regexp_matches({text}, '{pattern}') THEN {digits} ELSE {text} END"
    shown = f"(SELECT DISTINCT {I} FROM {ctx.top(spec, whole=True)} AS t)"  # the items the measure reads
    only_log = (f"(SELECT {I}, {canon} AS c FROM {shown} AS r "
                f"WHERE {I} NOT IN (SELECT {I} FROM {past} AS p))")
    only_past = (f"(SELECT DISTINCT {I}, {canon} AS c FROM {past} AS h "
                 f"WHERE {I} NOT IN (SELECT {I} FROM {shown} AS r))")
    pairs = (f"(SELECT l.{I}, CAST(l.{I} AS VARCHAR) || ' as ' || CAST(p.{I} AS VARCHAR) AS pair "
             f"FROM {only_log} AS l JOIN {only_past} AS p ON l.c = p.c)")
    text_ = (f"{MARKER}{label}: %d items of the log have no row in the history table but match one of its items once "
             "the ids are written alike, e.g. %s: each would count as never seen; write the ids one way (by the id "
             "rule 7 is '7', not '007' or '7.0')").replace("'", "''")
    some = quoted_examples("list_sort(list(pair))")
    return (f"(SELECT CASE WHEN count(*) > 0 THEN error(printf('{text_}', count(DISTINCT {I}), {some})) "
            f"ELSE 0.0 END AS __rp_check FROM {pairs} AS m)")


def popular(label: str, spec: Beyond, ctx: Ctx, select: str, on: list[str]) -> str:
    """``select`` with the check of the history's ids against the log's (:func:`check_matched`):
    in the first statement, on the first measure reading that history (it stops them all)."""
    key = id(spec.sources.get("history"))
    # in an engine's session, integer ids on both sides (the id rule: text on either side reads
    # both as text) cannot be written two ways; to_sql does not know the tables' types
    integers = ctx.t.universe_frame is not None and ctx.t.columns.item not in ctx.t.text_ids
    if not ctx.first or key in ctx.matched or integers:
        return select
    ctx.matched.add(key)
    return checked(select, check_matched(label, spec, ctx), label, on)


def checked(select: str, check: str, label: str, on: list[str]) -> str:
    cols = ", ".join(f"v.{c}" for c in on)
    return (f"SELECT {cols + ', ' if cols else ''}v.{quote(label)} + c.__rp_check AS {quote(label)} "
            f"FROM ({select}) AS v CROSS JOIN {check} AS c")
