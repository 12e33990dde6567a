"""Reciprocal rank (RR; its mean over queries is MRR)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _dsl as d
from .base import REL, Measure

if TYPE_CHECKING:
    import polars as pl
    from polars._typing import IntoExpr


class RR(Measure):
    """RR@k = 1 / rank of the first relevant item within the first k; 0 if there is none."""

    NAME = "rr"
    ALIASES = ("mrr", "recip_rank")
    PARAMS = {"rel": REL}

    def value(self) -> d.Node:
        return d.row_max(d.when(self.relevant() & self.in_cutoff(), 1.0 / d.RANK, 0.0))


def rr(relevance: IntoExpr, k: int | None = None, *, rel: float | None = None) -> pl.Expr:
    """Reciprocal rank of the first relevant item of a ranked list.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> df = pl.DataFrame({"query": [1, 1, 1, 2, 2, 2, 3, 3, 3],
    ...                    "relevance": [0, 0, 1, 0, 1, 0, 1, 0, 0]})
    >>> per_query = df.group_by("query").agg(rp.exprs.rr("relevance"))
    >>> per_query.select(pl.col("rr").mean().round(4).alias("mrr"))
    shape: (1, 1)
    ┌────────┐
    │ mrr    │
    │ ---    │
    │ f64    │
    ╞════════╡
    │ 0.6111 │
    └────────┘
    """
    return RR(k, rel=rel).expr(relevance)
