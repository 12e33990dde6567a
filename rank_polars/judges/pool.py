"""``rp.pool``: TREC depth-k pooling over versions, and the judging queue.

The pool of a query is every item some version showed in its top ``depth`` (TREC's pooling:
``trectools``' ``TrecPoolMaker.make_pool(strategy="topX")``).  Given judgments, the pool minus
what the judge already judged is the queue of what to judge next, ordered by a strategy and cut
at a budget:

* ``"depth"`` (default): the items shown highest first (their best rank over the versions), then
  those more versions showed, then by query and item (``priority`` = 1 / best rank): the order a
  depth-k pool is filled in, so a budget spent on it is a shallower complete pool.
* ``"impact"``: the items whose grade could move the metrics most first: the sum over the
  versions that show the item of ``1 / log2(rank + 1)``, the most its judgment can change
  those versions' DCG (an item every version shows at rank 1 weighs one per version), then as
  ``"depth"``.

Ranks are the log's positions, or by score (highest first, ties by item id descending, as
trec_eval), per version and query.
"""

from __future__ import annotations

from typing import Literal, Sequence

import polars as pl

from rank_polars import io as rio
from rank_polars.errors import RankPolarsError
from rank_polars.inputs import Columns, Source, judgments_as_log, lazy, prepare, resolve
from rank_polars.judges.table import check_grades, one_judge
from rank_polars.plan import ITEM, RANK, SCORE, Q
from rank_polars.schema import Schema, as_schema

Strategy = Literal["depth", "impact"]


def ranked(run: Source, by: str | Sequence[str] | None, columns: Columns, order: str = "auto") -> tuple[pl.LazyFrame, list[str]]:
    """The run's rows with their rank per (group, query), internal names; and the group keys."""
    inputs = prepare(run, qrels=None, by=by, columns=columns, order=order, needs_labels=False, reads_labels=False)
    keys = inputs.keys
    rows = inputs.run
    if inputs.order == "score":
        rows = rows.sort([*keys, SCORE, ITEM], descending=[*([False] * len(keys)), True, True], nulls_last=True)
        rows = rows.with_columns((pl.int_range(pl.len()).over(keys) + 1).alias(RANK))
    return rows.select(*keys, ITEM, RANK), keys


def pool(
    run: Source,
    *,
    depth: int = 10,
    by: str | Sequence[str] | None = "model",
    judgments: Source | None = None,
    judge: str | None = None,
    strategy: Strategy = "depth",
    budget: int | None = None,
    order: Literal["auto", "position", "score"] = "auto",
    schema: Schema | None = None,
) -> pl.DataFrame:
    """The depth-``depth`` pool of the versions' rankings, or with ``judgments`` the judging queue.

    Parameters
    ----------
    run
        The log (any source ``evaluate`` reads): query, item, position or score, the ``by`` columns.
    depth
        Each version's top ``depth`` items of each query enter the pool.
    by
        The column(s) telling the versions apart (``None``: the log is one version).
    judgments, judge
        What is judged already (any judgments source; with several judges, ``judge=`` says whose
        queue this is).  The pool's items they judge are left out.
    strategy, budget
        The queue's order (``"depth"`` or ``"impact"``, see the module) and how many items to
        return (default all).
    order, schema
        As for :func:`rank_polars.evaluate`.

    Returns
    -------
    pl.DataFrame
        ``query, item`` (the log's names), ``rank`` (the best rank any version gave the item),
        ``versions`` (how many versions show it in their top ``depth``) and ``priority`` (the
        strategy's weight), one row per pooled item: by query and item without ``judgments``,
        in the queue's order with them.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> log = pl.DataFrame({"model": ["a", "a", "a", "b", "b", "b"], "query": ["q1"] * 6,
    ...                     "item": ["x", "y", "z", "y", "w", "x"], "position": [1, 2, 3, 1, 2, 3]})
    >>> rp.pool(log, depth=2)
    shape: (3, 5)
    ┌───────┬──────┬──────┬──────────┬──────────┐
    │ query ┆ item ┆ rank ┆ versions ┆ priority │
    │ ---   ┆ ---  ┆ ---  ┆ ---      ┆ ---      │
    │ str   ┆ str  ┆ i64  ┆ u32      ┆ f64      │
    ╞═══════╪══════╪══════╪══════════╪══════════╡
    │ q1    ┆ w    ┆ 2    ┆ 1        ┆ 0.5      │
    │ q1    ┆ x    ┆ 1    ┆ 1        ┆ 1.0      │
    │ q1    ┆ y    ┆ 1    ┆ 2        ┆ 1.0      │
    └───────┴──────┴──────┴──────────┴──────────┘
    >>> judged = pl.DataFrame({"query": ["q1"], "item": ["y"], "relevance": [1]})
    >>> rp.pool(log, depth=3, judgments=judged, strategy="impact")
    shape: (3, 5)
    ┌───────┬──────┬──────┬──────────┬──────────┐
    │ query ┆ item ┆ rank ┆ versions ┆ priority │
    │ ---   ┆ ---  ┆ ---  ┆ ---      ┆ ---      │
    │ str   ┆ str  ┆ i64  ┆ u32      ┆ f64      │
    ╞═══════╪══════╪══════╪══════════╪══════════╡
    │ q1    ┆ x    ┆ 1    ┆ 2        ┆ 1.5      │
    │ q1    ┆ w    ┆ 2    ┆ 1        ┆ 0.63093  │
    │ q1    ┆ z    ┆ 3    ┆ 1        ┆ 0.5      │
    └───────┴──────┴──────┴──────────┴──────────┘
    """
    if not isinstance(depth, int) or isinstance(depth, bool) or depth < 1:
        raise RankPolarsError(f"depth must be a positive integer, got {depth!r}")
    if strategy not in ("depth", "impact"):
        raise RankPolarsError(f"strategy must be 'depth' or 'impact', got {strategy!r}")
    if budget is not None and (not isinstance(budget, int) or isinstance(budget, bool) or budget < 0):
        raise RankPolarsError(f"budget must be a non-negative integer, got {budget!r}")
    if judgments is None and (judge is not None or budget is not None):
        raise RankPolarsError("judge= and budget= choose the judging queue: pass judgments=")
    mapping = as_schema(schema)
    columns = Columns.of(mapping)
    rows, keys = ranked(run, by, columns, order)
    top = rows.filter(pl.col(RANK) <= depth)
    weight = ((1.0 / (pl.col(RANK) + 1).cast(pl.Float64).log(2)).sum() if strategy == "impact"
              else 1.0 / pl.col(RANK).min().cast(pl.Float64))
    pooled = top.group_by(Q, ITEM).agg(pl.col(RANK).min().alias("rank"), pl.struct(keys[:-1]).n_unique().alias("versions")
                                       if keys[:-1] else pl.lit(1, pl.UInt32).alias("versions"), weight.alias("priority"))
    if judgments is None:
        out = pooled.sort(Q, ITEM).collect()
    else:
        judged = lazy(resolve(judgments_as_log(one_judge(judgments, mapping, judge), columns), "qrels",
                              rio.numeric_roles(relevance=columns.relevance), columns))
        have = judged.collect_schema()
        for col, role in ((columns.query, "query id"), (columns.item, "item id")):
            if col not in have:
                raise RankPolarsError(f"judgments: column {col!r} ({role}) not found; columns are "
                                      f"{', '.join(map(repr, have.names()))}")
        if columns.relevance in have:  # is an item whose grade is null or NaN judged? refused, as evaluate does
            check_grades(judged, columns.query, columns.relevance, "judgments")
        judged = judged.select(pl.col(columns.query).alias(Q), pl.col(columns.item).alias(ITEM))
        casts = rio.id_casts(pooled.collect_schema(), judged.collect_schema(), (Q, ITEM))
        pooled = pooled.with_columns(pl.col(c).cast(t) for c, t in casts.items())
        judged = judged.with_columns(pl.col(c).cast(t) for c, t in casts.items())
        queue = pooled.join(judged, on=[Q, ITEM], how="anti")
        queue = queue.sort(["priority", "rank", "versions", Q, ITEM], descending=[True, False, True, False, False])
        out = (queue.head(budget) if budget is not None else queue).collect()
    return out.rename({Q: columns.query, ITEM: columns.item}).select(columns.query, columns.item, "rank", "versions",
                                                                     "priority")


__all__ = ["pool", "ranked"]
