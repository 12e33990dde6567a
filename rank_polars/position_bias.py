"""Position-bias (examination) estimation from a click log (issue 20).

``method="ctr"``: the click rate at each position over the rate at position 1 (biased by the
ranker; the naive baseline). ``method="pivot"``: intervention harvesting (Agarwal et al. 2019)
with position 1 as pivot: for every (query, item) shown both at position 1 and at position k,
its click rate at each, summed over pairs; examination(k) = sum CTR at k / sum CTR at 1. These
follow ultr-bias-toolkit (``ultr_bias_toolkit/bias/naive.py``,
``ultr_bias_toolkit/bias/intervention_harvesting/pivot.py`` and ``util.py``); 0 where the
ratio is 0/0, as there. Where it is x/0 (clicks at a position, none at the reference) the toolkit
gives inf; here the examination is null (undefined), in both engines.
"""

from __future__ import annotations

from typing import Any

import duckdb
import polars as pl

from .errors import RankPolarsError

METHODS = ("ctr", "pivot")


def _check(log: pl.DataFrame, cols: list[str], click: str) -> None:
    missing = [c for c in cols if c not in log.columns]
    if missing:
        raise RankPolarsError(f"position_bias: the log has no column {missing}")
    bad = log.filter(pl.col(click).is_null() | (pl.col(click) < 0)).height
    if bad:
        raise RankPolarsError(f"position_bias: {bad} rows have a null or negative {click!r}")


def position_bias(log: Any, method: str = "ctr", *, query: str = "query", item: str = "item",
                  position: str = "position", click: str = "click", engine: str = "polars") -> pl.DataFrame:
    """Examination probability per position, relative to position 1.

    Parameters
    ----------
    log : DataFrame or LazyFrame
        One row per impression: ``query, item, position, click``.
    method : {"ctr", "pivot"}
    engine : {"polars", "duckdb"}

    Returns
    -------
    DataFrame ``position, examination`` sorted by position.

    Examples
    --------
    >>> import polars as pl
    >>> log = pl.DataFrame({"query": ["q"] * 4, "item": ["a", "b", "b", "a"],
    ...                     "position": [1, 2, 1, 2], "click": [1, 0, 1, 1]})
    >>> position_bias(log, "pivot")["examination"].to_list()
    [1.0, 0.5]
    """
    if method not in METHODS:
        raise RankPolarsError(f"position_bias: method must be one of {METHODS}, not {method!r}")
    df = log.collect() if isinstance(log, pl.LazyFrame) else pl.DataFrame(log)
    _check(df, [query, item, position, click], click)
    df = df.select(q=pl.col(query), i=pl.col(item), p=pl.col(position), c=pl.col(click).cast(pl.Float64))
    if engine == "duckdb":
        return _duckdb(df, method)
    if engine != "polars":
        raise RankPolarsError(f"position_bias: engine must be 'polars' or 'duckdb', not {engine!r}")
    if method == "ctr":
        out = df.group_by("p").agg(e=pl.col("c").mean())
    else:
        rates = df.group_by("q", "i", "p").agg(r=pl.col("c").sum() / pl.len())
        pairs = rates.filter(pl.col("p") == 1).join(rates, on=["q", "i"], suffix="_k")
        out = pairs.group_by(p="p_k").agg(e=_ratio(pl.col("r_k").sum(), pl.col("r").sum()))
    out = out.sort("p")
    return out.select(position=pl.col("p"), examination=_ratio(pl.col("e"), pl.col("e").first()))


def _ratio(num: pl.Expr, den: pl.Expr) -> pl.Expr:
    """num / den; 0 for 0/0 (the toolkit's convention), null for x/0 (undefined, never inf)."""
    return pl.when(den != 0).then(num / den).when(num == 0).then(pl.lit(0.0))


def _sql_ratio(num: str, den: str) -> str:
    return f"CASE WHEN {den} <> 0 THEN {num} / {den} WHEN {num} = 0 THEN 0.0 END"


def _duckdb(df: pl.DataFrame, method: str) -> pl.DataFrame:
    con = duckdb.connect()
    con.register("log", df)
    if method == "ctr":
        inner = "SELECT p, AVG(c) AS e FROM log GROUP BY p"
    else:
        inner = ("WITH r AS (SELECT q, i, p, SUM(c) / COUNT(*) AS r FROM log GROUP BY q, i, p) "
                 f"SELECT k.p AS p, {_sql_ratio('SUM(k.r)', 'SUM(o.r)')} AS e "
                 "FROM r AS o JOIN r AS k ON o.q = k.q AND o.i = k.i WHERE o.p = 1 GROUP BY k.p")
    sql = (f"WITH t AS ({inner}) SELECT p AS position, "
           f"{_sql_ratio('e', 'FIRST(e ORDER BY p) OVER ()')} AS examination FROM t ORDER BY p")
    return con.sql(sql).pl()
