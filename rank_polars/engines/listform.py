"""Compile a metric spec to one Polars expression over a ranked list of grades.

This is the engine of :mod:`rank_polars.exprs` and the ``ranking`` namespace: the expression reduces a column (already in
ranked order, e.g. ``pl.col("relevance").sort_by("position")``) to one value, so it works
in ``select`` over a whole frame and in ``group_by(...).agg(...)`` per group.  The list
carries its own judgments: the ideal ranking is the list sorted by grade, R counts its
relevant grades, null or negative grades are unjudged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from .. import _dsl as d

if TYPE_CHECKING:
    from polars._typing import IntoExpr

    from ..measures.base import Measure


def _to_expr(value: IntoExpr) -> pl.Expr:
    if isinstance(value, pl.Expr):
        return value
    if isinstance(value, str):
        return pl.col(value)
    if isinstance(value, pl.Series):
        return pl.lit(value)
    raise TypeError(f"expected a column name or a Polars expression, got {type(value).__name__}")


def list_expr(measure: Measure, relevance: IntoExpr) -> pl.Expr:
    grades = _to_expr(relevance).cast(pl.Float64)
    ideal = grades.sort(descending=True, nulls_last=True)

    def scope(g: pl.Expr, rank_name: str) -> Any:
        def leaf(n: d.Node) -> pl.Expr:
            if isinstance(n, d.Col):
                if n.name == rank_name:
                    return pl.int_range(1, g.len() + 1, dtype=pl.Int64)
                if n.name == "grade":
                    return g
                if n.name == "judged":
                    return g.is_not_null() & (g >= 0)
                if n.name == "n_ret":
                    return grades.len()
                raise TypeError(f"column {n.name!r} is not available in a ranked list")
            if isinstance(n, d.Cum):
                return d.to_polars(n.arg, leaf).cum_sum()
            if isinstance(n, d.Agg):
                inner = rows if n.level == "rows" else judgments
                agg = d.to_polars(n.arg, inner)
                return agg.sum() if n.kind == "sum" else agg.max().fill_null(0.0)
            raise TypeError(f"cannot compile {n!r}")

        return leaf

    rows = scope(grades, "rank")
    judgments = scope(ideal, "irank")
    return d.to_polars(measure.value(), rows).alias(measure.name)
