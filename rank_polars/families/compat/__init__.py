"""Compatibility (:mod:`rank_polars.measures.compat`) in each engine.

``polars_values`` and ``sql_values`` are the two functions of the family contract
(:mod:`rank_polars.engines.base`): the Polars computation is in
:mod:`rank_polars.families.compat.polars`, the SQL one (DuckDB's dialect, translated for Spark
and ``to_sql``'s other dialects) in :mod:`rank_polars.families.compat.sql`.  Both build the same
small table of running sums over depths and join it; neither loops over queries.
"""

from __future__ import annotations

from rank_polars.families.compat.polars import polars_values
from rank_polars.families.compat.sql import sql_values

__all__ = ["polars_values", "sql_values"]
