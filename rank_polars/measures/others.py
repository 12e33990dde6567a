"""bpref, ERR, RBP and judged@k."""

from __future__ import annotations

from typing import Any

from rank_polars.formula import tree as d
from rank_polars.errors import MetricNameError
from rank_polars.measures.base import REL, TIES, Measure, Param


class Bpref(Measure):
    """bpref = (1/R) sum over retrieved judged relevant r of (1 - min(n_r, R) / min(N, R)).

    n_r: judged non-relevant items ranked above r; N: judged non-relevant judgments of the
    query.  A term is 1 while no judged non-relevant item has been seen (so N = 0 never
    divides), and bpref is 0 when R = 0 (trec_eval).  Unjudged items are skipped.
    """

    NAME = "bpref"
    PARAMS = {"rel": REL}

    def value(self) -> d.Node:
        nonrel = d.JUDGED & ~self.relevant()
        r = self.n_relevant()
        n = d.judgment_sum(d.ind(nonrel))
        above = d.Cum(d.ind(nonrel))  # inclusive, but a relevant row adds 0 to it
        term = d.when(above > 0, 1.0 - d.least(above, r) / d.least(n, r), 1.0)
        total = d.row_sum(d.when(self.relevant() & d.JUDGED & self.in_cutoff(), term, 0.0))
        return d.safe_div(total, r)

    def contributes(self) -> d.Node:
        return d.JUDGED | self.relevant()

    def depth(self) -> int | None:
        return self.k


class ERR(Measure):
    """ERR@k = sum over i <= k of R_i / i * prod over j < i of (1 - R_j).

    R_i = (2^g_i - 1) / 2^max, with ``max`` the highest grade of the scale (default: the
    highest grade found in the judgments); grades above ``max`` are clipped to it.
    """

    NAME = "err"
    PARAMS = {"max": Param(float, None, "maximum grade of the scale; default: highest grade in the judgments")}

    def _check(self, params: dict[str, Any]) -> None:
        if params["max"] is not None and params["max"] <= 0:
            raise MetricNameError(f"err: parameter max must be > 0, got {params['max']!r}")

    def value(self) -> d.Node:
        gmax: d.Node = d.wrap(self.params["max"]) if self.params["max"] is not None else d.global_max(d.GRADE)
        g = d.least(d.GRADE, gmax)
        scale = d.power(2.0, gmax)
        stop = d.when(d.GRADE > 0, (d.power(2.0, g) - 1.0) / scale, 0.0)
        # prod_{j<i} (1 - R_j) as exp(sum of logs): a running sum is a window every engine has.
        # 1 - R_j as (2^max - 2^g + 1) / 2^max: exact, so the same bits as 1 - R_j, for whole
        # grades up to 52, and not 0 where 2^g - 1 rounds to 2^g (g = max from 54 on), whose
        # log made the running sum NaN
        log_cont = d.ln(d.when(d.GRADE > 0, (scale - d.power(2.0, g) + 1.0) / scale, 1.0))
        reach = d.exp(d.Cum(log_cont) - log_cont)
        return d.row_sum(d.when(self.in_cutoff(), stop / d.RANK * reach, 0.0))

    def contributes(self) -> d.Node:
        return d.GRADE > 0


class RBP(Measure):
    """RBP(p)@k = (1 - p) * sum over i <= k of gain_i * p^(i-1) (no residual: see ``rbp_resid``).

    ``gain=binary`` (default; ir_measures' ``RBP``): 1 for a relevant row, else 0.
    ``gain=graded`` (trec_eval's ``rbp``, ``m_rbp.c``): the grade divided by the query's top
    judged grade when that is above 1, so gains lie in [0, 1]; it reads every positive grade
    (``rel`` does not apply, as trec_eval ignores ``-l`` here).  trec_eval's ``rbp`` is
    ``rbp(p=0.9, gain=graded)``; the default p stays 0.8 (ir_measures) for existing users.
    ``ties=average`` (runs ordered by score): the expected RBP over the orders of tied scores,
    each row's weight p^(i-1) averaged over the positions of its tie.
    """

    NAME = "rbp"
    PARAMS = {
        "p": Param(float, 0.8, "persistence: probability of looking at the next item"),
        "rel": REL,
        "gain": Param(
            str, "binary", "'binary': 1 if relevant; 'graded': grade / top judged grade (trec_eval)", ("binary", "graded")
        ),
        "ties": TIES,
    }

    def _check(self, params: dict[str, Any]) -> None:
        if not 0 < params["p"] < 1:
            raise MetricNameError(f"rbp: parameter p must be in (0, 1), got {params['p']!r}")
        if params["gain"] == "graded" and params["rel"] is not None:
            raise MetricNameError("rbp: gain=graded reads every positive grade; rel applies to gain=binary only")

    def value(self) -> d.Node:
        p = self.params["p"]
        weight = d.power(p, d.RANK - 1)
        if self.params["gain"] == "graded":
            top = d.Agg("max", d.GRADE, "judgments")
            gain = d.when(d.GRADE > 0, d.when(top > 1, d.GRADE / top, d.GRADE), 0.0)
        else:
            gain = d.ind(self.relevant())
        if self.tie_averaged:  # each row's weight averaged over its tie's positions
            return (1.0 - p) * d.row_sum(gain * self.tie_weight(d.when(self.in_cutoff(), weight, 0.0)))
        if self.params["gain"] == "graded":
            return (1.0 - p) * d.row_sum(d.when(self.in_cutoff(), gain * weight, 0.0))
        return (1.0 - p) * d.row_sum(d.when(self.relevant() & self.in_cutoff(), weight, 0.0))

    def contributes(self) -> d.Node:
        return d.GRADE > 0 if self.params["gain"] == "graded" else self.relevant()


class Judged(Measure):
    """judged@k = judged items among the first min(k, n) / min(k, n), n = list length (ir_measures)."""

    NAME = "judged"
    PARAMS = {}

    def value(self) -> d.Node:
        den = d.least(d.N_RET, float(self.k)) if self.k is not None else d.N_RET
        return d.safe_div(d.row_sum(d.ind(d.JUDGED & self.in_cutoff())), den)

    def contributes(self) -> d.Node:
        return d.JUDGED
