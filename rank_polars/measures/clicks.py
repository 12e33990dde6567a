"""Online (click) metrics: specs of the ``rank_polars.families.clicks`` family.

The click column is the run's label column (``relevance="click"``, no qrels): a click count
per shown row. Each value is per ranking (group, query) and averaged over rankings.

* ``ctr@k``: clicks in the top k / rows shown in the top k;
* ``clicks@k``: clicks in the top k;
* ``abandonment@k``: 1 when the top k has no click, else 0 (lower is better);
* ``click_rr@k``: 1 / rank of the first clicked row in the top k (0 without a click);
* ``last_click_rr@k``: 1 / rank of the last clicked row in the top k (0 without a click).

Polars and DuckDB (and Spark through the translated SQL); no ``to_sql`` or list namespace.

>>> import polars as pl, rank_polars as rp
>>> log = pl.DataFrame({"query": ["a", "a", "a", "b", "b"], "item": ["x", "y", "z", "x", "y"],
...                     "position": [1, 2, 3, 1, 2], "click": [0, 1, 1, 0, 0]})
>>> rp.evaluate(log, [CTR(k=3), ClickRR(k=3), Abandonment(k=3)], relevance="click")
shape: (1, 4)
┌─────────┬──────────┬────────────┬───────────────┐
│ queries ┆ ctr@3    ┆ click_rr@3 ┆ abandonment@3 │
│ ---     ┆ ---      ┆ ---        ┆ ---           │
│ u32     ┆ f64      ┆ f64        ┆ f64           │
╞═════════╪══════════╪════════════╪═══════════════╡
│ 2       ┆ 0.333333 ┆ 0.25       ┆ 0.5           │
└─────────┴──────────┴────────────┴───────────────┘
"""

from __future__ import annotations

from .base import FamilyMeasure

FAMILY = "rank_polars.families.clicks"


class _Click(FamilyMeasure):
    FAMILY = FAMILY
    SOURCES: dict[str, str] = {}


class CTR(_Click):
    """ctr@k: clicks in the top k / rows shown in the top k, per ranking."""

    NAME = "ctr"


class Clicks(_Click):
    """clicks@k: the number of clicks in the top k, per ranking."""

    NAME = "clicks"


class Abandonment(_Click):
    """abandonment@k: 1 when no row of the top k is clicked (lower is better)."""

    NAME = "abandonment"
    HIGHER_IS_BETTER = False


class ClickRR(_Click):
    """click_rr@k: 1 / rank of the first click in the top k, 0 without one."""

    NAME = "click_rr"


class LastClickRR(_Click):
    """last_click_rr@k: 1 / rank of the last click in the top k, 0 without one."""

    NAME = "last_click_rr"


MEASURES = {c.NAME: c for c in (CTR, Clicks, Abandonment, ClickRR, LastClickRR)}
