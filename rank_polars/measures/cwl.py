"""The C/W/L family (``cwl_eval``; ir_measures' ``INST``, ``INSQ``, ``BPM``, ``SDCG``, ``NERR8``..``NERR11``).

A C/W/L measure is a user model: at rank i the user goes on with probability C(i), so the
weight of rank i is W(i) = P(i) / Σ P, with P(i) = C(1)···C(i−1) over the ``MAX_N`` = 1000
ranks ``cwl_eval`` reads (a shorter list is padded with no gain, a longer one cut); the value is
the expected rate of gain Σ W(i) g(i).  Gains are the grades scaled to [0, 1] as ir_measures
hands them to ``cwl_eval``: ``(min(max(grade, min_rel), max_rel) − min_rel) / (max_rel − min_rel)``
(a negative or unjudged grade gains 0).

Here both sums run over the relevant rows alone: between two of them C follows a fixed rule, so
a product over a stretch of ranks telescopes (INST's ((i + a − 1)/(i + a))² over i = p..q is
((p + a − 1)/(q + a))²) and a sum over a stretch is a closed form — a geometric sum, a
difference of harmonic numbers (:func:`~rank_polars.formula.tree.digamma`) or of
:func:`~rank_polars.formula.tree.trigamma`.  Σ P over all 1000 ranks is then the sum for no
gain, corrected at each relevant row for how it changes the ranks after it.  P at a row, a
product over the rows above, is ``exp`` of a running sum (:class:`~rank_polars.formula.tree.Cum`)
of logarithms; a gain of 1 (which stops NERR's user) is counted apart, as its logarithm is −∞.
"""

from __future__ import annotations

import math
from typing import Any

from rank_polars.errors import MetricNameError
from rank_polars.formula import tree as d
from rank_polars.measures.base import Measure, Param

MAX_N = 1000
"""The ranks ``cwl_eval`` reads (its ``max_n``; ir_measures keeps that default)."""

MIN_REL = Param(float, 0.0, "grade that gains 0 (ir_measures' min_rel; lower grades gain 0 too)")
MAX_REL = Param(float, 1.0, "grade that gains 1 (ir_measures' max_rel; higher grades gain 1); default 1: the grades are gains in [0, 1], as cwl_eval reads them")
T = Param(float, 1.0, "the gain the user wants (T)")


class _CWL(Measure):
    """Gains scaled to [0, 1] and the pieces every C/W/L measure shares."""

    PARAMS: dict[str, Param] = {"min_rel": MIN_REL, "max_rel": MAX_REL}
    SUPPORTS_CUTOFF = False

    def _check(self, params: dict[str, Any]) -> None:
        if not 0 <= params["min_rel"] < params["max_rel"]:
            raise MetricNameError(f"{self.NAME}: needs 0 <= min_rel < max_rel, got min_rel={params['min_rel']!r}, "
                                  f"max_rel={params['max_rel']!r}")
        if "t" in params and not params["t"] > 0:
            raise MetricNameError(f"{self.NAME}: T must be positive, got {params['t']!r}")

    def relevant(self) -> d.Node:
        return d.GRADE > self.params["min_rel"]

    def contributes(self) -> d.Node:
        return self.relevant()

    def depth(self) -> int | None:
        return min(self.k, MAX_N) if self.k is not None else MAX_N

    @property
    def n(self) -> int:
        """The ranks read: the cutoff (at most ``MAX_N``), else ``MAX_N``."""
        return min(self.k, MAX_N) if self.k is not None else MAX_N

    def g(self) -> d.Node:
        """The row's gain in [0, 1]; 0 past the ranks read."""
        lo, hi = self.params["min_rel"], self.params["max_rel"]
        scaled = (d.least(d.GRADE, hi) - lo) / (hi - lo)
        return d.when(self.relevant() & (d.RANK <= self.n), scaled, 0.0)

    def still_reading(self) -> d.Node:
        """Q: the product of (1 − g) over the relevant rows above this one (NERR's user stops at
        a gain with that probability); 0 once a row above gained 1."""
        g = self.g()
        full = d.ind(g >= 1.0)
        log_rest = d.ln(d.when(g < 1.0, 1.0 - g, 1.0))
        return d.when(d.Cum(full) - full > 0, 0.0, d.exp(d.Cum(log_rest) - log_rest))

    def rate(self, weight: d.Node, total: d.Node) -> d.Node:
        """Σ over the rows of g × ``weight`` (P at the row), over Σ P (``total``)."""
        return d.row_sum(self.g() * weight) / total

    def stopping(self, weight: d.Node, whole: float, after: d.Node) -> d.Node:
        """NERR's rate: P = ``weight`` × Q.  Σ P is ``whole`` (the weights of every rank read)
        less, at each relevant row, Q g × ``after`` (the weights of the ranks after it): the
        users its gain stopped."""
        q, g = self.still_reading(), self.g()
        total = whole - d.row_sum(d.when(d.RANK < float(self.n), q * g * after, 0.0))
        return self.rate(q * weight, total)

    def cutoff(self) -> float:
        """k, which the measure needs."""
        if self.k is None:
            raise MetricNameError(f"{self.NAME} needs a cutoff: {self.NAME}@k")
        return float(self.n)


def _insq_total(t: float, n: int) -> float:
    """Σ_{i=1..n} (2T / (i − 1 + 2T))²: INSQ's Σ P."""
    return math.fsum((2.0 * t / (i - 1 + 2.0 * t)) ** 2 for i in range(1, n + 1))


class SDCG(_CWL):
    """SDCG@k = DCG@k of the scaled gains / Σ_{i ≤ k} 1/log2(i + 1) (C/W/L's scaled DCG).

    ``cwl_eval``'s ``NDCG-k@k`` (ir_measures ``SDCG(max_rel=...)@k``): DCG's discount made a
    distribution over the first k ranks, so that the value is a rate of gain in [0, 1].

    >>> import polars as pl, rank_polars as rp
    >>> run = pl.DataFrame({"query": ["q"] * 3, "item": list("abc"), "position": [1, 2, 3], "relevance": [0, 3, 1]})
    >>> round(rp.evaluate(run, ["sdcg(max_rel=3)@3"]).item(0, 1), 4)  # (1/log2(3) + 1/3 * 1/2) / (1 + 1/log2(3) + 1/2)
    0.3743
    """

    NAME = "sdcg"
    PARAMS = {**_CWL.PARAMS, "dcg": Param(str, "log2", "DCG's discount (ir_measures' dcg; log2 only)", ("log2",))}
    SUPPORTS_CUTOFF = True

    def value(self) -> d.Node:
        self.cutoff()
        total = math.fsum(1.0 / math.log2(i + 1) for i in range(1, self.n + 1))
        return self.rate(1.0 / d.log2(d.RANK + 1.0), d.Lit(total))




class NERR8(_CWL):
    """NERR8@k = Σ_{i ≤ k} g_i Q_i / Σ_{i ≤ k} Q_i, Q_i = Π_{j < i} (1 − g_j) (Azzopardi et al.'s NERR eq. 8).

    ERR's user, who stops at a gain g with probability g, made a C/W/L measure truncated at k:
    ``cwl_eval``'s ``NERReq8CWLMetric`` (ir_measures ``NERR8(max_rel=...)@k``).

    >>> import polars as pl, rank_polars as rp
    >>> run = pl.DataFrame({"query": ["q"] * 3, "item": list("abc"), "position": [1, 2, 3], "relevance": [0, 2, 1]})
    >>> rp.evaluate(run, ["nerr8(max_rel=2)@3"]).item(0, 1)  # (1 + 0) / (1 + 1 + 0)
    0.5
    """

    NAME = "nerr8"
    SUPPORTS_CUTOFF = True

    def value(self) -> d.Node:
        k = self.cutoff()
        return self.stopping(d.Lit(1.0), k, k - d.RANK)


class NERR9(_CWL):
    """NERR9@k = Σ_{i ≤ k} g_i Q_i / i over Σ_{i ≤ k} Q_i / i (Azzopardi et al.'s NERR eq. 9).

    C(i) = i/(i + 1) (1 − g_i) below k: ``cwl_eval``'s ``NERReq9CWLMetric`` (ir_measures
    ``NERR9(max_rel=...)@k``); the sums of 1/i are harmonic numbers.

    >>> import polars as pl, rank_polars as rp
    >>> run = pl.DataFrame({"query": ["q"] * 2, "item": list("ab"), "position": [1, 2], "relevance": [1, 1]})
    >>> round(rp.evaluate(run, ["nerr9@2"]).item(0, 1), 4)  # the first row gains 1 and the user stops there
    1.0
    """

    NAME = "nerr9"
    SUPPORTS_CUTOFF = True

    def value(self) -> d.Node:
        h_k = math.fsum(1.0 / i for i in range(1, int(self.cutoff()) + 1))
        h_rank = d.digamma(d.RANK + 1.0) + 0.5772156649015329  # H(rank)
        return self.stopping(1.0 / d.RANK, h_k, h_k - h_rank)


class NERR10(_CWL):
    """NERR10 = Σ g_i p^(i−1) Q_i / Σ p^(i−1) Q_i over 1000 ranks (Azzopardi et al.'s NERR eq. 10).

    C(i) = p (1 − g_i): RBP's patience and ERR's stopping at a gain, ``cwl_eval``'s
    ``NERReq10CWLMetric`` (ir_measures ``NERR10(p=0.9, max_rel=...)``).

    >>> import polars as pl, rank_polars as rp
    >>> run = pl.DataFrame({"query": ["q"], "item": ["a"], "position": [1], "relevance": [1]})
    >>> rp.evaluate(run, ["nerr10(p=0.5)"]).item(0, 1)  # the user stops at rank 1
    1.0
    """

    NAME = "nerr10"
    PARAMS = {**_CWL.PARAMS, "p": Param(float, 0.9, "persistence: the chance of going on past a rank without gain")}

    def _check(self, params: dict[str, Any]) -> None:
        super()._check(params)
        if not 0 < params["p"] < 1:
            raise MetricNameError(f"nerr10: p must be in (0, 1), got {params['p']!r}")

    def value(self) -> d.Node:
        p = self.params["p"]
        p_n = math.pow(p, MAX_N)
        after = (d.power(p, d.RANK) - p_n) / (1.0 - p)  # Σ_{i = rank+1..N} p^(i−1)
        return self.stopping(d.power(p, d.RANK - 1.0), (1.0 - p_n) / (1.0 - p), after)


class NERR11(_CWL):
    """NERR11 = Σ g_i w_i Q_i / Σ w_i Q_i over 1000 ranks, w_i = (2T / (i − 1 + 2T))² (Azzopardi et al.'s NERR eq. 11).

    C(i) = ((i + 2T − 1)/(i + 2T))² (1 − g_i): INSQ's user who also stops at a gain,
    ``cwl_eval``'s ``NERReq11CWLMetric`` (ir_measures ``NERR11(T=1, max_rel=...)``).

    >>> import polars as pl, rank_polars as rp
    >>> run = pl.DataFrame({"query": ["q"], "item": ["a"], "position": [1], "relevance": [1]})
    >>> round(rp.evaluate(run, ["nerr11"]).item(0, 1), 4)  # the user stops at rank 1
    1.0
    """

    NAME = "nerr11"
    PARAMS = {**_CWL.PARAMS, "t": T}

    def value(self) -> d.Node:
        t2 = 2.0 * self.params["t"]
        weight = d.power(t2 / (d.RANK - 1.0 + t2), 2.0)
        after = t2 * t2 * (d.trigamma(d.RANK + t2) - d.trigamma(d.Lit(MAX_N + t2)))  # Σ_{i = rank+1..N} w_i
        return self.stopping(weight, _insq_total(self.params["t"], MAX_N), after)


class INSQ(_CWL):
    """INSQ = Σ g_i w_i / Σ_{i ≤ 1000} w_i, w_i = (2T / (i − 1 + 2T))² (Moffat et al. 2012).

    C(i) = ((i + 2T − 1)/(i + 2T))², the same whatever the gains: ``cwl_eval``'s
    ``INSQCWLMetric`` (ir_measures ``INSQ(T=1, max_rel=...)``).

    >>> import polars as pl, rank_polars as rp
    >>> run = pl.DataFrame({"query": ["q"] * 2, "item": list("ab"), "position": [1, 2], "relevance": [0, 1]})
    >>> round(rp.evaluate(run, ["insq(t=2)"]).item(0, 1), 4)  # W(2) = (4/5)² / Σ_{i ≤ 1000} (4/(i + 3))²
    0.1414
    """

    NAME = "insq"
    PARAMS = {**_CWL.PARAMS, "t": T}

    def value(self) -> d.Node:
        t2 = 2.0 * self.params["t"]
        return self.rate(d.power(t2 / (d.RANK - 1.0 + t2), 2.0), d.Lit(_insq_total(self.params["t"], MAX_N)))


class INST(_CWL):
    """INST = Σ W(i) g_i with C(i) = ((i + a_i − 1)/(i + a_i))², a_i = 2T − (gain up to i) (Moffat et al. 2015).

    The user wants a gain T and reads on while it is missing: ``cwl_eval``'s ``INSTCWLMetric``
    (ir_measures ``INST(T=1, max_rel=...)``).  Between two relevant rows a is fixed and
    P(i) = P(r) ((r + a − 1)/(i − 1 + a))²; each relevant row r starts such a stretch up to
    rank 1000 (trigamma differences) and ends the previous one.  T > 1/2 (a smaller T, with a
    gain of 1 at the top, makes C(1) = 0 and a logarithm of 0).

    >>> import polars as pl, rank_polars as rp
    >>> run = pl.DataFrame({"query": ["q"] * 2, "item": list("ab"), "position": [1, 2], "relevance": [1, 0]})
    >>> round(rp.evaluate(run, ["inst"]).item(0, 1), 4)
    0.6083
    """

    NAME = "inst"
    PARAMS = {**_CWL.PARAMS, "t": T}

    def _check(self, params: dict[str, Any]) -> None:
        super()._check(params)
        if not params["t"] > 0.5:
            raise MetricNameError(f"inst: T must be above 0.5, got {params['t']!r}")

    def value(self) -> d.Node:
        g, t2, n, r = self.g(), 2.0 * self.params["t"], float(MAX_N), d.RANK
        a = t2 - d.Cum(g)  # a at the row (its own gain included)
        before = a + g  # a over the stretch the row ends
        # P at the row: (2T)² Π over the rows above of ((r + a − 1)/(r' − 1 + a))², r' the next row
        log_p = 2.0 * (math.log(t2) + d.Cum(d.ln(r + a - 1.0)) - d.ln(r + a - 1.0) - d.Cum(d.ln(r - 1.0 + before)))
        p = d.exp(log_p)
        new = p * d.power(r + a - 1.0, 2.0) * (d.trigamma(r + a) - d.trigamma(n + a))
        old = p * d.power(r - 1.0 + before, 2.0) * (d.trigamma(r + before) - d.trigamma(n + before))
        total = _insq_total(self.params["t"], MAX_N) + d.row_sum(d.when(r < n, new - old, 0.0))
        return self.rate(p, total)


class BPM(_CWL):
    """BPM@K = the mean gain of the first min(K, r*) ranks, r* the rank where the gain reaches T (Zhang et al. 2017).

    The Bejewelled Player Model with unit costs: the user reads until the gain reaches T or K
    items are read; ``cwl_eval``'s ``BPMCWLMetric(T, K)`` (ir_measures ``BPM(T=1, max_rel=...)@K``).

    >>> import polars as pl, rank_polars as rp
    >>> run = pl.DataFrame({"query": ["q"] * 3, "item": list("abc"), "position": [1, 2, 3], "relevance": [0, 1, 1]})
    >>> rp.evaluate(run, ["bpm@10"]).item(0, 1)  # stops at rank 2, where the gain reaches T = 1
    0.5
    """

    NAME = "bpm"
    PARAMS = {**_CWL.PARAMS, "t": T}
    SUPPORTS_CUTOFF = True

    def value(self) -> d.Node:
        g, t, k, gained = self.g(), self.params["t"], self.cutoff(), d.Cum(self.g())
        # the user stops at the first rank where the gain reaches T, or at K
        stop = k - d.row_max(d.when((gained >= t) & (d.RANK < k), k - d.RANK, 0.0))
        # read while no earlier rank reached T: a count of ranks at or before this one that reached
        # it, less this one's (whole numbers, exact), not ``gained - g < t``, whose rounding read
        # the rank after the stop ([1.0, 0.88] at T = 1: 1.88 - 0.88 < 1, BPM 1.88)
        reached = d.ind(gained >= t)
        read = d.row_sum(d.when((d.RANK <= k) & (d.Cum(reached) - reached < 0.5), g, 0.0))
        return read / stop


MEASURES: tuple[type[Measure], ...] = (SDCG, NERR8, NERR9, NERR10, NERR11, INSQ, INST, BPM)
