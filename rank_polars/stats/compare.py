"""``compare``: versions of a system against a baseline, query by query, with significance.

The per-query values come from :func:`rank_polars.evaluate` (``per_query=True``): no metric
is computed here.  The statistics live in :mod:`rank_polars.stats.tests`.

This file holds the public functions (:func:`compare`, :func:`compare_values`,
:func:`directions`), the checks of their arguments and tables, and the names of the tests,
corrections and intervals.  The rows per pair of versions are built in
:mod:`rank_polars.stats.pairs` (with the output ``SCHEMA``), the catalogue-level measures'
bootstrap over lists is :mod:`rank_polars.stats.catalog` (:func:`catalog_compare`).
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Literal, Mapping, Sequence

import numpy as np
import polars as pl

from rank_polars.stats import tests as stats
from rank_polars.stats.anova import check_numeric
from rank_polars.stats.catalog import catalog_compare
from rank_polars.stats.pairs import (ALL_PAIRS_TESTS, SCHEMA, _family_rows, _pairwise_rows, _power, _unpaired_rows,
                                     _warn_small, unshared)
from rank_polars.errors import CoverageWarning, RankPolarsError, SmallSampleWarning, examples, warn
from rank_polars.evaluate import Engine, evaluate, refuse_shaping
from rank_polars.inputs import Source
from rank_polars.measures import Measure, MetricLike, parse_all
from rank_polars.progress import ProgressLike, resolve
from rank_polars.schema import Schema, as_schema
from rank_polars.validate import Missing

Test = Literal["paired_t", "wilcoxon", "randomization", "bootstrap", "tukey", "randomized-tukey", "delta"]
TESTS = ("paired_t", "wilcoxon", "randomization", "bootstrap", "tukey", "randomized-tukey", "delta")
CORRECTIONS = (None, "bonferroni", "holm", "bh")
INTERVALS = (None, "t", "bootstrap", "tukey", "delta")


def compare(
    run: Source,
    metrics: MetricLike | Sequence[MetricLike],
    *,
    qrels: Source | None = None,
    by: str = "model",
    baseline: Any = None,
    pairs: Literal["all"] | None = None,
    test: Test | None = None,
    correction: Literal["bonferroni", "holm", "bh"] | None = "holm",
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int = 0,
    missing: Missing = "zero",
    engine: Engine = "polars",
    confidence: float = 0.95,
    interval: Literal["t", "bootstrap", "tukey", "delta"] | None = None,
    power: float = 0.8,
    progress: ProgressLike = False,
    catalog_resamples: int = 1000,
    schema: Schema | None = None,
    segments: Sequence[str] | None = None,
    min_queries: int = 30,
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
    pairs
        ``"all"``: every pair of versions (the same as ``baseline=None``; refused together
        with a ``baseline``).
    test
        ``None`` (default): ``"paired_t"``, except between versions that share no query id
        (see Notes, **Unpaired versions**): ``"delta"`` for a ratio metric, an error otherwise.
        ``"paired_t"`` (two-sided, as ``scipy.stats.ttest_rel``), ``"wilcoxon"`` (signed
        rank on the differences, as ``scipy.stats.wilcoxon`` with its defaults),
        ``"randomization"`` (paired sign-flip permutation test of the mean difference) or
        ``"bootstrap"`` (paired bootstrap test of the mean difference, shift method).
        The two resampling tests are two-sided with
        ``p = (1 + #{resamples at least as extreme}) / (1 + n_resamples)``: at least as
        extreme is ``|mean*| >= |mean|`` for randomization and ``|mean* - mean| >= |mean|``
        (bootstrap means recentred on 0) for bootstrap.
        Over many versions, one test for the whole family of pairs (per metric):
        ``"tukey"`` (Tukey's HSD with the residual variance of the two-way ANOVA version x
        query on ``(m-1)(n-1)`` degrees of freedom, as Sakai) and ``"randomized-tukey"``
        (Carterette's randomised Tukey HSD, ``n_resamples`` permutations of every query's
        values across the versions); see :mod:`rank_polars.stats.anova`.  Both need every version
        on the same queries: ``missing`` decides (0 for an absent value, or only the queries
        every version has).
        ``"delta"``: A/B arms, *not paired* (each version has its own rankings or sessions):
        two independent estimates, each the mean of its version's per-ranking values, and a
        two-sided z test on their difference with ``se = sqrt(s_a^2/n_a + s_b^2/n_b)`` and the
        normal interval (:func:`rank_polars.stats.intervals.difference`).  For a ratio metric
        (``ctr(agg="ratio")@k``, whose per-ranking values are the delta method's
        linearisation) that is the delta method for a ratio of means (tea-tasting's
        ``RatioOfMeans`` with ``use_t=False``); for a plain mean, the two-sample z test.
        ``n_queries`` is then the rankings of both arms; ``wins``/``ties``/``losses`` and the
        power columns are null (nothing is paired).
    correction
        ``None``, ``"bonferroni"``, ``"holm"`` or ``"bh"`` (Benjamini-Hochberg), applied
        across all rows of the call (every metric and pair).  Not used by the two Tukey
        tests, whose p-values are already adjusted over the pairs of a metric
        (``p_adjusted`` = ``p_value``).
    alpha
        ``significant`` is ``p_adjusted < alpha``.
    n_resamples, seed
        Resamples for the bootstrap interval and the resampling tests; the same seed gives
        the same numbers (each row has its own stream derived from the seed and its index),
        on any machine: the resampling runs on one thread per CPU, but in a fixed number of
        tasks with their own streams.
    confidence
        Level of the interval ``[ci_low, ci_high]`` on the mean paired difference (null with
        fewer than two paired queries).
    interval
        How that interval is made: ``"t"`` (``diff +- t_{(1+c)/2, n-1} sd / sqrt(n)``, as
        ``scipy.stats.ttest_rel(...).confidence_interval``), ``"bootstrap"`` (percentile
        interval of ``n_resamples`` paired bootstrap means) or ``"tukey"`` (the simultaneous
        HSD interval ``diff +- q_{c; m, (m-1)(n-1)} sqrt(V_E / n)``, only with
        ``test="tukey"``) or ``"delta"`` (the normal interval of two unpaired estimates, only
        with ``test="delta"``).  ``None`` (default): ``"t"`` for ``paired_t``, ``"tukey"`` for
        ``tukey``, ``"delta"`` for ``delta`` (and for the rows the default test compares
        unpaired), ``"bootstrap"`` for the others.  The column
        ``interval`` names it.
    power
        For a row that is not significant: ``power`` is the power the paired t-test had on
        these queries against a true difference as large as the observed one (Cohen's d_z),
        and ``queries_needed`` the queries it would need for this power
        (:func:`rank_polars.queries_needed`; null beyond 10^9).  Null on significant rows.
    catalog_resamples
        Resamples of the bootstrap over lists for catalogue-level measures (see Notes): each
        one re-evaluates the measure on a resampled copy of the log, so it costs about
        ``catalog_resamples`` x the log's rows of evaluation (1,000 by default, not
        ``n_resamples``; on the 4,000-row sample log ~10 s on a busy machine).
    progress
        ``True``: show the phases (evaluating, then the resamples done per metric) in the
        terminal or notebook; a :class:`rank_polars.progress.Progress` object: report to it;
        ``False`` (default): nothing.
    **evaluate_kwargs
        Passed on to :func:`rank_polars.evaluate` (``query=``, ``item=``, ``position=``,
        ``score=``, ``relevance=``, ``duplicates=``, ...).
    schema
        The column mapping (a :class:`rank_polars.Schema`), as for :func:`rank_polars.evaluate`.
    segments, min_queries
        Log columns that describe the query (``["country", "query_type"]``): the difference per
        segment value, each with its t interval and p-value, corrected over every metric, pair and
        segment value; a value with fewer than ``min_queries`` paired queries is shown, not tested.
        The rows (other columns: :func:`rank_polars.monitor.segments.compare_segments`) come per
        metric, the segment values where the version loses most first.

    Returns
    -------
    pl.DataFrame
        One row per (metric, pair): ``metric, baseline, version, n_queries`` (paired
        queries), ``mean_baseline, mean_version, diff`` (version - baseline),
        ``rel_diff`` (diff / mean_baseline; null when that is 0), ``ci_low, ci_high,
        p_value, p_adjusted, significant, effect_size`` (paired Cohen's d_z = mean / sd of
        the differences; 0 when all differences are equal to 0, +-inf for a constant
        non-zero difference), ``wins, ties, losses`` (queries where the version is
        better, equal, worse: higher, or lower for a metric to minimise), ``test``,
        ``interval``, ``power``, ``queries_needed``, ``note`` (null, or why the test was not
        run: ``"n too small"``, ``"n_resamples too small"``, ``"no residual variance"``,
        ``"the difference is the same on every query"``, ``"no difference on any query"``)
        and ``higher_is_better`` (the metric's direction, ``Measure.HIGHER_IS_BETTER``:
        ``False`` for ``abandonment``).  ``diff`` is always version - baseline; whether that
        is better is the direction's.

    Notes
    -----
    Pairing is by query id.  With ``missing="skip"`` only the queries both versions have
    are paired.  With ``missing="zero"`` a query one version has and the other lacks
    counts as 0 for the one lacking it (with ``qrels`` evaluate has already zero-filled
    every judged query); either way a :class:`CoverageWarning` says how many.  The means are
    those of the paired queries.  With fewer than two paired queries (none for ``wilcoxon`` and the
    resampling tests) p is null, ``significant`` is false and the row does not count in the
    correction.

    **Unpaired versions.** Two versions that share no query id (A/B arms, each session in one
    arm's log) have nothing to pair: zero-filling would pair every value with a 0 (a CTR of 0.25
    would read 0.125).  Sharing one query id is enough to pair (a partial overlap pairs as above).
    With the default ``test=None`` such a pair is compared with ``delta`` on a ratio metric
    (``ctr(agg="ratio")@k``, whose per-ranking values are the delta method's linearisation): its
    row says ``test="delta"``, ``interval="delta"``, its means are each arm's own (its CTR), and a
    :class:`CoverageWarning` names the pairs.  Any other metric, and a paired test named with
    ``missing="zero"``, is a :class:`RankPolarsError` naming the versions and the metric: pass
    ``test="delta"`` for independent arms, or evaluate the versions on shared queries.  A paired
    test named with ``missing="skip"`` pairs no query (``"n too small"``).

    **No spread.** When every difference is the same (a constant shift: ``paired_t``'s t is
    x/0, every bootstrap mean is the same; SciPy's ``ttest_rel`` gives p = 0, or 1e-49 from
    rounding) ``paired_t`` and ``bootstrap`` have no p-value: null, not significant, the note
    ``"the difference is the same on every query"`` and the verdict "cannot tell".  The
    sign-flip tests (``wilcoxon``, ``randomization``) still test a constant shift.  When every
    difference is 0 no test has a p-value (note ``"no difference on any query"``).  Neither
    has a ``t`` or bootstrap interval (null, not a zero-width one).  "The same" allows
    rounding: a spread within 1e-12 of the largest value compared.

    **Too few queries.** A test that cannot reach ``p < alpha`` on ``n`` paired queries,
    whatever their values, is not run: ``p_value`` and ``p_adjusted`` are null,
    ``significant`` is false, ``note`` says ``"n too small"`` (or ``"n_resamples too
    small"`` when ``1 / (1 + n_resamples) >= alpha``), the row does not count in the
    correction and a :class:`SmallSampleWarning` names it.  The smallest p of each test
    (:func:`rank_polars.stats.tests.smallest_p`) is 0 for ``paired_t`` from n = 2 on (it needs
    two queries); ``2 / 2^n`` for ``wilcoxon`` and ``randomization`` (the two extreme sign
    patterns), n there counting the queries with a difference (a tie has no sign to flip);
    ``1 / n^n`` for ``bootstrap`` (one of the n^n equally likely resamples);
    ``1 / (m(m-1))^(n-1)`` for ``randomized-tukey`` over m versions (the permutations that give
    some pair of versions the values of the observed widest pair on every query, m(m-1) of
    them, each of probability ``1 / (m(m-1))^n``, reach the observed range), n counting the
    queries where the versions are not all equal.
    With ``alpha=0.05``: ``paired_t`` needs 2 queries, ``bootstrap`` 3, ``wilcoxon`` and
    ``randomization`` 6 that differ, ``randomized-tukey`` 6 for two versions, 3 for three to
    five, 2 for six or more.  A resampling p-value is never reported below that bound
    (the resamples cannot resolve less), nor below ``1 / (1 + n_resamples)``.  Tukey's HSD with
    no residual variance (every query shows the same differences between versions) has no
    p-value either: null, with that note.

    **Catalogue-level measures** (``AGGREGATE == "catalog"``, one value per version over all
    its lists: ``rp.gini(k=10)``, ``rp.catalog_coverage(...)``) have no per-query values to pair:
    their rows (:func:`catalog_compare`, ``test="catalog-bootstrap"``) give the difference with
    a percentile bootstrap interval over lists (``catalog_resamples`` resamples of the queries, the
    measure recomputed through its family), and ``significant`` when that interval excludes 0;
    no p-value, no correction.

    **Bad values.** A per-query value that is NaN, infinite or null is an error naming the
    metric, the version and the queries; no query is dropped silently.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> from rank_polars.stats.compare import compare
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
    if segments is not None:  # per segment value: rank_polars.monitor.segments
        from rank_polars.monitor.segments import compare_segments

        return compare_segments(run, metrics, segments, qrels=qrels, by=by_col, baseline=baseline, test=test,
                                correction=correction, alpha=alpha, confidence=confidence, missing=missing,
                                engine=engine, min_queries=min_queries, schema=schema, **evaluate_kwargs)
    if isinstance(catalog_resamples, bool) or not isinstance(catalog_resamples, (int, np.integer)) or catalog_resamples < 1:
        raise RankPolarsError(f"compare: catalog_resamples must be an integer >= 1, got {catalog_resamples!r}")
    _check_family(baseline, pairs, test, interval, power)
    if schema is not None:
        evaluate_kwargs["schema"] = schema
    query = as_schema(schema, query=evaluate_kwargs.get("query")).column("query")
    shown = resolve(progress)
    given = [metrics] if isinstance(metrics, (str, Measure)) else list(metrics)
    outputs = parse_all(given)
    catalog = [(label, spec) for label, spec in outputs if spec.AGGREGATE == "catalog"]
    plain = [metric for metric, (_, spec) in zip(given, outputs) if spec.AGGREGATE != "catalog"]
    tables = []
    if plain:
        per = evaluate(
            run, plain, qrels=qrels, by=by_col, per_query=True, missing=missing, engine=engine, progress=shown,
            **evaluate_kwargs,
        )
        tables.append(compare_values(
            per, by=by_col, query=query, baseline=baseline, pairs=pairs, test=test, correction=correction, alpha=alpha,
            n_resamples=n_resamples, seed=seed, missing=missing, confidence=confidence, interval=interval,
            power=power, progress=shown,
            higher_is_better=directions([(label, spec) for label, spec in outputs if spec.AGGREGATE != "catalog"]),
        ))
    if catalog:
        tables.append(catalog_compare(run, catalog, qrels=qrels, by=by_col, baseline=baseline, n_resamples=catalog_resamples,
                                      seed=seed, confidence=confidence, engine=engine, progress=shown,
                                      **evaluate_kwargs))
    out = pl.concat(tables, how="vertical_relaxed") if len(tables) > 1 else tables[0]
    order = {label: i for i, (label, _) in enumerate(outputs)}  # rows per metric in the order given
    return out.sort(pl.col("metric").replace_strict(order, return_dtype=pl.Int64), maintain_order=True)


def directions(outputs: Sequence[tuple[str, Any]]) -> dict[str, bool]:
    """``{label: whether a larger value is better}`` from the specs (``Measure.HIGHER_IS_BETTER``;
    a spec without the attribute counts as higher-is-better).

    Examples
    --------
    >>> from rank_polars.measures import parse_all
    >>> directions(parse_all(["ndcg@10", "p@5"]))
    {'ndcg@10': True, 'p@5': True}
    """
    return {label: bool(getattr(spec, "HIGHER_IS_BETTER", True)) for label, spec in outputs}


def compare_values(
    per: pl.DataFrame,
    *,
    by: str = "model",
    query: str = "query",
    baseline: Any = None,
    pairs: Literal["all"] | None = None,
    test: Test | None = None,
    correction: Literal["bonferroni", "holm", "bh"] | None = "holm",
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int = 0,
    missing: Missing = "zero",
    confidence: float = 0.95,
    interval: Literal["t", "bootstrap", "tukey", "delta"] | None = None,
    power: float = 0.8,
    progress: ProgressLike = False,
    higher_is_better: Mapping[str, bool] | None = None,
) -> pl.DataFrame:
    """:func:`compare` on per-query values already computed: ``per`` has the ``by`` column, the
    ``query`` column and one column per metric (what ``rp.evaluate(..., per_query=True)``
    returns): one row per version and query, no null query id, numeric (or boolean) metrics,
    else an error (a second grouping column would otherwise be paired and compared as a metric).
    ``higher_is_better``: ``{metric column: False}`` for a metric to minimise (wins
    are then the queries where the version is lower, and the verdicts and groups follow); a
    metric not named is higher-is-better, a name that is not a metric column is an error.
    The other arguments are :func:`compare`'s.

    Examples
    --------
    >>> import polars as pl
    >>> per = pl.DataFrame({"model": ["a"] * 4 + ["b"] * 4 + ["c"] * 4, "query": ["q1", "q2", "q3", "q4"] * 3,
    ...                     "ndcg": [.2, .5, .4, .9, .3, .6, .4, .9, .6, .8, .7, 1.]})
    >>> compare_values(per, pairs="all", test="tukey").select("baseline", "version", "diff", "ci_low", "ci_high", "p_value")
    shape: (3, 6)
    ┌──────────┬─────────┬───────┬───────────┬──────────┬──────────┐
    │ baseline ┆ version ┆ diff  ┆ ci_low    ┆ ci_high  ┆ p_value  │
    │ ---      ┆ ---     ┆ ---   ┆ ---       ┆ ---      ┆ ---      │
    │ str      ┆ str     ┆ f64   ┆ f64       ┆ f64      ┆ f64      │
    ╞══════════╪═════════╪═══════╪═══════════╪══════════╪══════════╡
    │ a        ┆ b       ┆ 0.05  ┆ -0.099091 ┆ 0.199091 ┆ 0.58731  │
    │ a        ┆ c       ┆ 0.275 ┆ 0.125909  ┆ 0.424091 ┆ 0.003158 │
    │ b        ┆ c       ┆ 0.225 ┆ 0.075909  ┆ 0.374091 ┆ 0.00852  │
    └──────────┴─────────┴───────┴───────────┴──────────┴──────────┘
    """
    by = _check_args(by, test, correction, alpha, n_resamples, confidence, seed, {})
    _check_family(baseline, pairs, test, interval, power)
    if interval is not None and (interval == "delta") != (test == "delta"):
        raise RankPolarsError("compare: test='delta' (unpaired arms) goes with its own interval, interval='delta', only")
    shown = resolve(progress)
    if missing not in ("zero", "skip"):  # any other word was read as "zero"
        raise RankPolarsError(f"compare: missing must be 'zero' or 'skip', got {missing!r}")
    absent = [c for c in (by, query) if c not in per.columns]
    if absent:
        raise RankPolarsError(f"compare: no column {absent[0]!r} in the per-query values (columns: {per.columns}); "
                              "name it with by= / query=")
    labels = [c for c in per.columns if c not in (by, query)]
    if not labels:
        raise RankPolarsError(f"compare: no metric column in the per-query values (columns: {per.columns})")
    unknown = [k for k in (higher_is_better or {}) if k not in labels]
    if unknown:  # a misspelt metric would silently count as higher-is-better, turning wins into losses
        raise RankPolarsError(f"compare: higher_is_better names {unknown[0]!r}, not a metric column; "
                              f"the metrics are {examples(labels, 10)}")
    better = {label: bool((higher_is_better or {}).get(label, True)) for label in labels}
    if per[by].null_count():
        raise RankPolarsError(f"compare: column {by!r} has null versions; fill or drop them")
    per = _check_table(per, by, query, labels)
    _check_values(per, by, query, labels)
    versions = per[by].unique().sort().to_list()
    if len(versions) < 2:
        raise RankPolarsError(
            f"compare: needs at least 2 versions in column {by!r}, found {len(versions)}"
            + (f" ({versions[0]!r})" if versions else "")
        )
    if baseline is None:
        chosen = list(itertools.combinations(versions, 2))
    else:
        if baseline not in versions:
            raise RankPolarsError(
                f"compare: baseline {baseline!r} is not a version in column {by!r}; versions are {examples(versions, 10)}"
            )
        chosen = [(baseline, v) for v in versions if v != baseline]

    # versions that share no query have nothing to pair (_check_unpaired): with the default test a
    # ratio metric compares them unpaired (delta), anything else is refused
    apart = unshared(per, by, query, chosen) if test != "delta" else []
    if apart:
        _check_unpaired(apart, labels, test, interval, missing, query)
        apart = apart if test is None else []  # a paired test named with missing="skip": no query paired
    test = test or "paired_t"
    interval = interval or {"paired_t": "t", "tukey": "tukey", "delta": "delta"}.get(test, "bootstrap")
    counted = None
    if test == "delta":
        rows = _unpaired_rows(per, by, labels, chosen, confidence, better)
    elif test in ALL_PAIRS_TESTS:
        rows, counted = _family_rows(per, by, query, labels, chosen, test, interval, n_resamples, confidence, alpha,
                                     missing, seed, shown, better)
    else:
        paired = [pair for pair in chosen if pair not in apart]
        rows = _unpaired_rows(per, by, labels, apart, confidence, better) + (
            _pairwise_rows(per, by, query, labels, paired, test, interval, n_resamples, confidence, alpha, missing,
                           seed, shown, better) if paired else [])
        if apart and paired:  # per metric in the order given, then per pair in the order chosen
            place = {(label, pair): i for i, (label, pair) in enumerate(itertools.product(labels, chosen))}
            rows.sort(key=lambda r: place[(r["metric"], (r["baseline"], r["version"]))])
    _warn_small(rows, test, alpha, n_resamples, counted)
    p = np.array([r["p_value"] for r in rows], dtype=np.float64)
    p_adj = p if test in ALL_PAIRS_TESTS else stats.adjust(p, correction)
    for r, q in zip(rows, p_adj):
        r["p_adjusted"] = q
        r["significant"] = bool(q < alpha) if not math.isnan(q) else False
        if not r["significant"] and r["test"] != "delta":
            r["power"], r["queries_needed"] = _power(r["effect_size"], r["n_queries"], alpha, power)
    schema = {k: (per.schema[by] if v is None else v) for k, v in SCHEMA.items()}
    out = pl.DataFrame(rows, schema=schema) if rows else pl.DataFrame(schema=schema)
    # undefined statistics are nulls, not NaN
    floats = [k for k, v in schema.items() if v == pl.Float64]
    return out.with_columns(pl.col(floats).fill_nan(None))


def _check_unpaired(apart: list[tuple], labels: list[str], test: str | None, interval: str | None, missing: str,
                    query: str) -> None:
    """Refuse to pair versions that share no query id (``apart``), or say how they are compared.

    With the default test (``None``) a ratio metric (``ctr(agg="ratio")@k``: per-ranking values that
    are the delta method's linearisation, its arms independent samples of sessions) is compared
    unpaired with ``delta`` (a :class:`CoverageWarning` says so); any other metric is refused, as is
    a paired test named with ``missing="zero"`` (each value would be paired with a 0 filled in).
    A paired test named with ``missing="skip"`` pairs no query: its rows say ``"n too small"``."""
    base, version = apart[0]
    where = (f"versions {base!r} and {version!r} share no {query!r} id (each is in one version's run only: "
             f"separate sessions, as A/B arms, or ids that differ between the runs)")
    fix = ("for independent arms (an A/B test, each session in one arm) test='delta' compares the two means "
           "unpaired (the delta method for a ratio metric such as ctr(agg=ratio)@k, a two-sample z test otherwise); "
           "to pair them, evaluate the versions on shared queries (the same query ids in every run)")
    if test == "delta" or (test is not None and missing == "skip"):
        return
    if test is not None:
        raise RankPolarsError(f"compare: test={test!r} pairs the versions query by query, but {where}: with "
                              f"missing='zero' every value of {labels[0]} would be paired with a 0 filled in for the "
                              f"other version. {fix[0].upper()}{fix[1:]}")
    ratios = ratio_metrics(labels)
    other = [label for label in labels if label not in ratios]
    if other:
        raise RankPolarsError(f"compare: {where}, so there is nothing to pair on {other[0]}, and compare chooses an "
                              f"unpaired test by itself only for a ratio metric (ctr(agg=ratio)@k). "
                              f"{fix[0].upper()}{fix[1:]}")
    if interval not in (None, "delta"):
        raise RankPolarsError(f"compare: {where}, so they are compared unpaired (test='delta'), whose interval is "
                              f"interval='delta', not {interval!r}")
    shown = "; ".join(f"{v!r} with {b!r}" for b, v in apart[:3]) + (f" (and {len(apart) - 3} more)" if len(apart) > 3 else "")
    warn(f"compare {shown}: the versions share no {query!r} id, so they are not paired: {examples(labels, 5)} "
         "compared unpaired with the delta method (test='delta': each version's own mean, a z test on the "
         "difference); the row's test column says 'delta'", CoverageWarning)


def ratio_metrics(labels: Sequence[str]) -> set[str]:
    """The metric columns whose name is a ratio metric (``ctr(agg=ratio)@k``, ``is_ratio``): its
    per-ranking values are the delta method's linearisation, so ``delta`` is its unpaired test.

    Examples
    --------
    >>> sorted(ratio_metrics(["ctr(agg=ratio)@10", "ctr@10", "ndcg@10", "my column"]))
    ['ctr(agg=ratio)@10']
    """
    from rank_polars.measures import parse

    out = set()
    for label in labels:
        try:
            spec = parse(label)
        except RankPolarsError:  # not a metric's name (compare_values takes any column)
            continue
        if getattr(spec, "is_ratio", False):
            out.add(label)
    return out


def _check_table(per: pl.DataFrame, by: str, query: str, labels: list[str]) -> pl.DataFrame:
    """Refuse what is not a per-query table (one row per version and query, numeric metrics), and
    read boolean metrics as 0 / 1.  Null query ids never join (each would pair with nothing), and a
    (version, query) given twice would be paired with every copy: both are errors, not numbers."""
    if per[query].null_count():
        raise RankPolarsError(f"compare: column {query!r} has null query ids ({per[query].null_count()} rows); "
                              "fill or drop them")
    check_numeric(per, by, query, labels, "compare")
    if per.select(by, query).n_unique() < per.height:
        twice = per.filter(pl.struct(by, query).is_duplicated())
        raise RankPolarsError(
            f"compare: {twice.select(by, query).n_unique()} (version, query) pairs have more than one row, e.g. "
            f"{examples(twice[query].unique().sort().to_list())}; one row per version and query (a second "
            f"grouping column? every column but {by!r} and {query!r} is read as a metric: {examples(labels, 10)})")
    return per.with_columns(pl.col(c).cast(pl.Float64) for c in labels if per.schema[c] == pl.Boolean)


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

def _check_args(
    by: Any, test: Any, correction: Any, alpha: Any, n_resamples: Any, confidence: Any, seed: Any, kwargs: dict
) -> str:
    if isinstance(by, (list, tuple)) and len(by) == 1:
        by = by[0]
    if not isinstance(by, str):
        raise RankPolarsError(f"compare: by must be one column name (the versions), got {by!r}")
    if test is not None and test not in TESTS:
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
    refuse_shaping("compare", kwargs)
    return by


def _check_family(baseline: Any, pairs: Any, test: str, interval: Any, power: Any) -> None:
    if pairs not in (None, "all"):
        raise RankPolarsError(f"compare: pairs must be 'all' or None, got {pairs!r}")
    if pairs == "all" and baseline is not None:
        raise RankPolarsError("compare: pairs='all' compares every pair of versions; leave baseline out")
    if interval not in INTERVALS:
        raise RankPolarsError(f"compare: interval must be 't', 'bootstrap', 'tukey' or 'delta', got {interval!r}")
    if interval == "tukey" and test != "tukey":
        raise RankPolarsError(f"compare: interval='tukey' is the simultaneous interval of test='tukey', not of {test!r}")
    if isinstance(power, bool) or not isinstance(power, (int, float)) or not 0 < power < 1:
        raise RankPolarsError(f"compare: power must be between 0 and 1 (exclusive), got {power!r}")


__all__ = ["SmallSampleWarning", "compare", "compare_values"]
