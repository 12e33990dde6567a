"""The monitor's means and standard deviations from sums that give the same bits on every run:
the engines' fixed point while its bound holds, else the values' ascending order
(:mod:`rank_polars.engines.exact`, which ``evaluate``'s means read too).
"""

from __future__ import annotations

import polars as pl

from rank_polars.engines.exact import Adder


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
    >>> from rank_polars.engines.exact import adder
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


__all__ = ["moments", "spread_terms"]
