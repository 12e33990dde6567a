"""A measure family used by tests/test_family_hook.py: the smallest one that exercises the
plug-in path of :mod:`rank_polars.engines.base` (an auxiliary table carried by the spec, a
per-query kind and a catalogue-level kind, a Polars and a SQL compute function)."""

from __future__ import annotations

import polars as pl

from rank_polars.engines.base import FamilyFrames, FamilySql, Outputs
from rank_polars.engines.sql_engine import quote
from rank_polars.measures.base import FamilyMeasure
from rank_polars.plan import ITEM, RANK

FAMILY = __name__


class HistoryShare(FamilyMeasure):
    """history_share@k = the share of the top k shown items found in the query's history."""

    NAME = "history_share"
    FAMILY = FAMILY
    SOURCES = {"history": "history"}


class CatalogCoverage(FamilyMeasure):
    """catalog_coverage@k = distinct items shown in the top k of any list / catalogue size."""

    NAME = "catalog_coverage"
    FAMILY = FAMILY
    SOURCES = {"catalog": "catalog"}
    AGGREGATE = "catalog"


def polars_values(outputs: Outputs, frames: FamilyFrames) -> pl.LazyFrame:
    keys, groups = frames.keys, frames.groups
    on = groups if outputs[0][1].AGGREGATE == "catalog" else keys
    parts = []
    for label, spec in outputs:
        top = frames.run.filter(pl.col(RANK) <= spec.k)
        if isinstance(spec, CatalogCoverage):
            size = frames.source(spec, "catalog").select(pl.col(ITEM).n_unique()).collect().item()
            value = (pl.col(ITEM).n_unique() / size).alias(label)
            part = top.group_by(groups).agg(value) if groups else top.select(value)
        else:
            seen = frames.source(spec, "history").select(keys[-1], ITEM).unique().with_columns(pl.lit(1.0).alias("__in"))
            part = (top.join(seen, on=[keys[-1], ITEM], how="left")
                    .group_by(keys).agg((pl.col("__in").fill_null(0.0).sum() / spec.k).alias(label)))
        parts.append(part)
    out = parts[0]
    for part in parts[1:]:
        out = out.join(part, on=on, how="full", coalesce=True, nulls_equal=True) if on else out.join(part, how="cross")
    return out


def sql_values(outputs: Outputs, tables: FamilySql) -> str:
    keys = ", ".join(quote(k) for k in tables.keys)
    groups = ", ".join(quote(k) for k in tables.groups)
    q, item, rank = quote(tables.keys[-1]), quote(ITEM), quote(RANK)
    selects = []
    for label, spec in outputs:
        top = f"(SELECT * FROM {tables.run} WHERE {rank} <= {spec.k})"
        if isinstance(spec, CatalogCoverage):
            size = f"(SELECT COUNT(DISTINCT {item}) FROM {tables.source(spec, 'catalog')})"
            value = f"CAST(COUNT(DISTINCT {item}) AS DOUBLE) / {size}"
            selects.append((f"SELECT {groups + ', ' if groups else ''}{value} AS {quote(label)} FROM {top} AS t"
                            + (f" GROUP BY {groups}" if groups else "")))
        else:
            seen = f"(SELECT DISTINCT {q}, {item} FROM {tables.source(spec, 'history')})"
            selects.append(f"SELECT {', '.join('t.' + quote(k) for k in tables.keys)}, "
                           f"SUM(CASE WHEN h.{item} IS NULL THEN 0.0 ELSE 1.0 END) / {spec.k} AS {quote(label)} "
                           f"FROM {top} AS t LEFT JOIN {seen} AS h ON t.{q} = h.{q} AND t.{item} = h.{item} "
                           f"GROUP BY {', '.join('t.' + quote(k) for k in tables.keys)}")
    if len(selects) == 1:
        return selects[0]
    on = tables.groups if outputs[0][1].AGGREGATE == "catalog" else tables.keys
    sql = f"SELECT * FROM ({selects[0]}) AS s0"
    for i, select in enumerate(selects[1:], 1):
        sql += (f" NATURAL FULL JOIN ({select}) AS s{i}" if on else f" CROSS JOIN ({select}) AS s{i}")
    return sql
