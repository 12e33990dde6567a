"""Compute functions of the click family (:mod:`rank_polars.measures.clicks`): per ranking,
over the run's click column (``CLICK``, carried beside the labels: one reading per call, the
click metrics never read the labels or the judgments, nor the other metrics the clicks).

One aggregation per ranking gives every requested metric, the ratio CTR's numerator and
denominator, and the counts of bad click values; the checks read those counts, so they cost
no second pass over the log.  In Polars that aggregation is the engine's own checking pass
when the log is ranked by position (:func:`polars_ranking_aggs`): the click metrics then read
the log once in all, as ``rr`` does.  Every engine refuses the same values with the same
message (:func:`message`): a null position, null, negative or non-whole clicks, and for a CTR
a count above 1 on a row.  The SQL engines and ``to_sql`` carry the checks as every measure
family's SQL does (:mod:`.beyond_sql`): a one-row relation that stops the statement with
``error('rank_polars: <message>')``, which the engine turns into the same :class:`DataError`;
``to_sql`` spells the stop as each dialect can (Spark's ``raise_error``, Trino's ``fail``,
elsewhere the message cast to a number: :mod:`rank_polars.engines.dialects`).
"""

from __future__ import annotations

from typing import Sequence

import polars as pl

from rank_polars.engines.base import FamilyFrames, FamilySql, Outputs
from rank_polars.engines.sql_engine import quote, quoted_examples
from rank_polars.errors import DataError, plural
from rank_polars.inputs import CLICK, Columns, Inputs
from rank_polars.measures.base import FamilyMeasure
from rank_polars.plan import RANK

#: (statistic, what the rows are): the checks, in the order they are reported; ``{click}``
#: and ``{position}`` are the user's column names.
PROBLEMS = (
    ("noposition", "a null {position!r} (the rank of a shown row is unknown)"),
    ("noclick", "a null click count (column {click!r})"),
    ("below1", "a {position!r} below 1 (1 = shown first)"),
    ("negative", "a negative click count (column {click!r})"),
    ("fraction", "a click count that is not a whole number (column {click!r})"),
    ("above1", "more clicks than impressions (a count above 1 in column {click!r} on one shown row; a CTR is a "
               "rate of 0/1 clicks: use clicks@k for counts)"),
)

_SHOWN, _X, _Y = "__rp_shown", "__rp_x", "__rp_y"

def message(label: str, columns: Columns, problem: str, rows: int, queries: Sequence[str], n_queries: int) -> str:
    """The error both engines raise for bad click values (the DuckDB statement spells the same)."""
    shown = ", ".join(f"'{q}'" for q in queries)
    more = f" (and {n_queries - len(queries)} more)" if n_queries > len(queries) else ""
    return f"{label}: {plural(rows, 'row')} with {_what(problem, columns)}, e.g. in {columns.query} {shown}{more}"


def _what(problem: str, columns: Columns) -> str:
    return dict(PROBLEMS)[problem].format(click=_click_name_of(columns), position=columns.position)


def _click_name_of(columns: Columns) -> str:
    """The user's click column (evaluate and to_sql set ``columns.click`` for a call with click metrics)."""
    return columns.click if columns.click is not None else "click"


def _checked(outputs: Outputs) -> list[str]:
    ctr = any(spec.NAME == "ctr" for _, spec in outputs)
    return [p for p, _ in PROBLEMS if p != "above1" or ctr]


# -- Polars ---------------------------------------------------------------------------------
def _top_name(k: int | None) -> str:
    return f"__rp_top_{k}"


def _click_name(k: int | None) -> str:
    return f"__rp_click_{k}"


def _per_row(ks: set[int | None]) -> list[pl.Expr]:
    """Each cutoff's "shown at or above k" and "clicks counted at k", once per row for every
    metric that reads them (six metrics at one k repeated them in the aggregation: 1.25x rr)."""
    out = []
    for k in ks:
        top = pl.col(RANK) <= k if k is not None else pl.col(RANK).is_not_null()
        out += [top.alias(_top_name(k)),
                pl.when(top).then(pl.col(CLICK).fill_null(0).cast(pl.Float64)).otherwise(0.0).alias(_click_name(k))]
    return out


def _polars(spec: FamilyMeasure) -> pl.Expr:
    top, click = pl.col(_top_name(spec.k)), pl.col(_click_name(spec.k))
    clicked_rank = pl.when(click > 0).then(pl.col(RANK))
    name = spec.NAME
    if getattr(spec, "is_ratio", False):
        return pl.struct(click.sum().alias(_X), top.sum().cast(pl.Float64).alias(_Y))
    if name == "ctr":  # a ranking without a row in its top k has no CTR: null, not 0 / 0
        return pl.when(top.sum() > 0).then(click.sum() / top.sum().cast(pl.Float64))
    if name == "clicks":
        return click.sum()
    if name == "impressions":
        return top.sum().cast(pl.Float64)
    if name == "abandonment":
        return (click.sum() == 0).cast(pl.Float64)
    first = clicked_rank.min() if name == "click_rr" else clicked_rank.max()
    return (1.0 / first.cast(pl.Float64)).fill_null(0.0)


def _bad(problem: str) -> pl.Expr:
    g = pl.col(CLICK).cast(pl.Float64)
    bad = {"noposition": pl.col(RANK).is_null(), "noclick": pl.col(CLICK).is_null(), "below1": pl.col(RANK) < 1,
           "negative": g < 0, "fraction": ~(g.is_finite() & (g == g.floor())), "above1": g > 1}[problem]
    return bad.fill_null(False).sum().alias(f"__rp_bad_{problem}")


def _raise_bad(per: pl.DataFrame, outputs: Outputs, checks: list[str], q: str, columns: Columns) -> None:
    for problem in checks:
        col = f"__rp_bad_{problem}"
        rows = int(per[col].sum())
        if rows:
            queries = per.filter(pl.col(col) > 0).select(pl.col(q).cast(pl.String)).unique().sort(q)[q]
            label = next(lab for lab, spec in outputs if problem != "above1" or spec.NAME == "ctr")
            raise DataError(message(label, columns, problem, rows, queries.head(5).to_list(), queries.len()))


def _linearised(x: pl.Expr, y: pl.Expr, groups: list[str]) -> pl.Expr:
    """R + (X - R·Y) / mean(Y) per ranking: mean R = ΣX/ΣY, variance the delta method's."""
    def over(e: pl.Expr) -> pl.Expr:
        return e.over(groups) if groups else e
    ratio = over(x.sum()) / over(y.sum())
    # a group without a row in any top k has no CTR: null (left out of the mean), not 0 / 0
    return pl.when(over(y.sum()) > 0).then(ratio + (x - ratio * y) / over(y.mean()))


def polars_ranking_aggs(outputs: Outputs, inputs: Inputs | None = None) -> tuple[list[pl.Expr], list[pl.Expr]]:
    """Per row, each cutoff's columns; per ranking, every requested metric (under
    :func:`_per_ranking_name`) and the counts of bad click values: what the Polars engine's
    checking pass computes with its own counts (:mod:`rank_polars.engines.base`).  They read the
    run's own ``CLICK`` and ``RANK``, whatever the judgments: the pass over the run gives them."""
    return (_per_row({spec.k for _, spec in outputs}),
            [*(_polars(spec).alias(_per_ranking_name(label)) for label, spec in outputs),
             *(_bad(p) for p in _checked(outputs))])


def _per_ranking_name(label: str) -> str:
    return f"__rp_clicks_{label}"


def polars_values(outputs: Outputs, frames: FamilyFrames) -> pl.LazyFrame:
    # one pass over the ranked run for every requested click metric and the checks (or none:
    # the engine's checking pass computed them)
    run, keys, q = frames.run, frames.keys, frames.keys[-1]
    checks = _checked(outputs)
    if frames.per_ranking is not None:
        per = frames.per_ranking.rename({_per_ranking_name(label): label for label, _ in outputs})
    else:
        # the run's own clicks (CLICK), never the labels or the judgments; collected here
        # (streaming, one row per ranking), so that the checks read their counts before any
        # value is returned
        rows, aggs = polars_ranking_aggs(outputs)
        per = run.with_columns(rows).group_by(keys).agg(aggs).collect(engine="streaming")
        per = per.rename({_per_ranking_name(label): label for label, _ in outputs})
    _raise_bad(per, outputs, checks, q, frames.columns)
    ratios = [label for label, spec in outputs if getattr(spec, "is_ratio", False)]
    per = per.drop(f"__rp_bad_{p}" for p in checks)
    if not ratios:
        return per.lazy()
    # the ratio's sums run over every evaluated ranking (the universe): one shown nowhere adds 0 / 0
    others = [label for label, _ in outputs if label not in ratios]
    per = frames.universe.lazy().select(keys).join(per.lazy().with_columns(pl.lit(True).alias(_SHOWN)), on=keys,
                                                   how="left", nulls_equal=True)
    return per.select(
        *keys,
        *(pl.when(pl.col(_SHOWN).is_null()).then(0.0).otherwise(pl.col(label)).alias(label) for label in others),
        *(_linearised(pl.col(label).struct.field(_X).fill_null(0.0), pl.col(label).struct.field(_Y).fill_null(0.0),
                      frames.groups).alias(label) for label in ratios),
    )


# -- SQL ------------------------------------------------------------------------------------
def _sql(spec: FamilyMeasure) -> dict[str, str]:
    rank, count = quote(RANK), quote(CLICK)
    click = f"CAST(COALESCE({count}, 0) AS DOUBLE)"
    top = f"{rank} <= {spec.k}" if spec.k is not None else f"{rank} IS NOT NULL"
    clicked = f"CASE WHEN {top} AND COALESCE({count}, 0) > 0 THEN {rank} END"
    x = f"SUM(CASE WHEN {top} THEN {click} ELSE 0.0 END)"
    # DOUBLE, not the DECIMAL that DuckDB makes of 1.0 (to_sql's per-query columns are read as they come)
    y = f"CAST(SUM(CASE WHEN {top} THEN 1 ELSE 0 END) AS DOUBLE)"
    name = spec.NAME
    if getattr(spec, "is_ratio", False):
        return {_X: x, _Y: y}
    if name == "ctr":
        return {"": f"{x} / NULLIF({y}, 0.0)"}
    if name == "clicks":
        return {"": x}
    if name == "impressions":
        return {"": y}
    if name == "abandonment":
        return {"": f"CAST(CASE WHEN {x} = 0 THEN 1 ELSE 0 END AS DOUBLE)"}
    agg = "MIN" if name == "click_rr" else "MAX"
    return {"": f"COALESCE(1.0 / {agg}({clicked}), 0.0)"}


def _bad_sql(problem: str) -> str:
    g = f"CAST({quote(CLICK)} AS DOUBLE)"
    cond = {"noposition": f"{quote(RANK)} IS NULL", "noclick": f"{quote(CLICK)} IS NULL", "below1": f"{quote(RANK)} < 1",
            "negative": f"{g} < 0", "fraction": f"NOT ({g} - {g} = 0 AND {g} = floor({g}))",  # x - x: NaN when infinite
            "above1": f"{g} > 1"}[problem]
    # a sum of 0/1 rather than COUNT(*) FILTER: sqlglot's Snowflake and BigQuery lose the filter
    return f"SUM(CASE WHEN {cond} THEN 1 ELSE 0 END) AS {quote('__rp_bad_' + problem)}"


def _check_sql(outputs: Outputs, checks: list[str], q: str, columns: Columns) -> str:
    """A one-row relation whose ``__rp_check`` is 0.0, or stops the statement with :func:`message`.

    Each message is one ``printf`` whose first argument is the count, the examples (a scalar
    subquery with list functions) the second: a dialect without ``printf`` or lists keeps the
    text and the count, with ``...`` for the examples (:mod:`rank_polars.engines.dialects`)."""
    per = quote("__rp_click_per")
    counts, cases = [], []
    for i, problem in enumerate(checks):
        col = quote(f"__rp_bad_{problem}")
        counts.append(f"SUM({col}) AS n{i}")
        label = next(lab for lab, spec in outputs if problem != "above1" or spec.NAME == "ctr")
        some = quoted_examples("l")
        # array_length, not len: sqlglot writes len as Spark's LENGTH, which reads strings only
        more = "CASE WHEN array_length(l) > 5 THEN ' (and ' || (array_length(l) - 5) || ' more)' ELSE '' END"
        examples = (f"(SELECT {some} || {more} FROM (SELECT list_sort(list(DISTINCT CAST({q} AS VARCHAR)) "
                    f"FILTER (WHERE {col} > 0)) AS l FROM {per}) AS e)")
        # printf's '%,d' (thousands separators, as errors.plural) is also Spark's (Java's Formatter)
        for when, rows in ((f"n{i} = 1", "row"), (f"n{i} > 1", "rows")):
            said = [part.replace("%", "%%") for part in (label, _what(problem, columns), columns.query)]
            text = f"rank_polars: {said[0]}: %,d {rows} with {said[1]}, e.g. in {said[2]} %s"
            cases.append(f"WHEN {when} THEN error(printf('{text.replace(chr(39), chr(39) * 2)}', n{i}, {examples}))")
    return f"(SELECT CASE {' '.join(cases)} ELSE 0.0 END AS __rp_check FROM (SELECT {', '.join(counts)} FROM {per}) AS n)"


def sql_values(outputs: Outputs, tables: FamilySql) -> str:
    keys = [quote(k) for k in tables.keys]
    q = keys[-1]
    # the ranked run's own clicks (CLICK), whatever the labels and the judgments (as in Polars)
    run = tables.run
    checks = _checked(outputs)
    parts = [(label, part, expr) for label, spec in outputs for part, expr in _sql(spec).items()]
    values = ", ".join(f"{expr} AS {quote(label + part)}" for label, part, expr in parts)
    per = (f"SELECT {', '.join(keys)}, {values}, TRUE AS {quote(_SHOWN)}, {', '.join(_bad_sql(p) for p in checks)} "
           f"FROM {run} AS t GROUP BY {', '.join(keys)}")
    # the check stops the statement with error(), as each dialect spells it
    check = _check_sql(outputs, checks, q, tables.columns)
    ratios = [label for label, spec in outputs if getattr(spec, "is_ratio", False)]
    if not ratios:
        selected = ", ".join(f"p.{quote(label)} + c.__rp_check AS {quote(label)}" for label, _ in outputs)
        return (f"SELECT * FROM (WITH {quote('__rp_click_per')} AS ({per}) SELECT {', '.join('p.' + k for k in keys)}, "
                f"{selected} FROM {quote('__rp_click_per')} AS p CROSS JOIN {check} AS c) AS {quote('__rp_clicks')}")
    # the ratio's sums run over every evaluated ranking (the universe): one shown nowhere adds 0 / 0
    groups = keys[:-1]
    window = f"OVER (PARTITION BY {', '.join('u.' + g for g in groups)})" if groups else "OVER ()"
    on = " AND ".join(f"u.{k} IS NOT DISTINCT FROM p.{k}" for k in keys)
    cols = []
    for label, _ in outputs:
        if label in ratios:
            x, y = (f"COALESCE(p.{quote(label + part)}, 0.0)" for part in (_X, _Y))
            ratio = f"(SUM({x}) {window} / NULLIF(SUM({y}) {window}, 0.0))"
            cols.append(f"{ratio} + ({x} - {ratio} * {y}) / AVG({y}) {window} + c.__rp_check AS {quote(label)}")
        else:
            cols.append(f"CASE WHEN p.{quote(_SHOWN)} IS NULL THEN 0.0 ELSE p.{quote(label)} END "
                        f"+ c.__rp_check AS {quote(label)}")
    # a subquery holding its own WITH: the engine places this statement after its CTEs
    return (f"SELECT * FROM (WITH {quote('__rp_click_per')} AS ({per}) SELECT {', '.join('u.' + k for k in keys)}, "
            f"{', '.join(cols)} FROM {tables.universe} AS u LEFT JOIN {quote('__rp_click_per')} AS p ON {on} "
            f"CROSS JOIN {check} AS c) AS {quote('__rp_clicks')}")
