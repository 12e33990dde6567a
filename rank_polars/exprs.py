"""Every metric as a plain function returning ``pl.Expr`` over a ranked list of grades.

Use them in ``select`` over one ranked list, or in ``group_by(...).agg(...)`` with the
grades already in ranked order, e.g. ``ndcg(pl.col("relevance").sort_by("position"), 10)``.
The same functions back the ``ranking`` expression namespace.
"""

from .measures.ap import ap
from .measures.dcg import cg, dcg, idcg, ndcg
from .measures.others import bpref, err, judged, rbp
from .measures.rr import rr
from .measures.set_based import f1, precision, recall, rprec, success

__all__ = [
    "ap", "bpref", "cg", "dcg", "err", "f1", "idcg", "judged", "ndcg", "precision", "rbp",
    "recall", "rprec", "rr", "success",
]
