"""The one validation layer: per-query statistics of a run, the checks on them, and which
queries are evaluated.

Both engines compute the same per-query statistics (one grouped pass over the run; the
DuckDB engine in SQL) and hand them to :func:`check_run`, so an error reads the same
whichever engine found it.  The statistics are small (one row per ranking), and they also
give the number of items of each ranking and the set of queries to evaluate.
"""

from __future__ import annotations

import warnings
from typing import Literal

import polars as pl

from .errors import CoverageWarning, DataError, examples
from .inputs import Inputs
from .plan import GRADE, ITEM, N_RET, Q, RANK, SCORE

Missing = Literal["zero", "skip"]

# (statistic column, how it is computed in Polars, the message when it is non-zero)
_STATS = {
    "rank_null": (lambda: pl.col(RANK).null_count(), "{pos}: null positions"),
    "rank_lt1": (lambda: (pl.col(RANK) < 1).sum(), "{pos}: positions must be >= 1 (1 = shown first)"),
    "rank_dup": (
        lambda: pl.len() - pl.col(RANK).n_unique(),
        "{pos}: duplicate positions within a ranking",
    ),
    "score_bad": (
        lambda: pl.col(SCORE).is_null().sum() + pl.col(SCORE).is_nan().sum(),
        "{score}: null or NaN scores",
    ),
    "item_null": (lambda: pl.col(ITEM).null_count(), "{item}: null item ids"),
    "item_dup": (
        # distinct 64-bit hashes: half the cost of distinct strings; a collision (~1e-16
        # per 100-item ranking) can only raise a spurious error, never change a number
        lambda: pl.len() - pl.col(ITEM).hash().n_unique(),
        "{item}: duplicate items within a ranking (keep one row per query and item, or pass duplicates='first')",
    ),
    "grade_bad": (
        lambda: pl.col(GRADE).is_null().sum() + pl.col(GRADE).is_nan().sum(),
        "{rel}: null or NaN relevance labels (label every row, or pass qrels=)",
    ),
}


def stat_names(inputs: Inputs, duplicates: str) -> list[str]:
    full = inputs.checks == "full"
    names = ["rank_null", "rank_lt1"] + (["rank_dup"] if full else []) if inputs.order == "position" else ["score_bad"]
    names.append("item_null")
    if duplicates == "error" and full:
        names.append("item_dup")
    if inputs.qrels is None:
        names.append("grade_bad")
    return names


def run_stats_polars(inputs: Inputs, duplicates: str) -> pl.LazyFrame:
    """One row per ranking: its length and every check's count of offending rows."""
    aggs = [pl.len().alias(N_RET)]
    aggs += [_STATS[name][0]().cast(pl.Int64).alias(name) for name in stat_names(inputs, duplicates)]
    return inputs.run.group_by(inputs.keys).agg(aggs)


def _where(row: dict, inputs: Inputs) -> str:
    extra = ", ".join(f"{name}={row[f'__rp_by{i}']!r}" for i, name in enumerate(inputs.by))
    return repr(row[Q]) + (f" ({extra})" if extra else "")


def check_run(stats: pl.DataFrame, inputs: Inputs) -> None:
    """Raise :class:`DataError` naming the column, the problem and a few offending queries."""
    c = inputs.columns
    if stats.select(pl.col(Q).is_null().any()).item():
        rows = stats.filter(pl.col(Q).is_null())[N_RET].sum()
        raise DataError(f"run: column {c.query!r} has null query ids ({rows} rows)")
    names = {"pos": repr(c.position), "score": repr(c.score), "item": repr(c.item), "rel": repr(c.relevance)}
    for stat, (_, message) in _STATS.items():
        if stat not in stats.columns:
            continue
        bad = stats.filter(pl.col(stat) > 0)
        if bad.height:
            where = examples((_where(row, inputs) for row in bad.sort(inputs.keys).iter_rows(named=True)), quote=False)
            total = int(bad[stat].sum())
            raise DataError(
                "run: column " + message.format(**names) + f" ({total} rows in {bad.height} rankings), e.g. query {where}"
            )


def check_qrels(qrels: pl.DataFrame, inputs: Inputs) -> None:
    c = inputs.columns
    for col, label in ((Q, c.query), (ITEM, c.item), (GRADE, c.relevance)):
        nulls = qrels.filter(pl.col(col).is_null())
        if nulls.height:
            raise DataError(
                f"qrels: column {label!r} has {nulls.height} null values, e.g. query {examples(nulls[Q].unique().sort(nulls_last=True).to_list())}"
            )
    nan = qrels.filter(pl.col(GRADE).is_nan())
    if nan.height:
        raise DataError(f"qrels: column {c.relevance!r} has NaN grades, e.g. query {examples(nan[Q].unique().sort().to_list())}")
    # per query, rows minus distinct items: ~5x cheaper than grouping by (query, item)
    dup = qrels.group_by(Q).agg((pl.len() - pl.col(ITEM).n_unique()).alias("dup")).filter(pl.col("dup") > 0)
    if dup.height:
        raise DataError(
            f"qrels: duplicate judgments for the same (query, item) in columns {c.query!r}, {c.item!r} "
            f"({int(dup['dup'].sum())} rows), e.g. query {examples(dup[Q].sort().to_list())}"
        )


def universe(stats: pl.DataFrame, inputs: Inputs, qrels: pl.DataFrame | None, missing: Missing) -> pl.DataFrame:
    """The (group, query) pairs to evaluate, with each ranking's length (0 when missing).

    With judgments only judged queries count; a judged query absent from a group's run is
    scored 0 (``missing="zero"``, trec_eval ``-c``) or left out (``"skip"``).  Everything
    dropped or zero-filled is reported in a :class:`CoverageWarning`.
    """
    keys, by = inputs.keys, inputs.by_internal
    stats = stats.select(*keys, N_RET)
    if qrels is None:
        return stats
    judged_queries = qrels.select(Q).unique()
    ignored = stats.join(judged_queries, on=Q, how="anti")
    if ignored.height:
        ids = ignored[Q].unique().sort().to_list()
        warnings.warn(
            f"{len(ids)} queries of the run have no judgments and are not evaluated, e.g. {examples(ids)}",
            CoverageWarning,
            stacklevel=3,
        )
    present = stats.join(judged_queries, on=Q, how="semi")
    groups = stats.select(by).unique() if by else pl.DataFrame()
    expected = groups.join(judged_queries, how="cross") if by else judged_queries
    absent = expected.join(present, on=keys, how="anti")
    if absent.height:
        ids = absent[Q].unique().sort().to_list()
        fate = "scored 0 and counted (missing='zero')" if missing == "zero" else "left out (missing='skip')"
        warnings.warn(
            f"{absent.height} (group, judged query) pairs have no ranking in the run and are {fate}, "
            f"e.g. query {examples(ids)}",
            CoverageWarning,
            stacklevel=3,
        )
    if missing == "skip":
        return present
    return expected.join(present, on=keys, how="left").with_columns(pl.col(N_RET).fill_null(0))
