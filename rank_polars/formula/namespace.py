"""The ``ranking`` expression namespace, registered on ``import rank_polars``.

Every public function of :mod:`rank_polars.formula.exprs` is a method here, with the expression in
place of its first argument (polars-xdt's pattern: functions first, the namespace only
delegates, so the two cannot disagree and a new metric function appears here by itself)::

    df.group_by("model", "query").agg(
        pl.col("relevance").sort_by("position").ranking.ndcg(10)
    )

With judgments in their own table, :func:`rank_polars.with_judgments` attaches them to the log and
the methods that read them take the query's ideal ranking (``ranking.ndcg(10, ideal="ideal")``;
``r=``, ``n=``: see :mod:`rank_polars.formula.exprs`), for ``evaluate(qrels=)``'s numbers.

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
import re
from typing import Any, Callable

import polars as pl

from rank_polars.formula import exprs
from rank_polars.errors import MetricNameError
from rank_polars.measures import MEASURES, parse


def _method(function: Callable[..., pl.Expr]) -> Callable[..., pl.Expr]:
    @functools.wraps(function)
    def method(self: RankingNamespace, *args: Any, **kwargs: Any) -> pl.Expr:
        return function(self._expr, *args, **kwargs)

    # help() and IDEs show the function's own parameters, the expression bound as ``self``
    params = list(inspect.signature(function).parameters.values())
    method.__signature__ = inspect.Signature([params[0].replace(name="self"), *params[1:]])  # type: ignore[attr-defined]
    method.__doc__ = f"{(function.__doc__ or '').strip().splitlines()[0]} See :func:`rank_polars.formula.exprs.{function.__name__}`."
    return method


def _aliases() -> dict[str, str]:
    """The names metric strings use (``p``, ``r``, ``map``, ``mrr``, ...) for the function each spec backs."""
    out: dict[str, str] = {}
    for spec in MEASURES:
        names = [spec.NAME, *spec.ALIASES]
        function = next((n for n in names if n in exprs.__all__), None)
        if function is not None:
            out.update({n: function for n in names if n.isidentifier() and n not in exprs.__all__})
    return out


ALIASES = _aliases()
_WORDS = re.compile(r"[a-z]+")


def _by_meaning(name: str) -> str | None:
    """The function a name means: read as a metric string (``P_10``, ``recip_rank``), or sharing
    the most words with a function's summary (``mean_average_precision``: average precision)."""
    try:
        spec = parse(name)
    except MetricNameError:
        spec = None
    if spec is not None:
        return next((n for n in (spec.NAME, *spec.ALIASES) if n in exprs.__all__), spec.NAME)
    words = set(_WORDS.findall(name.lower())) - {"at", "of", "the", "a", "k", "mean"}
    if not words:
        return None

    def score(function: str) -> tuple[int, int]:  # shared words, then how early the summary says them
        summary = _WORDS.findall((getattr(exprs, function).__doc__ or "").lower().split(".")[0])
        hits = [i for i, w in enumerate(summary) if w in words]
        return len(words & set(summary)), -(hits[0] if hits else 99)

    best = max(exprs.__all__, key=score)
    return best if score(best)[0] >= max(1, len(words) - 1) else None


def suggestion(name: str) -> str:
    """``"; did you mean 'precision'?"`` for an unknown method name (by meaning first, then spelling)."""
    meant = _by_meaning(name)
    if meant is not None and meant not in exprs.__all__:
        return (f"; {meant!r} needs judgments beyond the list or several queries: use "
                f"rank_polars.evaluate(log, [{name!r}])")
    close = [meant] if meant else difflib.get_close_matches(name, [*exprs.__all__, *ALIASES], n=1)
    return f"; did you mean {ALIASES.get(close[0], close[0])!r}?" if close else ""


class _NoNames:
    """An ``obj`` for the AttributeError whose ``dir()`` is empty: Python's own "Did you mean"
    (by spelling, appended to ours) stays silent."""

    def __dir__(self) -> list[str]:
        return []


@pl.api.register_expr_namespace("ranking")
class RankingNamespace:
    """Ranking metrics over an expression holding grades in ranked order.

    The short names of the metric strings are aliases (``ranking.p(5)`` is
    ``ranking.precision(5)``, ``map`` is ``ap``, ``mrr`` is ``rr``):

    >>> import polars as pl, rank_polars as rp
    >>> pl.DataFrame({"relevance": [0, 1, 2]}).select(pl.col("relevance").ranking.p(2), pl.col("relevance").ranking.mrr())
    shape: (1, 2)
    ┌─────┬─────┐
    │ p@2 ┆ rr  │
    │ --- ┆ --- │
    │ f64 ┆ f64 │
    ╞═════╪═════╡
    │ 0.5 ┆ 0.5 │
    └─────┴─────┘
    """

    def __init__(self, expr: pl.Expr) -> None:
        self._expr = expr

    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"'ranking' namespace has no metric {name!r}{suggestion(name)}", name=name, obj=_NoNames())


for _name in exprs.__all__:
    setattr(RankingNamespace, _name, _method(getattr(exprs, _name)))
for _alias, _name in ALIASES.items():
    setattr(RankingNamespace, _alias, getattr(RankingNamespace, _name))

__all__ = ["ALIASES", "RankingNamespace"]
