"""ILS, diversity and serendipity in SQL (:mod:`rank_polars.families.beyond.sql`): items'
feature vectors and categories as relations (:class:`Vectors`) summed over each list or each
user's profile, exactly (:func:`exact_sum`); co-occurrence from the history's pair counts
(:func:`_history_pairs`) asked for by each list's pairs (:func:`ils_cooccurrence`) or by each
user's shown and history items (:func:`cooccurrence_dots`).
"""

from __future__ import annotations

from rank_polars.engines.sql_engine import quote
from rank_polars.measures.beyond import Beyond
from rank_polars.plan import N_RET
from rank_polars.families.beyond.checks import Features
from rank_polars.families.beyond.sql_context import I, QQ, R, Ctx, check_missing, checked, ordered, popular


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
