"""``catalog_compare``: :func:`rank_polars.stats.compare.compare` for catalogue-level measures
(``AGGREGATE == "catalog"``: one value per version over all its lists), which have no per-query
values to pair: a percentile bootstrap over lists, the measure recomputed through
:func:`rank_polars.evaluate` on resampled copies of the log (``_drawn_copies``).
"""

from __future__ import annotations

import itertools
from typing import Any, Sequence

import numpy as np
import polars as pl

from rank_polars.stats import tests as stats
from rank_polars.stats.pairs import SCHEMA
from rank_polars.errors import RankPolarsError, examples
from rank_polars.evaluate import Engine, evaluate
from rank_polars.inputs import Source, scan
from rank_polars.measures import Measure
from rank_polars.progress import ProgressLike, resolve
from rank_polars.schema import as_schema

#: Catalogue-level measures that read each query's own history (the items a user already had):
#: a resampled copy of a query is a new list, so their bootstrap over lists would lose that.
_PER_QUERY_HISTORY = ("pop_reo", "pop_rsp")
_ROWS_PER_CALL = 4_000_000  # resampled rows evaluated per call (memory, not speed, sets it)
CATALOG_TEST = "catalog-bootstrap"


def catalog_compare(
    run: Source,
    outputs: Sequence[tuple[str, Measure]],
    *,
    qrels: Source | None = None,
    by: str = "model",
    query: str | None = None,
    baseline: Any = None,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    engine: Engine = "polars",
    progress: ProgressLike = False,
    **evaluate_kwargs: Any,
) -> pl.DataFrame:
    """:func:`compare` for catalogue-level measures (``AGGREGATE == "catalog"``: one value per
    version over all its lists, e.g. ``rp.gini(k=10)``), which have no per-query values to pair.

    The difference of two versions' values gets a percentile bootstrap interval over lists:
    resample ``b`` draws the queries with replacement (``numpy.random.default_rng(
    SeedSequence(seed, spawn_key=(b,))).integers(0, n, n)`` over the ``n`` distinct queries in
    sorted order; the same draw for every version, so the versions stay paired by query as in
    the other tests), each drawn copy of a query's list becomes a list of its own, and the
    measure is recomputed through its family for every version and resample (one
    :func:`rank_polars.evaluate` call over ``by`` x resample, a few million rows at a time).
    ``significant`` is whether the interval excludes 0 (at level ``confidence``; not adjusted
    by ``correction``), ``p_value`` is null and ``test`` is ``"catalog-bootstrap"``.  The same
    seed gives the same intervals.  ``pop_reo`` / ``pop_rsp`` (which read each query's own
    history) are refused.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> log = pl.DataFrame({"model": ["a"] * 6 + ["b"] * 6, "query": ["q1", "q1", "q2", "q2", "q3", "q3"] * 2,
    ...                     "item": ["x", "y", "x", "y", "x", "z",  "x", "y", "z", "w", "v", "u"],
    ...                     "position": [1, 2] * 6, "relevance": [1] * 12})
    >>> out = catalog_compare(log, [("entropy@2", rp.entropy(k=2))], n_resamples=200)
    >>> out.select("metric", "baseline", "version", "diff", "ci_low", "ci_high", "significant")
    shape: (1, 7)
    ┌───────────┬──────────┬─────────┬──────────┬────────┬──────────┬─────────────┐
    │ metric    ┆ baseline ┆ version ┆ diff     ┆ ci_low ┆ ci_high  ┆ significant │
    │ ---       ┆ ---      ┆ ---     ┆ ---      ┆ ---    ┆ ---      ┆ ---         │
    │ str       ┆ str      ┆ str     ┆ f64      ┆ f64    ┆ f64      ┆ bool        │
    ╞═══════════╪══════════╪═════════╪══════════╪════════╪══════════╪═════════════╡
    │ entropy@2 ┆ a        ┆ b       ┆ 1.125815 ┆ 0.0    ┆ 1.125815 ┆ false       │
    └───────────┴──────────┴─────────┴──────────┴────────┴──────────┴─────────────┘

    Three queries are too few: a resample that draws q1 three times shows the same two items in
    both versions, and the interval reaches 0.
    """
    shown = resolve(progress)
    for label, spec in outputs:
        if spec.AGGREGATE != "catalog":
            raise RankPolarsError(f"catalog_compare: {label!r} is not a catalogue-level measure; use compare")
        if spec.NAME in _PER_QUERY_HISTORY:
            raise RankPolarsError(
                f"compare: {label!r} reads each query's own history, which a bootstrap over lists (a drawn copy of "
                "a query is a new list) cannot keep; evaluate it per version with rp.evaluate instead")
    specs = [spec for _, spec in outputs]
    kw = {k: v for k, v in evaluate_kwargs.items() if k != "query"}
    observed = evaluate(run, specs, qrels=qrels, by=by, query=query, engine=engine, **kw)
    query = as_schema(kw.get("schema"), query=query).column("query")
    versions = observed[by].sort().to_list()
    if len(versions) < 2:
        raise RankPolarsError(f"compare: needs at least 2 versions in column {by!r}, found {len(versions)}")
    if baseline is None:
        chosen = list(itertools.combinations(versions, 2))
    elif baseline not in versions:
        raise RankPolarsError(
            f"compare: baseline {baseline!r} is not a version in column {by!r}; versions are {examples(versions, 10)}")
    else:
        chosen = [(baseline, v) for v in versions if v != baseline]
    frame = scan(run).collect()
    queries = frame[query].unique().sort()
    n = queries.len()
    judged = scan(qrels, "qrels").collect() if qrels is not None else None
    per_resample = max(1, _ROWS_PER_CALL // max(1, frame.height))
    values: list[pl.DataFrame] = []
    with shown.phase(f"bootstrap over lists ({', '.join(label for label, _ in outputs)})", total=n_resamples,
                     unit="resamples") as advance:
        for start in range(0, n_resamples, per_resample):
            stop = min(n_resamples, start + per_resample)
            copies = _drawn_copies(queries, range(start, stop), seed, query)
            run_b = frame.join(copies, on=query).drop(query).rename({"__copy": query})
            qrels_b = None if judged is None else judged.join(copies, on=query).drop(query, "__b").rename(
                {"__copy": query})
            # the rows were checked by the call above; copies of them need no second full check
            values.append(evaluate(run_b, specs, qrels=qrels_b, by=[by, "__b"], query=query, engine=engine,
                                   **{"checks": "fast", **kw}))
            advance(stop - start)
    boot = pl.concat(values)
    level = (1 - confidence) / 2
    rows = []
    for label, spec in outputs:
        table = boot.pivot(on=by, index="__b", values=label).sort("__b")
        if table.height != n_resamples:  # a resample where a version showed nothing has no value
            raise RankPolarsError(f"compare: {label!r} has no value in {n_resamples - table.height} resamples")
        at = dict(zip(observed[by].to_list(), observed[label].to_list()))
        higher = bool(getattr(spec, "HIGHER_IS_BETTER", True))
        for base, version in chosen:
            a, b = at[base], at[version]
            dist = (table[str(version)] - table[str(base)]).to_numpy() if str(version) in table.columns else None
            if dist is None or np.isnan(dist).any():
                raise RankPolarsError(f"compare: {label!r} has no value for {base!r} or {version!r} in some resamples")
            low, high = (float(q) for q in np.quantile(dist, [level, 1 - level]))
            degenerate = high - low <= 1e-12 * max(abs(a), abs(b), 1e-300)
            rows.append({
                **{k: None for k in SCHEMA},
                "metric": label, "baseline": base, "version": version, "n_queries": n,
                "mean_baseline": a, "mean_version": b, "diff": b - a, "rel_diff": (b - a) / a if a else None,
                "ci_low": None if degenerate else low, "ci_high": None if degenerate else high,
                "significant": not degenerate and (low > 0 or high < 0),
                "test": CATALOG_TEST, "interval": "bootstrap", "higher_is_better": higher,
                "note": stats.SAME_DIFFERENCE if degenerate else None,
            })
    schema = {k: (observed.schema[by] if v is None else v) for k, v in SCHEMA.items()}
    return pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)


def _drawn_copies(queries: pl.Series, resamples: range, seed: int, query: str) -> pl.DataFrame:
    """``(query, __b, __copy)``: the queries resample ``b`` draws, each copy a new query id
    ``b * n + j`` (``j``: its place in the draw), so a query drawn twice gives two lists."""
    n = queries.len()
    draws = np.concatenate([
        np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(b,))).integers(0, n, n) for b in resamples
    ]) if n else np.empty(0, dtype=np.int64)
    b = np.repeat(np.asarray(resamples, dtype=np.int64), n)
    return pl.DataFrame({
        query: queries.gather(draws), "__b": b, "__copy": b * n + np.tile(np.arange(n, dtype=np.int64), len(resamples)),
    })


__all__ = ["CATALOG_TEST", "catalog_compare"]
