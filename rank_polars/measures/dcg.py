"""Cumulative gain family: CG, DCG, IDCG and nDCG.

``gain`` (linear: the grade; exp: 2^grade - 1) and ``discount`` (log2: 1/log2(i+1);
jarvelin: ranks 1 and 2 undiscounted, then 1/log2(i)) are parameters; grades <= 0 add nothing.
The ideal ranking is every judgment of the query sorted by grade (trec_eval), or with
``ideal=run`` the ranked list's own items; ``ideal_cut=list`` cuts it at the list's length.

``gains=1:3;2:9;4:4.5`` is trec_eval's gain map (``-m ndcg.1=3,2=9,4=4.5``, see
:mod:`rank_polars.measures.gain_map`): a gain per level, unlisted levels gaining their grade;
a level may gain 0 or less, and level 0 may gain; the ideal is sorted by gain.
Spellings (for the trec_eval name table): ``ndcg.1=3,2=9,4=4.5`` -> ``ndcg(gains=1:3;2:9;4:4.5)``.
"""

from __future__ import annotations

from rank_polars.formula import tree as d
from rank_polars.measures.base import DISCOUNT, GAIN, IDEAL, IDEAL_CUT, TIES, Measure
from rank_polars.measures.gain_map import GAINS, ideal_rank, mapped_gain, nonzero, positive


class _GainMapped(Measure):
    """DCG and IDCG with an optional trec_eval gain map (``gains=``)."""

    def _check(self, params: dict) -> None:
        if params.get("gains") is not None and params.get("gain") == "exp":
            from rank_polars.errors import MetricNameError

            raise MetricNameError(f"{self.NAME}: gains= (a gain per level) and gain=exp exclude each other")

    def row_gain(self) -> d.Node:
        """A row's gain: with a gain map it may be negative, or positive at grade 0."""
        return mapped_gain(self.params["gains"]) if self.params.get("gains") else self.gain()

    def contributes(self) -> d.Node:
        return nonzero(self.row_gain()) if self.params.get("gains") else d.GRADE > 0


class CG(Measure):
    """CG@k = sum of the gains of the first k items."""

    NAME = "cg"
    PARAMS = {"gain": GAIN}

    def value(self) -> d.Node:
        return d.row_sum(d.when(self.in_cutoff(), self.gain(), 0.0))

    def contributes(self) -> d.Node:
        return d.GRADE > 0


class DCG(_GainMapped):
    """DCG@k = sum over i <= k of gain(rel_i) * discount(i).

    ``ties=average`` (runs ordered by score): each tie of scores gains its rows' mean gain times
    the sum of the discounts of the positions it occupies within the top k, scikit-learn's
    ``dcg_score`` (``ignore_ties=False``): the expected DCG@k over the ties' orders.

    >>> import polars as pl, rank_polars as rp
    >>> run = pl.DataFrame({"query": ["q"] * 5, "item": list("abcde"), "score": [0.1, 0, 0, 0, 0.1],
    ...                     "relevance": [10, 0, 0, 1, 5]})
    >>> rp.evaluate(run, ["dcg@1", "dcg(ties=average)@1"])
    shape: (1, 3)
    ┌─────────┬───────┬─────────────────────┐
    │ queries ┆ dcg@1 ┆ dcg(ties=average)@1 │
    │ ---     ┆ ---   ┆ ---                 │
    │ u32     ┆ f64   ┆ f64                 │
    ╞═════════╪═══════╪═════════════════════╡
    │ 1       ┆ 5.0   ┆ 7.5                 │
    └─────────┴───────┴─────────────────────┘
    """

    NAME = "dcg"
    PARAMS = {"gain": GAIN, "discount": DISCOUNT, "gains": GAINS, "ties": TIES}

    def value(self) -> d.Node:
        if self.tie_averaged:  # (mean gain of a tie) x (its discounts in the top k), row by row
            weight = d.when(self.in_cutoff(), 1.0 / self.discount(d.RANK), 0.0)
            return d.row_sum(self.row_gain() * self.tie_weight(weight))
        return d.row_sum(d.when(self.in_cutoff(), self.row_gain() / self.discount(d.RANK), 0.0))


class IDCG(_GainMapped):
    """IDCG@k = DCG@k of the ideal ranking (judgments sorted by gain, descending; only
    positive gains)."""

    NAME = "idcg"
    ALIASES = ("ideal_dcg",)  # trec_eval's name
    PARAMS = {"gain": GAIN, "discount": DISCOUNT, "ideal": IDEAL, "ideal_cut": IDEAL_CUT, "gains": GAINS}

    def value(self) -> d.Node:
        irank = ideal_rank(self.params["gains"])
        cut = irank <= self.k if self.k is not None else d.Lit(True)
        if self.params["ideal_cut"] == "list":
            cut = cut & (irank <= d.N_RET)
        term = d.when(cut, positive(self.row_gain()) / self.discount(irank), 0.0)
        return d.judgment_sum(term, source=self.params["ideal"])

    def depth(self) -> int | None:
        return 0  # needs no run rows beyond the list length, which comes from the row count


class NDCG(_GainMapped):
    """nDCG@k = DCG@k / IDCG@k, and 0 when IDCG@k = 0 (trec_eval)."""

    NAME = "ndcg"
    ALIASES = ("mean_ndcg",)
    PARAMS = {**IDCG.PARAMS, "ties": TIES}

    def value(self) -> d.Node:
        p = dict(self.params)
        ties = p.pop("ties")  # the ideal has no ties to average: it is ordered by gain
        dcg = DCG(self.k, gain=p["gain"], discount=p["discount"], gains=p["gains"], ties=ties).value()
        idcg = IDCG(self.k, **p).value()
        return d.safe_div(dcg, idcg)
