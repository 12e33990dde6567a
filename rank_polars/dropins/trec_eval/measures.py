"""trec_eval 10's measures: names, parameters, print order, 'all' aggregation, and our spec for each.

One table (:data:`TABLE`), in trec_eval's print order (its ``te_trec_measures`` array): whatever
the order of the ``-m`` options, trec_eval prints measures in this order.  Each row says

* how trec_eval reads the measure's parameters (``-m NAME.PARAMS``): ``long_cuts`` (``P.5,7,3``:
  sorted, one value per cutoff, printed ``P_3``), ``double_cuts`` (``iprec_at_recall..10,.20``:
  printed with ``%3.2f``), ``doubles`` (``utility.2,-1,0,0``: one value, printed with the
  parameter text appended, ``utility_2,-1,0,0``) or ``pairs`` (``ndcg.1=3,2=9``);
* how a value prints (``float`` ``%6.4f``, ``int`` ``%ld``, ``text``), whether it prints per query,
  and how the 'all' line combines queries (``mean``, ``sum``, ``gmean``, ``count``, ``runid``);
* whether ``-l`` changes it (then it is passed as the spec's ``rel=``);
* which relevance information it reads (``needs``): a qrels file (``-R qrels``), preferences
  (``-R prefs`` / ``-R qrels_prefs``, computed by :mod:`.prefs`) or judgment groups
  (``-R qrels_jg``, :mod:`.judgment_groups`); trec_eval stops at the first query when a measure
  and the format do not match;
* the rank_polars spec that computes it (``spelling``), read by :func:`rank_polars.measures.parse`
  (for a ``qrels_jg`` measure, the spec computed per judgment group before averaging).

The spellings follow the table in :mod:`rank_polars.measures` (trec_eval name -> ours).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal, Union

from rank_polars.dropins.trec_eval.options import TrecEvalExit, atol

ParamKind = Literal["none", "long_cuts", "double_cuts", "doubles", "pairs"]
Param = Union[int, float, tuple]


@dataclass(frozen=True)
class TrecMeasure:
    """One trec_eval measure (a row of :data:`TABLE`)."""

    name: str
    params: ParamKind = "none"
    default: tuple = ()
    value: Literal["float", "int", "text"] = "float"
    summary: Literal["mean", "sum", "gmean", "count", "runid", "none"] = "mean"
    per_query: bool = True
    level: bool = True  # trec_eval's value depends on -l (directly, or through num_rel / num_rel_ret)
    spelling: Callable[[Param], str] | None = None
    needs: Literal["qrels", "prefs", "jg", "none"] = "qrels"


def _fixed(text: str) -> Callable[[Param], str]:
    return lambda _: text


def _num(v: float) -> str:
    return repr(float(v))


def _doubles(name: str, *keys: str) -> Callable[[Param], str]:
    return lambda vs: f"{name}({', '.join(f'{k}={_num(v)}' for k, v in zip(keys, vs))})"  # type: ignore[union-attr]


def _level(name: str) -> bool:
    """gain_init.c's ``valid_int``: an optional sign, then digits only."""
    digits = name[1:] if name[:1] in ("+", "-") else name
    return digits.isascii() and digits.isdigit()


def _pairs(name: str, *reads: str, **fixed: object) -> Callable[[Param], str]:
    """``ndcg.1=3,2=9,4=4.5`` -> ``ndcg(gains=1:3.0;2:9.0;4:4.5)``; ``rbp.p=0.8`` -> ``rbp(p=0.8)``.

    ``reads`` are the pair names the measure's C code reads (``p`` for rbp); any other name that
    is not an integer is ignored, as trec_eval's ``setup_gains`` ignores it (``ndcg.a=1`` is
    ``ndcg``).  ``fixed`` are parameters of our spec that make it trec_eval's (named pairs
    override them).
    """

    def spell(pairs: Param) -> str:
        pairs = tuple(pairs or ())  # type: ignore[arg-type]
        named = {**{k: str(v) for k, v in fixed.items()}, **{k: _num(v) for k, v in pairs if k in reads}}
        levels = [(atol(k), v) for k, v in pairs if _level(k)]
        parts = [f"{k}={v}" for k, v in named.items()]
        if levels:
            parts.append("gains=" + ";".join(f"{k}:{_num(v)}" for k, v in levels))
        return f"{name}({', '.join(parts)})" if parts else name

    return spell


F, I, T = "float", "int", "text"
_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_RECALLS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

TABLE: tuple[TrecMeasure, ...] = (
    TrecMeasure("runid", value=T, summary="runid", per_query=False, needs="none"),
    TrecMeasure("num_q", value=I, summary="count", per_query=False, needs="none"),
    TrecMeasure("num_ret", value=I, summary="sum", level=False, spelling=_fixed("num_ret")),
    TrecMeasure("num_rel", value=I, summary="sum", spelling=_fixed("num_rel")),
    TrecMeasure("num_rel_ret", value=I, summary="sum", spelling=_fixed("num_rel_ret")),
    TrecMeasure("map", spelling=_fixed("ap")),
    TrecMeasure("gm_map", summary="gmean", per_query=False, spelling=_fixed("gm_map")),
    TrecMeasure("Rprec", spelling=_fixed("rprec")),
    TrecMeasure("bpref", spelling=_fixed("bpref")),
    TrecMeasure("recip_rank", spelling=_fixed("rr")),
    TrecMeasure("iprec_at_recall", "double_cuts", _RECALLS, spelling=lambda r: f"iprec(recall={_num(r)})"),  # type: ignore[arg-type]
    TrecMeasure("P", "long_cuts", _CUTS, spelling=lambda k: f"p@{k}"),
    TrecMeasure("relstring", "doubles", (10.0,), value=T, summary="none", level=False),
    TrecMeasure("recall", "long_cuts", _CUTS, spelling=lambda k: f"r@{k}"),
    TrecMeasure("infAP", spelling=_fixed("infap")),
    TrecMeasure("gm_bpref", summary="gmean", per_query=False, spelling=_fixed("gm_bpref")),
    TrecMeasure("Rprec_mult", "double_cuts", (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
                spelling=lambda m: f"rprec(mult={_num(m)})"),  # type: ignore[arg-type]
    TrecMeasure("utility", "doubles", (1.0, -1.0, 0.0, 0.0), spelling=_doubles("utility", "a", "b", "c", "d")),
    TrecMeasure("11pt_avg", "doubles", _RECALLS,
                spelling=lambda vs: f"11pt_avg(levels={';'.join(_num(v) for v in vs)})"),  # type: ignore[union-attr]
    TrecMeasure("binG", spelling=_fixed("bing")),
    TrecMeasure("G", "pairs", level=False, spelling=_pairs("g")),
    TrecMeasure("dcg", "pairs", level=False, spelling=_pairs("dcg")),
    TrecMeasure("ideal_dcg", "pairs", level=False, spelling=_pairs("idcg")),
    TrecMeasure("ndcg", "pairs", level=False, spelling=_pairs("ndcg")),
    TrecMeasure("ndcg_rel", "pairs", level=False, spelling=_pairs("ndcg_rel")),
    TrecMeasure("Rndcg", "pairs", spelling=_pairs("rndcg")),
    TrecMeasure("ndcg_cut", "long_cuts", _CUTS, level=False, spelling=lambda k: f"ndcg@{k}"),
    TrecMeasure("map_cut", "long_cuts", _CUTS, spelling=lambda k: f"ap@{k}"),
    TrecMeasure("relative_P", "long_cuts", _CUTS, spelling=lambda k: f"p(relative=true)@{k}"),
    TrecMeasure("success", "long_cuts", (1, 5, 10), spelling=lambda k: f"success@{k}"),
    TrecMeasure("set_P", spelling=_fixed("set_p")),
    TrecMeasure("set_relative_P", spelling=_fixed("set_p(relative=true)")),
    TrecMeasure("set_recall", spelling=_fixed("set_r")),
    TrecMeasure("set_map", spelling=_fixed("set_ap")),
    TrecMeasure("set_F", "doubles", (1.0,), spelling=lambda vs: f"set_f(beta={_num(vs[0])})"),  # type: ignore[index]
    TrecMeasure("num_nonrel_judged_ret", value=I, summary="sum", spelling=_fixed("num_nonrel_judged_ret")),
    *(TrecMeasure(f"prefs_num_prefs_{n}", value=I, summary="sum", level=False, needs="prefs")
      for n in ("poss", "ful", "ful_ret")),
    *(TrecMeasure(f"prefs_{n}", level=False, needs="prefs")
      for n in ("simp", "pair", "avgjg", "avgjg_Rnonrel", "simp_ret", "pair_ret", "avgjg_ret",
                "avgjg_Rnonrel_ret", "simp_imp", "pair_imp", "avgjg_imp")),
    TrecMeasure("map_avgjg", spelling=_fixed("ap"), needs="jg"),
    TrecMeasure("P_avgjg", "long_cuts", _CUTS, spelling=lambda k: f"p@{k}", needs="jg"),
    TrecMeasure("Rprec_mult_avgjg", "double_cuts", (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
                spelling=lambda m: f"rprec(mult={_num(m)})", needs="jg"),  # type: ignore[arg-type]
    TrecMeasure("rbp", "pairs", level=False, spelling=_pairs("rbp", "p", p=0.9, gain="graded")),
    TrecMeasure("rbp_resid", "pairs", level=False, spelling=_pairs("rbp_resid", "p")),
    TrecMeasure("unj", "long_cuts", (5, 10, 20), level=False, spelling=lambda k: f"unj@{k}"),
)
BY_NAME = {m.name: m for m in TABLE}

# trec_eval's nicknames for sets of measures (measures.c)
_OFFICIAL = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
             "recip_rank", "iprec_at_recall", "P")
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": _OFFICIAL,
    "all_trec": (*_OFFICIAL, "relstring", "recall", "unj", "rbp", "rbp_resid", "infAP", "gm_bpref", "utility",
                 "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success", "map_cut", "ndcg_cut", "ndcg_rel",
                 "Rndcg", "binG", "G", "set_P", "set_recall", "set_relative_P", "set_map", "set_F",
                 "num_nonrel_judged_ret"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"),
}
_PREFS = tuple(m.name for m in TABLE if m.needs == "prefs")
NICKNAMES["all_prefs"] = ("runid", "num_q", *_PREFS)
NICKNAMES["prefs"] = ("runid", "num_q", *_PREFS[:6])
NICKNAMES["qrels_jg"] = ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg")
# trec_eval's relevance formats (-R) and the format each one's relevance information has
REL_FORMATS = {"qrels": "qrels", "prefs": "prefs", "qrels_prefs": "prefs", "qrels_jg": "jg"}


@dataclass(frozen=True)
class Column:
    """One printed line per query: trec_eval's printed ``label``, the spec computing it."""

    label: str
    measure: TrecMeasure
    spelling: str | None
    param: Param | None = None


class Selection:
    """The ``-m`` options as trec_eval reads them: marked measures and each one's parameter text.

    >>> s = Selection()
    >>> s.mark("P.5,7,3"); s.mark("official")
    >>> [c.label for c in s.columns()][:5]
    ['runid', 'num_q', 'num_ret', 'num_rel', 'num_rel_ret']
    >>> [c.label for c in s.columns() if c.measure.name == "P"]
    ['P_3', 'P_5', 'P_7']
    """

    def __init__(self) -> None:
        self.marked: set[str] = set()
        self.params: list[tuple[str, str]] = []

    def mark(self, text: str) -> None:
        """trec_eval's ``mark_measure``: ``NAME[.PARAMS]``, a measure or a nickname."""
        name, dot, params = text.partition(".")
        if dot:
            if not params:
                raise TrecEvalExit(1, f"trec_eval: improper measure in parameter '{name}'\n"
                                      f"trec_eval: illegal measure '{name}'\n")
            self.params.append((name, params))
        names = NICKNAMES.get(name, (name,))
        for one in names:
            if one not in BY_NAME:
                raise TrecEvalExit(1, f"trec_eval: illegal measure '{name}'\n")
            self.marked.add(one)

    def columns(self) -> list[Column]:
        """The printed columns, in trec_eval's order (``TrecEvalExit`` for a bad parameter list)."""
        if not self.marked:
            self.mark("official")
        out: list[Column] = []
        for m in TABLE:
            if m.name not in self.marked:
                continue
            text = next((p for n, p in self.params if n == m.name), None)
            try:
                out.extend(_expand(m, text))
            except TrecEvalExit as e:
                raise TrecEvalExit(2, e.message + f"trec_eval: Cannot initialize measure '{m.name}'\n") from None
        return out


def _atof_prefix(text: str) -> float:
    import re

    m = re.match(r"\s*[+-]?((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|inf(inity)?|nan)", text, re.IGNORECASE)
    return float(m.group(0)) if m else 0.0


def _expand(m: TrecMeasure, text: str | None) -> list[Column]:
    spell = m.spelling or (lambda _: None)  # type: ignore[return-value]
    if m.params == "none":
        return [Column(m.name, m, spell(None))]
    if m.params == "long_cuts":
        cuts = sorted(atol(t) for t in text.split(",")) if text is not None else list(m.default)
        if cuts[0] <= 0:
            raise TrecEvalExit(2, "trec_eval: Negative cutoff detected\n")
        if len(set(cuts)) != len(cuts):
            raise TrecEvalExit(2, "trec_eval: duplicate cutoffs detected\n")
        return [Column(f"{m.name}_{k}", m, spell(k), k) for k in cuts]
    if m.params == "double_cuts":
        values = sorted(_atof_prefix(t) for t in text.split(",")) if text is not None else list(m.default)
        if len(set(values)) != len(values):
            raise TrecEvalExit(2, "trec_eval: duplicate cutoffs detected\n")
        return [Column(f"{m.name}_{v:3.2f}", m, spell(v), v) for v in values]
    label = m.name if text is None else f"{m.name}_{text}"
    if m.params == "doubles":
        values = tuple(_atof_prefix(t) for t in text.split(",")) if text is not None else m.default
        return [Column(label, m, spell(values), values)]
    pairs = _pairs_of(text) if text is not None else ()
    return [Column(label, m, spell(pairs), pairs)]


def _pairs_of(text: str) -> tuple[tuple[str, float], ...]:
    """trec_eval's ``name=value,...`` parameter pairs (``get_param_pairs``)."""
    items = text.split(",")
    if any(item.count("=") != 1 for item in items):
        raise TrecEvalExit(2, f"trec_eval: malformed pair parameters in '{text}'\n")
    return tuple((k, _atof_prefix(v)) for k, v in (item.partition("=")[::2] for item in items))
