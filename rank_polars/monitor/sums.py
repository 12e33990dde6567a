"""Sums over a group's rows that give the same bits on every run, for the monitor's means and sds.

The rows reach a ``group_by`` in whatever order the joins and threads deliver them, and a plain
float sum depends on it.  The engines' fixed-point sum (:func:`~rank_polars.engines.polars_engine.fixed_sum`)
does not, and needs no sort, while its bound holds (:func:`~rank_polars.engines.polars_engine.fixed_bound`
below :data:`~rank_polars.engines.polars_engine.FIXED_BOUND`: far beyond any metric's values).  As
:func:`rank_polars.evaluate` does, the bound is checked once, for the whole table or for each group
of it (a part of a group is within the group's bound), and past it the sums are added in ascending
order of the values (:func:`~rank_polars.engines.polars_engine.ordered_sum`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import polars as pl

from rank_polars.engines.polars_engine import FIXED_BOUND, fixed_bound, fixed_sum, ordered_sum

Adder = Callable[[pl.Expr], pl.Expr]


def within_bound(frame: pl.DataFrame | pl.LazyFrame, terms: Mapping[str, pl.Expr],
                 keys: Sequence[str] = ()) -> dict[str, bool]:
    """For each named term: whether :func:`fixed_sum` holds its sum in every group of ``keys``
    (the whole table without keys), in one pass over ``frame``.

    >>> import polars as pl
    >>> rows = pl.DataFrame({"g": [1, 1, 2], "x": [0.5, 0.25, 3e12]})
    >>> within_bound(rows, {"x": pl.col("x")})
    {'x': False}
    >>> within_bound(rows.filter(pl.col("g") == 1), {"x": pl.col("x"), "x2": pl.col("x") ** 2}, ["g"])
    {'x': True, 'x2': True}
    """
    if not terms:
        return {}
    lf = frame.lazy()
    bounds = [fixed_bound(t).alias(n) for n, t in terms.items()]
    grouped = lf.group_by(list(keys)).agg(bounds) if keys else lf.select(bounds)
    largest = grouped.select(pl.col(n).max() for n in terms).collect().row(0, named=True)
    return {n: b is None or b < FIXED_BOUND for n, b in largest.items()}


def adder(exact: bool) -> Adder:
    """:func:`fixed_sum` within its bound, else :func:`ordered_sum` (the values' ascending order).

    >>> import polars as pl
    >>> rows = pl.DataFrame({"x": [0.1, 0.2, 0.3]})
    >>> rows.select(adder(True)(pl.col("x"))).item(), rows.select(adder(False)(pl.col("x"))).item()
    (0.6, 0.6000000000000001)
    """
    return fixed_sum if exact else ordered_sum


def spread_terms(name: str, values: pl.Expr) -> dict[str, pl.Expr]:
    """The terms :func:`moments` adds, for :func:`within_bound`: the values and a bound on their
    squared deviations from their mean (``|v - mean| <= 2 max |v|``)."""
    return {name: values, f"{name}^2": (2 * values) ** 2}


def moments(values: pl.Expr, add: Adder) -> tuple[pl.Expr, pl.Expr]:
    """The mean and the standard deviation (``ddof=1``) of ``values`` in a group (null for no value,
    and the sd for fewer than two), from sums by ``add``: the values less their group's mean, so
    that the sum of squares does not cancel (``var = (S2 - S1^2 / n) / (n - 1)``).

    >>> import polars as pl
    >>> rows = pl.DataFrame({"g": [1, 1, 1, 2], "x": [1.0, 2.0, 4.0, 5.0]})
    >>> mean, sd = moments(pl.col("x"), adder(True))
    >>> rows.group_by("g").agg(mean.alias("mean"), sd.alias("sd")).sort("g")
    shape: (2, 3)
    ┌─────┬──────────┬──────────┐
    │ g   ┆ mean     ┆ sd       │
    │ --- ┆ ---      ┆ ---      │
    │ i64 ┆ f64      ┆ f64      │
    ╞═════╪══════════╪══════════╡
    │ 1   ┆ 2.333333 ┆ 1.527525 │
    │ 2   ┆ 5.0      ┆ null     │
    └─────┴──────────┴──────────┘
    """
    n = values.count().cast(pl.Float64)
    centre = add(values) / n
    s1, s2 = add(values - centre), add((values - centre) ** 2)
    var = ((s2 - s1 ** 2 / n) / (n - 1)).clip(lower_bound=0.0)
    return pl.when(n > 0).then(centre + s1 / n), pl.when(n > 1).then(var.sqrt())


__all__ = ["Adder", "adder", "moments", "spread_terms", "within_bound"]
