"""Compute functions of the click family (:mod:`rank_polars.measures.clicks`): per ranking,
over the run's label column read as click counts."""

from __future__ import annotations

import polars as pl

from rank_polars.engines.base import FamilyFrames, FamilySql, Outputs
from rank_polars.engines.sql_engine import quote
from rank_polars.plan import GRADE, ITEM, Q, RANK


def _polars(name: str, k: int) -> pl.Expr:
    top = pl.col(RANK) <= k
    click = pl.when(top).then(pl.col(GRADE).fill_null(0).cast(pl.Float64)).otherwise(0.0)
    clicked_rank = pl.when(top & (pl.col(GRADE).fill_null(0) > 0)).then(pl.col(RANK))
    if name == "ctr":
        return click.sum() / top.sum().cast(pl.Float64)
    if name == "clicks":
        return click.sum()
    if name == "abandonment":
        return (click.sum() == 0).cast(pl.Float64)
    first = clicked_rank.min() if name == "click_rr" else clicked_rank.max()
    return (1.0 / first.cast(pl.Float64)).fill_null(0.0)


def polars_values(outputs: Outputs, frames: FamilyFrames) -> pl.LazyFrame:
    # one pass over the ranked run for every requested click metric
    run = frames.run
    if GRADE not in run.collect_schema().names() and frames.qrels is not None:
        # qrels given: the clicks are their labels, joined to the shown rows (0 where absent)
        run = run.join(frames.qrels.select(Q, ITEM, GRADE), left_on=[frames.keys[-1], ITEM], right_on=[Q, ITEM],
                       how="left")
    return run.group_by(frames.keys).agg(_polars(spec.NAME, spec.k).alias(label) for label, spec in outputs)


def _sql(name: str, k: int) -> str:
    rank, grade = quote(RANK), quote(GRADE)
    click = f"CAST(COALESCE({grade}, 0) AS DOUBLE)"
    top = f"{rank} <= {k}"
    clicked = f"CASE WHEN {top} AND COALESCE({grade}, 0) > 0 THEN {rank} END"
    if name == "ctr":
        return f"SUM(CASE WHEN {top} THEN {click} ELSE 0.0 END) / SUM(CASE WHEN {top} THEN 1.0 ELSE 0.0 END)"
    if name == "clicks":
        return f"SUM(CASE WHEN {top} THEN {click} ELSE 0.0 END)"
    if name == "abandonment":
        return f"CASE WHEN SUM(CASE WHEN {top} THEN {click} ELSE 0.0 END) = 0 THEN 1.0 ELSE 0.0 END"
    agg = "MIN" if name == "click_rr" else "MAX"
    return f"COALESCE(1.0 / {agg}({clicked}), 0.0)"


def sql_values(outputs: Outputs, tables: FamilySql) -> str:
    keys = ", ".join(quote(k) for k in tables.keys)
    values = ", ".join(f"{_sql(spec.NAME, spec.k)} AS {quote(label)}" for label, spec in outputs)
    run = tables.run
    if tables.qrels is not None:
        # qrels given: the clicks are their labels, joined to the shown rows (0 where absent)
        q, item, grade = quote(tables.keys[-1]), quote(ITEM), quote(GRADE)
        cols = ", ".join(f"r.{quote(k)}" for k in tables.keys)
        run = (f"(SELECT {cols}, r.{item}, r.{quote(RANK)}, j.{grade} FROM {tables.run} AS r LEFT JOIN {tables.qrels} AS j "
               f"ON r.{q} = j.{quote(Q)} AND r.{item} = j.{item})")
    return f"SELECT {keys}, {values} FROM {run} AS t GROUP BY {keys}"
