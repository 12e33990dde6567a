"""Precision, recall, F1, success (hit), hits (a count), fall-out and R-precision."""

from __future__ import annotations

from typing import Any

from rank_polars.formula import tree as d
from rank_polars.errors import MetricNameError
from rank_polars.measures.base import REL, TIES, Measure, Param, flag

RELATIVE = Param(flag, False, "divide by min(k, R) instead of k: the best precision possible (trec_eval relative_P)")


class Precision(Measure):
    """P@k = relevant items among the first k / k (missing positions count as non-relevant).

    Without k: relevant items / length of the list (trec_eval ``set_P``).  With
    ``relative=true`` the divisor is min(k, R), or min(length, R) without k: trec_eval's
    ``relative_P`` and ``set_relative_P`` (0 when R = 0).

    ``ties=average`` (runs ordered by score): the expected P@k over the orders of the tied
    scores, each relevant row counting the share of its tie's positions that fall in the top k
    (McSherry and Najork's tie-aware precision).

    >>> import polars as pl, rank_polars as rp
    >>> run = pl.DataFrame({"query": ["q"] * 4, "item": list("abcd"), "score": [1.0, 1.0, 1.0, 0.0],
    ...                     "relevance": [1, 0, 0, 1]})
    >>> rp.evaluate(run, ["p@2", "p(ties=average)@2"]).row(0)[1:]  # a is one of three tied at 1.0
    (0.0, 0.3333333333333333)
    """

    NAME = "p"
    ALIASES = ("precision",)
    PARAMS = {"rel": REL, "relative": RELATIVE, "ties": TIES}

    def value(self) -> d.Node:
        den: d.Node | float = float(self.k) if self.k is not None else d.N_RET
        if self.params["relative"]:
            den = d.least(den, self.n_relevant())
        return d.safe_div(self.hits_at_k(), den)


class Recall(Measure):
    """R@k = relevant items among the first k / R; 0 when R = 0.

    ``ties=average`` (runs ordered by score): the expected R@k over the orders of the tied
    scores (the expected number of relevant items in the top k, as ``p(ties=average)@k``, over R).
    """

    NAME = "r"
    ALIASES = ("recall",)
    PARAMS = {"rel": REL, "ties": TIES}

    def value(self) -> d.Node:
        return d.safe_div(self.hits_at_k(), self.n_relevant())


class F1(Measure):
    """F1@k = 2 P@k R@k / (P@k + R@k); 0 when both are 0."""

    NAME = "f1"
    PARAMS = {"rel": REL}

    def value(self) -> d.Node:
        p = Precision(self.k, **self.params).value()
        r = Recall(self.k, **self.params).value()
        return d.safe_div(2.0 * p * r, p + r)


class Success(Measure):
    """success@k = 1 if a relevant item is among the first k, else 0.

    ``hit@k`` and ``hit_rate@k`` (ranx's and recommenders' ``hit_rate``) are this measure;
    ``hits@k``, ranx's ``hits``, is the count of relevant items (:class:`Hits`).
    """

    NAME = "success"
    ALIASES = ("hit", "hit_rate")
    PARAMS = {"rel": REL}

    def value(self) -> d.Node:
        return d.when(self.hits_at_k() > 0, 1.0, 0.0)


class Hits(Measure):
    """hits@k = the number of relevant items among the first k (ranx ``hits``); mean over queries.

    Without k: the relevant items of the whole list (trec_eval's ``num_rel_ret`` per query,
    which ``evaluate`` sums over queries where ``hits`` is averaged, as ranx does).  ``success@k``
    (``hit@k``) is 1 when this count is above 0.  ``ties=average``: the expected count over the
    orders of the tied scores (runs ordered by score).
    """

    NAME = "hits"
    PARAMS = {"rel": REL, "ties": TIES}

    def value(self) -> d.Node:
        return self.hits_at_k()


class Fallout(Measure):
    """fallout@k = judged non-relevant items among the first k / judged non-relevant items of the query.

    torchmetrics' ``retrieval_fall_out`` (``RetrievalFallOut``): the share of the query's
    non-relevant judgments that the first k retrieve (the whole list without k); lower is
    better.  Non-relevant means judged (grade >= 0) and not relevant (grade <= 0, or below
    ``rel``); an unjudged item counts in neither part, so the value lies in [0, 1].  A query
    with no judged non-relevant item scores 0 and is counted, as every 0/0 here (trec_eval's
    convention; torchmetrics' functional form and ``empty_target_action="neg"``; its class
    defaults to ``"pos"``, 1.0).
    """

    NAME = "fallout"
    ALIASES = ("fall_out",)
    PARAMS = {"rel": REL}
    HIGHER_IS_BETTER = False

    def value(self) -> d.Node:
        nonrel = d.JUDGED & ~self.relevant()
        retrieved = d.row_sum(d.ind(nonrel & self.in_cutoff()))
        return d.safe_div(retrieved, d.judgment_sum(d.ind(nonrel)))

    def contributes(self) -> d.Node:
        return d.JUDGED & ~self.relevant()


class RPrecision(Measure):
    """R-precision = relevant items among the first R / R (even when the list is shorter).

    With ``mult``: precision at c = floor(mult R + 0.9) documents, trec_eval's
    ``Rprec_mult_<mult>`` (its C ``(long)(mult * R + 0.9)``); 0 when c = 0.
    """

    NAME = "rprec"
    ALIASES = ("r_precision", "r-precision", "rprec_mult")
    PARAMS = {"rel": REL, "mult": Param(float, 1.0, "multiple of R at which precision is taken (trec_eval Rprec_mult)")}
    SUPPORTS_CUTOFF = False

    def _check(self, params: dict[str, Any]) -> None:
        if not 0 <= params["mult"] < float("inf"):
            raise MetricNameError(f"rprec: parameter mult must be a finite number >= 0, got {params['mult']!r}")

    def value(self) -> d.Node:
        r = self.n_relevant()
        if self.params["mult"] == 1:
            return d.safe_div(d.row_sum(d.ind(self.relevant() & (d.RANK <= r))), r)
        cut = self.params["mult"] * r + 0.9  # rank <= cut  <=>  rank <= floor(cut): ranks are integers
        return d.safe_div(d.row_sum(d.ind(self.relevant() & (d.RANK <= cut))), d.floor(cut))
