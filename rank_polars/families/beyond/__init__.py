"""Beyond-accuracy measures (:mod:`rank_polars.measures.beyond`) in each engine.

``polars_values`` and ``sql_values`` are the two functions of the family contract
(:mod:`rank_polars.engines.base`); the Polars computation lives in
:mod:`rank_polars.families.beyond.polars`, the SQL one in :mod:`rank_polars.families.beyond.sql`,
the checks of the auxiliary tables both run first in :mod:`rank_polars.families.beyond.checks`.
"""

from __future__ import annotations

import polars as pl

from rank_polars.engines.base import FamilyFrames, FamilySql, Outputs
from rank_polars.families.beyond import polars as beyond_polars
from rank_polars.families.beyond import sql as beyond_sql
from rank_polars.families.beyond.checks import check_specs


def polars_values(outputs: Outputs, frames: FamilyFrames) -> pl.LazyFrame:
    checked = check_specs(outputs, frames.columns)
    return beyond_polars.values(outputs, frames, checked)


def sql_values(outputs: Outputs, tables: FamilySql) -> str | list[str]:
    # to_sql gives no connection: its tables are SQL names, not read here
    checked = check_specs(outputs, tables.columns, read=tables.query is not None)
    return beyond_sql.values(outputs, tables, checked)


__all__ = ["polars_values", "sql_values"]
