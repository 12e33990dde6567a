"""Compile a metric spec to one Polars expression over a ranked list of grades.

This is the engine of :mod:`rank_polars.formula.exprs` and the ``ranking`` namespace: the expression reduces a column (already in
ranked order, e.g. ``pl.col("relevance").sort_by("position")``) to one value, so it works
in ``select`` over a whole frame and in ``group_by(...).agg(...)`` per group.  The list
carries its own judgments: the ideal ranking is the list sorted by grade, R counts its
relevant grades, null or negative grades are unjudged.  A NaN or infinite grade, or a value
that is not a finite number (``2^grade`` overflows from grade 1024 on), is an error naming
the column, as in ``evaluate``: no NaN comes out, and none is read as a grade.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from rank_polars.formula import tree as d

if TYPE_CHECKING:
    from polars._typing import IntoExpr

    from rank_polars.measures.base import Measure


def _to_expr(value: IntoExpr) -> pl.Expr:
    if isinstance(value, pl.Expr):
        return value
    if isinstance(value, str):
        return pl.col(value)
    if isinstance(value, pl.Series):
        return pl.lit(value)
    raise TypeError(f"expected a column name or a Polars expression, got {type(value).__name__}")


def _refused(message: pl.Expr) -> pl.Expr:
    """Null where ``message`` is null, else an error quoting it.

    An expression has no ``raise``; a strict cast of text that is not a number fails with
    the text in its message, in every context a list form runs in (select, group_by, over,
    the streaming engine, ``list.eval``).  The message is built from the data (a count, the
    top grade), so no optimiser can fold it to a constant and fail on good data."""
    return message.cast(pl.Int8, strict=True)


def _checked(value: pl.Expr, grades: pl.Expr, measure: Measure, relevance: pl.Expr) -> pl.Expr:
    """``value``, or an error naming the column where the list's grades or the value are not
    finite numbers (``evaluate`` refuses both: :func:`rank_polars.validate.check_values`).

    Polars reads NaN above every number, so a NaN grade counted as relevant (ap of [1, NaN]
    was 1) and -inf as unjudged: refused, as ``evaluate`` refuses such labels.  Nulls pass
    (an unjudged item)."""
    name = relevance.meta.output_name(raise_if_undetermined=False)
    where = f"{measure.name} over column {name!r}" if name else f"{measure.name} over a list of grades"
    # one struct so that the value is computed once: in group_by and list.eval Polars does
    # not share a subexpression, and the check reading ``value`` again doubled the cost
    fields = pl.struct(value.alias("value"), (~grades.is_finite()).sum().alias("bad"), grades.max().alias("top"))
    value, bad, top = pl.field("value"), pl.field("bad"), pl.field("top")
    message = (
        pl.when(bad > 0)
        .then(pl.concat_str(pl.lit(f"{where}: a grade is NaN or infinite ("), bad.cast(pl.String),
                            pl.lit(" such grade in the list); grades must be finite numbers (a null grade is an unjudged item)")))
        .when(~value.is_finite())
        .then(pl.concat_str(pl.lit(f"{where} is not a finite number: the largest grade is "), top.cast(pl.String),
                            pl.lit(", and 2^grade overflows from grade 1024 on (gain='exp', err); "
                                   "rescale the grades or use a linear gain")))
    )
    # the value itself where the check is null (a failing check raises): Polars evaluates
    # the check wherever it evaluates the value
    checked = pl.when(_refused(message).is_null()).then(value)
    return fields.struct.with_fields(checked.alias("value")).struct.field("value")


def list_expr(measure: Measure, relevance: IntoExpr) -> pl.Expr:
    relevance = _to_expr(relevance)
    grades = relevance.cast(pl.Float64)
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

    value = d.to_polars(measure.value(), scope(grades, "rank", {}))
    return _checked(value, grades, measure, relevance).alias(measure.name)
