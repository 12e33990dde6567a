"""The beyond-accuracy measures of the catalogue and of popularity in SQL
(:mod:`rank_polars.families.beyond.sql`), all from counts of the log and of the history:
coverage, entropy, the Gini index and its exposure-weighted form; ARP, APLT / ACLT, PopRSP and
PopREO; novelty, EPC and EFD.
"""

from __future__ import annotations

from rank_polars.formula.tree import sql_log2
from rank_polars.engines.sql_engine import quote
from rank_polars.measures.beyond import Beyond
from rank_polars.families.beyond.checks import catalogue
from rank_polars.families.beyond.sql_context import (I, QQ, R, Ctx, by, check_missing, checked, ordered, popular)


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
