"""The intervention sets every harvesting estimate is finished from, built inside each engine
(the other table, per (group, position) clicks and impressions with the input checks' counts,
is one aggregation in ``__init__.py``).

``pairs``: per (group, k0, k1) the intervention
sets of Agarwal et al. (WSDM 2019) as ultr-bias-toolkit's ``build_intervention_sets`` builds them
(``ultr_bias_toolkit/bias/intervention_harvesting/util.py``, commit ba62bcb): for every
(query, item) its click rate at each position it was shown at, the rates of the same
(query, item) at k0 and at k1 paired by a self-join and summed (``c0``, ``c1``), with the number
of (query, item) pairs (``n``) and their raw clicks at each side. Only the pairs a method reads
are joined: the pivot's (1, k), the adjacent (k, k + 1) and (1, 1), or every k0 < k1.

Both engines read the same internal columns: ``g0 .. gN`` (the groups; one constant when there is
no ``by``), ``q``, ``i``, ``p`` and ``c`` (the clicks as Float64).
"""

from __future__ import annotations

from typing import Any

import polars as pl

#: which intervention pairs each method reads (None: no pairs, only the per-position counts)
PAIRS = {"ctr": None, "rand_topk": None, "pivot": "pivot", "rand_pair": "pivot",
         "adjacent_chain": "adjacent", "all_pairs": "all"}


def polars_pairs(rows: pl.LazyFrame, groups: list[str], pairs: str) -> pl.LazyFrame:
    """The ``pairs`` table as a LazyFrame (equi-joins, streaming-friendly)."""
    keys = [*groups, "q", "i"]
    if pairs == "pivot":
        # only the (query, item)s ever shown at position 1 can pair with it: a semi-join against
        # those keys first, so the rates are not aggregated over every (query, item, position)
        rows = rows.join(rows.filter(pl.col("p") == 1).select(keys).unique(), on=keys, how="semi")
    # one row per (group, query, item, position): its click rate there, as the toolkit's `c`
    rates = rows.group_by(*keys, "p").agg(r=pl.col("c").sum() / pl.len(), ck=pl.col("c").sum())
    if pairs == "pivot":
        joined = rates.filter(pl.col("p") == 1).join(rates, on=keys, suffix="1")
    elif pairs == "adjacent":
        # (k, k + 1) as an equi-join on the shifted position, and (1, 1) from the rates themselves
        nxt = rates.select(*keys, p=pl.col("p") - 1, p1=pl.col("p"), r1=pl.col("r"), ck1=pl.col("ck"))
        same = rates.filter(pl.col("p") == 1).with_columns(p1=pl.col("p"), r1=pl.col("r"), ck1=pl.col("ck"))
        joined = pl.concat([same, rates.join(nxt, on=[*keys, "p"])], how="diagonal_relaxed")
    else:
        joined = rates.join(rates, on=keys, suffix="1").filter(pl.col("p") < pl.col("p1"))
    return joined.group_by(*groups, k0="p", k1="p1").agg(
        c0=pl.col("r").sum(), c1=pl.col("r1").sum(), n=pl.len(), clicks0=pl.col("ck").sum(), clicks1=pl.col("ck1").sum())


def duckdb_pairs(run: Any, log: str, groups: list[str], pairs: str) -> pl.DataFrame:
    """The same table as set-based SQL over the relation ``log`` (already holding the internal
    columns), run by ``run(sql) -> DataFrame``."""
    g = ", ".join(groups)
    on = " AND ".join(f"o.{c} = k.{c}" for c in [*groups, "q", "i"])
    source = log
    if pairs == "pivot":  # as in Polars: only the (query, item)s shown at position 1
        source = f"(SELECT * FROM {log} SEMI JOIN (SELECT DISTINCT {g}, q, i FROM {log} WHERE p = 1) USING ({g}, q, i))"
    rates = f"SELECT {g}, q, i, p, SUM(c) / COUNT(*) AS r, SUM(c) AS ck FROM {source} GROUP BY {g}, q, i, p"
    agg = ("SUM(o.r) AS c0, SUM(k.r) AS c1, COUNT(*) AS n, SUM(o.ck) AS clicks0, SUM(k.ck) AS clicks1")
    ko = ", ".join(f"o.{c}" for c in groups)
    if pairs == "pivot":
        body = f"SELECT {ko}, o.p AS k0, k.p AS k1, {agg} FROM r AS o JOIN r AS k ON {on} WHERE o.p = 1 GROUP BY {ko}, o.p, k.p"
    elif pairs == "adjacent":
        body = (f"SELECT {ko}, o.p AS k0, k.p AS k1, {agg} FROM r AS o JOIN r AS k ON {on} AND k.p = o.p + 1 "
                f"GROUP BY {ko}, o.p, k.p UNION ALL "
                f"SELECT {g}, p, p, SUM(r), SUM(r), COUNT(*), SUM(ck), SUM(ck) FROM r WHERE p = 1 GROUP BY {g}, p")
    else:
        body = f"SELECT {ko}, o.p AS k0, k.p AS k1, {agg} FROM r AS o JOIN r AS k ON {on} AND o.p < k.p GROUP BY {ko}, o.p, k.p"
    return run(f"WITH r AS ({rates}) {body}")
