"""infAP: trec_eval's inferred average precision (``m_infap.c``; Yilmaz & Aslam, CIKM 2006).

Spellings (for the trec_eval name table): trec_eval ``infAP`` -> ``infap``; ``-l N`` ->
``infap(rel=N)``; ir_measures ``infAP`` parses to the same spec.
"""

from __future__ import annotations

from rank_polars.formula import tree as d
from rank_polars.measures.base import REL, Measure

INFAP_EPSILON = 1e-5  # trec_eval.h


class InfAP(Measure):
    """infAP = (1/R) sum over retrieved judged relevant rows i of E[P@i].

    The judgments are a sample of a pool.  A retrieved item is *not in the pool* (no
    judgment: skipped), *in the pool but not judged* (a negative grade, trec_eval's ``-1``),
    judged relevant, or judged non-relevant.  At a relevant row of rank i, with r, n and u the
    relevant, non-relevant and pooled-unjudged rows ranked above it::

        E[P@i] = 1/i + (r + n + u)/i * (r + eps) / (r + n + 2 eps),   eps = 1e-5

    (1 at rank 1).  R counts the relevant judgments; infAP is 0 when R = 0.  With ``@k`` only
    the first k rows count (trec_eval has no cutoff).  Without judgments (the run's own
    labels), a negative label is "in the pool, not judged".
    """

    NAME = "infap"
    PARAMS = {"rel": REL}

    def value(self) -> d.Node:
        rel = self.relevant() & d.JUDGED
        above_rel = d.Cum(d.ind(rel)) - 1.0  # a relevant row counts itself
        above_nonrel = d.Cum(d.ind(d.JUDGED & ~self.relevant()))
        above_unjudged = d.Cum(d.ind(d.GRADE < 0))
        seen = above_rel + above_nonrel + above_unjudged
        expected = 1.0 / d.RANK + seen / d.RANK * (
            (above_rel + INFAP_EPSILON) / (above_rel + above_nonrel + 2 * INFAP_EPSILON)
        )
        total = d.row_sum(d.when(rel & self.in_cutoff(), expected, 0.0))
        return d.safe_div(total, self.n_relevant())

    def contributes(self) -> d.Node:
        # every row with a judgment, negative ones included (they are the pooled-unjudged)
        return d.JUDGED | (d.GRADE < 0) | self.relevant()
