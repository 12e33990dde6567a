"""trec_eval's ``rbp_resid`` (``m_rbp_resid.c``): the residual of rank-biased precision.

Spellings (for the trec_eval name table): ``rbp_resid`` -> ``rbp_resid`` (p = 0.9, as
trec_eval); ``rbp_resid.p=0.8`` -> ``rbp_resid(p=0.8)``.  ``-l`` does not apply.
"""

from __future__ import annotations

from typing import Any

from rank_polars.formula import tree as d
from rank_polars.errors import MetricNameError
from rank_polars.measures.base import Measure, Param


class RBPResid(Measure):
    """rbp_resid(p) = how much RBP(p) could still grow if every unjudged row were relevant.

    ``p^n + (1 - p) * sum over unjudged rows i of p^(i-1)``, n being the ranking's length
    (the weight of the rows past its end), which equals ``1 - (1 - p) * sum over judged rows
    i of p^(i-1)``; 0 when every row is judged (trec_eval).  A row is unjudged when it has no
    judgment or a negative one, so this metric reads the ranking's length (``n_ret``).
    """

    NAME = "rbp_resid"
    PARAMS = {"p": Param(float, 0.9, "persistence: probability of looking at the next item (trec_eval: 0.9)")}
    SUPPORTS_CUTOFF = False

    def _check(self, params: dict[str, Any]) -> None:
        if not 0 < params["p"] < 1:
            raise MetricNameError(f"rbp_resid: parameter p must be in (0, 1), got {params['p']!r}")

    def value(self) -> d.Node:
        p = self.params["p"]
        judged = d.row_sum(d.ind(d.JUDGED))
        seen = d.row_sum(d.when(d.JUDGED, d.power(p, d.RANK - 1), 0.0))
        return d.when(d.N_RET > judged, 1.0 - (1.0 - p) * seen, 0.0)

    def contributes(self) -> d.Node:
        return d.JUDGED
