"""``track``: evaluate the partitions a store lacks, and return the series of every partition.

A daily job calls it on the whole log: the partitions already in the store (same input, same
settings: :mod:`rank_polars.monitor.store`) are not read again; a new or changed partition is
evaluated alone (:func:`rank_polars.evaluate` with ``per_query=True``, in either engine) and its
per-query values and summary are stored.  The series then comes from the stored summaries (one
row per partition and group: a few hundred rows for a month of three versions), and a window
(``window="7d"``) from the stored per-query values, never from the log.
"""

from __future__ import annotations

import inspect
import os
from typing import Any, Literal, Sequence

import polars as pl

from rank_polars.errors import RankPolarsError
from rank_polars.evaluate import aggregate_expr, evaluate, refuse_shaping
from rank_polars.inputs import Source
from rank_polars.measures import Measure, MetricLike, parse_all
from rank_polars.monitor.store import Store, fingerprint_source, partitions
from rank_polars.engines.exact import within_bound
from rank_polars.progress import ProgressLike, resolve
from rank_polars.schema import DEFAULTS, Schema, as_schema
from rank_polars.stats.intervals import _t_bounds, _transformed, check_ci, intervals


#: evaluate's options that change how a partition is computed, never its values: a store made
#: with others still serves (every other option, judge= first, is kept in its settings)
HOW = frozenset({"streaming", "checks", "duckdb_memory_limit", "duckdb_temp_directory"})
#: evaluate's defaults: an option given at its default is the store made without it
DEFAULTS_OF_EVALUATE = {name: p.default for name, p in inspect.signature(evaluate).parameters.items()}


def track(
    source: Source,
    metrics: MetricLike | Sequence[MetricLike],
    *,
    qrels: Source | None = None,
    by: str | Sequence[str] = "model",
    time: str | None = None,
    store: str | os.PathLike[str] = "eval_store/",
    schema: Schema | None = None,
    ci: float | None = 0.95,
    ci_method: Literal["t", "bootstrap", "bca"] = "t",
    window: str | None = None,
    missing: Literal["zero", "skip"] = "zero",
    engine: Literal["polars", "duckdb"] = "polars",
    rebuild: bool = False,
    progress: ProgressLike = False,
    **evaluate_kwargs: Any,
) -> pl.DataFrame:
    """Evaluate only the partitions of ``source`` the store lacks, and return the series of all it holds.

    Parameters
    ----------
    source
        The log, partitioned by ``time``: a folder of hive partitions (``log/date=2026-11-27/...``),
        a glob or list of Parquet files (each file's ``date=`` folder is its value; a file outside
        one is split by its time column, or is one partition named after the file), or a
        DataFrame / LazyFrame with the time column.
    metrics, qrels, missing, engine, schema
        As for :func:`rank_polars.evaluate` (``engine``: ``"polars"`` or ``"duckdb"``, the same numbers).
    by
        The grouping column(s), e.g. ``"model"``.
    time
        The time column (default: the schema's ``time`` role, ``date``).
    store
        The store folder (created if absent).  It keeps, per partition and group, the per-query
        values (Parquet) and a summary, with the metric specs, the judgments' fingerprint and
        the library version in ``manifest.json``.  A partition whose input changed (its files'
        size or modification time; a frame's content) is evaluated again; a store made with
        other metrics, judgments, ``by``, ``time``, ``missing`` or evaluate options (``judge=``,
        ``labels=``, ``order=``, ...; not ``streaming``, ``checks`` or DuckDB's settings) is
        refused, or emptied and rebuilt with ``rebuild=True``.  Partitions the log no longer has
        stay in the store.
    ci, ci_method
        The interval on each aggregate (``None``: none), as ``evaluate(ci=...)``: ``"t"`` from
        the stored counts, means and sds; ``"bootstrap"`` / ``"bca"`` from the stored per-query values.
    window
        ``None``: one row per partition.  A Polars duration (``"7d"``, ``"1w"``, ``"1mo"``): one
        row per window of the (date) time values, its queries those of every partition in it,
        aggregated from the stored per-query values; the time column is then the window's start.
    progress
        ``True``: show each partition's evaluation.

    Returns
    -------
    pl.DataFrame
        One row per (time, group): the time column (a date when every value is one), the ``by``
        columns, ``queries``, and each metric (with ``<metric>_low`` / ``<metric>_high`` when ``ci``).

    Examples
    --------
    >>> import tempfile, polars as pl, rank_polars as rp
    >>> log = rp.datasets.monitoring_log(days=3, queries_per_day=50, regression=None)
    >>> folder = tempfile.mkdtemp()
    >>> log.write_parquet(f"{folder}/log", partition_by="date")
    >>> series = rp.track(f"{folder}/log", ["ndcg@10"], store=f"{folder}/store", ci=None)
    >>> series.filter(pl.col("model") == "v1")
    shape: (3, 4)
    ┌────────────┬───────┬─────────┬──────────┐
    │ date       ┆ model ┆ queries ┆ ndcg@10  │
    │ ---        ┆ ---   ┆ ---     ┆ ---      │
    │ date       ┆ str   ┆ u32     ┆ f64      │
    ╞════════════╪═══════╪═════════╪══════════╡
    │ 2026-11-01 ┆ v1    ┆ 50      ┆ 0.847352 │
    │ 2026-11-02 ┆ v1    ┆ 50      ┆ 0.851707 │
    │ 2026-11-03 ┆ v1    ┆ 50      ┆ 0.891408 │
    └────────────┴───────┴─────────┴──────────┘
    """
    if engine not in ("polars", "duckdb"):
        raise RankPolarsError(f"track: engine must be 'polars' or 'duckdb', got {engine!r}")
    if ci is not None:
        check_ci(ci, ci_method)
    mapping = as_schema(schema, time=time)
    time_col = mapping.column("time")
    by_cols = [by] if isinstance(by, str) else list(by)
    if time_col in by_cols:
        raise RankPolarsError(f"track: {time_col!r} is the time column; by= names the groups within a partition")
    given = [metrics] if isinstance(metrics, (str, Measure)) else list(metrics)
    outputs = parse_all(given)
    refuse_shaping("track", evaluate_kwargs)
    settings = {"metrics": {label: repr(spec) for label, spec in outputs}, "by": by_cols, "time": time_col,
                "missing": missing, "judgments": fingerprint_source(qrels),
                "columns": {role: mapping.column(role) for role in DEFAULTS}}
    options = {name: value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)
               for name, value in sorted(evaluate_kwargs.items())
               if name not in HOW and not (name in DEFAULTS_OF_EVALUATE and value == DEFAULTS_OF_EVALUATE[name])}
    if options:  # judge=, labels=, order=, ...: a partition evaluated otherwise is another series
        settings["options"] = options
    held = Store(store, time_col)
    held.check(settings, rebuild)
    todo = held.stale(partitions(source, time_col))
    shown = resolve(progress)
    for i, part in enumerate(todo):
        with shown.phase(f"evaluating {time_col}={part.value} ({i + 1} of {len(todo)})"):
            per = evaluate(part.source, given, qrels=qrels, by=by_cols, per_query=True, missing=missing,
                           engine=engine, schema=mapping, **evaluate_kwargs)
        held.write(part.value, part.fingerprint, per, _summary(per, outputs, by_cols))
    return series(held, outputs, by_cols, ci=ci, ci_method=ci_method, window=window)


def _summary(per: pl.DataFrame, outputs: Sequence[tuple[str, Measure]], by: list[str]) -> pl.DataFrame:
    """Per group: ``queries``, each metric's aggregate (evaluate's own expression, in fixed point
    where its bound over the whole table holds, as :func:`rank_polars.evaluate` checks it: the same
    bits as its numbers for the partition) and the count, mean and sd of its (transformed) per-query
    values that the t interval reads, as :func:`rank_polars.stats.intervals.intervals` computes them
    (over the sorted values: the same bits as evaluate's ``ci=``)."""
    exact = within_bound(per, {label: _transformed(label, spec) for label, spec in outputs if spec.AGGREGATE != "catalog"})
    aggs: list[pl.Expr] = [pl.len().alias("queries")]
    for label, spec in outputs:
        g = _transformed(label, spec).sort()
        aggs += [aggregate_expr(label, spec, exact=exact.get(label, True)).alias(label), g.count().alias(f"{label}__n"),
                 g.mean().alias(f"{label}__mean"), g.std(ddof=1).alias(f"{label}__sd")]
    return per.group_by(by).agg(aggs) if by else per.select(aggs)


def series(store: Store | str | os.PathLike[str], outputs: Sequence[tuple[str, Measure]] | None = None,
           by: Sequence[str] | None = None, *, time: str = "date", ci: float | None = 0.95,
           ci_method: str = "t", window: str | None = None) -> pl.DataFrame:
    """The series of a store, without reading any log (``outputs`` and ``by``: the store's own by default)."""
    held = store if isinstance(store, Store) else Store(store, time)
    settings = held.manifest.get("settings")
    if settings is None:
        raise RankPolarsError(f"track: {str(held.path)!r} is not a store (no manifest)")
    outputs = list(outputs) if outputs is not None else parse_all(list(settings["metrics"]))
    by = list(by) if by is not None else list(settings["by"])
    t = held.time
    labels = [label for label, _ in outputs]
    if window is None and ci_method == "t":
        table = held.summaries()
        keys = [t, *by]
        out = table.sort(keys).select(*keys, "queries", *labels)
        if ci is not None:
            bounds = _t_bounds(table.sort(keys), outputs, keys, ci)
            out = out.join(bounds, on=keys, how="left", nulls_equal=True, maintain_order="left")
    else:
        values = held.values()
        if window is not None:
            values = values.with_columns(_dates(values.select(t).collect()[t], t, window).dt.truncate(window).alias(t))
        out = _aggregate(values.collect(), outputs, [t, *by], ci, ci_method)
    ordered = [c for label in labels for c in ((label, f"{label}_low", f"{label}_high") if ci is not None else (label,))]
    out = out.select(t, *by, "queries", *ordered)
    return out.with_columns(_as_dates(out[t])) if window is None else out


def _aggregate(per: pl.DataFrame, outputs: Sequence[tuple[str, Measure]], keys: list[str], ci: float | None,
               method: str) -> pl.DataFrame:
    # a window's groups span many partitions: each group's fixed-point bound, not the whole table's
    exact = within_bound(per, {label: _transformed(label, spec) for label, spec in outputs if spec.AGGREGATE != "catalog"}, keys)
    out = per.group_by(keys).agg(pl.len().alias("queries"),
                                 *[aggregate_expr(label, spec, exact=exact.get(label, True)) for label, spec in outputs])
    out = out.sort(keys)
    if ci is not None:
        bounds = intervals(per, outputs, keys, ci, method)  # type: ignore[arg-type]
        out = out.join(bounds, on=keys, how="left", nulls_equal=True, maintain_order="left")
    return out


def _dates(values: pl.Series, time: str, window: str) -> pl.Expr:
    dates = _as_dates(values)
    if dates.dtype != pl.Date:
        bad = values.filter(values.str.to_date(strict=False).is_null()).head(3).to_list()
        raise RankPolarsError(f"track: window={window!r} needs dates in {time!r} (YYYY-MM-DD); got {bad}")
    return pl.col(time).str.to_date()


def _as_dates(values: pl.Series) -> pl.Series:
    """The time values as dates when every one is one (``2026-11-27``), else as given."""
    if values.dtype == pl.String:
        dates = values.str.to_date(strict=False)
        if dates.null_count() == values.null_count():
            return dates
    return values


__all__ = ["series", "track"]
