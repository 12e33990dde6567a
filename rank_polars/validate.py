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
from .plan import GRADE, ITEM, N_RET, Q, QGRADE, RANK, SCORE, Plan

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
        lambda: pl.col(GRADE).is_null().sum() + pl.col(GRADE).cast(pl.Float64).is_nan().sum(),
        "{rel}: null or NaN relevance labels (label every row, or pass qrels=)",
    ),
    # labels="run": each contributing row must be judged in the qrels with its own label
    "label_mismatch": (
        lambda: (pl.col(QGRADE).is_null() | (pl.col(QGRADE) != pl.col(GRADE))).sum(),
        "{rel}: the run's labels disagree with the qrels (labels='run' needs every relevant or judged "
        "row of the run judged in the qrels with the same grade; pass labels='qrels' to use the qrels' grades)",
    ),
}


Scope = Literal["all", "contributing"]


def item_check_scope(inputs: Inputs, plan: Plan) -> Scope:
    """Where the checks on items and repeated rows (null items, duplicate positions and
    items within a ranking) run.

    Under position order an item id and a repeated row can change a value only where the
    row contributes (it is relevant or judged): a null or repeated id of a row that adds 0
    to every metric changes nothing.  That is unless the order comes from scores (every row
    moves the ones below it, and ties are broken by item id), a metric reads the ranking's
    length, or ``checks="strict"`` (trec_eval refuses any repeated item).  So by default
    these checks run inside the metric pass over the contributing rows, ~5% of a log,
    instead of costing a distinct count per ranking over all of it.
    """
    if inputs.checks == "strict" or inputs.order == "score" or plan.reads_n_ret():
        return "all"
    return "contributing"


def item_stats(inputs: Inputs, duplicates: str) -> list[str]:
    if inputs.checks == "fast":
        return ["item_null"]
    names = ["item_null", "rank_dup"] if inputs.order == "position" else ["item_null"]
    return names + (["item_dup"] if duplicates == "error" else [])


def stat_names(inputs: Inputs, duplicates: str, plan: Plan) -> list[str]:
    """The statistics of the pass over every row of the run: the cheap per-row checks, and
    the item checks when :func:`item_check_scope` says ``"all"``."""
    names = ["rank_null", "rank_lt1"] if inputs.order == "position" else ["score_bad"]
    if inputs.run_labels:
        names.append("grade_bad")
    if item_check_scope(inputs, plan) == "all":
        names += item_stats(inputs, duplicates)
    return names


def contributing_stat_names(inputs: Inputs, duplicates: str, plan: Plan) -> list[str]:
    """The checks the metric pass computes over the contributing rows: the item checks, and
    with ``labels="run"`` the agreement of the run's labels with the qrels."""
    names = item_stats(inputs, duplicates) if item_check_scope(inputs, plan) == "contributing" else []
    return names + (["label_mismatch"] if inputs.qrels is not None and inputs.labels == "run" else [])


def check_column(stat: str) -> str:
    """Name of a contributing-row statistic in the per-query table of an engine."""
    return f"__rp_chk_{stat}"


def stat_exprs(names: list[str]) -> list[pl.Expr]:
    return [_STATS[name][0]().cast(pl.Int64).alias(name) for name in names]


def run_stats_polars(inputs: Inputs, duplicates: str, plan: Plan) -> pl.LazyFrame:
    """One row per ranking: its length and every check's count of offending rows."""
    aggs = [pl.len().alias(N_RET), *stat_exprs(stat_names(inputs, duplicates, plan))]
    return inputs.run.group_by(inputs.keys).agg(aggs)


def check_contributing(table: pl.DataFrame, inputs: Inputs, names: list[str]) -> pl.DataFrame:
    """Raise on the duplicate counts an engine computed over the contributing rows; return
    the per-query table without them."""
    if not names:
        return table
    check_run(table.select(*inputs.keys, *(pl.col(check_column(n)).alias(n) for n in names)), inputs)
    return table.drop(check_column(n) for n in names)


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
    # distinct 64-bit hashes of (query, item) first (as for the run); the per-query count
    # that names the queries only when that finds something
    pair = pl.col(Q).hash() ^ (pl.col(ITEM).hash() * pl.lit(0x9E3779B97F4A7C15, pl.UInt64))  # 2x faster than a struct
    if qrels.height == qrels.select(pair.n_unique()).item():
        return
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
