"""The monitor's means and standard deviations from sums that give the same bits on every run:
the engines' fixed point while its bound holds, else the values' ascending order
(:mod:`rank_polars.engines.exact`, which ``evaluate``'s means read too).
"""

from __future__ import annotations

from fractions import Fraction
from math import sqrt

import polars as pl

from rank_polars.engines.exact import Adder
from rank_polars.engines.polars_engine import fixed_terms

_HALF = 2 ** 32  # a fixed-point term split in two halves, so that each product of halves fits an Int128


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


def square_terms(values: pl.Expr, name: str) -> list[pl.Expr]:
    """Per row, the columns whose sums per group give, exactly, ``S1 = sum(a)`` and ``S2 = sum(a^2)``
    of the fixed-point terms ``a = floor(v * 2^64)`` of ``values`` (:func:`exact_moments`): ``a``
    itself, and ``S2``'s three parts (``a = hi * 2^32 + lo``: ``hi^2``, ``hi * lo`` and ``lo^2``,
    each summing within an ``Int128`` while :func:`spread_terms`' bound holds).  Computed once,
    their sums are plain integer sums in every group-by (no group's mean broadcast back over its
    rows, which Polars evaluates group by group: 3M paired rows over 10 segments took 32 s so)."""
    a = fixed_terms(values)
    hi = a // _HALF
    lo = a - hi * _HALF
    return [a.alias(f"__s1_{name}"), (hi * hi).alias(f"__hh_{name}"), (hi * lo).alias(f"__hl_{name}"),
            (lo * lo).alias(f"__ll_{name}")]


def square_sums(name: str) -> list[pl.Expr]:
    """The sums per group of :func:`square_terms`' columns."""
    return [pl.col(f"__{k}_{name}").sum() for k in ("s1", "hh", "hl", "ll")]


def exact_moments(table: pl.DataFrame, name: str, n: str = "n") -> pl.DataFrame:
    """``table`` (one row per group, with :func:`square_sums`' columns and the count ``n``) with
    ``mean_<name>`` and ``sd_<name>`` (``ddof=1``; null below two values) in place of those columns:
    ``var = (n S2 - S1^2) / (n (n - 1))`` in whole numbers, so nothing cancels, each value rounded
    once.  The loop is over the groups (metrics x segment values), not the queries.

    >>> import polars as pl
    >>> rows = pl.DataFrame({"g": [1, 1, 1, 2], "x": [1.0, 2.0, 4.0, 5.0]})
    >>> terms = rows.with_columns(square_terms(pl.col("x"), "x"))
    >>> sums = terms.group_by("g").agg(pl.len().alias("n"), *square_sums("x")).sort("g")
    >>> exact_moments(sums, "x")
    shape: (2, 4)
    ┌─────┬─────┬──────────┬──────────┐
    │ g   ┆ n   ┆ mean_x   ┆ sd_x     │
    │ --- ┆ --- ┆ ---      ┆ ---      │
    │ i64 ┆ u32 ┆ f64      ┆ f64      │
    ╞═════╪═════╪══════════╪══════════╡
    │ 1   ┆ 3   ┆ 2.333333 ┆ 1.527525 │
    │ 2   ┆ 1   ┆ 5.0      ┆ null     │
    └─────┴─────┴──────────┴──────────┘
    """
    parts = [f"__{k}_{name}" for k in ("s1", "hh", "hl", "ll")]
    means: list[float | None] = []
    sds: list[float | None] = []
    for count, s1, hh, hl, ll in table.select(n, *parts).iter_rows():
        if not count or s1 is None:
            means.append(None)
            sds.append(None)
            continue
        scale = 1 << 64
        means.append(float(Fraction(s1, count * scale)))
        s2 = (hh << 64) + (hl << 33) + ll
        sds.append(sqrt(Fraction(count * s2 - s1 * s1, count * (count - 1) * scale * scale)) if count > 1 else None)
    return table.drop(parts).with_columns(pl.Series(f"mean_{name}", means, dtype=pl.Float64),
                                          pl.Series(f"sd_{name}", sds, dtype=pl.Float64))


__all__ = ["exact_moments", "moments", "spread_terms", "square_sums", "square_terms"]
