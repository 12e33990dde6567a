"""ndeval's measures over one ranked list whose elements are each item's relevant subtopics.

The functions of :mod:`rank_polars.formula.exprs` read a ranked list of grades; a grade carries no
subtopic, so these read a list of lists instead: element i holds the subtopics the item at
rank i is relevant to (empty or null: relevant to none), e.g. after
``judged.group_by("query", "item").agg(pl.col("subtopic").filter(pl.col("relevance") > 0))``
joined to the run and sorted by position.  As in :mod:`rank_polars.formula.exprs`, the list carries
its own judgments: ``|S|`` is the number of distinct subtopics in the list, and MAP-IA's
``R_s`` the number of the list's items relevant to ``s``; ``evaluate`` (and ndeval) read
them from every judgment instead, so the two agree when every relevant item is in the list.

Each function is one expression (no Python per list), usable in ``select`` over one list or
in ``group_by(...).agg(...)``.  With ``c(i, s)`` the number of items above rank ``i`` relevant
to ``s`` (an ordinal rank of the (subtopic, rank) pairs minus the first rank of the
subtopic), the novelty-biased gain of a (rank, subtopic) pair is ``(1 - alpha)^c(i, s)``, and
``G_i`` of :mod:`rank_polars.measures.diversity` is the sum of rank i's pairs.

Not here: ``alpha_ndcg``, ``nerr_ia`` and ``nnrbp``, whose ideal is ndeval's greedy ranking: a
loop over ranks, each step choosing an item by the gains the previous choices left.  An
expression has no loop whose steps depend on earlier results (the list's length bounds no
closed form), so those are computed by ``evaluate``, once per query over all queries
(:mod:`rank_polars.families.diversity`).  Sums add per (rank, subtopic) pair, so the values
can differ from ``evaluate``'s (which adds ``G_i`` per rank, as ndeval) in the last bits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from rank_polars.errors import MetricNameError
from rank_polars.measures.base import cutoff
from rank_polars.measures.diversity import ideal_ideal

if TYPE_CHECKING:
    from polars._typing import IntoExpr

def _pairs(subtopics: IntoExpr) -> tuple[pl.Expr, pl.Expr]:
    """(subtopic, rank) of every relevant pair of the list, each subtopic once per item."""
    expr = pl.col(subtopics) if isinstance(subtopics, str) else subtopics
    expr = expr.list.unique()
    rank = pl.int_range(1, pl.len() + 1, dtype=pl.Int64).repeat_by(expr.list.len()).explode()
    sub = expr.explode()
    present = sub.is_not_null()
    return sub.filter(present), rank.filter(present)


def _seen(sub: pl.Expr, rank: pl.Expr) -> pl.Expr:
    """c(i, s): items above rank i relevant to s."""
    return pl.struct(sub.alias("s"), rank.alias("r")).rank("ordinal").cast(pl.Int64) - sub.rank("min").cast(pl.Int64)


def _check(name: str, k: int, alpha: float, beta: float = 0.5) -> int:
    """The cutoff as the metric specs read it (:func:`rank_polars.measures.base.cutoff`: a bool
    was k = 1 named "@True"; a NumPy integer is one), after the parameters are checked."""
    for what, value in (("alpha", alpha), ("beta", beta)):
        if not 0.0 <= value <= 1.0:
            raise MetricNameError(f"{name}: parameter {what} must be in [0, 1], got {value!r}")
    return cutoff(name, k)


def _per_subtopic(value: pl.Expr, sub: pl.Expr, name: str, divide: bool = True) -> pl.Expr:
    """``value / |S|`` (``divide=False``: ``value``, as ndeval's @1), 0 for a list without a subtopic."""
    size = sub.n_unique()
    return pl.when(size > 0).then(value / size if divide else value).otherwise(0.0).cast(pl.Float64).alias(name)


def alpha_dcg(subtopics: IntoExpr, k: int, *, alpha: float = 0.5) -> pl.Expr:
    """alpha-DCG@k of a ranked list of relevant-subtopic lists, over ndeval's every-subtopic value.

    ``sum over i <= k of G_i / log2(i + 1)``, divided by ``|S|`` times the same sum for a list
    covering every subtopic at every rank; at k = 1 neither (ndeval's: ``G_1``).

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> df = pl.DataFrame({"subtopics": [[1, 2], [], [1], [3]]})
    >>> df.select(rp.exprs.alpha_dcg("subtopics", 3).round(6))
    shape: (1, 1)
    ┌─────────────┐
    │ alpha_dcg@3 │
    │ ---         │
    │ f64         │
    ╞═════════════╡
    │ 0.520665    │
    └─────────────┘
    """
    k = _check("alpha_dcg", k, alpha)
    sub, rank = _pairs(subtopics)
    gain = pl.lit(1.0 - alpha, pl.Float64).pow(_seen(sub, rank))
    total = (gain / (rank + 1).cast(pl.Float64).log(2)).filter(rank <= k).sum()
    # ndeval leaves rank 1 undivided, by |S| too: alpha_dcg@1 = G_1
    return _per_subtopic(total / ideal_ideal(alpha, k, "log2"), sub, f"alpha_dcg@{k}", divide=k > 1)


def err_ia(subtopics: IntoExpr, k: int, *, alpha: float = 0.5) -> pl.Expr:
    """ERR-IA@k of a ranked list of relevant-subtopic lists, over ndeval's every-subtopic value.

    ``sum over i <= k of G_i / i``, divided by ``|S|`` times the same sum for a list covering
    every subtopic at every rank; at k = 1 neither (ndeval's: ``G_1``).

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> df = pl.DataFrame({"subtopics": [[1, 2], [], [1], [3]]})
    >>> df.select(rp.exprs.err_ia("subtopics", 3).round(6))
    shape: (1, 1)
    ┌──────────┐
    │ err_ia@3 │
    │ ---      │
    │ f64      │
    ╞══════════╡
    │ 0.541667 │
    └──────────┘
    """
    k = _check("err_ia", k, alpha)
    sub, rank = _pairs(subtopics)
    gain = pl.lit(1.0 - alpha, pl.Float64).pow(_seen(sub, rank))
    total = (gain / rank.cast(pl.Float64)).filter(rank <= k).sum()
    return _per_subtopic(total / ideal_ideal(alpha, k, "rank"), sub, f"err_ia@{k}", divide=k > 1)


def nrbp(subtopics: IntoExpr, *, alpha: float = 0.5, beta: float = 0.5) -> pl.Expr:
    """NRBP of a ranked list of relevant-subtopic lists: ``(1 - (1 - alpha) beta) / |S|`` times
    ``sum of G_i beta^(i-1)`` over the whole list.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> df = pl.DataFrame({"subtopics": [[1, 2], [], [1], [3]]})
    >>> df.select(rp.exprs.nrbp("subtopics").round(6))
    shape: (1, 1)
    ┌────────┐
    │ nrbp   │
    │ ---    │
    │ f64    │
    ╞════════╡
    │ 0.5625 │
    └────────┘
    """
    _check("nrbp", 1, alpha, beta)
    sub, rank = _pairs(subtopics)
    gain = pl.lit(1.0 - alpha, pl.Float64).pow(_seen(sub, rank))
    total = (gain * pl.lit(beta, pl.Float64).pow(rank - 1)).sum()
    return _per_subtopic(total * (1.0 - (1.0 - alpha) * beta), sub, "nrbp")


def map_ia(subtopics: IntoExpr) -> pl.Expr:
    """MAP-IA of a ranked list of relevant-subtopic lists: the mean over its subtopics of the
    average precision of the ranks relevant to each, ``R_s`` the list's items relevant to s.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> df = pl.DataFrame({"subtopics": [[1, 2], [], [1], [3]]})
    >>> df.select(rp.exprs.map_ia("subtopics").round(6))
    shape: (1, 1)
    ┌──────────┐
    │ map_ia   │
    │ ---      │
    │ f64      │
    ╞══════════╡
    │ 0.694444 │
    └──────────┘
    """
    sub, rank = _pairs(subtopics)
    relevant = (sub.rank("max") - sub.rank("min") + 1).cast(pl.Float64)  # R_s: the pairs of s
    precision = (_seen(sub, rank) + 1).cast(pl.Float64) / rank.cast(pl.Float64)
    return _per_subtopic((precision / relevant).sum(), sub, "map_ia")


def p_ia(subtopics: IntoExpr, k: int) -> pl.Expr:
    """P-IA@k of a ranked list of relevant-subtopic lists: relevant (item, subtopic) pairs in the
    top k over ``k |S|``.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> df = pl.DataFrame({"subtopics": [[1, 2], [], [1], [3]]})
    >>> df.select(rp.exprs.p_ia("subtopics", 2).round(6))
    shape: (1, 1)
    ┌──────────┐
    │ p_ia@2   │
    │ ---      │
    │ f64      │
    ╞══════════╡
    │ 0.333333 │
    └──────────┘
    """
    k = _check("p_ia", k, 0.5)
    sub, rank = _pairs(subtopics)
    return _per_subtopic((rank <= k).sum().cast(pl.Float64) / k, sub, f"p_ia@{k}")


def strec(subtopics: IntoExpr, k: int) -> pl.Expr:
    """Subtopic recall@k of a ranked list of relevant-subtopic lists: its subtopics covered in the
    top k over ``|S|``.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> df = pl.DataFrame({"subtopics": [[1, 2], [], [1], [3]]})
    >>> df.select(rp.exprs.strec("subtopics", 3).round(6))
    shape: (1, 1)
    ┌──────────┐
    │ strec@3  │
    │ ---      │
    │ f64      │
    ╞══════════╡
    │ 0.666667 │
    └──────────┘
    """
    k = _check("strec", k, 0.5)
    sub, rank = _pairs(subtopics)
    return _per_subtopic(sub.filter(rank <= k).n_unique().cast(pl.Float64), sub, f"strec@{k}")


__all__ = ["alpha_dcg", "err_ia", "map_ia", "nrbp", "p_ia", "strec"]
