"""What ``rp.counterfactual`` estimates: the estimators and the additive metrics' rank weights λ(r).

A metric is additive when its value for a ranking is a sum over the ranked items of a weight of
the item's rank times the item's relevance, ``Σ_d λ(rank(d)) · rel(d)``. Under the
position-based click model a logged click on d at position p is unbiased for
``examination(p) · rel(d)``, so ``λ(rank_candidate(d)) · click / examination(p)`` summed over the
logged clicks estimates the candidate's metric (Joachims, Swaminathan & Schnabel, WSDM 2017,
eq. 5; Agarwal et al., SIGIR 2019, "additive metrics").  The weights (r: the candidate's rank,
θ: the examination curve given, n: the candidate's list length for the query):

========== ================================ ==========================================
metric     λ(r) for r ≤ k (0 beyond k)      notes
========== ================================ ==========================================
cg@k       1
dcg@k      1 / log2(r + 1)                  linear gain, log2 discount only
p@k        1 / k (1 / n without @k)         trec_eval's P@k: divided by k
rbp(p)@k   (1 - p) · p^(r - 1)              binary gain only
clicks@k   θ(r)                             the candidate's expected clicks in its top k
ctr@k      θ(r) / n_k                       the candidate's CTR in its top k (mean form)
========== ================================ ==========================================

n_k is the number of the candidate's rows ranked at most k (n without @k): the rows shown in its top k,
as evaluate's ``ctr@k`` divides by, which is min(k, n) for a list ranked 1, 2, 3, ... but fewer for a
candidate whose positions have gaps.

Refused, because they are not sums over items of a weight times the relevance: ``rr`` (and
``click_rr``: the reciprocal rank of the *first* relevant item is a maximum over items; it has no
additive form without a cascade assumption), ``ndcg`` (divided by the ideal DCG of relevances
the log does not reveal), ``ap``, ``err``, ``recall`` (its denominator is the unknown number of
relevant items), ``success`` (a maximum), ``ctr(agg=ratio)`` (a ratio of sums over rankings).

The examination curve θ is relative to position 1 (as ``rp.position_bias`` returns it), so
dcg / p / rbp / cg come out on the scale of "relevance as clicks at position 1"; clicks@k and
ctr@k do not depend on that scale (θ(r) / θ(p) is a ratio), which is why they recover the true
online clicks and CTR of the candidate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import polars as pl

from rank_polars.formula.tree import sql_log2
from rank_polars.errors import MetricNameError, RankPolarsError
from rank_polars.measures import Measure, parse

#: Position-based estimators (an examination curve), and the slate estimators (the logging
#: policy's propensities) with the column of the log each reads (OBP's names).
POSITION_BASED = ("ips", "snips")
SLATE = {
    "standard_ips": "pscore", "independent_ips": "pscore_item_position", "rips": "pscore_cascade",
    "sn_standard_ips": "pscore", "sn_independent_ips": "pscore_item_position", "sn_rips": "pscore_cascade",
}
ESTIMATORS = POSITION_BASED + tuple(SLATE)

#: The evaluation policy's propensity columns read when ``candidate=None`` (a stochastic
#: candidate given as propensities, OBP's ``evaluation_policy_pscore*``).
EVALUATION = {b: f"evaluation_policy_{b}" for b in ("pscore", "pscore_item_position", "pscore_cascade")}

_REFUSED = {
    "rr": "the reciprocal rank of the first relevant item is a maximum over items, not a sum: no additive form "
          "without a cascade assumption",
    "click_rr": "the reciprocal rank of the first click is a maximum over items, not a sum",
    "last_click_rr": "the reciprocal rank of the last click is a maximum over items, not a sum",
    "ndcg": "it is divided by the ideal DCG, built from relevances the log does not reveal",
    "ap": "it is not a sum over items of a rank weight times the relevance",
    "err": "its value at a rank depends on the relevance of every item above it (cascade), not a sum",
    "recall": "its denominator is the number of relevant items, which the log does not reveal",
    "success": "it is a maximum over items (any relevant in the top k), not a sum",
    "abandonment": "it is a maximum over items (no click in the top k), not a sum",
}


@dataclass(frozen=True)
class Weight:
    """One additive metric: its label and its rank weight λ(r) (see the module's table)."""

    label: str
    kind: str  # "cg" | "dcg" | "p" | "rbp" | "clicks" | "ctr"
    k: int | None
    persistence: float = 0.8

    @property
    def needs_examination_at_rank(self) -> bool:
        return self.kind in ("clicks", "ctr")

    @property
    def length(self) -> str:
        """The column of the candidate's list length this weight divides by (the engines count
        it per query): its rows ranked at most k for ``ctr@k`` (the rows shown in its top k,
        fewer than min(k, n) when the positions have gaps), every row otherwise."""
        return f"_n{self.k}" if self.kind == "ctr" and self.k is not None else "_n"

    def polars(self, r: pl.Expr, theta_r: pl.Expr, n: pl.Expr) -> pl.Expr:
        """λ(r) as a Polars expression; 0 where r is null (the candidate lacks the item) or beyond k.
        ``n`` is the list length named by :attr:`length`."""
        lam = {
            "cg": pl.lit(1.0),
            "dcg": 1.0 / (r + 1).cast(pl.Float64).log(2),
            "p": 1.0 / (pl.lit(float(self.k)) if self.k else n.cast(pl.Float64)),
            "rbp": (1.0 - self.persistence) * pl.lit(self.persistence).pow(r - 1),
            "clicks": theta_r,
            "ctr": theta_r / n.cast(pl.Float64),
        }[self.kind]
        inside = r.is_not_null() if self.k is None else r.is_not_null() & (r <= self.k)
        return pl.when(inside).then(lam).otherwise(0.0)

    def sql(self, r: str, theta_r: str, n: str) -> str:
        """λ(r) as a DuckDB expression (the same cases as :meth:`polars`)."""
        lam = {
            "cg": "1.0",
            "dcg": f"1.0 / {sql_log2(f'{r} + 1.0')}",
            "p": f"1.0 / {float(self.k)!r}" if self.k else f"1.0 / {n}",
            "rbp": f"{1.0 - self.persistence!r} * POW({self.persistence!r}, {r} - 1)",
            "clicks": theta_r,
            "ctr": f"{theta_r} / {n}",
        }[self.kind]
        inside = f"{r} IS NOT NULL" + (f" AND {r} <= {self.k}" if self.k else "")
        return f"CASE WHEN {inside} THEN {lam} ELSE 0.0 END"


def weights(metrics: str | Measure | Sequence[str | Measure]) -> list[Weight]:
    """The additive metrics asked for, each parsed by the house parser; a clear error for the rest.

    >>> [(w.label, w.kind, w.k) for w in weights(["dcg@10", "P@5", "rbp(p=0.5)", "ctr@3"])]
    [('dcg@10', 'dcg', 10), ('p@5', 'p', 5), ('rbp(p=0.5)', 'rbp', None), ('ctr@3', 'ctr', 3)]
    """
    items = [metrics] if isinstance(metrics, (str, Measure)) else list(metrics)
    if not items:
        raise RankPolarsError("counterfactual: no metrics asked for")
    out: list[Weight] = []
    for item in items:
        spec = parse(item) if isinstance(item, str) else item
        out.append(_weight(spec))
    labels = [w.label for w in out]
    if len(set(labels)) != len(labels):
        raise RankPolarsError(f"counterfactual: a metric is asked for twice in {labels}")
    return out


def _weight(spec: Any) -> Weight:
    name, label, k = spec.NAME, repr(spec), getattr(spec, "k", None)
    params = dict(getattr(spec, "params", {}))

    def only(**allowed: Any) -> None:
        for key, value in allowed.items():
            if params.get(key) != value:
                raise MetricNameError(f"counterfactual: {label} needs {key}={value!r} to be a sum over items "
                                      f"of a rank weight times the estimated relevance")

    if name == "dcg":
        only(gain="linear", discount="log2", gains=None)
    elif name == "cg":
        only(gain="linear")
    elif name == "p":
        only(rel=None, relative=False)
    elif name == "rbp":
        only(rel=None, gain="binary")
        return Weight(label, "rbp", k, float(params["p"]))
    elif name == "ctr":
        only(agg="mean")
    elif name != "clicks":
        why = _REFUSED.get(name, "it is not a sum over items of a rank weight times the relevance")
        raise MetricNameError(f"counterfactual: {label} has no additive form, so no position-based IPS "
                              f"estimate: {why}. Additive metrics: cg, dcg, p, rbp, clicks, ctr")
    return Weight(label, name, k)


#: The metric the slate estimators estimate: expected clicks per ranking (OBP's policy value).
SLATE_METRIC = Weight("clicks", "clicks", None)
