"""trec_eval's output: ``%-22s\\t%s\\t%6.4f`` lines, per query (``-q``) then the 'all' summary.

Per query, every measure in trec_eval's order prints its lines (``runid``, ``num_q``, ``gm_map`` and
``gm_bpref`` print none); counts print as integers (``%ld``), ``relstring`` as ``'text'``.  The
'all' lines combine the queries as trec_eval does: the mean (a sum divided by the number of
queries), the sum for ``num_*`` counts, the geometric mean of the values floored at 1e-5 for
``gm_*``, the number of queries for ``num_q``.  With ``-c``, ``num_rel``'s total counts the
qrels lines with a grade above 0, whatever ``-l`` says (``m_num_rel.c``).
"""

from __future__ import annotations

import math
from functools import reduce
from operator import add

import polars as pl

from rank_polars.dropins.trec_eval.measures import Column

MIN_GEO_MEAN = 1e-5


def c_float(value: float) -> str:
    """C's ``printf("%6.4f")``: as Python's, except that a NaN prints with its sign (glibc's ``-nan``).

    >>> c_float(0.25), c_float(-0.0), c_float(float("-nan")), c_float(float("nan"))
    ('0.2500', '-0.0000', '  -nan', '   nan')
    """
    if math.isnan(value):
        return ("-nan" if math.copysign(1.0, value) < 0 else "nan").rjust(6)
    return "%6.4f" % value


def c_sum(values: list[float]) -> float:
    """The values added one after the other, as trec_eval's ``+=`` over the queries does (Python's
    ``sum`` compensates the rounding since 3.12; Polars' adds in blocks): the same double every run."""
    return reduce(add, values, 0.0)


def _value_text(values: list, kind: str) -> list[str]:  # type: ignore[type-arg]
    if kind == "int":
        return [str(int(v)) for v in values]
    if kind == "text":
        return [f"'{v}'" for v in values]
    return [c_float(v) for v in values]


def _float_texts(values: pl.Series) -> pl.Series:
    """:func:`c_float` of every value, each distinct double formatted once: a query's values
    repeat (a 20-deep run has 21 precisions), and printf in Python was 12 of the 29 s of
    ``-q -m all_trec`` over 100k queries.  Distinct by their bits, so -0.0 and a NaN's sign
    print as C prints them.

    >>> _float_texts(pl.Series([0.25, -0.0, 0.25, 0.0, float("-nan")])).to_list()
    ['0.2500', '-0.0000', '0.2500', '0.0000', '  -nan']
    """
    import numpy as np

    bits = pl.Series(values.cast(pl.Float64).to_numpy().view(np.uint64))
    distinct = bits.unique()
    texts = [c_float(v) for v in distinct.to_numpy().view(np.float64).tolist()]
    return bits.replace_strict(distinct, pl.Series(texts, dtype=pl.String), return_dtype=pl.String)


def _prefix(column: Column, z: bool) -> str:
    return "Z" if z and column.measure.value != "text" and column.measure.name != "runid" else ""


def _kind(column: Column, z: bool) -> str:
    return "float" if z and column.measure.value == "int" else column.measure.value


def query_lines(table: pl.DataFrame, columns: list[Column], z: bool = False) -> str:
    """The ``-q`` lines of every query of ``table``, in its row order (``z``: values are z-scores)."""
    printed = [c for c in columns if c.measure.per_query]
    if table.height == 0 or not printed:
        return ""
    texts = {
        c.label: (_float_texts(table.get_column(c.label)) if _kind(c, z) == "float" else
                  pl.Series(_value_text(table.get_column(c.label).to_list(), _kind(c, z)), dtype=pl.String))
        for c in printed
    }
    blocks = pl.DataFrame(texts).with_columns(_query=table.get_column("query"))
    lines = [
        (pl.lit(f"{_prefix(c, z)}{c.label:<22}\t") + pl.col("_query") + pl.lit("\t") + pl.col(c.label) + pl.lit("\n"))
        for c in printed
    ]
    return "".join(blocks.select(pl.concat_str(lines).alias("text")).get_column("text").to_list())


def summary_lines(table: pl.DataFrame, columns: list[Column], runid: str | None, qrels: pl.DataFrame,
                  complete: bool, z: bool = False) -> str:
    """The 'all' lines (``z``: the per-query values are z-scores, so ``gm_*`` are already logs)."""
    out: list[str] = []
    n = table.height
    for c in columns:
        summary = c.measure.summary
        if summary == "none":
            continue
        if summary == "runid":
            out.append(f"{'runid':<22}\tall\t{runid}\n")
            continue
        if summary == "count":
            value: float = n
        elif summary == "sum" and c.label == "num_rel" and complete:
            value = qrels.filter(pl.col("grade") > 0).height
        elif summary == "sum":
            value = c_sum(table.get_column(c.label).to_list())
        elif summary == "gmean":
            logs = table.get_column(c.label)
            logs = logs if z else logs.clip(lower_bound=MIN_GEO_MEAN).log()
            value = math.exp(c_sum(logs.to_list()) / n) if n else 0.0
        else:
            value = c_sum(table.get_column(c.label).to_list()) / n if n else 0.0
        text = _value_text([value], _kind(c, z))[0]
        out.append(f"{_prefix(c, z)}{c.label:<22}\tall\t{text}\n")
    return "".join(out)
