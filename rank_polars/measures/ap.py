"""Average precision (AP; its mean over queries is MAP)."""

from __future__ import annotations

from rank_polars.formula import tree as d
from rank_polars.measures.base import REL, Measure, Param

DENOM = Param(
    str, "r", "'r': divide by R, all relevant judgments (trec_eval); 'min': by min(R, k) (Kaggle apk, Spark)", ("r", "min")
)


class AP(Measure):
    """AP@k = sum over relevant i <= k of P@i, divided by R (or min(R, k)); 0 when R = 0."""

    NAME = "ap"
    ALIASES = ("map",)
    PARAMS = {"rel": REL, "denom": DENOM}

    def value(self) -> d.Node:
        hit = self.relevant() & self.in_cutoff()
        # Cum(...) counts the relevant rows up to and including this one: the hit's rank
        # among hits, so P@i needs no window over the whole list.
        precision_at_hit = d.Cum(d.ind(self.relevant())) / d.RANK
        total = d.row_sum(d.when(hit, precision_at_hit, 0.0))
        r = self.n_relevant()
        if self.params["denom"] == "min" and self.k is not None:
            r = d.least(r, float(self.k))
        return d.safe_div(total, r)
