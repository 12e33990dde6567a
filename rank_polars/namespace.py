"""The ``ranking`` expression namespace, registered on ``import rank_polars``.

Every public function of :mod:`rank_polars.exprs` is a method here, with the expression in
place of its first argument (polars-xdt's pattern: functions first, the namespace only
delegates, so the two cannot disagree and a new metric function appears here by itself)::

    df.group_by("model", "query").agg(
        pl.col("relevance").sort_by("position").ranking.ndcg(10)
    )

>>> import polars as pl, rank_polars as rp
>>> pl.DataFrame({"relevance": [0, 1, 2]}).select(pl.col("relevance").ranking.ndcg(3).round(4))
shape: (1, 1)
┌────────┐
│ ndcg@3 │
│ ---    │
│ f64    │
╞════════╡
│ 0.6199 │
└────────┘
"""

from __future__ import annotations

import difflib
import functools
import inspect
from typing import Any, Callable

import polars as pl

from . import exprs


def _method(function: Callable[..., pl.Expr]) -> Callable[..., pl.Expr]:
    @functools.wraps(function)
    def method(self: RankingNamespace, *args: Any, **kwargs: Any) -> pl.Expr:
        return function(self._expr, *args, **kwargs)

    # help() and IDEs show the function's own parameters, the expression bound as ``self``
    params = list(inspect.signature(function).parameters.values())
    method.__signature__ = inspect.Signature([params[0].replace(name="self"), *params[1:]])  # type: ignore[attr-defined]
    method.__doc__ = f"{(function.__doc__ or '').strip().splitlines()[0]} See :func:`rank_polars.exprs.{function.__name__}`."
    return method


@pl.api.register_expr_namespace("ranking")
class RankingNamespace:
    """Ranking metrics over an expression holding grades in ranked order."""

    def __init__(self, expr: pl.Expr) -> None:
        self._expr = expr

    def __getattr__(self, name: str) -> object:
        close = difflib.get_close_matches(name, exprs.__all__, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise AttributeError(f"'ranking' namespace has no metric {name!r}{hint}")


for _name in exprs.__all__:
    setattr(RankingNamespace, _name, _method(getattr(exprs, _name)))

__all__ = ["RankingNamespace"]
