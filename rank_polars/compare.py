"""``compare``: versions of a system against a baseline, query by query, with significance.

The per-query values come from :func:`rank_polars.evaluate` (``per_query=True``): no metric
is computed here.  The statistics live in :mod:`rank_polars.stats`.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Literal, Sequence

import numpy as np
import polars as pl

from . import stats
from .errors import RankPolarsError, SmallSampleWarning, examples, warn
from .evaluate import Engine, evaluate
from .inputs import Source
from .measures import MetricLike
from .progress import ProgressLike, resolve
from .validate import Missing

Test = Literal["paired_t", "wilcoxon", "randomization", "bootstrap"]
TESTS = ("paired_t", "wilcoxon", "randomization", "bootstrap")
CORRECTIONS = (None, "bonferroni", "holm", "bh")

SCHEMA: dict[str, Any] = {
    "metric": pl.String,
    "baseline": None,  # the dtype of the ``by`` column
    "version": None,
    "n_queries": pl.Int64,
    "mean_baseline": pl.Float64,
    "mean_version": pl.Float64,
    "diff": pl.Float64,
    "rel_diff": pl.Float64,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
    "p_value": pl.Float64,
    "p_adjusted": pl.Float64,
    "significant": pl.Boolean,
    "effect_size": pl.Float64,
    "wins": pl.Int64,
    "ties": pl.Int64,
    "losses": pl.Int64,
    "test": pl.String,
    "note": pl.String,
}


def compare(
    run: Source,
    metrics: MetricLike | Sequence[MetricLike],
    *,
    qrels: Source | None = None,
    by: str = "model",
    baseline: Any = None,
    test: Test = "paired_t",
    correction: Literal["bonferroni", "holm", "bh"] | None = "holm",
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int = 0,
    missing: Missing = "zero",
    engine: Engine = "polars",
    confidence: float = 0.95,
    progress: ProgressLike = False,
    **evaluate_kwargs: Any,
) -> pl.DataFrame:
    """Compare versions (values of ``by``) on paired per-query metric values.

    Parameters
    ----------
    run, metrics, qrels, missing, engine
        As for :func:`rank_polars.evaluate`, which computes the per-query values.
    by
        The one column whose values are the versions, e.g. ``"model"``.
    baseline
        The version every other version is compared with.  ``None``: every pair of
        versions, each ``(a, b)`` with ``a`` before ``b`` in sorted order and ``a`` as the
        baseline.  Rows come per metric (in the order given), then per pair in that order.
    test
        ``"paired_t"`` (two-sided, as ``scipy.stats.ttest_rel``), ``"wilcoxon"`` (signed
        rank on the differences, as ``scipy.stats.wilcoxon`` with its defaults),
        ``"randomization"`` (paired sign-flip permutation test of the mean difference) or
        ``"bootstrap"`` (paired bootstrap test of the mean difference, shift method).
        The two resampling tests are two-sided with
        ``p = (1 + #{resamples at least as extreme}) / (1 + n_resamples)``: at least as
        extreme is ``|mean*| >= |mean|`` for randomization and ``|mean* - mean| >= |mean|``
        (bootstrap means recentred on 0) for bootstrap.
    correction
        ``None``, ``"bonferroni"``, ``"holm"`` or ``"bh"`` (Benjamini-Hochberg), applied
        across all rows of the call (every metric and pair).
    alpha
        ``significant`` is ``p_adjusted < alpha``.
    n_resamples, seed
        Resamples for the bootstrap interval and the resampling tests; the same seed gives
        the same numbers (each row has its own stream derived from the seed and its index),
        on any machine: the resampling runs on one thread per CPU, but in a fixed number of
        tasks with their own streams.
    confidence
        Level of the bootstrap percentile interval ``[ci_low, ci_high]`` on the mean
        paired difference (null with fewer than two paired queries).
    progress
        ``True``: show the phases (evaluating, then the resamples done per metric) in the
        terminal or notebook; a :class:`rank_polars.progress.Progress` object: report to it;
        ``False`` (default): nothing.
    **evaluate_kwargs
        Passed on to :func:`rank_polars.evaluate` (``query=``, ``item=``, ``position=``,
        ``score=``, ``relevance=``, ``duplicates=``, ...).

    Returns
    -------
    pl.DataFrame
        One row per (metric, pair): ``metric, baseline, version, n_queries`` (paired
        queries), ``mean_baseline, mean_version, diff`` (version - baseline),
        ``rel_diff`` (diff / mean_baseline; null when that is 0), ``ci_low, ci_high,
        p_value, p_adjusted, significant, effect_size`` (paired Cohen's d_z = mean / sd of
        the differences; 0 when all differences are equal to 0, +-inf for a constant
        non-zero difference), ``wins, ties, losses`` (queries where the version is
        better, equal, worse), ``test`` and ``note`` (null, or why the test was not run:
        ``"n too small"``, ``"n_resamples too small"``).

    Notes
    -----
    Pairing is by query id.  With ``missing="skip"`` only the queries both versions have
    are paired.  With ``missing="zero"`` a query one version has and the other lacks
    counts as 0 for the one lacking it (with ``qrels`` evaluate has already zero-filled
    every judged query); a :class:`CoverageWarning` says how many.  The means are those of
    the paired queries.  When every difference is 0 (identical versions) ``paired_t`` and
    ``wilcoxon`` give p = 1 where SciPy gives NaN; with fewer than two paired queries
    (none for ``wilcoxon`` and the resampling tests) p is null, ``significant`` is false
    and the row does not count in the correction.

    **Too few queries.** A test that cannot reach ``p < alpha`` on ``n`` paired queries,
    whatever their values, is not run: ``p_value`` and ``p_adjusted`` are null,
    ``significant`` is false, ``note`` says ``"n too small"`` (or ``"n_resamples too
    small"`` when ``1 / (1 + n_resamples) >= alpha``), the row does not count in the
    correction and a :class:`SmallSampleWarning` names it.  The smallest p of each test
    (:func:`rank_polars.stats.smallest_p`) is 0 for ``paired_t`` from n = 2 on (it needs
    two queries); ``2 / 2^n`` for ``wilcoxon`` and ``randomization`` (the two extreme sign
    patterns); ``1 / n^n`` for ``bootstrap`` (one of the n^n equally likely resamples).
    With ``alpha=0.05``: ``paired_t`` needs 2 queries, ``bootstrap`` 3, ``wilcoxon`` and
    ``randomization`` 6.  A resampling p-value is never reported below that bound (the
    resamples cannot resolve less), nor below ``1 / (1 + n_resamples)``.

    **Bad values.** A per-query value that is NaN, infinite or null is an error naming the
    metric, the version and the queries; no query is dropped silently.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> from rank_polars.compare import compare
    >>> log = pl.DataFrame({
    ...     "model": ["a"] * 4 + ["b"] * 4,
    ...     "query": ["q1", "q2", "q3", "q4"] * 2,
    ...     "item": ["x"] * 8,
    ...     "position": [1] * 8,
    ...     "relevance": [1, 0, 0, 1, 1, 1, 0, 1],
    ... })
    >>> out = compare(log, "p@1", baseline="a", correction=None, n_resamples=1000)
    >>> out.select("metric", "baseline", "version", "diff", "p_value", "wins", "ties", "losses")
    shape: (1, 8)
    ┌────────┬──────────┬─────────┬──────┬──────────┬──────┬──────┬────────┐
    │ metric ┆ baseline ┆ version ┆ diff ┆ p_value  ┆ wins ┆ ties ┆ losses │
    │ ---    ┆ ---      ┆ ---     ┆ ---  ┆ ---      ┆ ---  ┆ ---  ┆ ---    │
    │ str    ┆ str      ┆ str     ┆ f64  ┆ f64      ┆ i64  ┆ i64  ┆ i64    │
    ╞════════╪══════════╪═════════╪══════╪══════════╪══════╪══════╪════════╡
    │ p@1    ┆ a        ┆ b       ┆ 0.25 ┆ 0.391002 ┆ 1    ┆ 3    ┆ 0      │
    └────────┴──────────┴─────────┴──────┴──────────┴──────┴──────┴────────┘
    """
    by_col = _check_args(by, test, correction, alpha, n_resamples, confidence, seed, evaluate_kwargs)
    query = evaluate_kwargs.get("query", "query")
    shown = resolve(progress)
    per = evaluate(
        run, metrics, qrels=qrels, by=by_col, per_query=True, missing=missing, engine=engine, progress=shown,
        **evaluate_kwargs,
    )
    labels = [c for c in per.columns if c not in (by_col, query)]
    if per[by_col].null_count():
        raise RankPolarsError(f"compare: column {by_col!r} has null versions; fill or drop them")
    _check_values(per, by_col, query, labels)
    versions = per[by_col].unique().sort().to_list()
    if len(versions) < 2:
        raise RankPolarsError(
            f"compare: needs at least 2 versions in column {by_col!r}, found {len(versions)}"
            + (f" ({versions[0]!r})" if versions else "")
        )
    if baseline is None:
        pairs = list(itertools.combinations(versions, 2))
    else:
        if baseline not in versions:
            raise RankPolarsError(
                f"compare: baseline {baseline!r} is not a version in column {by_col!r}; versions are {examples(versions, 10)}"
            )
        pairs = [(baseline, v) for v in versions if v != baseline]

    paired = {pair: _pair(per, by_col, query, labels, pair, missing) for pair in pairs}
    rows: list[dict[str, Any]] = []
    per_pair = n_resamples * (2 if test == "randomization" else 1)  # the interval's, and the test's
    for label in labels:
        with shown.phase(f"resampling {label} ({test})", total=per_pair * len(pairs), unit="resamples") as advance:
            for pair in pairs:
                frame = paired[pair]
                x = frame[f"{label}__b"].to_numpy().astype(np.float64)
                y = frame[f"{label}__v"].to_numpy().astype(np.float64)
                seq = np.random.SeedSequence(seed, spawn_key=(len(rows),))
                rows.append(_row(label, pair, x, y, test, n_resamples, confidence, alpha, seq, advance))
    _warn_small(rows, test, alpha, n_resamples)
    p_adj = stats.adjust(np.array([r["p_value"] for r in rows], dtype=np.float64), correction)
    for r, p in zip(rows, p_adj):
        r["p_adjusted"] = p
        r["significant"] = bool(p < alpha) if not math.isnan(p) else False
    schema = {k: (per.schema[by_col] if v is None else v) for k, v in SCHEMA.items()}
    out = pl.DataFrame(rows, schema=schema) if rows else pl.DataFrame(schema=schema)
    # undefined statistics are nulls, not NaN
    floats = [k for k, v in schema.items() if v == pl.Float64]
    return out.with_columns(pl.col(floats).fill_nan(None))


def _check_values(per: pl.DataFrame, by: str, query: str, labels: list[str]) -> None:
    """Refuse a per-query value that is NaN, infinite or null: no query is dropped silently."""
    bad = per.select(by, query, *[(~pl.col(m).is_finite()).fill_null(True).alias(m) for m in labels])
    for label in labels:
        rows = bad.filter(pl.col(label))
        if rows.height:
            versions = rows.group_by(by, maintain_order=True).agg(pl.col(query).sort()).sort(by)
            where = "; ".join(
                f"version {v!r}: {len(qs)} queries, e.g. {examples(qs)}" for v, qs in versions.iter_rows()
            )
            raise RankPolarsError(
                f"compare: the per-query values of {label} are not numbers (NaN, infinite or null) for {where}; "
                "compare drops no query: fix the input (see rank_polars.validate) or filter those queries out"
            )


def _warn_small(rows: list[dict[str, Any]], test: str, alpha: float, n_resamples: int) -> None:
    small = [r for r in rows if r["note"] is not None]
    if small:
        r = small[0]
        warn(
            f"compare: the {test} test was not run on {len(small)} of {len(rows)} rows ({r['note']}; e.g. "
            f"{r['metric']} {r['version']!r} vs {r['baseline']!r}: {r['n_queries']} paired queries, "
            f"the smallest p it could give is {stats.smallest_p(test, r['n_queries'], n_resamples):.4g} "
            f">= alpha {alpha}); their p is null and they are not significant",
            SmallSampleWarning,
        )


def _check_args(
    by: Any, test: Any, correction: Any, alpha: Any, n_resamples: Any, confidence: Any, seed: Any, kwargs: dict
) -> str:
    if isinstance(by, (list, tuple)) and len(by) == 1:
        by = by[0]
    if not isinstance(by, str):
        raise RankPolarsError(f"compare: by must be one column name (the versions), got {by!r}")
    if test not in TESTS:
        raise RankPolarsError(f"compare: unknown test {test!r}; choose one of {', '.join(map(repr, TESTS))}")
    if correction not in CORRECTIONS:
        raise RankPolarsError(
            f"compare: unknown correction {correction!r}; choose None, 'bonferroni', 'holm' or 'bh'"
        )
    for name, value in (("alpha", alpha), ("confidence", confidence)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
            raise RankPolarsError(f"compare: {name} must be between 0 and 1 (exclusive), got {value!r}")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
        raise RankPolarsError(f"compare: n_resamples must be an integer >= 1, got {n_resamples!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise RankPolarsError(f"compare: seed must be a non-negative integer, got {seed!r}")
    for name in ("per_query", "by"):
        if name in kwargs:
            raise RankPolarsError(f"compare: {name}= is not an evaluate option here (compare sets it)")
    return by


def _pair(per: pl.DataFrame, by: str, query: str, labels: list[str], pair: tuple, missing: str) -> pl.DataFrame:
    """The two versions' per-query values side by side, paired by query id."""
    base, version = pair
    a = per.filter(pl.col(by) == base).select(query, *[pl.col(m).alias(f"{m}__b") for m in labels])
    b = per.filter(pl.col(by) == version).select(query, *[pl.col(m).alias(f"{m}__v") for m in labels])
    if missing == "skip":
        return a.join(b, on=query, how="inner")
    both = a.join(b, on=query, how="full", coalesce=True)
    first = labels[0]
    filled = both.filter(pl.col(f"{first}__b").is_null() | pl.col(f"{first}__v").is_null())
    if filled.height:
        warn(
            f"compare {version!r} with {base!r}: {filled.height} queries are in one version's run only and "
            f"count as 0 for the other (missing='zero'), e.g. {examples(filled[query].sort().to_list())}",
        )
    return both.with_columns(pl.all().exclude(query).fill_null(0.0))


def _p_value(
    test: str, d: np.ndarray, means: np.ndarray, n_resamples: int, alpha: float, rng: np.random.Generator, advance: Any
) -> tuple[float, str | None]:
    """The test's p-value (never below the smallest it can resolve), or NaN and why it was not run."""
    floor = stats.smallest_p(test, d.size, n_resamples)
    if floor >= alpha:
        if test == "randomization":
            advance(n_resamples)  # the sign flips not drawn
        return math.nan, "n too small" if stats.smallest_p(test, d.size, math.inf) >= alpha else "n_resamples too small"
    if test == "paired_t":
        return stats.paired_t_p(d), None
    if test == "wilcoxon":
        return stats.wilcoxon_p(d), None
    if test == "randomization":
        return max(floor, stats.randomization_p(d, n_resamples, rng, advance)), None
    return max(floor, stats.bootstrap_p(d, means)), None


def _row(
    label: str, pair: tuple, x: np.ndarray, y: np.ndarray, test: str, n_resamples: int, confidence: float,
    alpha: float, seed: np.random.SeedSequence, advance: Any,
) -> dict[str, Any]:
    d = y - x
    n = d.size
    boot_seed, flip_seed = seed.spawn(2)
    means = stats.bootstrap_means(d, n_resamples, np.random.default_rng(boot_seed), advance)
    ci_low, ci_high = stats.percentile_ci(means, confidence) if n >= 2 else (math.nan, math.nan)
    p, note = _p_value(test, d, means, n_resamples, alpha, np.random.default_rng(flip_seed), advance)
    mean_b = float(x.mean()) if n else math.nan
    mean_v = float(y.mean()) if n else math.nan
    diff = float(d.mean()) if n else math.nan
    return {
        "metric": label,
        "baseline": pair[0],
        "version": pair[1],
        "n_queries": n,
        "mean_baseline": mean_b,
        "mean_version": mean_v,
        "diff": diff,
        "rel_diff": diff / mean_b if n and mean_b != 0 else math.nan,
        "ci_low": ci_low,
        "ci_high": ci_high,
        "p_value": p,
        "p_adjusted": math.nan,
        "significant": False,
        "effect_size": stats.effect_size(d),
        "wins": int(np.count_nonzero(d > 0)),
        "ties": int(np.count_nonzero(d == 0)),
        "losses": int(np.count_nonzero(d < 0)),
        "test": test,
        "note": note,
    }


__all__ = ["SmallSampleWarning", "compare"]
