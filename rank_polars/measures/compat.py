"""Compatibility (Clarke, Vtyurina and Smucker, TOIS 2021): the run's rank-biased overlap with
an ideal ranking, as ir_measures' ``Compat(p=, normalize=)`` computes it.

Per judged query, ``ranking`` is the run's items in rank order and ``ideal`` the judged items of
grade > 0 by grade descending, ties in grade in the run's order (the retrieved ones first, in
their rank order; the unretrieved after them).  With ``D = max(len(ranking), len(ideal))``

    rbo(a, b) = sum_{i=1..D} p^(i-1) |a[:i] & b[:i]| / i  /  sum_{i=1..D} p^(i-1)

and ``compat = rbo(ranking, ideal)``, divided by ``rbo(ideal, ideal)`` with ``normalize`` (the
default).  A query without a relevant judgment scores 0.

It is not a formula of the plan: the ideal rank of a retrieved relevant item is a lookup by
grade (the judgments of a higher grade, and the retrieved items of its grade above it), and the
weight an item carries, ``S(D) - S(m - 1)`` with ``S(n) = sum_{i<=n} p^(i-1) / i`` at the depth
``m`` where both lists hold it, is a partial sum with no closed form.  So it is a measure family
(:mod:`rank_polars.families.compat`), computed in every engine from a small table of ``S(n)``.

>>> from rank_polars.measures import parse
>>> parse("Compat(p=0.8)"), parse("compat(p=0.8, normalize=false)"), parse("compat")
(compat(p=0.8), compat(p=0.8, normalize=false), compat)
"""

from __future__ import annotations

from typing import Any, ClassVar

from rank_polars.errors import MetricNameError
from rank_polars.measures.base import FamilyMeasure, Param, flag

FAMILY = "rank_polars.families.compat"

PERSISTENCE = Param(float, 0.95, "persistence of the rank-biased overlap: depth i weighs p^(i-1); 0 < p < 1")
NORMALIZE = Param(flag, True, "divide by the ideal ranking's overlap with itself (its best value), so a perfect run scores 1")


class Compat(FamilyMeasure):
    """compat = RBO(run, ideal) / RBO(ideal, ideal), rank-biased overlap with the ideal ranking (persistence p).

    ``RBO(a, b) = sum_{i=1..D} p^(i-1) |a[:i] & b[:i]| / i`` over ``sum_{i=1..D} p^(i-1)``, to
    the depth ``D = max(n, R)`` (n: the ranking's length, its last position when a ``position``
    column leaves gaps; R: the query's judgments of grade > 0);
    the ideal ranking holds those R items by grade descending, ties in grade in the run's order
    (retrieved before unretrieved).  ``normalize=false``: ``RBO(run, ideal)`` alone.
    Clarke, Vtyurina and Smucker, "Assessing top-k preferences" (TOIS 2021); ir_measures'
    ``Compat(p=0.95, normalize=True)``.  The whole list: no cutoff (``p`` sets how deep it looks).

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> run = pl.DataFrame({"query": ["q", "q", "q"], "item": ["a", "b", "c"], "position": [1, 2, 3]})
    >>> qrels = pl.DataFrame({"query": ["q", "q", "q"], "item": ["a", "b", "x"], "relevance": [1, 2, 1]})
    >>> rp.evaluate(run, ["compat", "compat(p=0.5, normalize=false)"], qrels=qrels)
    shape: (1, 3)
    ┌─────────┬──────────┬────────────────────────────────┐
    │ queries ┆ compat   ┆ compat(p=0.5, normalize=false) │
    │ ---     ┆ ---      ┆ ---                            │
    │ u32     ┆ f64      ┆ f64                            │
    ╞═════════╪══════════╪════════════════════════════════╡
    │ 1       ┆ 0.543967 ┆ 0.380952                       │
    └─────────┴──────────┴────────────────────────────────┘
    """

    NAME = "compat"
    FAMILY: ClassVar[str] = FAMILY
    SUPPORTS_CUTOFF = False
    PARAMS: ClassVar[dict[str, Param]] = {"p": PERSISTENCE, "normalize": NORMALIZE}

    def __init__(self, k: int | None = None, **params: Any) -> None:
        if k is not None:
            # ir_measures' Compat has none, and a cut of the run alone would still be measured
            # against the whole ideal ranking: refused rather than given a meaning of our own
            raise MetricNameError(f"{self.NAME} takes no cutoff (@k): it reads the whole ranking, to depth "
                                  f"max(n, R); the persistence p sets how deep it looks (compat(p=0.8))")
        super().__init__(None, **params)

    def _check(self, params: dict[str, Any]) -> None:
        if not 0.0 < params["p"] < 1.0:
            raise MetricNameError(f"{self.NAME}: parameter p must be in (0, 1) (the persistence of the rank-biased "
                                  f"overlap), got {params['p']!r}")


__all__ = ["Compat"]
