"""The ``ranking`` expression namespace, registered on ``import rank_polars``.

Each method delegates to the function of the same name in :mod:`rank_polars.exprs`::

    df.group_by("model", "query").agg(
        pl.col("relevance").sort_by("position").ranking.ndcg(10)
    )
"""

from __future__ import annotations

import difflib

import polars as pl

from . import exprs


@pl.api.register_expr_namespace("ranking")
class RankingNamespace:
    """Ranking metrics over an expression holding grades in ranked order."""

    def __init__(self, expr: pl.Expr) -> None:
        self._expr = expr

    def __getattr__(self, name: str) -> object:
        close = difflib.get_close_matches(name, [m for m in dir(self) if not m.startswith("_")], n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise AttributeError(f"'ranking' namespace has no metric {name!r}{hint}")

    def cg(self, k: int | None = None, *, gain: str = "linear") -> pl.Expr:
        """Cumulative gain at k; see :func:`rank_polars.exprs.cg`."""
        return exprs.cg(self._expr, k, gain=gain)

    def dcg(self, k: int | None = None, *, gain: str = "linear", discount: str = "log2") -> pl.Expr:
        """Discounted cumulative gain at k; see :func:`rank_polars.exprs.dcg`."""
        return exprs.dcg(self._expr, k, gain=gain, discount=discount)

    def idcg(
        self, k: int | None = None, *, gain: str = "linear", discount: str = "log2", ideal_cut: str = "k"
    ) -> pl.Expr:
        """Ideal DCG at k; see :func:`rank_polars.exprs.idcg`."""
        return exprs.idcg(self._expr, k, gain=gain, discount=discount, ideal_cut=ideal_cut)

    def ndcg(
        self, k: int | None = None, *, gain: str = "linear", discount: str = "log2", ideal_cut: str = "k"
    ) -> pl.Expr:
        """Normalised DCG at k; see :func:`rank_polars.exprs.ndcg`."""
        return exprs.ndcg(self._expr, k, gain=gain, discount=discount, ideal_cut=ideal_cut)

    def ap(self, k: int | None = None, *, rel: float | None = None, denom: str = "r") -> pl.Expr:
        """Average precision at k; see :func:`rank_polars.exprs.ap`."""
        return exprs.ap(self._expr, k, rel=rel, denom=denom)

    def rr(self, k: int | None = None, *, rel: float | None = None) -> pl.Expr:
        """Reciprocal rank; see :func:`rank_polars.exprs.rr`."""
        return exprs.rr(self._expr, k, rel=rel)

    def precision(self, k: int | None = None, *, rel: float | None = None) -> pl.Expr:
        """Precision at k; see :func:`rank_polars.exprs.precision`."""
        return exprs.precision(self._expr, k, rel=rel)

    def recall(self, k: int | None = None, *, rel: float | None = None) -> pl.Expr:
        """Recall at k; see :func:`rank_polars.exprs.recall`."""
        return exprs.recall(self._expr, k, rel=rel)

    def f1(self, k: int | None = None, *, rel: float | None = None) -> pl.Expr:
        """F1 at k; see :func:`rank_polars.exprs.f1`."""
        return exprs.f1(self._expr, k, rel=rel)

    def success(self, k: int | None = None, *, rel: float | None = None) -> pl.Expr:
        """Success (hit) at k; see :func:`rank_polars.exprs.success`."""
        return exprs.success(self._expr, k, rel=rel)

    def rprec(self, *, rel: float | None = None) -> pl.Expr:
        """R-precision; see :func:`rank_polars.exprs.rprec`."""
        return exprs.rprec(self._expr, rel=rel)

    def bpref(self, *, rel: float | None = None) -> pl.Expr:
        """bpref; see :func:`rank_polars.exprs.bpref`."""
        return exprs.bpref(self._expr, rel=rel)

    def err(self, k: int | None = None, *, max: float | None = None) -> pl.Expr:
        """Expected reciprocal rank at k; see :func:`rank_polars.exprs.err`."""
        return exprs.err(self._expr, k, max=max)

    def rbp(self, k: int | None = None, *, p: float = 0.8, rel: float | None = None) -> pl.Expr:
        """Rank-biased precision; see :func:`rank_polars.exprs.rbp`."""
        return exprs.rbp(self._expr, k, p=p, rel=rel)

    def judged(self, k: int | None = None) -> pl.Expr:
        """Share of judged items at k; see :func:`rank_polars.exprs.judged`."""
        return exprs.judged(self._expr, k)
