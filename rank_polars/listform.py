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

from . import _dsl as d

if TYPE_CHECKING:
    from polars._typing import IntoExpr

    from .measures.base import Measure


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
    n = grades.len()

    def ideal(order: d.Node) -> pl.Expr:
        """The list's own judgments in ideal order: by ``order`` descending (``irank``'s order
        is the grade; gain maps and G order by a mapped gain)."""
        if isinstance(order, d.Col) and order.name == "grade" and not isinstance(order, d.IRank):
            return grades.sort(descending=True, nulls_last=True)
        key = d.to_polars(order, scope(grades, None, {}))
        return grades.sort_by(key, descending=True, nulls_last=True)

    def scope(g: pl.Expr, rank_name: str | None, orders: dict[str, pl.Expr]) -> Any:
        def leaf(node: d.Node) -> pl.Expr:
            if isinstance(node, d.Col) and node.name == "irank":
                # the rank in this scope's ideal order; an IRank naming another order cannot be read here
                if rank_name != "irank" or (isinstance(node, d.IRank) and orders.get("order") != node.order.key()):
                    raise TypeError(f"{node!r} is read outside its judgment scope")
                return pl.int_range(1, n + 1, dtype=pl.Int64)
            if isinstance(node, d.Col):
                if node.name == rank_name:
                    return pl.int_range(1, n + 1, dtype=pl.Int64)
                if node.name == "grade":
                    return g
                if node.name == "judged":
                    return g.is_not_null() & (g >= 0)
                if node.name == "n_ret":
                    return n
                raise TypeError(f"column {node.name!r} is not available in a ranked list")
            if isinstance(node, d.Cum):
                return d.to_polars(node.arg, leaf).cum_sum()
            if isinstance(node, d.Agg):
                inner = leaf if node.level == "rows" else judgments(node.arg)
                agg = d.to_polars(node.arg, inner)
                return agg.sum() if node.kind == "sum" else agg.max().fill_null(0.0)
            if isinstance(node, d.IdealCum):
                # the running sum over the ideal ranking (by node.order), read at position ``at``
                # of this scope: the whole sum past the end, 0 before the start
                order = node.order
                ordered = ideal(order)
                positive = d.to_polars(order, scope(ordered, None, {})) > 0
                values = d.to_polars(node.arg, scope(ordered, "irank", {"order": order.key()}))
                running = pl.when(positive).then(values).otherwise(0.0).fill_null(0.0).cum_sum()
                at = d.to_polars(node.at, leaf).cast(pl.Int64)
                read = running.gather((at.clip(1, n) - 1).cast(pl.UInt32))
                return pl.when(at < 1).then(0.0).otherwise(read)
            raise TypeError(f"cannot compile {node!r}")

        return leaf

    def judgments(arg: d.Node) -> Any:
        # one ideal order per judgment aggregate (a formula reading two orders cannot be a list)
        orders = {n.order.key(): n.order for n in d.walk(arg) if isinstance(n, d.IRank)}
        if d.reads([arg], "irank") and not any(isinstance(x, d.IRank) for x in d.walk(arg)):
            orders.setdefault(d.GRADE.key(), d.GRADE)
        if len(orders) > 1:
            raise TypeError(f"a judgment aggregate reads two ideal orders: {sorted(orders)}")
        order = next(iter(orders.values()), d.GRADE)
        return scope(ideal(order), "irank", {"order": order.key()})

    return d.to_polars(measure.value(), scope(grades, "rank", {})).alias(measure.name)
