"""The registry of metric specs and the one parser of metric names.

Names are case-insensitive: ``NAME[(PARAM=VALUE, ...)][@K]``, e.g. ``ndcg@10``,
``ndcg(gain=exp)@10``, ``ap(denom=min)@5``, ``rbp(p=0.9)``.  ``repr(spec)`` is the canonical
name (only non-default parameters) and parses back to an equal spec.  Three spellings parse:

* ours (the canonical names below);
* trec_eval's, **as trec_eval prints them** (``P_5``, ``iprec_at_recall_0.10``, ...);
* ir_measures' (``nDCG(dcg='exp-log2')@10``, ``P(rel=2)@5``, ``RR(cutoff=10)``, ``IPrec@0.5``,
  ``SetRelP``, ...): its names are aliases, ``cutoff=`` is ``@k``, ``dcg=`` maps to ``gain=``.

trec_eval 10 (``-m all_trec``) -> our spelling.  A trec_eval parameter list such as
``-m P.5,7,3`` is one spec per value (``P_5``, ``P_7``, ``P_3``); ``-l N`` is ``rel=N`` on every
spec that declares ``rel`` (``spec.replace(rel=N)`` when ``"rel" in spec.PARAMS``; nDCG and
unj ignore ``-l`` as trec_eval does); ``-c`` is ``evaluate(..., missing="zero")``; ``-M N``
keeps each query's first N documents in trec_eval's order before evaluating.

======================  ==========================================  ===================
trec_eval prints         ours (canonical)                            aggregate ('all')
======================  ==========================================  ===================
num_q                    num_q                                       sum (= #queries)
num_ret                  num_ret                                     sum
num_rel                  num_rel                                     sum
num_rel_ret              num_rel_ret                                 sum
num_nonrel_judged_ret    num_nonrel_judged_ret                       sum
map                      ap                                          mean
gm_map                   gm_map                                      gmean (floor 1e-5)
Rprec                    rprec                                       mean
bpref                    bpref                                       mean
gm_bpref                 gm_bpref                                    gmean (floor 1e-5)
recip_rank               rr                                          mean
iprec_at_recall_0.10     iprec(recall=0.1)   (``iprec@0.1`` parses)  mean
P_5                      p@5                                         mean
relative_P_5             p(relative=true)@5                          mean
recall_5                 r@5                                         mean
Rprec_mult_0.20          rprec(mult=0.2)                             mean
utility  (.2,-1,0,0)     utility(a=2, b=-1, c=0, d=0)  (+ docs=N for -N)  mean
11pt_avg (..25,.5,.75)   11pt_avg(levels=0.25;0.5;0.75)              mean
ndcg                     ndcg                                        mean
ndcg_cut_10              ndcg@10                                     mean
map_cut_10               ap@10                                       mean
success_5                success@5                                   mean
set_P                    set_p                                       mean
set_relative_P           set_p(relative=true)                        mean
set_recall               set_r                                       mean
set_map                  set_ap                                      mean
set_F  (set_F.0.5)       set_f(beta=0.5)                             mean
unj_5                    unj@5                                       mean
======================  ==========================================  ===================

The printed names in the left column parse as they are (``parse("Rprec_mult_0.35")``,
``parse("iprec_at_recall_0.25")``, ``parse("set_F")``, ``parse("11pt_avg")``), so do the
canonical ones.  Each spec's ``AGGREGATE`` says how ``evaluate`` combines queries.
"runid" and "relstring" are text, not measures.  infAP, G, binG, Rndcg, ndcg_rel, gain maps
and trec_eval's rbp / rbp_resid are added by their own specs (part B).
"""

from __future__ import annotations

import difflib
import re
from typing import Sequence, Union

from ..errors import MetricNameError
from .ap import AP
from .base import Measure, Param
from .dcg import CG, DCG, IDCG, NDCG
from .gain import RNDCG, G, BinG, NDCGRel
from .infap import InfAP
from .others import ERR, RBP, Bpref, Judged
from .rbp_resid import RBPResid
from .rr import RR
from .set_based import F1, Precision, Recall, RPrecision, Success

MEASURES: tuple[type[Measure], ...] = (
    CG, DCG, IDCG, NDCG, AP, RR, Precision, Recall, F1, Success, RPrecision, Bpref, ERR, RBP, Judged,
    InfAP, G, BinG, NDCGRel, RNDCG, RBPResid,  # part B
)

REGISTRY: dict[str, type[Measure]] = {}
for _cls in MEASURES:
    for _name in (_cls.NAME, *_cls.ALIASES):
        REGISTRY[_name] = _cls

MetricLike = Union[str, Measure]

_NAME = re.compile(r"^\s*([a-z][a-z0-9_\-]*)\s*(?:\((.*)\))?\s*(?:@\s*([^\s]+))?\s*$", re.IGNORECASE)
_TREC = re.compile(r"^(p|recall|ndcg_cut|map_cut|success|judged)_(\d+)$")
_TREC_NAMES = {"p": "p", "recall": "r", "ndcg_cut": "ndcg", "map_cut": "ap", "success": "success", "judged": "judged"}


def parse(metric: MetricLike) -> Measure:
    """Turn a metric name (or spec) into a :class:`Measure`.

    >>> from rank_polars.measures import parse
    >>> parse("nDCG(gain=exp)@10")
    ndcg(gain=exp)@10
    >>> parse("P_5"), parse("MAP"), parse("rbp(p=0.8)")
    (p@5, ap, rbp)
    """
    if isinstance(metric, Measure):
        return metric
    if not isinstance(metric, str):
        raise MetricNameError(f"a metric is a name or a spec, got {type(metric).__name__}: {metric!r}")
    m = _NAME.match(metric)
    if not m:
        raise MetricNameError(f"cannot parse metric name {metric!r}; expected NAME[(PARAM=VALUE, ...)][@K]")
    base, args, cutoff = m.group(1).lower(), m.group(2), m.group(3)
    trec = _TREC.match(base)
    if trec and cutoff is None:
        base, cutoff = _TREC_NAMES[trec.group(1)], trec.group(2)
    cls = REGISTRY.get(base)
    if cls is None:
        close = difflib.get_close_matches(base, list(REGISTRY), n=3, cutoff=0.5)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise MetricNameError(f"unknown metric {metric!r}{hint} Known: {', '.join(sorted(c.NAME for c in MEASURES))}")
    params: dict[str, object] = {}
    for part in filter(None, (a.strip() for a in (args or "").split(","))):
        key, sep, value = part.partition("=")
        if not sep:
            raise MetricNameError(f"{metric!r}: parameter {part!r} should be written NAME=VALUE")
        key = key.strip().lower()
        if key in params:
            raise MetricNameError(f"{metric!r}: parameter {key!r} given twice")
        params[key] = value.strip().strip("'\"")
    k: int | None = None
    if cutoff is not None:
        if not re.fullmatch(r"[+-]?\d+", cutoff):
            raise MetricNameError(f"{metric!r}: cutoff k must be a positive integer, got {cutoff!r}")
        k = int(cutoff)
        if k <= 0:
            raise MetricNameError(f"{metric!r}: cutoff k must be a positive integer, got {k}")
    return cls(k, **params)


def parse_all(metrics: MetricLike | Sequence[MetricLike]) -> list[tuple[str, Measure]]:
    """``[(output column name, spec), ...]``: a name keeps the user's spelling."""
    if isinstance(metrics, (str, Measure)):
        metrics = [metrics]
    out: list[tuple[str, Measure]] = []
    for metric in metrics:
        spec = parse(metric)
        label = metric if isinstance(metric, str) else spec.name
        if label in (name for name, _ in out):
            raise MetricNameError(f"metric {label!r} is requested twice")
        out.append((label, spec))
    if not out:
        raise MetricNameError("no metric requested")
    return out


__all__ = ["MEASURES", "REGISTRY", "Measure", "MetricLike", "Param", "parse", "parse_all"]
