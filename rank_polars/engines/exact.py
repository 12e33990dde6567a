"""Which sums the engines' fixed point holds exactly, and the sum to use for each.

:func:`~rank_polars.engines.polars_engine.fixed_sum` gives the same bits in any row order and
needs no sort while its bound holds (:func:`~rank_polars.engines.polars_engine.fixed_bound`
below :data:`~rank_polars.engines.polars_engine.FIXED_BOUND`: far beyond any metric's values).
The bound is checked once, for the whole table or for each group of it (a part of a group is
within the group's bound); past it the sum is added in ascending order of the values
(:func:`~rank_polars.engines.polars_engine.ordered_sum`).  ``evaluate``'s means over queries and
the monitor's means and spreads read these two functions.
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


__all__ = ["Adder", "adder", "within_bound"]
