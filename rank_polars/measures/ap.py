"""Average precision (AP; its mean over queries is MAP)."""

from __future__ import annotations

from rank_polars.formula import tree as d
from rank_polars.measures.base import REL, Measure, Param

DENOM = Param(
    str,
    "r",
    "'r': divide by R, all relevant judgments (trec_eval); 'min': by min(R, k) (Kaggle apk, Spark); "
    "'found': by the relevant items found among the first k (torchmetrics)",
    ("r", "min", "found"),
)


class AP(Measure):
    """AP@k = sum over relevant i <= k of P@i, divided by R (or min(R, k), or the relevant found); 0 when that is 0.

    ``denom=found`` divides by the relevant items found among the first k (the whole list
    without k), torchmetrics' ``retrieval_average_precision(preds, target, top_k=k)``: the mean
    of the precisions at the relevant ranks it found, 0 when it found none.
    """

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
        elif self.params["denom"] == "found":
            r = self.hits_at_k()
        return d.safe_div(total, r)
