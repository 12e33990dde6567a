"""Counts over the retrieved list (trec_eval's ``num_*``) and the share of unjudged documents.

The counts aggregate over queries as sums (``AGGREGATE = "sum"``): the 'all' line of
trec_eval, and ``num_q`` is then the number of queries evaluated.
"""

from __future__ import annotations

from rank_polars.formula import tree as d
from rank_polars.measures.base import REL, Measure


class _Count(Measure):
    SUPPORTS_CUTOFF = False
    AGGREGATE = "sum"

    def depth(self) -> int | None:
        return None


class NumQ(_Count):
    """num_q = 1 for every query evaluated; its sum is the number of queries."""

    NAME = "num_q"
    ALIASES = ("numq",)

    def value(self) -> d.Node:
        return d.wrap(1.0)

    def contributes(self) -> d.Node:
        return d.Lit(False)

    def depth(self) -> int | None:
        return 0


class NumRet(_Count):
    """num_ret = the number of retrieved documents (the length of the ranking).

    It takes no ``rel`` (trec_eval's ``-l`` does not change it); ir_measures'
    ``NumRet(rel=1)`` is :class:`NumRelRet` and parses as such.
    """

    NAME = "num_ret"
    ALIASES = ("numret",)

    def value(self) -> d.Node:
        return d.N_RET

    def contributes(self) -> d.Node:
        return d.Lit(False)


class NumRel(_Count):
    """num_rel = R, the number of relevant judgments of the query (retrieved or not)."""

    NAME = "num_rel"
    ALIASES = ("numrel",)
    PARAMS = {"rel": REL}

    def value(self) -> d.Node:
        return self.n_relevant()

    def depth(self) -> int | None:
        return 0


class NumRelRet(_Count):
    """num_rel_ret = the number of relevant documents retrieved."""

    NAME = "num_rel_ret"
    ALIASES = ("numrelret",)
    PARAMS = {"rel": REL}

    def value(self) -> d.Node:
        return self.hits_at_k()


class NumNonrelJudgedRet(_Count):
    """num_nonrel_judged_ret = retrieved documents judged (grade >= 0) but not relevant."""

    NAME = "num_nonrel_judged_ret"
    PARAMS = {"rel": REL}

    def value(self) -> d.Node:
        return d.row_sum(d.ind(d.JUDGED & ~self.relevant()))

    def contributes(self) -> d.Node:
        return d.JUDGED


class Unjudged(Measure):
    """unj@k = unjudged documents among the first k / k (trec_eval ``unj``).

    Unjudged: not in the judgments, or judged with a negative grade.  Missing positions
    (a list shorter than k) count as judged, as in trec_eval.  Without k: the unjudged
    share of the whole list (0 for an empty list).  ``-l`` does not apply.
    """

    NAME = "unj"
    ALIASES = ("unjudged",)

    def value(self) -> d.Node:
        judged = d.row_sum(d.ind(d.JUDGED & self.in_cutoff()))
        if self.k is None:
            return d.safe_div(d.N_RET - judged, d.N_RET)
        return (d.least(d.N_RET, float(self.k)) - judged) / float(self.k)

    def contributes(self) -> d.Node:
        return d.JUDGED
