"""The rows of :func:`rank_polars.stats.compare.compare_values`, one per (metric, pair of versions).

* the output ``SCHEMA`` every row fills, and the test names the builders branch on;
* ``_pairwise_rows`` (the paired tests: ``paired_t``, ``wilcoxon``, ``randomization``,
  ``bootstrap``), ``_family_rows`` (the two Tukey tests, one family of pairs per metric) and
  ``_unpaired_rows`` (``delta``: two independent arms);
* what a paired row is made of: ``_pair`` (two versions' values paired by query),
  ``_row_values`` (means, difference, d_z, wins / ties / losses), ``_p_value``, ``_interval``,
  ``_row``, and ``_power`` (power and queries needed of a row that is not significant);
* ``_warn_small``: the :class:`SmallSampleWarning` for tests too weak for their queries;
* ``unshared``: the pairs of versions that share no query (nothing to pair: see ``compare``).

The statistics themselves live in :mod:`rank_polars.stats.tests` and :mod:`rank_polars.stats.anova`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl

from rank_polars.stats import planning
from rank_polars.stats import tests as stats
from rank_polars.stats.anova import NO_QUERY, block, randomized_tukey, tukey, two_way
from rank_polars.errors import RankPolarsError, SmallSampleWarning, examples, warn

ALL_PAIRS_TESTS = ("tukey", "randomized-tukey")  # one family of every pair of versions, per metric
SIGN_TESTS = ("wilcoxon", "randomization")  # tests of the signs: a tied query (difference 0) tells them nothing

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
    "interval": pl.String,
    "power": pl.Float64,
    "queries_needed": pl.Int64,
    "note": pl.String,
    "higher_is_better": pl.Boolean,
}


def _power(dz: float, n: int, alpha: float, power: float) -> tuple[float, int | None]:
    """The paired t-test's power on ``n`` queries against a true d_z as large as the observed one,
    and the queries it would need for ``power`` (NaN / None where d_z is undefined, 0 or infinite,
    or so small that more than 10^9 queries would be needed)."""
    if n < 2 or not math.isfinite(dz):
        return math.nan, None
    if dz == 0:
        return alpha, None
    try:
        needed = planning.queries_needed(abs(dz), 1.0, alpha, power)
    except RankPolarsError:  # beyond 10^9 queries: no number to give
        needed = None
    return planning.t_power(abs(dz), n, alpha), needed


def _pairwise_rows(
    per: pl.DataFrame, by: str, query: str, labels: list[str], chosen: list[tuple], test: str, interval: str,
    n_resamples: int, confidence: float, alpha: float, missing: str, seed: int, shown: Any, better: dict[str, bool],
) -> list[dict[str, Any]]:
    paired = {pair: _pair(per, by, query, labels, pair, missing) for pair in chosen}
    rows: list[dict[str, Any]] = []
    # the resamples drawn per pair: the bootstrap means (interval or test), the sign flips
    per_pair = n_resamples * ((interval == "bootstrap" or test == "bootstrap") + (test == "randomization"))
    for label in labels:
        with shown.phase(f"resampling {label} ({test})", total=per_pair * len(chosen) or None,
                         unit="resamples") as advance:
            for pair in chosen:
                frame = paired[pair]
                x = frame[f"{label}__b"].to_numpy().astype(np.float64)
                y = frame[f"{label}__v"].to_numpy().astype(np.float64)
                seq = np.random.SeedSequence(seed, spawn_key=(len(rows),))
                rows.append(_row(label, pair, x, y, test, interval, n_resamples, confidence, alpha, seq, advance,
                                 better[label]))
    return rows


def _family_rows(
    per: pl.DataFrame, by: str, query: str, labels: list[str], chosen: list[tuple], test: str, interval: str,
    n_resamples: int, confidence: float, alpha: float, missing: str, seed: int, shown: Any, better: dict[str, bool],
) -> tuple[list[dict[str, Any]], dict[str, tuple[int, int]]]:
    """The rows of a Tukey test: one family of every pair of versions per metric, on the complete
    versions x queries design; and, per metric, the queries that count for the randomised test's
    small-n rule and the versions (``(n, m)``, for :func:`_warn_small`)."""
    b = block(per, by, query, labels, missing)
    where = {v: i for i, v in enumerate(b.versions)}
    rows: list[dict[str, Any]] = []
    counted: dict[str, tuple[int, int]] = {}
    for label in labels:
        y = b.values[label]
        design = two_way(y)
        seq = np.random.SeedSequence(seed, spawn_key=(len(rows),))
        if test == "tukey":
            p, half, note = tukey(design, confidence)
        else:
            with shown.phase(f"resampling {label} ({test})", total=None):
                p, note, counted[label] = _randomized_tukey_p(y, n_resamples, alpha, np.random.default_rng(seq))
        for base, version in chosen:
            i, j = where[base], where[version]
            d = y[j] - y[i]
            row = _row_values(label, (base, version), y[i], y[j], test, interval, better[label])
            if interval == "tukey":
                row["ci_low"], row["ci_high"] = row["diff"] - half[i, j], row["diff"] + half[i, j]
            else:
                row["ci_low"], row["ci_high"] = _interval(d, interval, n_resamples, confidence,
                                                          np.random.default_rng(seq.spawn(1)[0]), None,
                                                          scale=float(np.abs(y[[i, j]]).max(initial=0.0)))
            row["p_value"], row["note"] = float(p[i, j]), note
            rows.append(row)
    return rows, counted


def _randomized_tukey_p(y: np.ndarray, n_resamples: int, alpha: float,
                        rng: np.random.Generator) -> tuple[np.ndarray, str | None, tuple[int, int]]:
    """The randomised Tukey HSD's p-values for every pair (never below the smallest it can give), or
    NaN and why not; with the queries its small-n rule counted and the versions.

    As the sign-flip test (:func:`_p_value`): the smallest p is ``1 / (m(m-1))^(n-1)``
    (:func:`rank_polars.stats.tests.smallest_p`), n counting the queries where the versions differ (a
    query with every version equal permutes to itself); at or above ``alpha`` the test is not run."""
    m, n = y.shape
    if n == 0:
        return np.full((m, m), np.nan), NO_QUERY, (0, m)
    differ = np.any(y != y[:1], axis=0)
    same = not differ.any()  # every version the same on every query: no test (as the paired ones)
    k = n if same else int(np.count_nonzero(differ))
    floor = stats.smallest_p("randomized-tukey", k, n_resamples, versions=m)
    if floor >= alpha or same:
        if floor < alpha:
            return np.full((m, m), np.nan), stats.NO_DIFFERENCE, (k, m)
        exact = stats.smallest_p("randomized-tukey", k, math.inf, versions=m)
        return np.full((m, m), np.nan), "n too small" if exact >= alpha else "n_resamples too small", (k, m)
    return np.maximum(floor, randomized_tukey(y, n_resamples, rng)), None, (k, m)


def _unpaired_rows(per: pl.DataFrame, by: str, labels: list[str], chosen: list[tuple], confidence: float,
                   better: dict[str, bool]) -> list[dict[str, Any]]:
    """The rows of ``test="delta"``: each version's own per-ranking values, not paired by query."""
    from rank_polars.stats.intervals import difference

    values = {v: part for (v,), part in per.partition_by(by, as_dict=True).items()}
    rows: list[dict[str, Any]] = []
    for label in labels:
        for base, version in chosen:
            a = values[base][label].to_numpy().astype(np.float64)
            b = values[version][label].to_numpy().astype(np.float64)
            estimate, p = difference(a, b, confidence)
            mean_a = float(a.mean()) if a.size else math.nan
            note = None
            if math.isnan(p):
                note = "n too small" if min(a.size, b.size) < 2 else "no variance in either arm"
            rows.append({
                **{k: None for k in SCHEMA},
                "metric": label, "baseline": base, "version": version, "n_queries": int(a.size + b.size),
                "mean_baseline": mean_a, "mean_version": float(b.mean()) if b.size else math.nan,
                "diff": estimate.value, "rel_diff": estimate.value / mean_a if a.size and mean_a != 0 else math.nan,
                "ci_low": estimate.low, "ci_high": estimate.high, "p_value": p, "significant": False,
                "effect_size": math.nan, "test": "delta", "interval": "delta", "power": math.nan, "note": note,
                "higher_is_better": better[label],
            })
    return rows


def _warn_small(rows: list[dict[str, Any]], test: str, alpha: float, n_resamples: int,
                counted: dict[str, tuple[int, int]] | None = None) -> None:
    """One :class:`SmallSampleWarning` for the rows whose test was not run (a test too weak for the
    queries); a constant difference is said by the note alone, and unpaired rows (``delta``: a z
    test, no bound) by theirs.  ``counted``: the randomised Tukey's ``(n, m)`` per metric."""
    small = [r for r in rows if r["note"] is not None and r["test"] != "delta"
             and r["note"] not in (stats.NO_DIFFERENCE, stats.SAME_DIFFERENCE)]
    if not small:
        return
    r = small[0]
    if test == "randomized-tukey" and r["metric"] in (counted or {}) and "too small" in r["note"]:
        n, m = counted[r["metric"]]
        warn(f"compare: the {test} test was not run on {len(small)} of {len(rows)} rows ({r['note']}; e.g. "
             f"{r['metric']} over {r['n_queries']} queries ({n} where the versions differ) and {m} versions: the "
             f"smallest p it could give, 1 / ({m}*{m - 1})^({n}-1) and at least 1 / (1 + n_resamples), is "
             f"{stats.smallest_p(test, n, n_resamples, versions=m):.4g} >= alpha {alpha}); their p is null and "
             "they are not significant", SmallSampleWarning)
    elif test in ALL_PAIRS_TESTS:
        warn(f"compare: the {test} test has no p-value on {len(small)} of {len(rows)} rows ({r['note']}; e.g. "
             f"{r['metric']} over {r['n_queries']} queries); their p is null and they are not significant",
             SmallSampleWarning)
    else:
        n, signs = r["n_queries"], ""
        if test in SIGN_TESTS:  # their bound counts the queries with a difference (wins + losses)
            n = r["wins"] + r["losses"]
            signs = f" ({n} with a difference)"
        warn(
            f"compare: the {test} test was not run on {len(small)} of {len(rows)} rows ({r['note']}; e.g. "
            f"{r['metric']} {r['version']!r} vs {r['baseline']!r}: {r['n_queries']} paired queries{signs}, "
            f"the smallest p it could give is {stats.smallest_p(test, n, n_resamples):.4g} "
            f">= alpha {alpha}); their p is null and they are not significant",
            SmallSampleWarning,
        )


def unshared(per: pl.DataFrame, by: str, query: str, chosen: list[tuple]) -> list[tuple]:
    """The pairs of versions in ``chosen`` that share no query id: nothing to pair them on.

    One scan for the common case (the first row's query is in both versions' runs), a look-up of
    the two versions' ids for the rest.

    Examples
    --------
    >>> import polars as pl
    >>> per = pl.DataFrame({"arm": ["a", "a", "b", "c"], "query": ["s1", "s2", "s3", "s1"], "x": [1.0, 0.0, 1.0, 0.0]})
    >>> unshared(per, "arm", "query", [("a", "b"), ("a", "c"), ("b", "c")])
    [('a', 'b'), ('b', 'c')]
    """
    if not chosen or per.height == 0:
        return list(chosen)
    with_first = set(per.filter(pl.col(query) == per[query][0])[by].to_list())
    rest = [pair for pair in chosen if not set(pair) <= with_first]
    if not rest:
        return []
    ids: dict[Any, pl.Series] = {}

    def of(version: Any) -> pl.Series:
        if version not in ids:
            ids[version] = per.filter(pl.col(by) == version)[query]
        return ids[version]

    return [(a, b) for a, b in rest if not of(b).is_in(of(a).implode()).any()]


def _pair(per: pl.DataFrame, by: str, query: str, labels: list[str], pair: tuple, missing: str) -> pl.DataFrame:
    """The two versions' per-query values side by side, paired by query id."""
    base, version = pair
    a = per.filter(pl.col(by) == base).select(query, *[pl.col(m).alias(f"{m}__b") for m in labels])
    b = per.filter(pl.col(by) == version).select(query, *[pl.col(m).alias(f"{m}__v") for m in labels])
    # sorted by query: the resamples must not depend on the order the rows came in (an engine's,
    # a join's), as the Tukey tests' block, which orders by query, already does not
    both = a.join(b, on=query, how="full", coalesce=True).sort(query)
    first = labels[0]
    one_side = pl.col(f"{first}__b").is_null() | pl.col(f"{first}__v").is_null()
    lacking = both.filter(one_side)[query]
    if lacking.len():  # zero-filled or left out, never silently (as block says it for the Tukey tests)
        what = "are left out (missing='skip')" if missing == "skip" else "count as 0 for the other (missing='zero')"
        warn(f"compare {version!r} with {base!r}: {lacking.len()} queries are in one version's run only and "
             f"{what}, e.g. {examples(lacking.to_list())}")
    if missing == "skip":
        return both.filter(~one_side)
    return both.with_columns(pl.all().exclude(query).fill_null(0.0))


def _p_value(
    test: str, d: np.ndarray, means: np.ndarray, n_resamples: int, alpha: float, rng: np.random.Generator, advance: Any,
    scale: float = 0.0,
) -> tuple[float, str | None]:
    """The test's p-value (never below the smallest it can resolve), or NaN and why it was not run."""
    # No spread in the differences: the t statistic is x/0 and every bootstrap mean is the same,
    # so neither can say anything.  The sign-flip tests (wilcoxon, randomization) still can for a
    # constant non-zero shift (SciPy's wilcoxon gives 2/2^n); with no difference at all no test can.
    why = stats.degenerate(d, scale)
    n = d.size
    if test in SIGN_TESTS and why != stats.NO_DIFFERENCE:
        # a tie flips to itself (and Wilcoxon drops it): the bound is on the queries with a difference,
        # else SciPy's normal approximation calls 5 signs among 20 queries significant (p = 0.043 < 2/2^5)
        n = int(np.count_nonzero(d))
    floor = stats.smallest_p(test, n, n_resamples)
    if floor >= alpha or why == stats.NO_DIFFERENCE or (why and test in ("paired_t", "bootstrap")):
        if test == "randomization":
            advance(n_resamples)  # the sign flips not drawn
        if floor < alpha:
            return math.nan, why
        return math.nan, "n too small" if stats.smallest_p(test, n, math.inf) >= alpha else "n_resamples too small"
    if test == "paired_t":
        return stats.paired_t_p(d), None
    if test == "wilcoxon":
        return stats.wilcoxon_p(d), None
    if test == "randomization":
        return max(floor, stats.randomization_p(d, n_resamples, rng, advance)), None
    return max(floor, stats.bootstrap_p(d, means)), None


def _interval(d: np.ndarray, interval: str, n_resamples: int, confidence: float, rng: np.random.Generator,
              advance: Any, means: np.ndarray | None = None, scale: float = 0.0) -> tuple[float, float]:
    """The ``t`` or bootstrap percentile interval on the mean of ``d`` (NaN below two queries, and
    for differences without spread: a zero-width interval would claim a certainty the data lack)."""
    if d.size < 2 or stats.degenerate(d, scale) is not None:
        if interval == "bootstrap" and means is None:
            (advance or (lambda k: None))(n_resamples)
        return math.nan, math.nan
    if interval == "t":
        return stats.t_interval(d, confidence)
    if means is None:
        means = stats.bootstrap_means(d, n_resamples, rng, advance)
    return stats.percentile_ci(means, confidence)


def _scale(x: np.ndarray, y: np.ndarray) -> float:
    """The largest |value| compared: what rounding in the differences is relative to (:func:`stats.degenerate`)."""
    return float(max(np.abs(x).max(initial=0.0), np.abs(y).max(initial=0.0)))


def _row_values(label: str, pair: tuple, x: np.ndarray, y: np.ndarray, test: str, interval: str,
                higher_is_better: bool = True) -> dict[str, Any]:
    """What a row says without a test: means, difference, d_z, W/T/L (the test fills the rest).
    A win is a query where the version is better: higher, or lower for a metric to minimise."""
    d = y - x
    better = d if higher_is_better else -d
    n = d.size
    scale = _scale(x, y)
    mean_b = float(x.mean()) if n else math.nan
    diff = float(d.mean()) if n else math.nan
    return {
        "metric": label,
        "baseline": pair[0],
        "version": pair[1],
        "n_queries": n,
        "mean_baseline": mean_b,
        "mean_version": float(y.mean()) if n else math.nan,
        "diff": diff,
        "rel_diff": diff / mean_b if n and mean_b != 0 else math.nan,
        "ci_low": math.nan,
        "ci_high": math.nan,
        "p_value": math.nan,
        "p_adjusted": math.nan,
        "significant": False,
        "effect_size": stats.effect_size(d, scale),
        "wins": int(np.count_nonzero(better > 0)),
        "ties": int(np.count_nonzero(d == 0)),
        "losses": int(np.count_nonzero(better < 0)),
        "test": test,
        "interval": interval,
        "power": math.nan,
        "queries_needed": None,
        "note": None,
        "higher_is_better": higher_is_better,
    }


def _row(
    label: str, pair: tuple, x: np.ndarray, y: np.ndarray, test: str, interval: str, n_resamples: int,
    confidence: float, alpha: float, seed: np.random.SeedSequence, advance: Any, higher_is_better: bool = True,
) -> dict[str, Any]:
    row = _row_values(label, pair, x, y, test, interval, higher_is_better)
    d = y - x
    scale = _scale(x, y)
    boot_seed, flip_seed = seed.spawn(2)
    boot = np.random.default_rng(boot_seed)
    # the bootstrap test and a bootstrap interval share one set of resamples
    means = stats.bootstrap_means(d, n_resamples, boot, advance) if test == "bootstrap" else None
    row["ci_low"], row["ci_high"] = _interval(d, interval, n_resamples, confidence, boot, advance, means, scale)
    row["p_value"], row["note"] = _p_value(test, d, means, n_resamples, alpha, np.random.default_rng(flip_seed), advance,
                                           scale)
    return row

