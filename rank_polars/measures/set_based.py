"""Precision, recall, F1, success (hit) and R-precision."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _dsl as d
from .base import REL, Measure

if TYPE_CHECKING:
    import polars as pl
    from polars._typing import IntoExpr


class Precision(Measure):
    """P@k = relevant items among the first k / k (missing positions count as non-relevant).

    Without k: relevant items / length of the list (trec_eval ``set_P``).
    """

    NAME = "p"
    ALIASES = ("precision",)
    PARAMS = {"rel": REL}

    def value(self) -> d.Node:
        den = float(self.k) if self.k is not None else d.N_RET
        return d.safe_div(self.hits_at_k(), den)


class Recall(Measure):
    """R@k = relevant items among the first k / R; 0 when R = 0."""

    NAME = "r"
    ALIASES = ("recall",)
    PARAMS = {"rel": REL}

    def value(self) -> d.Node:
        return d.safe_div(self.hits_at_k(), self.n_relevant())


class F1(Measure):
    """F1@k = 2 P@k R@k / (P@k + R@k); 0 when both are 0."""

    NAME = "f1"
    PARAMS = {"rel": REL}

    def value(self) -> d.Node:
        p = Precision(self.k, **self.params).value()
        r = Recall(self.k, **self.params).value()
        return d.safe_div(2.0 * p * r, p + r)


class Success(Measure):
    """success@k = 1 if a relevant item is among the first k, else 0."""

    NAME = "success"
    ALIASES = ("hit", "hits", "hit_rate")
    PARAMS = {"rel": REL}

    def value(self) -> d.Node:
        return d.when(self.hits_at_k() > 0, 1.0, 0.0)


class RPrecision(Measure):
    """R-precision = relevant items among the first R / R (even when the list is shorter)."""

    NAME = "rprec"
    ALIASES = ("r_precision", "r-precision")
    PARAMS = {"rel": REL}
    SUPPORTS_CUTOFF = False

    def value(self) -> d.Node:
        r = self.n_relevant()
        return d.safe_div(d.row_sum(d.ind(self.relevant() & (d.RANK <= r))), r)


def precision(relevance: IntoExpr, k: int | None = None, *, rel: float | None = None) -> pl.Expr:
    """Precision at k of a ranked list.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> df = pl.DataFrame({"relevance": [1, 0, 1, 1, 0, 1, 0, 0]})
    >>> df.select(rp.exprs.precision("relevance", 1), rp.exprs.precision("relevance", 8))
    shape: (1, 2)
    ┌─────┬─────┐
    │ p@1 ┆ p@8 │
    │ --- ┆ --- │
    │ f64 ┆ f64 │
    ╞═════╪═════╡
    │ 1.0 ┆ 0.5 │
    └─────┴─────┘
    """
    return Precision(k, rel=rel).expr(relevance)


def recall(relevance: IntoExpr, k: int | None = None, *, rel: float | None = None) -> pl.Expr:
    """Recall at k of a ranked list; R is the number of relevant grades in the list.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> df = pl.DataFrame({"relevance": [1, 0, 1, 1, 0, 1, 0, 0]})
    >>> df.select(rp.exprs.recall("relevance", 1))
    shape: (1, 1)
    ┌──────┐
    │ r@1  │
    │ ---  │
    │ f64  │
    ╞══════╡
    │ 0.25 │
    └──────┘
    """
    return Recall(k, rel=rel).expr(relevance)


def f1(relevance: IntoExpr, k: int | None = None, *, rel: float | None = None) -> pl.Expr:
    """F1 at k: the harmonic mean of precision and recall at k.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> df = pl.DataFrame({"relevance": [1, 0, 1, 1, 0, 1, 0, 0]})
    >>> df.select(rp.exprs.f1("relevance", 8).round(4))
    shape: (1, 1)
    ┌────────┐
    │ f1@8   │
    │ ---    │
    │ f64    │
    ╞════════╡
    │ 0.6667 │
    └────────┘
    """
    return F1(k, rel=rel).expr(relevance)


def success(relevance: IntoExpr, k: int | None = None, *, rel: float | None = None) -> pl.Expr:
    """1 if a relevant item is among the first k of a ranked list, else 0 (hit@k).

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> df = pl.DataFrame({"relevance": [0, 0, 1]})
    >>> df.select(rp.exprs.success("relevance", 2), rp.exprs.success("relevance", 3))
    shape: (1, 2)
    ┌───────────┬───────────┐
    │ success@2 ┆ success@3 │
    │ ---       ┆ ---       │
    │ f64       ┆ f64       │
    ╞═══════════╪═══════════╡
    │ 0.0       ┆ 1.0       │
    └───────────┴───────────┘
    """
    return Success(k, rel=rel).expr(relevance)


def rprec(relevance: IntoExpr, *, rel: float | None = None) -> pl.Expr:
    """R-precision: precision at R, the number of relevant grades in the list.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> df = pl.DataFrame({"relevance": [1, 0, 1, 1, 0, 1, 0, 0]})
    >>> df.select(rp.exprs.rprec("relevance"))
    shape: (1, 1)
    ┌───────┐
    │ rprec │
    │ ---   │
    │ f64   │
    ╞═══════╡
    │ 0.75  │
    └───────┘
    """
    return RPrecision(rel=rel).expr(relevance)
