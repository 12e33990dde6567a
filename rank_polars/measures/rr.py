"""Reciprocal rank (RR; its mean over queries is MRR)."""

from __future__ import annotations

from rank_polars.formula import tree as d
from rank_polars.measures.base import REL, Measure


class RR(Measure):
    """RR@k = 1 / rank of the first relevant item within the first k; 0 if there is none."""

    NAME = "rr"
    ALIASES = ("mrr", "recip_rank")
    PARAMS = {"rel": REL}

    def value(self) -> d.Node:
        return d.row_max(d.when(self.relevant() & self.in_cutoff(), 1.0 / d.RANK, 0.0))
