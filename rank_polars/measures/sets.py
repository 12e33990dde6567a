"""trec_eval's set measures: the retrieved list as an unordered set, and utility.

With ``rel_ret`` = relevant documents retrieved, ``ret`` = documents retrieved (the length
of the ranking) and ``R`` = relevant judgments of the query, every one is 0 where its
denominator is 0 (trec_eval leaves the value at 0).  None takes a cutoff: trec_eval's ``-M``
shortens the ranking itself.
"""

from __future__ import annotations

from typing import Any

from rank_polars.formula import tree as d
from rank_polars.errors import MetricNameError
from rank_polars.measures.base import REL, Measure, Param
from rank_polars.measures.set_based import RELATIVE, Precision, Recall


class _Set(Measure):
    SUPPORTS_CUTOFF = False

    def depth(self) -> int | None:
        return None


class SetP(_Set):
    """set_p = rel_ret / ret; with ``relative=true``: rel_ret / min(ret, R) (``set_relative_P``)."""

    NAME = "set_p"
    ALIASES = ("setp",)
    PARAMS = {"rel": REL, "relative": RELATIVE}

    def value(self) -> d.Node:
        return Precision(None, **self.params).value()


class SetR(_Set):
    """set_r = rel_ret / R (trec_eval ``set_recall``)."""

    NAME = "set_r"
    ALIASES = ("setr", "set_recall")
    PARAMS = {"rel": REL}

    def value(self) -> d.Node:
        return Recall(None, **self.params).value()


class SetF(_Set):
    """set_f = (beta + 1) P R / (beta P + R) with P = rel_ret / ret, R = rel_ret / R; 0 when rel_ret = 0.

    ``beta`` weighs recall against precision (trec_eval ``set_F.beta``; default 1, the F1 of the set).
    """

    NAME = "set_f"
    ALIASES = ("setf",)
    PARAMS = {"rel": REL, "beta": Param(float, 1.0, "relative importance of recall to precision")}

    def value(self) -> d.Node:
        beta = self.params["beta"]
        rel_ret = self.hits_at_k()
        p = d.safe_div(rel_ret, d.N_RET)
        r = d.safe_div(rel_ret, self.n_relevant())
        # trec_eval's order of operations, so that the doubles agree to the last bit
        return d.safe_div((beta + 1.0) * p * r, beta * p + r)


class SetAP(_Set):
    """set_ap = rel_ret^2 / (ret R): precision times recall of the set (trec_eval ``set_map``)."""

    NAME = "set_ap"
    ALIASES = ("setap", "set_map")
    PARAMS = {"rel": REL}

    def value(self) -> d.Node:
        rel_ret = self.hits_at_k()
        return d.safe_div(rel_ret * rel_ret, d.N_RET * self.n_relevant())


class Utility(_Set):
    """utility = a rel_ret + b (ret - rel_ret) + c (R - rel_ret) + d (docs + rel_ret - ret - R).

    The weights of trec_eval's contingency table (retrieved relevant, retrieved non-relevant,
    missed relevant, rejected non-relevant); ``docs`` is the collection size (trec_eval ``-N``,
    default 0).  Averaged over queries, as trec_eval does.
    """

    NAME = "utility"
    PARAMS = {
        "a": Param(float, 1.0, "worth of a relevant document retrieved"),
        "b": Param(float, -1.0, "worth of a non-relevant document retrieved"),
        "c": Param(float, 0.0, "worth of a relevant document not retrieved"),
        "d": Param(float, 0.0, "worth of a non-relevant document not retrieved"),
        "docs": Param(int, 0, "documents in the collection (trec_eval -N), for the d term"),
        "rel": REL,
    }

    def _check(self, params: dict[str, Any]) -> None:
        if params["docs"] < 0:
            raise MetricNameError(f"utility: parameter docs must be >= 0, got {params['docs']!r}")

    def value(self) -> d.Node:
        a, b, c, w = (self.params[x] for x in "abcd")
        rel_ret, ret, r = self.hits_at_k(), d.N_RET, self.n_relevant()
        out = a * rel_ret + b * (ret - rel_ret) + c * (r - rel_ret)
        return out + w * (float(self.params["docs"]) + rel_ret - ret - r)


__all__ = ["SetAP", "SetF", "SetP", "SetR", "Utility"]
