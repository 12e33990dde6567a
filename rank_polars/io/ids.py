"""Id columns read alike on both sides: the one rule for a run and judgments that disagree."""

from __future__ import annotations

from typing import Sequence

import polars as pl

from rank_polars.errors import RankPolarsError


def _id_kind(dtype: pl.DataType) -> str:
    if dtype.is_integer():
        return "int"
    if dtype in (pl.String, pl.Categorical, pl.Enum):
        return "text"
    return str(dtype)


def id_casts(run: pl.Schema, qrels: pl.Schema, columns: Sequence[str], what: str = "qrels") -> dict[str, pl.DataType]:
    """How to read id columns on which the run and the judgments disagree: the one rule.

    Integers of different widths are compared as Int64 (as text with a UInt64 or 128-bit side,
    whose values Int64 cannot hold); integers against text (a Parquet
    ``7`` against a TREC ``"7"``) as text, integers rendered without decimals; any other
    disagreement (e.g. float ids) is refused, since ``7.0`` and ``"7"`` have no one reading.
    ``qrels`` may be any table matched with the run (``what`` names it): a measure family's
    history, catalogue or subtopic judgments follow the same rule.
    """
    casts: dict[str, pl.DataType] = {}
    for col in columns:
        if col not in run or col not in qrels or run[col] == qrels[col]:
            continue
        kinds = {_id_kind(run[col]), _id_kind(qrels[col])}
        if kinds == {"int"} and not any(d in (pl.UInt64, pl.Int128, pl.UInt128) for d in (run[col], qrels[col])):
            casts[col] = pl.Int64()
        elif kinds <= {"int", "text"}:
            casts[col] = pl.String()
        else:
            raise RankPolarsError(
                f"{what}: column {col!r} is {qrels[col]} but the run's is {run[col]}; ids are matched as text "
                "or integers: cast one of them"
            )
    return casts


def harmonise_ids(
    run: pl.LazyFrame, qrels: pl.LazyFrame | None, columns: tuple[str, ...]
) -> tuple[pl.LazyFrame, pl.LazyFrame | None]:
    """``run`` and ``qrels`` with their id columns read alike (:func:`id_casts`)."""
    if qrels is None:
        return run, qrels
    casts = id_casts(run.collect_schema(), qrels.collect_schema(), columns)
    if not casts:
        return run, qrels
    exprs = [pl.col(c).cast(t) for c, t in casts.items()]
    return run.with_columns(exprs), qrels.with_columns(exprs)
