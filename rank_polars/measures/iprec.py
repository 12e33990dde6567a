"""Interpolated precision at a recall level, and its average over levels (``11pt_avg``)."""

from __future__ import annotations

from typing import Any

from rank_polars.formula import tree as d
from rank_polars.errors import MetricNameError
from rank_polars.measures.base import REL, Measure, Param, levels

ELEVEN = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


class IPrec(Measure):
    """iprec(recall=x) = the highest precision at or after the ``lround(x R)``-th relevant document.

    trec_eval 10's ``iprec_at_recall_x``: the level maps to a number of relevant documents
    with C's ``lround`` (trec_eval 9 and pytrec_eval used ``(long)(x R + 0.9)``), and the value
    is max over relevant retrieved documents h at or after it of P@rank(h); 0 when fewer
    relevant documents are retrieved.  ``hits >= lround(x R)`` is written ``hits + 0.5 > x R``,
    exact for integer hits in every engine and SQL dialect (no rounding function needed).
    """

    NAME = "iprec"
    ALIASES = ("iprec_at_recall",)
    PARAMS = {"recall": Param(float, None, "recall level, e.g. 0.5"), "rel": REL}
    SUPPORTS_CUTOFF = False
    AT_PARAM = "recall"

    def _check(self, params: dict[str, Any]) -> None:
        if params["recall"] is None:
            raise MetricNameError("iprec needs a recall level: iprec(recall=0.5), iprec@0.5 or iprec_at_recall_0.50")
        if not 0 <= params["recall"] < float("inf"):
            raise MetricNameError(f"iprec: recall must be a finite number >= 0, got {params['recall']!r}")

    def value(self) -> d.Node:
        rel = self.relevant()
        hits = d.Cum(d.ind(rel))
        reached = hits + 0.5 > self.params["recall"] * self.n_relevant()
        return d.row_max(d.when(rel & reached, hits / d.RANK, 0.0))

    def depth(self) -> int | None:
        return None


class IPrecAvg(Measure):
    """11pt_avg = the mean of iprec over the recall ``levels`` (default 0.0, 0.1, ..., 1.0).

    trec_eval's ``11pt_avg.l1,l2,...`` (given in increasing order, as trec_eval assumes).
    """

    NAME = "11pt_avg"
    ALIASES = ("iprec_avg",)
    PARAMS = {
        "levels": Param(levels, ELEVEN, "recall levels, ';'-separated, e.g. 0.2;0.5;0.8"),
        "rel": REL,
    }
    SUPPORTS_CUTOFF = False

    def _check(self, params: dict[str, Any]) -> None:
        for level in params["levels"]:
            IPrec(recall=level)

    def value(self) -> d.Node:
        points = [IPrec(recall=x, rel=self.params["rel"]).value() for x in self.params["levels"]]
        total = points[0]
        for point in points[1:]:
            total = total + point
        return total / float(len(points))

    def depth(self) -> int | None:
        return None
