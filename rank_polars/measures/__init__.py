"""The registry of metric specs and the one parser of metric names.

Names are case-insensitive: ``NAME[(PARAM=VALUE, ...)][@K]``, e.g. ``ndcg@10``,
``ndcg(gain=exp)@10``, ``ap(denom=min)@5``, ``rbp(p=0.9)``.  ``repr(spec)`` is the canonical
name (only non-default parameters) and parses back to an equal spec.  Three spellings parse:

* ours (the canonical names below);
* trec_eval's, **as trec_eval prints them** (``P_5``, ``iprec_at_recall_0.10``, ...) and as its
  ``-m`` option takes them (``P.5``, ``ndcg_cut.10``, ``iprec_at_recall.0.10``, ``set_F.0.5``,
  ``utility.2,-1,0,0``, a gain map ``ndcg.1=3,2=9``): one measure per name.  A list of cutoffs
  (``P.5,10``), which trec_eval's ``-m`` expands into ``P_5`` and ``P_10``, is refused with the
  names to give instead: a name is one output column (``rank-polars trec-eval -m P.5,10``
  expands it, as trec_eval does);
* ir_measures' (``nDCG(dcg='exp-log2')@10``, ``P(rel=2)@5``, ``RR(cutoff=10)``, ``IPrec@0.5``,
  ``SetRelP``, ``nDCG(gains={0:1,1:4})``, ...): its names are aliases, ``cutoff=`` is ``@k``,
  ``dcg=`` maps to ``gain=``, and its ``gains=`` dict is our gain map (``gains=0:1;1:4``).

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
from typing import Any, Callable, Mapping, Sequence, Union

from rank_polars.errors import MetricNameError
from rank_polars.measures.ap import AP
from rank_polars.measures.base import FamilyMeasure, Measure, Param
from rank_polars.measures.beyond import BY_NAME as BEYOND_BY_NAME
from rank_polars.measures.beyond import NEED_TABLES, needs_tables
from rank_polars.measures.clicks import MEASURES as CLICKS
from rank_polars.measures.compat import Compat
from rank_polars.measures.counts import NumNonrelJudgedRet, NumQ, NumRel, NumRelRet, NumRet, Unjudged
from rank_polars.measures.dcg import CG, DCG, IDCG, NDCG
from rank_polars.measures.diversity import MEASURES as DIVERSITY
from rank_polars.measures.gain import RNDCG, G, BinG, NDCGRel
from rank_polars.measures.gm import GMAP, GMBpref
from rank_polars.measures.infap import InfAP
from rank_polars.measures.iprec import IPrec, IPrecAvg
from rank_polars.measures.others import ERR, RBP, Bpref, Judged
from rank_polars.measures.rbp_resid import RBPResid
from rank_polars.measures.rr import RR
from rank_polars.measures.roc import AUC, CoverageError, LabelRankingLoss
from rank_polars.measures.cwl import MEASURES as CWL
from rank_polars.measures.set_based import F1, Fallout, Hits, Precision, Recall, RPrecision, Success
from rank_polars.measures.sets import SetAP, SetF, SetP, SetR, Utility

MEASURES: tuple[type[Measure], ...] = (
    CG, DCG, IDCG, NDCG, AP, GMAP, RR, Precision, Recall, F1, Success, Hits, Fallout, RPrecision, Bpref, GMBpref, ERR,
    RBP, Judged,
    IPrec, IPrecAvg, SetP, SetR, SetF, SetAP, Utility, NumQ, NumRet, NumRel, NumRelRet, NumNonrelJudgedRet, Unjudged,
    InfAP, G, BinG, NDCGRel, RNDCG, RBPResid,  # part B
    *DIVERSITY,  # ndeval's family
    *BEYOND_BY_NAME,  # beyond accuracy that need no table; the rest: NEED_TABLES
    *CLICKS.values(),  # online click metrics
    AUC, CoverageError, LabelRankingLoss,  # scikit-learn's ranking metrics per query
    *CWL,  # the C/W/L family (cwl_eval)
    Compat,  # rank-biased overlap with the ideal ranking (ir_measures' Compat)
)

REGISTRY: dict[str, type[Measure]] = {}
for _cls in MEASURES:
    for _name in (_cls.NAME, *_cls.ALIASES):
        REGISTRY[_name] = _cls

MetricLike = Union[str, Measure]

_NAME = re.compile(r"^\s*([a-z0-9][a-z0-9_.\-]*)\s*(?:\((.*)\))?\s*(?:@\s*([^\s]+))?\s*$", re.IGNORECASE)
_NUMBER = r"(\d+(?:\.\d*)?|\.\d+)"
_SIGNED = r"([+-]?(?:\d+(?:\.\d*)?|\.\d+))"
_CUT = {"p": "p", "recall": "r", "ndcg_cut": "ndcg", "map_cut": "ap", "success": "success", "judged": "judged", "unj": "unj"}

# Spellings that carry parameters in the name: trec_eval's printed names (with the parameters
# trec_eval prints after a measure given some, e.g. ``utility_2,-1,0,0``) and ir_measures'
# SetRelP.  Each gives (registered name, parameters, cutoff).
Spelling = Callable[["re.Match[str]"], tuple[str, dict[str, Any], "str | None"]]
_SPELLINGS: tuple[tuple[re.Pattern[str], Spelling], ...] = (
    (re.compile(r"(p|recall|ndcg_cut|map_cut|success|judged|unj)_(\d+)"), lambda m: (_CUT[m[1]], {}, m[2])),
    (re.compile(r"relative_p_(\d+)"), lambda m: ("p", {"relative": True}, m[1])),
    (re.compile(r"iprec_at_recall_" + _NUMBER), lambda m: ("iprec", {"recall": m[1]}, None)),
    (re.compile(r"rprec_mult_" + _NUMBER), lambda m: ("rprec", {"mult": m[1]}, None)),
    (re.compile(r"set_relative_p|setrelp"), lambda m: ("set_p", {"relative": True}, None)),
    (re.compile(r"set_f_" + _NUMBER), lambda m: ("set_f", {"beta": m[1]}, None)),
    (re.compile(r"utility_" + ",".join([_SIGNED] * 4)), lambda m: ("utility", dict(zip("abcd", m.groups())), None)),
    (re.compile(r"11pt_avg_(" + _NUMBER + r"(?:," + _NUMBER + r")*)"),
     lambda m: ("11pt_avg", {"levels": m[1].replace(",", ";")}, None)),
)


def _spelled(name: str) -> tuple[str, dict[str, Any], str | None] | None:
    for pattern, spelling in _SPELLINGS:
        spelled = pattern.fullmatch(name.lower())
        if spelled:
            return spelling(spelled)
    return None


# trec_eval's -m spelling, NAME.PARAMS: the measure, then its parameters as trec_eval prints them
# after an underscore (P.5 prints P_5, utility.2,-1,0,0 prints utility_2,-1,0,0), so the printed
# names above read them; the name=value pairs of a gain map (ndcg.1=3,2=9) are our gains=.
_DOTTED = re.compile(r"([a-z0-9_]+)\.([^\s()@]+)", re.IGNORECASE)
_LEVEL = re.compile(r"\d+")


def _dotted(name: str) -> str | None:
    """The spelling a trec_eval ``-m`` name stands for (``P.5`` -> ``P_5``), None when ``name`` is
    not one; :class:`MetricNameError` for a list (``P.5,10``) or pairs that are no gain map."""
    m = _DOTTED.fullmatch(name)
    if not m or _spelled(name) or name.lower() in REGISTRY:
        return None
    head, text = m[1], m[2]
    printed = f"{head}_{text}"
    if _spelled(printed):
        return printed
    if "=" in text:
        cls = REGISTRY.get(head.lower())
        pairs = [part.partition("=") for part in text.split(",")]
        if cls is not None and "gains" in cls.PARAMS and all(sep and _LEVEL.fullmatch(k) for k, sep, _ in pairs):
            return f"{head}(gains={text.replace(',', ';')})"
        raise MetricNameError(
            f"{name!r}: of trec_eval's NAME=VALUE parameters only a gain map of levels is read here "
            f"(ndcg.1=3,2=9 is ndcg(gains=1:3;2:9)); give the others in parentheses, {head}(NAME=VALUE)"
        )
    parts = text.split(",")
    if len(parts) > 1 and all(_spelled(f"{head}_{part}") for part in parts):
        each = ", ".join(repr(f"{head}.{part}") for part in parts)
        raise MetricNameError(
            f"{name!r} is trec_eval's list of {len(parts)} parameters, one measure each: give each as its "
            f"own name, {each} (a name is one output column; rank-polars trec-eval -m {name} expands it)"
        )
    return None


def _arguments(args: str) -> list[str]:
    """``NAME=VALUE`` parts split at the commas outside brackets: ir_measures' ``gains={0:1,1:4}``."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(args):
        depth += (ch in "{[(") - (ch in "}])")
        if ch == "," and depth == 0:
            parts.append(args[start:i])
            start = i + 1
    parts.append(args[start:])
    return [p.strip() for p in parts if p.strip()]


# ir_measures' parameter names -> ours, with its values translated where the words differ.
_PARAM_SYNONYMS: dict[tuple[type[Measure], str], tuple[str, dict[str, str]]] = {
    (NDCG, "dcg"): ("gain", {"log2": "linear", "exp-log2": "exp"}),
}
# ir_measures' measures that become another of ours with a parameter: NumRet(rel=1) counts
# the relevant retrieved documents.
_CLASS_BY_PARAM: dict[tuple[type[Measure], str], type[Measure]] = {(NumRet, "rel"): NumRelRet}


def parse(metric: MetricLike, tables: Mapping[str, Any] | None = None) -> Measure:
    """Turn a metric name (or spec) into a :class:`Measure`.

    ``tables``: ``{role: table}`` (``history``, ``catalog``, ``features``, ``subtopics``: see
    ``docs/data-model.md``), attached to a name whose spec reads that role, so that a name
    can stand for a measure that needs a table (``parse("novelty@10", {"history": "train.parquet"})``:
    the command line's ``--history``); the family says which table is still missing.

    >>> from rank_polars.measures import parse
    >>> parse("nDCG(gain=exp)@10")
    ndcg(gain=exp)@10
    >>> parse("P_5"), parse("MAP"), parse("rbp(p=0.8)")
    (p@5, ap, rbp)
    >>> parse("iprec_at_recall_0.10"), parse("Rprec_mult_0.20"), parse("relative_P_5"), parse("set_F")
    (iprec(recall=0.1), rprec(mult=0.2), p(relative=true)@5, set_f)
    >>> parse("nDCG(dcg='exp-log2')@10"), parse("IPrec@0.5"), parse("RR(cutoff=10)"), parse("SetRelP")
    (ndcg(gain=exp)@10, iprec(recall=0.5), rr@10, set_p(relative=true))
    >>> parse("NumRet(rel=1)"), parse("utility_2,-1,0,0"), parse("11pt_avg_.25,.5,.75")
    (num_rel_ret(rel=1), utility(a=2), 11pt_avg(levels=0.25;0.5;0.75))
    >>> parse("P.5"), parse("ndcg_cut.10"), parse("iprec_at_recall.0.10"), parse("ndcg.1=3,2=9")
    (p@5, ndcg@10, iprec(recall=0.1), ndcg(gains=1:3;2:9))
    >>> parse("nDCG(gains={0:1,1:4})@10")
    ndcg(gains=0:1;1:4)@10
    >>> parse("P.5,10")
    Traceback (most recent call last):
    ...
    rank_polars.errors.MetricNameError: 'P.5,10' is trec_eval's list of 2 parameters, one measure each: give each as its own name, 'P.5', 'P.10' (a name is one output column; rank-polars trec-eval -m P.5,10 expands it)
    """
    if isinstance(metric, Measure):
        return metric
    if not isinstance(metric, str):
        raise MetricNameError(f"a metric is a name or a spec, got {type(metric).__name__}: {metric!r}")
    dotted = _dotted(metric.strip())  # trec_eval's -m spelling: P.5 is P_5
    if dotted is not None:
        return parse(dotted, tables)
    whole = _spelled(metric.strip())  # a printed name with its parameters: utility_2,-1,0,0
    m = _NAME.match("x" if whole else metric)
    if not m:
        raise MetricNameError(f"cannot parse metric name {metric!r}; expected NAME[(PARAM=VALUE, ...)][@K]")
    base, args, cutoff = m.group(1).lower(), m.group(2), m.group(3)
    params: dict[str, object] = {}
    spelled = whole or _spelled(base)
    if spelled:
        base, params, at = spelled
        if at is not None and cutoff is not None:
            raise MetricNameError(f"{metric!r}: the cutoff is given twice")
        cutoff = cutoff if at is None else at
    cls = REGISTRY.get(base) or NEED_TABLES.get(base)
    if cls is None:
        close = difflib.get_close_matches(base, list(REGISTRY), n=3, cutoff=0.5)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise MetricNameError(f"unknown metric {metric!r}{hint} Known: {', '.join(sorted(c.NAME for c in MEASURES))}")
    given: set[str] = set()
    for part in _arguments(args or ""):
        key, sep, value = part.partition("=")
        if not sep:
            raise MetricNameError(f"{metric!r}: parameter {part!r} should be written NAME=VALUE")
        key, value = key.strip().lower(), value.strip().strip("'\"")
        if (cls, key) in _PARAM_SYNONYMS:
            key, words = _PARAM_SYNONYMS[(cls, key)]
            value = words.get(value.lower(), value)
        if key == "judged_only" and key not in cls.PARAMS:  # ir_measures' judged_only=True: one call's rows
            raise MetricNameError(f"{metric!r}: judged_only applies to every metric of a call here: "
                                  "evaluate(..., judged_only=True) (to_sql too), trec_eval's -J")
        if key in given or key in params:
            raise MetricNameError(f"{metric!r}: parameter {key!r} given twice")
        given.add(key)
        cls = _CLASS_BY_PARAM.get((cls, key), cls)
        if key in ("cutoff", "k"):  # ir_measures: RR(cutoff=10) is RR@10; ndcg(k=3) is ndcg@3
            if cutoff is not None:
                raise MetricNameError(f"{metric!r}: the cutoff is given twice")
            cutoff = value
        else:
            params[key] = value
    k: int | None = None
    if cutoff is not None and cls.AT_PARAM is not None:
        if cls.AT_PARAM in params:
            raise MetricNameError(f"{metric!r}: parameter {cls.AT_PARAM!r} given twice")
        params[cls.AT_PARAM] = cutoff
    elif cutoff is not None:
        if not re.fullmatch(r"[+-]?\d+", cutoff):
            raise MetricNameError(f"{metric!r}: cutoff k must be a positive integer, got {cutoff!r}")
        k = int(cutoff)
        if k <= 0:
            raise MetricNameError(f"{metric!r}: cutoff k must be a positive integer, got {k}")
    if tables is not None and issubclass(cls, FamilyMeasure):
        given = {role: tables[role] for role in cls.SOURCES if tables.get(role) is not None}
        return cls(k, **params, **given)
    if base in NEED_TABLES:  # novelty@10: its history cannot come from a string
        raise MetricNameError(needs_tables(cls(k, **params)))  # type: ignore[arg-type]
    return cls(k, **params)


def parse_all(metrics: MetricLike | Sequence[MetricLike]) -> list[tuple[str, Measure]]:
    """``[(output column name, spec), ...]``: a name keeps the user's spelling."""
    if isinstance(metrics, (str, Measure)):
        metrics = [metrics]
    out: list[tuple[str, Measure]] = []
    bad: list[str] = []
    for metric in metrics:
        try:
            spec = parse(metric)
        except MetricNameError as e:  # every bad name said at once, as ir_measures does
            bad.append(str(e))
            continue
        label = metric if isinstance(metric, str) else spec.name
        if label in (name for name, _ in out):
            raise MetricNameError(f"metric {label!r} is requested twice")
        out.append((label, spec))
    if len(bad) > 1:
        raise MetricNameError(f"{len(bad)} metrics are not understood:\n" + "\n".join(f"- {b}" for b in bad))
    if bad:
        raise MetricNameError(bad[0])
    if not out:
        raise MetricNameError("no metric requested")
    return out


__all__ = ["MEASURES", "REGISTRY", "Measure", "MetricLike", "Param", "parse", "parse_all"]
