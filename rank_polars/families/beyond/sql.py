"""The beyond-accuracy measures in SQL (DuckDB dialect), the same formulas as
:mod:`rank_polars.families.beyond.polars`: every value a set-based statement over the ranked
run, the judgments and the spec's tables; similarities of feature vectors and categories as
sums over the list, never over pairs of items; co-occurrence from the pairs of each user's
history items that a list (or a user's shown and history items) asks for.  A shown item
missing from the catalogue or the features stops the statement with DuckDB's ``error()``
carrying the same message as the Polars engine (the engine turns it into a
:class:`rank_polars.errors.DataError`).

In the engines' statements (``FamilySql.ordered``) every sum of fractions is added in the
order the Polars engine adds it (:func:`ordered`: ``SUM(x ORDER BY k)``), or for normalised
vectors' components and cosine weights exactly (:func:`exact_sum`): the same bits every run;
``to_sql`` keeps plain ``SUM``s, which every dialect reads.  A sum of whole numbers in a
DOUBLE (counts, popularities, 0/1 flags: below 2^53) is exact in any order and stays plain.
"""

from __future__ import annotations

from typing import Any, Callable

from rank_polars.formula.tree import sql_log2
from rank_polars.engines.base import FamilySql, Outputs
from rank_polars.engines.sql_engine import quote, quoted_examples, range_sql
from rank_polars.measures.beyond import Beyond
from rank_polars.plan import GRADE, ITEM, N_RET, Q, RANK
from rank_polars.families.beyond.checks import ID_DIGITS, ID_SPACE, MARKER, Features, catalogue, list_cells, shown_cells

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


# -- coverage --------------------------------------------------------------------------------
def catalog_coverage(label: str, spec: Beyond, ctx: Ctx) -> str:
    top = ctx.top(spec)
    value = f"CAST(count(DISTINCT {I}) AS DOUBLE) / (SELECT count(*) FROM {ctx.items(spec)})"
    select = by(ctx, top, value, label, ctx.groups)
    if spec.sources.get("catalog") is not None:
        return checked(select, check_missing(label, top, ctx.items(spec), "catalog", "coverage is a share of the catalogue"),
                       label, ctx.groups)
    return select


def entropy(label: str, spec: Beyond, ctx: Ctx) -> str:
    """As the Polars engine adds it: the items shown c times (m of them) as one term
    m x -p log2 p, the terms in ascending order."""
    g = ", ".join(ctx.groups)
    counts = f"(SELECT {g + ', ' if g else ''}{I}, CAST(count(*) AS DOUBLE) AS c FROM {ctx.top(spec)} GROUP BY ALL)"
    sizes = f"(SELECT {g + ', ' if g else ''}c, CAST(count(*) AS DOUBLE) AS m FROM {counts} GROUP BY ALL)"
    total = f"sum(c * m) OVER ({'PARTITION BY ' + g if g else ''})"  # of counts: exact in any order
    p = f"(SELECT *, c / {total} AS p FROM {sizes})"
    terms = f"(SELECT *, m * -(p * {sql_log2('p')}) AS t FROM {p})"
    return by(ctx, terms, f"0.0 + {ordered(ctx, 't')}", label, ctx.groups)  # 0.0, not -0.0, for one item


def gini(label: str, spec: Beyond, ctx: Ctx, weight: str | None = None) -> str:
    g = ", ".join(ctx.groups)
    top = ctx.top(spec)
    value = "CAST(count(*) AS DOUBLE)" if weight is None else ordered(ctx, weight)
    n = f"(SELECT count(*) FROM {ctx.items(spec)})"
    exposure = f"(SELECT {g + ', ' if g else ''}{I}, {value} AS c FROM {top} GROUP BY ALL)"
    part = f"PARTITION BY {g}" if g else ""
    ranked = (f"(SELECT *, row_number() OVER ({part} ORDER BY c) AS j, count(*) OVER ({part}) AS m, "
              f"{n} AS n FROM {exposure})")
    # both sums in the order of c ascending (RecBole's), as the Polars engine adds them
    value = f"{ordered(ctx, '(2 * (n - m + j) - n - 1) * c', 'j')} / (max(n) * {ordered(ctx, 'c', 'j')})"
    select = by(ctx, ranked, value, label, ctx.groups)
    if catalogue(spec) == "log":  # the log's own items hold every shown one
        return select
    return checked(select, check_missing(label, top, ctx.items(spec), catalogue(spec),
                                        "the Gini index is over the catalogue's items"), label, ctx.groups)


def exposure_gini(label: str, spec: Beyond, ctx: Ctx) -> str:
    return gini(label, spec, ctx, f"pow({spec.params['patience']!r}, CAST({R} AS DOUBLE))")


# -- popularity ------------------------------------------------------------------------------
def popularity(ctx: Ctx, spec: Beyond, users: bool = False) -> str:
    count = f"count(DISTINCT {QQ})" if users else "count(*)"
    return f"(SELECT {I}, CAST({count} AS DOUBLE) AS pop FROM {ctx.history(spec)} GROUP BY {I})"


def short_head(ctx: Ctx, spec: Beyond) -> str:
    """The most popular items (ties by item id) while the rows before them are fewer than head x
    rows (sums of counts: exact in any order)."""
    pop = popularity(ctx, spec)
    before = f"sum(pop) OVER (ORDER BY pop DESC, {I} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) - pop"
    return (f"(SELECT {I} FROM (SELECT {I}, {before} AS before, sum(pop) OVER () AS total FROM {pop}) "
            f"WHERE before < {spec.params['head']!r} * total)")


def with_pop(ctx: Ctx, spec: Beyond, users: bool = False) -> str:
    return (f"(SELECT t.*, p.pop FROM {ctx.top(spec)} AS t LEFT JOIN {popularity(ctx, spec, users)} AS p "
            f"ON t.{I} = p.{I})")


def arp(label: str, spec: Beyond, ctx: Ctx) -> str:
    # popularities are counts: their sum is exact in any order
    return popular(label, spec, ctx, by(ctx, with_pop(ctx, spec), "avg(coalesce(pop, 0.0))", label, ctx.keys), ctx.keys)


def aplt(label: str, spec: Beyond, ctx: Ctx) -> str:
    rows = (f"(SELECT t.*, CASE WHEN h.{I} IS NULL THEN 1.0 ELSE 0.0 END AS tail FROM {ctx.top(spec)} AS t "
            f"LEFT JOIN {short_head(ctx, spec)} AS h ON t.{I} = h.{I})")
    select = by(ctx, rows, "CAST(sum(tail) AS DOUBLE)" if spec.NAME == "aclt" else "avg(tail)", label, ctx.keys)  # 0/1 flags: exact
    return popular(label, spec, ctx, select, ctx.keys)


def flagged(ctx: Ctx, spec: Beyond) -> str:
    """(ITEM, head): the catalogue's items, flagged when in the short head."""
    return (f"(SELECT c.{I}, h.{I} IS NOT NULL AS head FROM {ctx.items(spec)} AS c "
            f"LEFT JOIN {short_head(ctx, spec)} AS h ON c.{I} = h.{I})")


def std_over_mean(label: str, ctx: Ctx, per: str) -> str:
    # the sums are of counts: exact in any order
    a, b_ = "sum(nh) / sum(dh)", "sum(nt) / sum(dt)"
    value = (f"CASE WHEN sum(dh) > 0 AND sum(dt) > 0 AND sum(nh) + sum(nt) > 0 "
             f"THEN abs({a} - {b_}) / ({a} + {b_}) END")
    return by(ctx, per, value, label, ctx.groups)


def _groups_checked(label: str, spec: Beyond, ctx: Ctx, select: str) -> str:
    check = check_missing(label, ctx.top(spec), ctx.items(spec), catalogue(spec),
                          "its popularity group (head or tail of the catalogue) is unknown")
    return popular(label, spec, ctx, checked(select, check, label, ctx.groups), ctx.groups)


def pop_rsp(label: str, spec: Beyond, ctx: Ctx) -> str:
    f = flagged(ctx, spec)
    sizes = f"(SELECT sum(CASE WHEN head THEN 1 ELSE 0 END) AS n_head, sum(CASE WHEN NOT head THEN 1 ELSE 0 END) AS n_tail FROM {f})"
    seen = (f"(SELECT h.{QQ}, sum(CASE WHEN f.head THEN 1 ELSE 0 END) AS sh, sum(CASE WHEN NOT f.head THEN 1 ELSE 0 END) AS st "
            f"FROM (SELECT DISTINCT * FROM {ctx.history(spec)}) AS h JOIN {f} AS f ON h.{I} = f.{I} GROUP BY h.{QQ})")
    shown = (f"(SELECT {ctx.cols('t')}, CAST(sum(CASE WHEN f.head THEN 1 ELSE 0 END) AS DOUBLE) AS nh, "
             f"CAST(sum(CASE WHEN NOT f.head THEN 1 ELSE 0 END) AS DOUBLE) AS nt "
             f"FROM (SELECT DISTINCT {', '.join(ctx.keys)}, {I} FROM {ctx.top(spec)}) AS t JOIN {f} AS f ON t.{I} = f.{I} "
             f"GROUP BY {ctx.cols('t')})")
    per = (f"(SELECT s.*, CAST(z.n_head - coalesce(p.sh, 0) AS DOUBLE) AS dh, CAST(z.n_tail - coalesce(p.st, 0) AS DOUBLE) AS dt "
           f"FROM {shown} AS s CROSS JOIN {sizes} AS z LEFT JOIN {seen} AS p ON s.{QQ} = p.{QQ})")
    return _groups_checked(label, spec, ctx, std_over_mean(label, ctx, per))


def pop_reo(label: str, spec: Beyond, ctx: Ctx) -> str:
    f = flagged(ctx, spec)
    rel = ctx.relevant()
    shown = f"(SELECT DISTINCT {', '.join(ctx.keys)}, {I} FROM {ctx.top(spec)})"
    past = f"(SELECT DISTINCT * FROM {ctx.history(spec)})"
    rows = (f"(SELECT {ctx.cols('r')}, f.head, s.{I} IS NOT NULL AS shown, p.{I} IS NOT NULL AS past "
            f"FROM {rel} AS r JOIN {f} AS f ON r.{I} = f.{I} "
            f"LEFT JOIN {past} AS p ON r.{QQ} = p.{QQ} AND r.{I} = p.{I} "
            f"LEFT JOIN {shown} AS s ON {ctx.on('r', 's')} AND r.{I} = s.{I})")
    count = "CAST(sum(CASE WHEN {} THEN 1 ELSE 0 END) AS DOUBLE)"
    per = (f"(SELECT {', '.join(ctx.keys)}, {count.format('head AND shown')} AS nh, "
           f"{count.format('NOT head AND shown')} AS nt, {count.format('head AND NOT past')} AS dh, "
           f"{count.format('NOT head AND NOT past')} AS dt FROM {rows} GROUP BY {', '.join(ctx.keys)})")
    return _groups_checked(label, spec, ctx, std_over_mean(label, ctx, per))


# -- novelty ---------------------------------------------------------------------------------
def novelty(label: str, spec: Beyond, ctx: Ctx) -> str:
    """As the Polars engine adds it: the shown rows of the items of one popularity (k of them)
    as one term k x novelty, the terms in ascending order (the counts' sum is exact)."""
    rows = f"(SELECT count(*) FROM {ctx.history(spec)})"
    g = ", ".join(f"s.{c}" for c in ctx.groups)
    counts = f"(SELECT {', '.join(ctx.groups) + ', ' if g else ''}{I}, count(*) AS c FROM {ctx.top(spec)} GROUP BY ALL)"
    by_pop = (f"(SELECT {g + ', ' if g else ''}p.pop, CAST(sum(s.c) AS DOUBLE) AS k FROM {counts} AS s "
              f"LEFT JOIN {popularity(ctx, spec)} AS p ON s.{I} = p.{I} GROUP BY ALL)")
    # the terms as a column first: Spark's ordered sum (a fold) cannot hold a subquery
    terms = f"(SELECT *, k * coalesce(-{sql_log2(f'pop / {rows}')}, 0.0) AS t FROM {by_pop})"
    select = popular(label, spec, ctx, by(ctx, terms, f"{ordered(ctx, 't')} / sum(k)", label, ctx.groups), ctx.groups)
    if spec.params["unseen"] == "error":
        check = check_missing(label, ctx.top(spec), ctx.history(spec), "history",
                              "its novelty -log2(0) is infinite; pass unseen='zero' to count it as 0 (recommenders)")
        return checked(select, check, label, ctx.groups)
    return select


def expected(label: str, spec: Beyond, ctx: Ctx, gain: str, users: bool = False) -> str:
    disc = f"(1.0 / {sql_log2(f'CAST({R} AS DOUBLE) + 1.0')})"
    # the terms as columns first: Spark's ordered sum (a fold) cannot hold the gain's subqueries
    rows = f"(SELECT *, __rp_rel * {disc} * ({gain}) AS __rp_t, {disc} AS __rp_d FROM {ctx.labelled(with_pop(ctx, spec, users))})"
    value = f"{ordered(ctx, '__rp_t', R)} / {ordered(ctx, '__rp_d', R)}"  # in rank order
    has = f"(SELECT DISTINCT {', '.join(ctx.keys)} FROM {ctx.relevant()})"
    per = popular(label, spec, ctx, by(ctx, rows, value, label, ctx.keys), ctx.keys)
    return (f"SELECT {ctx.cols('v')}, CASE WHEN h.{ctx.keys[-1]} IS NOT NULL THEN v.{quote(label)} END AS {quote(label)} "
            f"FROM ({per}) AS v LEFT JOIN {has} AS h ON {ctx.on('v', 'h')}")


def epc(label: str, spec: Beyond, ctx: Ctx) -> str:
    users = f"(SELECT CAST(count(DISTINCT {QQ}) AS DOUBLE) FROM {ctx.history(spec)})"
    return expected(label, spec, ctx, f"1.0 - coalesce(pop, 0.0) / {users}", users=True)  # both distinct (Elliot)


def efd(label: str, spec: Beyond, ctx: Ctx) -> str:
    rows = f"(SELECT CAST(count(*) AS DOUBLE) FROM {ctx.history(spec)})"
    least = f"(SELECT min(pop) FROM {popularity(ctx, spec)})"
    # an item absent from the history: the history's largest novelty (Elliot's _max_nov)
    return expected(label, spec, ctx, f"-{sql_log2(f'coalesce(pop, {least}) / {rows}')}")


# -- similarity ------------------------------------------------------------------------------
class Vectors:
    """An item's features: ``dense`` (ITEM, f0.., diag) relation with ``cols`` (normalised
    vectors), or ``sparse`` (ITEM, dim, w) and ``diag`` (categories).  Co-occurrence takes the
    history's pair counts instead (:func:`_history_pairs`)."""

    def __init__(self, label: str, spec: Beyond, ctx: Ctx) -> None:
        self.dense = self.sparse = self.diag = ""
        self.cols: list[str] = []
        info: Features = ctx.checked[label]["features"]
        src = ctx.t.source(spec, "features")
        self.table = src
        col = quote(info.column)
        if info.kind == "vector":
            vec = f"CAST({col} AS DOUBLE[])"
            norm = f"sqrt(list_sum(list_transform({vec}, lambda x: x * x)))"
            self.cols = [f"__rp_f{j}" for j in range(info.dim)]
            inner = f"(SELECT {I}, {vec} AS v, {norm} AS n FROM {src})"
            fs = ", ".join(f"v[{j + 1}] / n AS {c}" for j, c in enumerate(self.cols))
            diag = " + ".join(f"(v[{j + 1}] / n) * (v[{j + 1}] / n)" for j in range(info.dim))
            self.dense = f"(SELECT {I}, {fs}, {diag} AS diag FROM {inner})"
        else:
            cat = f"unnest(CAST({col} AS VARCHAR[]))" if info.listed else f"CAST({col} AS VARCHAR)"
            cats = f"(SELECT DISTINCT * FROM (SELECT {I}, {cat} AS dim FROM {src}) WHERE dim IS NOT NULL)"
            self.sparse = f"(SELECT {I}, dim, 1.0 / sqrt(count(*) OVER (PARTITION BY {I})) AS w FROM {cats})"
            self.diag = f"(SELECT {I}, {exact_sum(ctx, 'w * w')} AS diag FROM {self.sparse} GROUP BY {I})"


def exact_sum(ctx: Ctx, value: str) -> str:
    """``sum(value)`` of values below 100 in magnitude (normalised vectors' components, their
    squares, an item's sum of squares), in the engines' statements exact whatever the order:
    as DECIMAL(18, 16) (each term rounded to 1e-16, a few ulps), whose sums are exact (in a
    128-bit integer, in every dialect), then DOUBLE.  Ordered ``SUM``s over the 64 dimensions of
    feature vectors cost 20x as much (``ils@10`` on 20M shown rows in DuckDB: 4.5 -> 88 s), and
    each list's vectors as one ordered list, folded, ran out of memory under DuckDB's default
    limit; over co-occurrence weights, 3x as much."""
    return f"CAST(sum(CAST({value} AS DECIMAL(18, 16))) AS DOUBLE)" if ctx.t.ordered else f"sum({value})"


def vectors(label: str, spec: Beyond, ctx: Ctx, shown: str) -> tuple[Vectors, str | None]:
    v = Vectors(label, spec, ctx)
    if not ctx.first:
        return v, None
    return v, check_missing(label, shown, v.table, "features",
                            "its similarity is unknown (never taken as 0); give every shown item a vector or a category")


#: a pair of item codes (x < y) as one key: one equality can only be tested once both sides of
#: the history's self-join are there (with two, x = a and y = b, DuckDB joined the pairs asked
#: for to one side first: 74M rows at 20k lists where the self-join on the user gives 1.6M)
PAIR_SCALE = 1 << 31  # item codes below 2^31: a key below 2^62
PAIR_KEY = f"least({{a}}, {{b}}) * {PAIR_SCALE} + greatest({{a}}, {{b}})"


def _history_pairs(ctx: Ctx, spec: Beyond, between: dict[str, str], codes: str, keys: str) -> dict[str, str]:
    """The CTEs of the history's pair counts: ``__rp_cells`` (u, i, c: a user's rows of an
    item), ``__rp_items`` (i, p: popularity, o: sum of c^2, code: in the ids' order), the
    caller's ``between`` (which read them), and ``__rp_counts`` (k: :data:`PAIR_KEY`, n = sum_u
    c_xu c_yu): the pairs of each user's history items among ``codes`` (a SELECT of item codes),
    kept where ``keys`` (a SELECT of pair keys) asks for them.  The counts are integers: exact
    in any order.  Each is read more than once, so a WITH of their own computes each once (as
    nested subqueries, DuckDB grouped the history's cells ten times over in one statement)."""
    kept = ("SELECT c.u, t.code, c.c FROM __rp_cells AS c JOIN __rp_items AS t ON c.i = t.i "
            f"WHERE t.code IN ({codes})")
    return {
        "__rp_cells": f"SELECT {QQ} AS u, {I} AS i, CAST(count(*) AS DOUBLE) AS c FROM {ctx.history(spec)} GROUP BY {QQ}, {I}",
        "__rp_items": ("SELECT i, sum(c) AS p, sum(c * c) AS o, row_number() OVER (ORDER BY i) AS code "
                       "FROM __rp_cells GROUP BY i"),
        **between,
        "__rp_kept": kept,
        # (a.code < b.code: the key without least / greatest)
        "__rp_counts": (f"SELECT a.code * {PAIR_SCALE} + b.code AS k, sum(a.c * b.c) AS n FROM __rp_kept AS a "
                        "JOIN __rp_kept AS b ON a.u = b.u AND a.code < b.code "
                        f"WHERE a.code * {PAIR_SCALE} + b.code IN ({keys}) GROUP BY 1"),
    }


def _with(ctes: dict[str, str], select: str) -> str:
    """``(WITH ctes select)``: a subquery with a WITH of its own."""
    return f"(WITH {', '.join(f'{name} AS ({body})' for name, body in ctes.items())} {select})"


def ils_cooccurrence(spec: Beyond, ctx: Ctx) -> str:
    """``(keys, n, diag, ss)`` of :func:`ils` by co-occurrence as recommenders computes it: each
    list's pairs of items, the count of each pair in the users' histories (the history's rows of
    shown items joined to themselves on the user, kept where a list holds the pair:
    :func:`_history_pairs`) over sqrt(pop_i) sqrt(pop_j), summed per list (exactly:
    :func:`exact_sum`) and doubled (``ss - diag`` is the sum over ordered pairs; ``diag`` 0).  The
    cost grows with each user's shown history items squared and the lists' pairs; a join of each
    list's items to their history rows grows as lists x users (DuckDB ran out of its 1.5 GiB
    after 76 s on 200k lists of 10 over a 5M-row history; the Polars engine's
    :func:`~rank_polars.families.beyond.polars.cooccurrence_pairs`).  A shown item absent from the
    history counts in n and pairs with nothing."""
    top = ctx.top(spec)
    lists = {
        "__rp_top": f"SELECT {ctx.cols('t')}, t.{I}, x.code, x.p FROM {top} AS t LEFT JOIN __rp_items AS x ON x.i = t.{I}",
        "__rp_pairs": (f"SELECT {ctx.cols('a')}, {PAIR_KEY.format(a='a.code', b='b.code')} AS k, a.p AS px, b.p AS py "
                       f"FROM __rp_top AS a JOIN __rp_top AS b ON {ctx.on('a', 'b')} AND a.{I} < b.{I} "
                       f"WHERE a.code IS NOT NULL AND b.code IS NOT NULL"),
    }
    ctes = _history_pairs(ctx, spec, lists, "SELECT code FROM __rp_top WHERE code IS NOT NULL", "SELECT k FROM __rp_pairs")
    sums = (f"SELECT {ctx.cols('l')}, {exact_sum(ctx, 'coalesce(k.n, 0.0) / (sqrt(l.px) * sqrt(l.py))')} AS s "
            f"FROM __rp_pairs AS l LEFT JOIN __rp_counts AS k ON k.k = l.k GROUP BY {ctx.cols('l')}")
    base = f"SELECT {ctx.cols('t')}, CAST(count(*) AS DOUBLE) AS n FROM __rp_top AS t GROUP BY {ctx.cols('t')}"
    return _with(ctes, f"SELECT {ctx.cols('b')}, b.n, 0.0 AS diag, 2.0 * coalesce(q.s, 0.0) AS ss FROM ({base}) AS b "
                       f"LEFT JOIN ({sums}) AS q ON {ctx.on('b', 'q')}")


def _vector_sums(ctx: Ctx, top: str, v: Vectors) -> str:
    """``(keys, n, diag, ss)`` of :func:`ils` over item vectors: a list's vectors (or weights per
    dimension) summed exactly, its squared sums over the dimensions in ascending order, its items'
    squared norms in rank order."""
    keys = ", ".join(ctx.keys)
    if v.dense:
        sums = ", ".join(f"{exact_sum(ctx, f'f.{c}')} AS {c}" for c in ["diag", *v.cols])
        agg = (f"(SELECT {ctx.cols('t')}, CAST(count(*) AS DOUBLE) AS n, {sums} "
               f"FROM {top} AS t JOIN {v.dense} AS f ON t.{I} = f.{I} GROUP BY {ctx.cols('t')})")
        ss = " + ".join(f"{c} * {c}" for c in v.cols)
        return f"(SELECT {keys}, n, diag, {ss} AS ss FROM {agg})"
    s = (f"(SELECT {ctx.cols('t')}, {exact_sum(ctx, 'w.w')} AS s FROM {top} AS t JOIN {v.sparse} AS w "
         f"ON t.{I} = w.{I} GROUP BY {ctx.cols('t')}, w.dim)")
    ss = f"(SELECT {keys}, {ordered(ctx, 's * s')} AS ss FROM {s} GROUP BY {keys})"
    base = (f"(SELECT {ctx.cols('t')}, CAST(count(*) AS DOUBLE) AS n, {ordered(ctx, 'coalesce(d.diag, 0.0)', f't.{R}')} AS diag "
            f"FROM {top} AS t LEFT JOIN {v.diag} AS d ON t.{I} = d.{I} GROUP BY {ctx.cols('t')})")
    return f"(SELECT {ctx.cols('b')}, b.n, b.diag, coalesce(q.ss, 0.0) AS ss FROM {base} AS b LEFT JOIN {ss} AS q ON {ctx.on('b', 'q')})"


def ils(label: str, spec: Beyond, ctx: Ctx) -> str:
    top = ctx.top(spec)
    keys = ", ".join(ctx.keys)
    check = None
    # (n, diag, ss) per list: ILS = the sum over its ordered pairs, ss - diag, over n(n - 1)
    if spec.params["sim"] == "cooccurrence":
        per = ils_cooccurrence(spec, ctx)
    else:
        v, check = vectors(label, spec, ctx, ctx.top(spec, whole=True))
        per = _vector_sums(ctx, top, v)
    value = "CASE WHEN n >= 2 THEN (ss - diag) / (n * (n - 1)) END"
    if spec.NAME == "diversity":
        value = f"1.0 - {value}"
    select = f"SELECT {keys}, {value} AS {quote(label)} FROM {per}"
    if spec.params["sim"] == "cooccurrence":
        select = popular(label, spec, ctx, select, ctx.keys)
    return checked(select, check, label, ctx.keys) if check else select


def cooccurrence_dots(ctx: Ctx, spec: Beyond, top: str, history: str) -> str:
    """``(Q, ITEM, dot)``: each shown item's co-occurrence cosine with its user's ``history``
    rows, summed exactly: ``N_ih / (sqrt(pop_i) sqrt(pop_h))``, the pair counts ``N_ih = sum_q
    c_iq c_hq`` over the whole history's users (an item with itself: ``sum_q c_iq^2``), made as
    :func:`ils_cooccurrence` makes them: the pairs of each user's history items, kept where a
    shown item and a history item of one user form the pair (the Polars engine's
    ``beyond_polars.cooccurrence_dots``).  The cost is each user's shown items times history
    rows, and the history's pairs; a user's profile over the history's users (each shown item
    joined to its history rows) grew as lists x users: 24 s and 2 GiB at 20k lists of 10 over
    a 0.5M-row history, out of memory at 200k.  Per range of users: :data:`DOTS_ROWS`."""
    # a shown item absent from the history has no similarity to anything (its dot: 0)
    rows = (f"SELECT s.{QQ} AS q, s.{I} AS i, x.code AS cx, y.code AS cy, x.o, x.p AS px, y.p AS py "
            f"FROM (SELECT DISTINCT {QQ}, {I} FROM {top} AS t) AS s JOIN {history} AS h ON s.{QQ} = h.{QQ} "
            f"JOIN __rp_items AS x ON x.i = s.{I} JOIN __rp_items AS y ON y.i = h.{I}")
    ctes = _history_pairs(ctx, spec, {"__rp_rows": rows}, "SELECT cx FROM __rp_rows UNION SELECT cy FROM __rp_rows",
                          f"SELECT {PAIR_KEY.format(a='cx', b='cy')} FROM __rp_rows WHERE cx <> cy")
    sim = "CASE WHEN r.cx = r.cy THEN r.o ELSE coalesce(k.n, 0.0) END / (sqrt(r.px) * sqrt(r.py))"
    return _with(ctes, f"SELECT r.q AS {QQ}, r.i AS {I}, {exact_sum(ctx, sim)} AS dot FROM __rp_rows AS r "
                       f"LEFT JOIN __rp_counts AS k ON k.k = {PAIR_KEY.format(a='r.cx', b='r.cy')} GROUP BY r.q, r.i")


def _feature_rows(label: str, spec: Beyond, ctx: Ctx, top: str, history: str, every: str) -> tuple[str, list[str | None]]:
    """``top`` with each shown item's ``dot`` product with its user's profile over features (the
    ``history``'s vectors or category weights summed exactly; the dot's terms in ascending
    order), and the checks of the shown and (vectors) the ``every`` history items."""
    v, check = vectors(label, spec, ctx, ctx.top(spec, whole=True))
    if v.dense:
        sums = ", ".join(f"{exact_sum(ctx, f'f.{c}')} AS {c}" for c in v.cols)
        profile = f"(SELECT h.{QQ}, {sums} FROM {history} AS h JOIN {v.dense} AS f ON h.{I} = f.{I} GROUP BY h.{QQ})"
        dot = " + ".join(f"f.{c} * coalesce(p.{c}, 0.0)" for c in v.cols)
        rows = (f"(SELECT t.*, {dot} AS dot FROM {top} AS t JOIN {v.dense} AS f ON t.{I} = f.{I} "
                f"LEFT JOIN {profile} AS p ON t.{QQ} = p.{QQ})")
        hist_check = None if not ctx.first else check_missing(
            label, every, v.table, "features", "a history item's similarity is unknown (never taken as 0)")
        return rows, [check, hist_check]
    profile = (f"(SELECT h.{QQ}, w.dim, {exact_sum(ctx, 'w.w')} AS p FROM {history} AS h JOIN {v.sparse} AS w "
               f"ON h.{I} = w.{I} GROUP BY h.{QQ}, w.dim)")
    dots = (f"(SELECT {ctx.cols('t')}, t.{I}, {ordered(ctx, 'w.w * p.p')} AS dot FROM {top} AS t JOIN {v.sparse} AS w ON t.{I} = w.{I} "
            f"JOIN {profile} AS p ON t.{QQ} = p.{QQ} AND w.dim = p.dim GROUP BY {ctx.cols('t')}, t.{I})")
    return f"(SELECT t.*, d.dot FROM {top} AS t LEFT JOIN {dots} AS d ON {ctx.on('t', 'd')} AND t.{I} = d.{I})", [check]


def serendipity(label: str, spec: Beyond, ctx: Ctx) -> str:
    top = ctx.labelled(ctx.top(spec))
    # the history of the users of the evaluated lists with rows (the universe's N_RET, as the
    # Polars engine's): the run itself read here made DuckDB hold all its rows (a CTE read 5
    # times; out of memory at 20M rows)
    users = f"SELECT {QQ} FROM {ctx.t.universe} WHERE {quote(N_RET)} > 0"
    every = f"(SELECT * FROM {ctx.history(spec)} WHERE {QQ} IN ({users}))"
    history = f"(SELECT * FROM {ctx.history(spec)} WHERE {QQ} IN ({users}){ctx.within(QQ)})"
    keys = ", ".join(ctx.keys)
    past = f"(SELECT {QQ}, CAST(count(*) AS DOUBLE) AS nh FROM {history} GROUP BY {QQ})"
    checks: list[str | None] = []
    if spec.params["sim"] == "cooccurrence":
        dots = cooccurrence_dots(ctx, spec, top, history)
        rows = f"(SELECT t.*, d.dot FROM {top} AS t LEFT JOIN {dots} AS d ON t.{QQ} = d.{QQ} AND t.{I} = d.{I})"
    else:
        rows, checks = _feature_rows(label, spec, ctx, top, history, every)
    rows = f"(SELECT r.*, h.nh FROM {rows} AS r LEFT JOIN {past} AS h ON r.{QQ} = h.{QQ})"
    # a list's mean: its rows in rank order
    mean = f"{ordered(ctx, '(1.0 - coalesce(dot, 0.0) / nh) * __rp_rel', R)} / count(*)"
    value = f"CASE WHEN bool_and(nh IS NOT NULL) THEN {mean} END"
    select = f"SELECT {keys}, {value} AS {quote(label)} FROM {rows} GROUP BY {keys}"
    for c in checks:
        if c:
            select = checked(select, c, label, ctx.keys)
    return popular(label, spec, ctx, select, ctx.keys) if spec.params["sim"] == "cooccurrence" else select


MEASURES: dict[str, Callable[[str, Beyond, Ctx], str]] = {
    "catalog_coverage": catalog_coverage, "entropy": entropy, "gini": gini, "exposure_gini": exposure_gini,
    "arp": arp, "aplt": aplt, "aclt": aplt, "pop_reo": pop_reo, "pop_rsp": pop_rsp, "novelty": novelty,
    "epc": epc, "efd": efd, "ils": ils, "diversity": ils, "serendipity": serendipity,
}


#: The shown rows' vector components (top-k rows x dimensions) one statement of per-list
#: measures holds when one of them is serendipity over feature vectors: past it (in an engine's
#: session) the statement runs once per range of query ids (:func:`ranges`; as the diversity
#: family's ``SQL_RANGE_ROWS``), each reading the shown rows and the history of its users alone.
#: What one statement holds grows with its users' profiles (d exact sums each) and its shown
#: rows' d components, whichever side of their join DuckDB builds on.  2^26 is ~1M rows of 64
#: dimensions; on the 20M-row benchmark (2M shown rows, 64-d), whole process: 2 statements
#: 9.4 s, 1.05 GiB of RSS; 4: 11.0 s, 1.0 GiB; one: 13.1 s, 1.8 GiB (DuckDB spilling).
SERENDIPITY_CELLS = 1 << 26


#: The pairs of shown items one statement holds when it computes co-occurrence ILS
#: (:func:`ils_cooccurrence`): past it the statement runs once per range of query ids, each
#: with the pairs of its lists alone (the history's pairs are made again in each: they are kept
#: only where a list of the range holds them).  On 200k lists of 10 (9M pairs, a 5M-row
#: history), whole process: 2^21, 5 statements, 8.4 s and 1.33 GiB of RSS; 2^22: 6.4 s, 1.41
#: GiB; 2^23 (2 statements): 6.0 s, 1.46 GiB; one statement: 5.4 s, 2.05 GiB.
COOCCURRENCE_PAIRS = 1 << 23


#: The (shown item, history row) pairs of one user one statement holds when it computes
#: serendipity by co-occurrence (:func:`cooccurrence_dots`; as the Polars engine's
#: ``beyond_polars.DOTS_CHUNK``): past it the statement runs once per range of query ids, each
#: making the history's pairs again (kept only where its users need them).  200k lists of 10
#: over a 5M-row history (50M pairs): 12 statements of 2^22, 32.6 s, 1.9 GiB of process RSS;
#: statements of 2^23 ran out of DuckDB's default 1.5 GiB.
DOTS_ROWS = 1 << 22


def _dots_rows(universe: Any, tables: FamilySql, checked_specs: dict[str, dict[str, Any]],
               specs: list[Beyond], k: int | None) -> Any:
    """``Q, HELD``: per query, its lists' shown rows (to rank ``k``) times its user's history
    rows, the pairs :func:`cooccurrence_dots` holds for it (the histories of ``specs``, summed)."""
    import polars as pl

    ctx = Ctx(tables, checked_specs)
    per_user = [tables.query(f"SELECT {QQ}, count(*) AS __rp_h FROM {ctx.history(spec)} GROUP BY {QQ}") for spec in specs]
    counts = (pl.concat(per_user).group_by(Q).agg(pl.col("__rp_h").sum())
              .with_columns(pl.col(Q).cast(universe.schema[Q])))
    with_h = universe.join(counts, on=Q, how="left").with_columns(pl.col("__rp_h").fill_null(0))
    return list_cells(with_h, k, lambda shown: shown * pl.col("__rp_h"))


def ranges(outputs: Outputs, tables: FamilySql, checked_specs: dict[str, dict[str, Any]]) -> list[tuple[Any, Any]]:
    """The ``(lo, hi)`` bounds of ranges of query ids holding about :data:`SERENDIPITY_CELLS`
    shown components each (``polars_engine.query_bounds`` over ``tables.universe_frame``), when
    the per-list ``outputs`` hold serendipity over feature vectors, or about
    :data:`COOCCURRENCE_PAIRS` pairs of shown items with co-occurrence ILS (the finer of the
    two); ``[(None, None)]``: one statement (as ``to_sql``'s, which has no session)."""
    universe = tables.universe_frame
    dense = [(spec.k, info.dim) for label, spec in outputs if spec.NAME == "serendipity"  # type: ignore[attr-defined]
             and (info := checked_specs[label].get("features")) is not None and info.kind == "vector"]
    paired = [spec.k for _, spec in outputs if spec.NAME in ("ils", "diversity")  # type: ignore[attr-defined]
              and spec.params["sim"] == "cooccurrence"]
    dotted = [spec for _, spec in outputs if spec.NAME == "serendipity"  # type: ignore[attr-defined]
              and spec.params["sim"] == "cooccurrence"]
    if tables.query is None or universe is None or not (dense or paired or dotted):
        return [(None, None)]
    from rank_polars.engines.polars_engine import query_bounds

    def deepest(ks: list[int | None]) -> int | None:
        return None if None in ks else max(k for k in ks if k is not None)

    cuts = [[(None, None)]]
    if dense:
        cuts.append(query_bounds(shown_cells(universe, deepest([k for k, _ in dense]), max(d for _, d in dense)),
                                 SERENDIPITY_CELLS))
    if paired:
        pairs = list_cells(universe, deepest(paired), lambda shown: shown * (shown - 1) // 2)
        cuts.append(query_bounds(pairs, COOCCURRENCE_PAIRS))
    if dotted:
        held = _dots_rows(universe, tables, checked_specs, dotted, deepest([spec.k for spec in dotted]))
        cuts.append(query_bounds(held, DOTS_ROWS))
    return max(cuts, key=len)


def values(outputs: Outputs, tables: FamilySql, checked_specs: dict[str, dict[str, Any]]) -> str | list[str]:
    """The statement of ``outputs`` (one family group: per-list or per-group measures), or for
    per-list measures with serendipity over vectors past :data:`SERENDIPITY_CELLS`, one per range
    of query ids (:func:`ranges`), the first with the checks: a list lies in one range, so
    their rows concatenated are the one statement's."""
    catalog = outputs[0][1].AGGREGATE == "catalog"
    bounds = [(None, None)] if catalog else ranges(outputs, tables, checked_specs)
    statements = [statement(outputs, Ctx(tables, checked_specs, b, first=i == 0), catalog) for i, b in enumerate(bounds)]
    return statements[0] if len(statements) == 1 else statements


def statement(outputs: Outputs, ctx: Ctx, catalog: bool) -> str:
    on = ctx.groups if catalog else ctx.keys
    parts = [MEASURES[spec.NAME](label, spec, ctx) for label, spec in outputs]  # type: ignore[arg-type]
    if len(parts) == 1:
        return parts[0]
    union = " UNION ALL BY NAME ".join(f"({p})" for p in parts)
    labels = ", ".join(f"max({quote(label)}) AS {quote(label)}" for label, _ in outputs)
    cols = ", ".join(on)
    return f"SELECT {cols + ', ' if cols else ''}{labels} FROM ({union}) AS parts" + (f" GROUP BY {cols}" if cols else "")


__all__ = ["MEASURES", "values"]
