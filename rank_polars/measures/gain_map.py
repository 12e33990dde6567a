"""trec_eval's gain maps (``-m ndcg.1=3,2=9,4=4.5``): a gain per relevance level.

Spelled ``gains=1:3;2:9;4:4.5`` in a metric name (``;`` between levels, because ``,``
separates parameters), or given as a dict ``{1: 3, 2: 9, 4: 4.5}``.  trec_eval's rules
(``gain_init.c``), kept here:

* a level not in the map keeps gain = level; a negative grade (unjudged) gains 0;
* a level may get gain 0 or a negative gain, and level 0 may get a positive gain;
* the ideal ranking holds the judgments with a positive gain, sorted by gain descending.

One trec_eval quirk is *not* reproduced: it sorts the levels with an ``int`` comparator, so
two custom gains that differ by less than 1 (e.g. 4.5 and 4) may be taken in either order
in its ideal ranking.  Here the ideal is sorted by the exact gain.
"""

from __future__ import annotations

import math
import re
from typing import Any

from rank_polars.formula import tree as d
from rank_polars.measures.base import Param

_LEVEL = re.compile(r"^[+-]?\d+$")


def gain_map(value: Any) -> str:
    """The canonical text of a gain map: levels ascending, ``level:gain`` joined by ``;``.

    ir_measures' spelling, a dict written in the name (``nDCG(gains={0:1,1:4})``), reads the same:

    >>> gain_map("4=4.5;1=3;2:9"), gain_map({1: 3}), gain_map("{0: 1, 1: 4}")
    ('1:3;2:9;4:4.5', '1:3', '0:1;1:4')
    """
    if isinstance(value, str) and value.strip().startswith("{"):
        import ast

        try:
            value = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            raise ValueError(value) from None
        if not isinstance(value, dict):
            raise ValueError(value)
    if isinstance(value, dict):
        pairs = [(str(k), str(v)) for k, v in value.items()]
    else:
        pairs = []
        for part in str(value).split(";"):
            if part.strip():
                level, sep, gain = part.replace("=", ":").partition(":")
                if not sep:
                    raise ValueError(part)
                pairs.append((level.strip(), gain.strip()))
    gains: dict[int, float] = {}
    for level, gain in pairs:
        if not _LEVEL.match(level) or int(level) < 0 or int(level) in gains:
            raise ValueError(level)  # a level is a grade >= 0, given once
        g = float(gain)
        if not math.isfinite(g):
            raise ValueError(gain)
        gains[int(level)] = g
    if not gains:
        raise ValueError(value)
    return ";".join(f"{lvl}:{_num(g)}" for lvl, g in sorted(gains.items()))


def _num(g: float) -> str:
    return str(int(g)) if g.is_integer() else repr(g)


def parse_gains(text: str) -> dict[int, float]:
    return {int(lvl): float(g) for lvl, g in (p.split(":") for p in text.split(";"))}


GAINS = Param(
    gain_map,
    None,
    "trec_eval gain map 'level:gain;...' (e.g. 1:3;2:9;4:4.5); unlisted levels gain their grade",
)


def mapped_gain(text: str | None, *, clip: bool = False) -> d.Node:
    """The gain of a row's or judgment's grade under the map (the grade itself without one);
    0 for a negative grade (unjudged), as trec_eval's ``get_gain``.

    ``clip``: negative gains read as 0, the same values as ``positive(mapped_gain(text))``
    written once: ``positive`` repeats its argument in the test and the value, and formulas
    that nest it (the ideal's gains, their discounted sums) would repeat the whole map at
    every level of the SQL text (Rndcg with a map was 51 KB of SQL; Spark and sqlglot spend
    their time on its size)."""
    g = d.GRADE
    node: d.Node = d.when(g > 0, g, 0.0)  # already >= 0
    for level, gain in (parse_gains(text) if text else {}).items():
        node = d.when((g >= level) & (g <= level), max(gain, 0.0) if clip else gain, node)
    return node


def nonzero(x: d.Node) -> d.Node:
    return (x > 0) | (x < 0)


def ideal_rank(text: str | None) -> d.Node:
    """The ideal rank ordered by the mapped gain (plain ``irank`` without a map)."""
    return d.IRank("irank", mapped_gain(text)) if text else d.IRANK


def positive(x: d.Node) -> d.Node:
    return d.when(x > 0, x, 0.0)
