"""Risk-sensitive evaluation (TREC Web 2013-2014; ndeval's and gdeval's ``-baseline``,
``-riskAlpha``) for any measure: per query, a loss against a baseline weighs ``1 + alpha``."""

from __future__ import annotations

import math
from typing import Literal, Sequence

import polars as pl

from rank_polars.errors import RankPolarsError, examples


def risk(
    values: pl.DataFrame,
    baseline: pl.DataFrame,
    alpha: float = 0.0,
    *,
    query: str = "query",
    by: str | Sequence[str] | None = None,
    missing: Literal["zero", "skip"] = "zero",
) -> pl.DataFrame:
    """Per query, ``r - b`` if ``r >= b`` else ``(1 + alpha) (r - b)``, for every metric column.

    ``values`` and ``baseline`` are ``evaluate(..., per_query=True)`` tables with the same
    metric columns (the baseline without the ``by`` columns: one baseline for every group).
    A query on one side only scores 0 on the other: ``missing="zero"`` keeps every query of
    either side (ndeval's and gdeval's ``-c``), ``"skip"`` the queries of ``values`` only
    (their default, which then divides by the judged queries).  The mean of a column is the
    risk-sensitive score (TREC's U_RISK with ``alpha``).

    Examples
    --------
    >>> import polars as pl
    >>> from rank_polars.dropins.risk import risk
    >>> run = pl.DataFrame({"query": ["1", "2"], "ndcg@20": [0.5, 0.2]})
    >>> base = pl.DataFrame({"query": ["1", "3"], "ndcg@20": [0.3, 0.4]})
    >>> risk(run, base, alpha=1.0).sort("query")
    shape: (3, 2)
    ┌───────┬─────────┐
    │ query ┆ ndcg@20 │
    │ ---   ┆ ---     │
    │ str   ┆ f64     │
    ╞═══════╪═════════╡
    │ 1     ┆ 0.2     │
    │ 2     ┆ 0.2     │
    │ 3     ┆ -0.8    │
    └───────┴─────────┘
    """
    if missing not in ("zero", "skip"):
        raise RankPolarsError(f"missing must be 'zero' or 'skip', got {missing!r}")
    if not (alpha >= 0 and math.isfinite(alpha)):  # inf: every loss -inf, and 0 * inf a NaN
        raise RankPolarsError(f"alpha must be a finite number >= 0 (a loss weighs 1 + alpha), got {alpha!r}")
    groups = [by] if isinstance(by, str) else list(by or [])
    for name, frame in (("values", values), ("baseline", baseline)):
        if query not in frame.columns:
            raise RankPolarsError(f"risk: {name} has no query column {query!r} (evaluate(..., per_query=True) gives it)")
    for g in groups:
        if g not in values.columns:
            raise RankPolarsError(f"risk: values has no group column {g!r} (by=)")
    if values.schema[query] != baseline.schema[query]:
        # a join of text with integers is a raw SchemaError; made equal, "007" and 7 would not meet
        raise RankPolarsError(f"risk: the query column {query!r} is {values.schema[query]} in values but "
                              f"{baseline.schema[query]} in the baseline; cast one of them")
    metrics = [c for c in values.columns if c not in (*groups, query)]
    for m in metrics:
        if not values.schema[m].is_numeric():  # a group column left out of by=, taken for a metric
            raise RankPolarsError(f"risk: values' column {m!r} ({values.schema[m]}) is not a metric; name the group "
                                  f"columns with by=")
    absent = [m for m in metrics if m not in baseline.columns]
    if absent:
        raise RankPolarsError(f"risk: the baseline has no column {absent[0]!r}; it needs every metric of values")
    for name, frame in (("values", values), ("baseline", baseline)):
        # a null is a measure undefined on the query (ctr@k of a ranking with no row in its top
        # k): scored as 0 it would be a loss or a win made up; NaN and infinities would spread
        for m in metrics:
            bad = frame.filter(~pl.col(m).cast(pl.Float64).is_finite().fill_null(False))
            if bad.height:
                raise RankPolarsError(f"risk: column {m!r} of {name} has {bad.height} null, NaN or infinite values, e.g. "
                                      f"queries {examples(bad[query].unique().sort().to_list())}; a measure undefined on "
                                      "a query has no risk there: drop those rows (a query on one side only follows missing=)")
    if baseline.select(query).is_duplicated().any():
        raise RankPolarsError("risk: the baseline has more than one row for a query (one baseline for every group)")
    # a query twice in a group (two versions' tables stacked without their column) counted twice
    repeated = values.filter(values.select(*groups, query).is_duplicated())
    if repeated.height:
        raise RankPolarsError(f"risk: values has more than one row for query {repeated[query][0]!r}"
                              f"{' in one group' if groups else ''}; name every group column with by=")
    base = baseline.select(query, *(pl.col(m).alias(f"__rp_b{i}") for i, m in enumerate(metrics)))
    if missing == "zero" and groups:
        keys = values.select(groups).unique().join(
            pl.concat([values.select(query), base.select(query)]).unique(), how="cross")
        table = keys.join(values, on=[*groups, query], how="left", nulls_equal=True)
    elif missing == "zero":
        table = pl.concat([values.select(query), base.select(query)]).unique().join(values, on=query, how="left")
    else:
        table = values
    table = table.join(base, on=query, how="left")
    out = []
    for i, m in enumerate(metrics):
        r, b = pl.col(m).fill_null(0.0), pl.col(f"__rp_b{i}").fill_null(0.0)
        out.append(pl.when(r >= b).then(r - b).otherwise((1.0 + alpha) * (r - b)).alias(m))
    return table.select(*groups, query, *out)


__all__ = ["risk"]
