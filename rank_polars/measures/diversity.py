"""Intent-aware and novelty-biased measures over subtopic judgments: ndeval's family.

The TREC Web track's ``ndeval`` (v4.5) scores a ranking against judgments ``query, subtopic,
item, relevance``.  Let ``S`` be the query's subtopics that have at least one relevant item
(only those count), ``c(i, s)`` the number of items above rank ``i`` relevant to subtopic
``s``, and the novelty-biased gain of the item at rank ``i``

    G_i = sum over the subtopics s it is relevant to of (1 - alpha)^c(i, s).

Every spec here follows ndeval by default, each as a documented convention:

* a grade counts as relevant when above 0 (``rel=N``: at least N), and every relevant grade
  counts as 1 (ndeval's ``binary assessment only``);
* ``|S|`` counts only the subtopics with a relevant item;
* the ideal ranking of the normalised measures (``alpha_ndcg``, ``nerr_ia``, ``nnrbp``) is
  ndeval's greedy one, built from all the query's judgments: at each rank the item with the
  largest ``G`` given the items already placed, ties to the larger item id;
* ``alpha_dcg`` and ``err_ia`` are divided by ndeval's "ideal ideal" (every subtopic covered
  at every rank: ``|S| (1 - alpha)^(i-1)`` at rank i), except at k = 1, which ndeval leaves
  undivided (reproduced: ``alpha_dcg@1 = err_ia@1 = G_1``);
* ``nrbp``, ``nnrbp`` and ``map_ia`` read the whole list; a query without a relevant subtopic
  scores 0 on every measure (ndeval prints ``nan`` for its nNRBP: the drop-in
  ``rank-polars ndeval`` reproduces that, ``evaluate`` gives 0).

The judgments are the spec's ``subtopics=`` table, or the ``qrels`` given to ``evaluate``
when they have the subtopic column (named by ``subtopic=``, default ``"subtopic"``).  Both the
Polars and the DuckDB engines compute them (:mod:`rank_polars.families.diversity`); the
greedy ideal is iterative, so it is computed once from the judgments and joined: in Polars one
vectorised step per rank over all queries at once, in DuckDB a recursive CTE (one recursion
per rank).  ``to_sql`` emits that SQL (DuckDB's dialect; the judgments a table name:
``AlphaNDCG(20, subtopics="subs")``).  Over one ranked list of each item's relevant subtopics,
:mod:`rank_polars.formula.exprs_diversity` gives the measures without an ideal ranking (``alpha_dcg``,
``err_ia``, ``nrbp``, ``map_ia``, ``p_ia``, ``strec``; also as ``ranking`` methods).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

from rank_polars.errors import MetricNameError
from rank_polars.measures.base import REL, FamilyMeasure, Param, flag

FAMILY = "rank_polars.families.diversity"

ALPHA = Param(float, 0.5, "redundancy intolerance: a subtopic's gain is (1 - alpha)^(items seen before for it)")
BETA = Param(float, 0.5, "patience of NRBP: the weight of rank i is beta^(i-1)")
JUDGED_ONLY = Param(flag, False, "drop the items not judged for the query (any subtopic) before ranking")
SUBTOPIC = Param(str, "subtopic", "the subtopic column of the judgments")


def ndeval_discount(rank: int) -> float:
    """ndeval's DCG discount at a 1-based rank: ``log(2)/log(rank + 1)``, 1 at rank 1."""
    return 1.0 if rank == 1 else math.log(2.0) / math.log(rank + 1.0)


def ideal_ideal(alpha: float, k: int, discount: str, size: float = 1.0) -> float:
    """ndeval's "ideal ideal" divisor at cutoff k for ``size`` subtopics (|S| = 1 by default; the
    engines multiply by |S| afterwards), computed as ndeval does, rank by rank: every subtopic
    covered at every rank, the gain by repeated multiplication; 1 at k = 1, which ndeval leaves
    undivided."""
    if k == 1:
        return 1.0
    gain, total = float(size), 0.0
    for i in range(k):
        total += gain * ndeval_discount(i + 1) if discount == "log2" else gain / (i + 1)
        gain *= 1.0 - alpha
    return total


class _Diversity(FamilyMeasure):
    FAMILY: ClassVar[str] = FAMILY
    SOURCES: ClassVar[dict[str, str]] = {"subtopics": "subtopics"}
    # the grades are the subtopic judgments' (the spec's table, or qrels=): never the run's labels
    NEEDS_LABELS: ClassVar[bool] = False
    READS_RUN_LABELS: ClassVar[bool] = False
    PARAMS: ClassVar[dict[str, Param]] = {"alpha": ALPHA, "rel": REL, "judged_only": JUDGED_ONLY,
                                          "subtopic": SUBTOPIC}
    #: what the family computes for this spec (see rank_polars.families.diversity)
    KIND: ClassVar[str]
    #: the docs pages' example judgments (the run is theirs: q1 shows a, b, c, d; q2 e, f, g)
    EXAMPLE_QRELS: ClassVar[dict[str, list[Any]]] = {
        "query": ["q1", "q1", "q1", "q1", "q1", "q2", "q2"],
        "subtopic": [1, 1, 2, 2, 3, 1, 2],
        "item": ["a", "c", "c", "x", "b", "g", "f"],
        "relevance": [1, 1, 1, 1, 0, 2, 0],
    }

    def _check(self, params: dict[str, Any]) -> None:
        for name in ("alpha", "beta"):
            if name in params and not 0.0 <= params[name] <= 1.0:
                raise MetricNameError(f"{self.NAME}: parameter {name} must be in [0, 1], got {params[name]!r}")

    def checks_own_repeats(self) -> bool:
        # the family reads the rows relevant to a subtopic and counts the items repeated among
        # them; judged_only ranks the judged rows anew, where a repeated judged item moves the
        # rows below it: every row is counted then
        return not self.params["judged_only"]

    def __init__(self, k: int | None = None, **params: Any) -> None:
        super().__init__(k, **params)
        if self.SUPPORTS_CUTOFF and self.k is None:
            raise MetricNameError(f"{self.NAME} needs a cutoff: e.g. {self.NAME}@20 (ndeval reports 5, 10 and 20)")


class AlphaDCG(_Diversity):
    """alpha_dcg@k = sum over i <= k of G_i / log2(i+1), divided by ndeval's ideal ideal (k >= 2).

    G_i is the novelty-biased gain (module docstring); the divisor is the same sum for a list
    covering every subtopic of S at every rank.  ndeval's ``alpha-DCG@k``; ir_measures'
    ``alpha_DCG@k``.
    """

    NAME = "alpha_dcg"
    ALIASES = ("alpha-dcg",)
    KIND = "dcg"


class AlphaNDCG(_Diversity):
    """alpha_ndcg@k = sum over i <= k of G_i / log2(i+1) over the same sum of ndeval's greedy ideal.

    ndeval's ``alpha-nDCG@k`` (Clarke et al., SIGIR 2008); ir_measures' ``alpha_nDCG@k``.
    """

    NAME = "alpha_ndcg"
    ALIASES = ("alpha-ndcg",)
    KIND = "ndcg"


class ERRIA(_Diversity):
    """err_ia@k = sum over i <= k of G_i / i, divided by ndeval's ideal ideal (k >= 2).

    ndeval's ``ERR-IA@k`` (Chapelle et al., CIKM 2009, with alpha as the stopping
    probability); ir_measures' ``ERR_IA@k``.
    """

    NAME = "err_ia"
    ALIASES = ("err-ia",)
    KIND = "err"


class NERRIA(_Diversity):
    """nerr_ia@k = sum over i <= k of G_i / i over the same sum of ndeval's greedy ideal.

    ndeval's ``nERR-IA@k``; ir_measures' ``nERR_IA@k``.
    """

    NAME = "nerr_ia"
    ALIASES = ("nerr-ia",)
    KIND = "nerr"


class NRBP(_Diversity):
    """nrbp = (1 - (1 - alpha) beta) / |S| * sum over the whole list of G_i beta^(i-1).

    ndeval's ``NRBP`` (Clarke et al., ICTIR 2009); ir_measures' ``NRBP``.
    """

    NAME = "nrbp"
    KIND = "nrbp"
    SUPPORTS_CUTOFF = False
    PARAMS = {**_Diversity.PARAMS, "beta": BETA}


class NNRBP(_Diversity):
    """nnrbp = sum of G_i beta^(i-1) over the list / the same sum over ndeval's greedy ideal.

    ndeval's ``nNRBP``; ir_measures' ``nNRBP``.
    """

    NAME = "nnrbp"
    KIND = "nnrbp"
    SUPPORTS_CUTOFF = False
    PARAMS = {**_Diversity.PARAMS, "beta": BETA}


class MAPIA(_Diversity):
    """map_ia = mean over s in S of (sum over ranks i relevant to s of (hits for s up to i) / i) / R_s.

    R_s: the items judged relevant to s.  Over the whole list.  ndeval's ``MAP-IA``;
    ir_measures' ``AP_IA``.  ``alpha`` does not change it.
    """

    NAME = "map_ia"
    ALIASES = ("ap_ia", "map-ia")
    KIND = "map"
    SUPPORTS_CUTOFF = False


class PIA(_Diversity):
    """p_ia@k = (relevant (item, subtopic) pairs in the top k) / (k |S|).

    ndeval's ``P-IA@k``; ir_measures' ``P_IA@k``.  ``alpha`` does not change it.
    """

    NAME = "p_ia"
    ALIASES = ("p-ia",)
    KIND = "p"


class StRecall(_Diversity):
    """strec@k = subtopics of S with a relevant item in the top k / |S|.

    ndeval's ``strec@k`` (subtopic recall); ir_measures' ``StRecall@k``.  ``alpha`` does not
    change it.
    """

    NAME = "strec"
    ALIASES = ("strecall",)
    KIND = "strec"


MEASURES: tuple[type[_Diversity], ...] = (AlphaDCG, AlphaNDCG, ERRIA, NERRIA, NRBP, NNRBP, MAPIA, PIA, StRecall)

__all__ = ["MEASURES", "ideal_ideal", "AlphaDCG", "AlphaNDCG", "ERRIA", "NERRIA", "NRBP", "NNRBP", "MAPIA", "PIA", "StRecall"]
