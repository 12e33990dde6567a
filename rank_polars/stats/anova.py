"""Many versions at once: two-way ANOVA (version x query), Tukey's HSD and the randomised Tukey HSD.

The design is Sakai's (*Laboratory Experiments in Information Retrieval*, ch. 4-5): every
version is run on the same queries, a two-way ANOVA without replication splits the variation
into versions, queries and a residual, and Tukey's HSD compares every pair of versions with the
residual variance ``V_E`` on ``(m-1)(n-1)`` degrees of freedom.  Carterette's randomised Tukey
HSD (2012) keeps the family-wise error without the normal model: each resample permutes every
query's values across the versions, and a pair's p-value is the share of resamples whose range
of version means reaches the pair's observed difference.

The per-query values arrive as one matrix ``Y`` (versions x queries) built by :func:`block`
from the long per-query table; the sums and sums of squares are NumPy's own loops over it
(no BLAS, so the same numbers on every machine).  The distributions are SciPy's
(``studentized_range``, ``f``), imported inside the functions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import polars as pl

from rank_polars.errors import RankPolarsError, examples, warn

_TIE_RTOL = 1e-9  # a resampled range within this relative distance of a difference counts as reaching it
_CHUNK = 1 << 21  # elements (resamples x queries x versions) permuted per step of the randomised test


@dataclass(frozen=True)
class Block:
    """A complete block design: ``values[label]`` is versions x queries, in ``versions`` / ``queries`` order."""

    versions: list[Any]
    queries: pl.Series
    values: dict[str, np.ndarray]


def _codes(values: pl.Series) -> tuple[np.ndarray, pl.Series]:
    """Each value's index among the sorted distinct values, and those values (a sort-based dense
    rank: no hash join of a 10M-row table)."""
    codes = (values.rank("dense").cast(pl.Int64) - 1).to_numpy()
    k = int(codes.max()) + 1 if codes.size else 0
    first = np.empty(k, dtype=np.int64)
    first[codes[::-1]] = np.arange(codes.size - 1, -1, -1)  # the first row of each code (last write wins)
    return codes, values.gather(first)


def block(per: pl.DataFrame, by: str, query: str, labels: Sequence[str], missing: str = "zero") -> Block:
    """The per-query table (one row per version and query) as one versions x queries matrix per metric.

    ``missing="zero"``: a query some version lacks counts as 0 for it (with a warning naming how
    many cells); ``"skip"``: only the queries every version has are kept (with a warning).

    Examples
    --------
    >>> import polars as pl
    >>> per = pl.DataFrame({"model": ["a", "a", "b"], "query": ["q1", "q2", "q1"], "p@1": [1.0, 0.0, 0.5]})
    >>> b = block(per, "model", "query", ["p@1"], missing="skip")
    >>> b.versions, b.queries.to_list(), b.values["p@1"].tolist()
    (['a', 'b'], ['q1'], [[1.0], [0.5]])
    """
    fast = _sorted_complete(per, by, query, labels)
    if fast is not None:
        return fast
    vi_np, versions = _codes(per[by])
    qi, queries = _codes(per[query])
    m, n = versions.len(), queries.len()
    cells = np.bincount(vi_np * n + qi, minlength=m * n)
    if cells.max(initial=0) > 1:
        twice = queries.gather(np.flatnonzero((cells > 1).reshape(m, n).any(axis=0))).to_list()
        raise RankPolarsError(f"{len(twice)} queries repeat a ({by}, {query}) pair, e.g. {examples(twice)}; "
                              "one value per version and query")
    filled = np.zeros((m, n), dtype=bool)
    filled[vi_np, qi] = True
    values = {}
    for label in labels:
        y = np.zeros((m, n))
        y[vi_np, qi] = per[label].to_numpy().astype(np.float64)
        values[label] = y
    absent = int(m * n - filled.sum())
    keep = filled.all(axis=0)
    if absent:
        lacking = queries.filter(pl.Series(~keep)).to_list()
        if missing == "skip":
            warn(f"{by}: {len(lacking)} queries are not in every version's run and are left out (missing='skip'), "
                 f"e.g. {examples(lacking)}")
            values = {k: v[:, keep] for k, v in values.items()}
            queries = queries.filter(pl.Series(keep))
        else:
            warn(f"{by}: {absent} (version, query) values are absent and count as 0 (missing='zero'), "
                 f"in queries e.g. {examples(lacking)}")
    return Block(versions.to_list(), queries, values)


def _sorted_complete(per: pl.DataFrame, by: str, query: str, labels: Sequence[str]) -> Block | None:
    """The block without coding the ids, when ``per`` is what ``evaluate(per_query=True)`` gives:
    sorted by version then query, every version with the same distinct queries in the same order.
    Each metric is then its column reshaped to versions x queries (at 10 x 1M, the two sort-based
    codings cost ~4 s of Tukey's ~10); ``None`` when ``per`` is not so (the general path)."""
    if per.height == 0 or not per[by].is_sorted():
        return None
    runs = per[by].rle()
    lengths = runs.struct.field("len")
    m, n = runs.len(), int(lengths[0])
    if (lengths != n).any():
        return None
    queries = per[query].slice(0, n)
    if not queries.is_sorted() or queries.n_unique() != n:
        return None
    column = per[query]
    if any(not column.slice(i * n, n).equals(queries, check_names=False) for i in range(1, m)):
        return None
    versions = runs.struct.field("value").to_list()
    values = {label: per[label].cast(pl.Float64).to_numpy().reshape(m, n).copy() for label in labels}
    return Block(versions, queries, values)


@dataclass(frozen=True)
class TwoWay:
    """A two-way ANOVA without replication of one versions x queries matrix (Sakai, ch. 4)."""

    m: int
    n: int
    means: np.ndarray
    ss_versions: float
    ss_queries: float
    ss_residual: float
    scale: float = 1.0  # the largest |value|: what rounding is relative to

    @property
    def no_residual(self) -> bool:
        """No residual variance beyond rounding (every query shows the same differences): each
        residual below 1e-12 of the largest value."""
        return self.ss_residual <= (1e-12 * self.scale) ** 2 * self.m * self.n

    @property
    def ss_total(self) -> float:
        return self.ss_versions + self.ss_queries + self.ss_residual

    @property
    def df_versions(self) -> int:
        return self.m - 1

    @property
    def df_queries(self) -> int:
        return max(self.n - 1, 0)

    @property
    def df_residual(self) -> int:
        return (self.m - 1) * max(self.n - 1, 0)

    @property
    def ms_residual(self) -> float:
        """``V_E``, the residual variance (NaN with no residual degree of freedom)."""
        return self.ss_residual / self.df_residual if self.df_residual else math.nan


#: the note where missing="skip" left no query in every version
NO_QUERY = "no query is in every version's run (missing='skip' left them all out)"


def two_way(y: np.ndarray) -> TwoWay:
    """Sums of squares of ``y`` (versions x queries): versions, queries and the residual, each
    summed from its own centred terms (no subtraction of large totals, so no cancellation).

    Examples
    --------
    >>> import numpy as np
    >>> a = two_way(np.array([[0.2, 0.5, 0.9], [0.4, 0.4, 1.0]]))
    >>> round(a.ss_versions, 6), round(a.ss_queries, 6), round(a.ss_residual, 6), a.df_residual
    (0.006667, 0.463333, 0.023333, 2)
    """
    m, n = y.shape
    if n == 0:  # no query in every version (missing="skip"): nothing to sum, and no NumPy warning
        return TwoWay(m, 0, np.full(m, math.nan), ss_versions=0.0, ss_queries=0.0, ss_residual=0.0, scale=1.0)
    means = y.mean(axis=1)
    query_means = y.mean(axis=0)
    grand = float(means.mean())
    residual = y - means[:, None] - query_means[None, :] + grand
    return TwoWay(
        m, n, means,
        ss_versions=float(n * np.square(means - grand).sum()),
        ss_queries=float(m * np.square(query_means - grand).sum()),
        ss_residual=float(np.square(residual).sum()),
        scale=float(np.abs(y).max()) if y.size else 1.0,
    )


def anova_row(label: str, a: TwoWay) -> dict[str, Any]:
    """One row of :func:`anova`: F and p for versions (and queries), η² and ω² (Sakai's effect sizes).

    ``eta_squared = SS_versions / SS_total``; ``omega_squared = (SS_versions - (m-1) V_E) /
    (SS_total + V_E)``.  No residual variance (``V_E = 0``: every query ranks the versions by the
    same shifts, or one query) leaves F, p and ω² null with a ``note``.
    """
    from scipy import stats

    note = None
    f = p = f_q = p_q = omega = math.nan
    ms = a.ms_residual
    if a.n == 0:
        note = NO_QUERY
    elif a.df_residual == 0:
        note = "n too small (one query: no residual degree of freedom)"
    elif a.no_residual:
        note = "no residual variance (every query shows the same differences)"
    else:
        f = (a.ss_versions / a.df_versions) / ms
        p = float(stats.f.sf(f, a.df_versions, a.df_residual))
        f_q = (a.ss_queries / a.df_queries) / ms
        p_q = float(stats.f.sf(f_q, a.df_queries, a.df_residual))
        omega = (a.ss_versions - a.df_versions * ms) / (a.ss_total + ms)
    return {
        "metric": label, "versions": a.m, "n_queries": a.n,
        "ss_versions": a.ss_versions, "ss_queries": a.ss_queries, "ss_residual": a.ss_residual,
        "df_versions": a.df_versions, "df_queries": a.df_queries, "df_residual": a.df_residual,
        "ms_residual": ms, "f": f, "p_value": p, "f_queries": f_q, "p_queries": p_q,
        "eta_squared": a.ss_versions / a.ss_total if a.ss_total > 0 else math.nan,
        "omega_squared": omega, "note": note,
    }


def tukey(a: TwoWay, confidence: float) -> tuple[np.ndarray, np.ndarray, str | None]:
    """Tukey HSD over all pairs with the two-way residual variance ``V_E`` on ``(m-1)(n-1)``
    degrees of freedom (Sakai): ``p[i, j]`` and the half width of the simultaneous intervals on
    ``mean_j - mean_i`` (:func:`tukey_pairs`), or NaN and why not (one query; no residual variance).
    """
    m = a.m
    if a.n == 0:
        return np.full((m, m), np.nan), np.full((m, m), np.nan), NO_QUERY
    if a.df_residual == 0:
        return np.full((m, m), np.nan), np.full((m, m), np.nan), "n too small"
    if a.no_residual:
        return np.full((m, m), np.nan), np.full((m, m), np.nan), "no residual variance"
    p, half = tukey_pairs(a.means, a.ms_residual, a.n, a.df_residual, confidence)
    return p, half, None


def tukey_pairs(means: np.ndarray, ms: float, n: int, df: int, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Tukey's HSD for ``m`` means of ``n`` values each, with error variance ``ms`` on ``df`` degrees
    of freedom: ``q = |mean_i - mean_j| / sqrt(ms / n)``, ``p = P(Q_{m, df} >= q)`` (SciPy's
    ``studentized_range``), half width ``q_{confidence; m, df} sqrt(ms / n)``.  As
    ``scipy.stats.tukey_hsd`` when ``ms`` is its one-way mean square, except below ~1e-11, where
    SciPy's integral stops and p is kept within the bounds ``[P2, C(m, 2) P2]`` of one pair's t
    tail ``P2 = 2 P(T_df >= q / sqrt(2))`` (exactly the paired t-test's p for two versions).

    Examples
    --------
    >>> import numpy as np
    >>> p, half = tukey_pairs(np.array([0.30, 0.35, 0.50]), 0.01, 20, 38, 0.95)
    >>> p.round(4).tolist(), round(float(half[0, 1]), 4)
    ([[1.0, 0.266, 0.0], [0.266, 1.0, 0.0001], [0.0, 0.0001, 1.0]], 0.0771)
    """
    from scipy import stats

    m = means.size
    se = math.sqrt(ms / n)
    q = np.abs(means[:, None] - means[None, :]) / se
    # each distinct q once: the tail is a numerical integral (~50 ms a value)
    distinct, where = np.unique(q[q > 0], return_inverse=True)
    tail = stats.studentized_range.sf(distinct, m, df)
    # That integral stops near 1e-12 (a p of 1e-12 where the truth is 1e-31).  The true tail lies
    # between one pair's and the union bound over all pairs': P2 <= P(Q >= q) <= C(m, 2) P2 with
    # P2 = P(|T_df| >= q / sqrt(2)) (each (Z_i - Z_j) / (sqrt(2) S) is t on df); clipping to them
    # can only move the value towards the truth, is exact for two versions (Tukey = paired t) and
    # tight far in the tail, where the pairs' events hardly overlap.
    pair = 2.0 * stats.t.sf(distinct / math.sqrt(2.0), df)
    tail = np.clip(tail, pair, np.minimum(1.0, m * (m - 1) / 2 * pair))
    p = np.ones((m, m))
    p[q > 0] = np.minimum(1.0, tail)[where]
    half = float(stats.studentized_range.ppf(confidence, m, df)) * se
    return p, np.full((m, m), half)


def randomized_tukey(y: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Carterette's randomised Tukey HSD: ``p[i, j]`` for every pair of versions (rows of ``y``).

    Each resample permutes every query's values across the versions (``Generator.permuted``
    along the version axis, in steps of about ``_CHUNK`` elements) and keeps the range
    ``max - min`` of the version means; ``p[i, j] = (1 + #{range* >= |mean_i - mean_j|}) /
    (1 + n_resamples)`` (the observed assignment counts once), ``>=`` with a relative tolerance
    of 1e-9 so that exact ties are not lost to rounding.

    Examples
    --------
    >>> import numpy as np
    >>> y = np.array([[0.1, 0.4, 0.3, 0.8], [0.3, 0.6, 0.2, 0.9], [0.5, 0.9, 0.6, 1.0]])
    >>> randomized_tukey(y, 999, np.random.default_rng(0)).round(3).tolist()
    [[1.0, 0.852, 0.022], [0.852, 1.0, 0.229], [0.022, 0.229, 1.0]]
    """
    m, n = y.shape
    if n == 0:  # no query in every version (missing="skip"): nothing to permute, no p-value
        return np.full((m, m), np.nan)
    means = y.mean(axis=1)
    observed = np.abs(means[:, None] - means[None, :])
    tol = _TIE_RTOL * max(float(np.abs(y).mean()), 1e-300)
    ranges = np.empty(n_resamples)
    cols = np.ascontiguousarray(y.T)  # queries x versions: each row is permuted
    step = max(1, _CHUNK // max(1, m * n))
    for start in range(0, n_resamples, step):
        r = min(step, n_resamples - start)
        if step >= r and n * m <= _CHUNK:
            shuffled = rng.permuted(np.broadcast_to(cols, (r, n, m)), axis=2)
            sums = shuffled.sum(axis=1)  # resamples x versions
        else:  # one resample does not fit a step: its queries in pieces
            sums = np.zeros((r, m))
            width = max(1, _CHUNK // m)
            for first in range(0, n, width):
                part = cols[first : first + width]
                sums += rng.permuted(np.broadcast_to(part, (r, *part.shape)), axis=2).sum(axis=1)
        ranges[start : start + r] = (sums.max(axis=1) - sums.min(axis=1)) / n
    hits = np.count_nonzero(ranges[None, None, :] >= observed[:, :, None] - tol, axis=2)
    return (1 + hits) / (1 + n_resamples)


def anova(
    run: Any,
    metrics: Any,
    *,
    qrels: Any = None,
    by: str = "model",
    missing: str = "zero",
    engine: str = "polars",
    **evaluate_kwargs: Any,
) -> pl.DataFrame:
    """Two-way ANOVA without replication (version x query) per metric, as Sakai reports it.

    Parameters
    ----------
    run, metrics, qrels, missing, engine, **evaluate_kwargs
        As for :func:`rank_polars.evaluate`, which computes the per-query values.
    by
        The one column whose values are the versions.

    Returns
    -------
    pl.DataFrame
        One row per metric: ``versions`` (m), ``n_queries`` (n), the sums of squares of
        versions, queries and the residual with their degrees of freedom (``m-1``, ``n-1``,
        ``(m-1)(n-1)``), ``ms_residual`` (V_E), ``f`` and ``p_value`` for versions,
        ``f_queries`` and ``p_queries``, ``eta_squared`` (SS_versions / SS_total),
        ``omega_squared`` ((SS_versions - (m-1) V_E) / (SS_total + V_E)) and ``note`` (null,
        or why F is not defined: one query, or no residual variance).

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> per = pl.DataFrame({"model": ["a"] * 4 + ["b"] * 4 + ["c"] * 4, "query": ["q1", "q2", "q3", "q4"] * 3,
    ...                     "item": ["x"] * 12, "position": [1] * 12,
    ...                     "relevance": [1, 0, 0, 1,  1, 1, 0, 1,  1, 1, 1, 1]})
    >>> rp.anova(per, "p@1").select("metric", "f", "p_value", "eta_squared", "omega_squared")
    shape: (1, 5)
    ┌────────┬─────┬──────────┬─────────────┬───────────────┐
    │ metric ┆ f   ┆ p_value  ┆ eta_squared ┆ omega_squared │
    │ ---    ┆ --- ┆ ---      ┆ ---         ┆ ---           │
    │ str    ┆ f64 ┆ f64      ┆ f64         ┆ f64           │
    ╞════════╪═════╪══════════╪═════════════╪═══════════════╡
    │ p@1    ┆ 1.8 ┆ 0.244141 ┆ 0.222222    ┆ 0.093023      │
    └────────┴─────┴──────────┴─────────────┴───────────────┘
    """
    from rank_polars.evaluate import evaluate, refuse_shaping

    if not isinstance(by, str):
        raise RankPolarsError(f"anova: by must be one column name (the versions), got {by!r}")
    refuse_shaping("anova", evaluate_kwargs)
    query = evaluate_kwargs.get("query", "query")
    per = evaluate(run, metrics, qrels=qrels, by=by, per_query=True, missing=missing, engine=engine, **evaluate_kwargs)
    return anova_values(per, by=by, query=query, missing=missing)


def anova_values(per: pl.DataFrame, *, by: str = "model", query: str = "query", missing: str = "zero") -> pl.DataFrame:
    """:func:`anova` on per-query values already computed (``by``, ``query`` and one column per metric)."""
    if missing not in ("zero", "skip"):  # any other word was read as "zero"
        raise RankPolarsError(f"anova: missing must be 'zero' or 'skip', got {missing!r}")
    labels = [c for c in per.columns if c not in (by, query)]
    check_block_input(per, by, query, labels, "anova")
    b = block(per, by, query, labels, missing)
    rows = [anova_row(label, two_way(b.values[label])) for label in labels]
    out = pl.DataFrame(rows, schema=ANOVA_SCHEMA)
    floats = [k for k, v in ANOVA_SCHEMA.items() if v == pl.Float64]
    return out.with_columns(pl.col(floats).fill_nan(None))


def check_block_input(per: pl.DataFrame, by: str, query: str, labels: Sequence[str], who: str) -> None:
    """Refuse what a versions x queries design cannot hold: fewer than two versions, null versions
    or queries, values that are not finite numbers (:func:`block` refuses a (version, query) given twice)."""
    for col in (by, query):
        if col not in per.columns:
            raise RankPolarsError(f"{who}: no column {col!r} in the per-query values (columns: {per.columns})")
        if per[col].null_count():
            raise RankPolarsError(f"{who}: column {col!r} has nulls; fill or drop them")
    versions = per[by].n_unique()
    if versions < 2:
        raise RankPolarsError(f"{who}: needs at least 2 versions in column {by!r}, found {versions}")
    check_numeric(per, by, query, labels, who)
    for label in labels:
        bad = per.filter(~pl.col(label).cast(pl.Float64).is_finite().fill_null(False))
        if bad.height:
            raise RankPolarsError(f"{who}: the per-query values of {label} are not numbers (NaN, infinite or null) "
                                  f"for {bad.height} rows, e.g. queries {examples(bad[query].sort().to_list())}")


def check_numeric(per: pl.DataFrame, by: str, query: str, labels: Sequence[str], who: str) -> None:
    """Refuse a metric column that is neither numeric nor boolean: a text column is an id (another
    grouping column), not a metric, and casting would read ``"0.5"`` as one."""
    text = [c for c in labels if not (per.schema[c].is_numeric() or per.schema[c] == pl.Boolean)]
    if text:
        raise RankPolarsError(f"{who}: column {text[0]!r} is not numeric ({per.schema[text[0]]}); every column but "
                              f"{by!r} and {query!r} is read as a metric: drop it, or compare each of its groups on "
                              "its own")


ANOVA_SCHEMA: dict[str, Any] = {
    "metric": pl.String, "versions": pl.Int64, "n_queries": pl.Int64,
    "ss_versions": pl.Float64, "ss_queries": pl.Float64, "ss_residual": pl.Float64,
    "df_versions": pl.Int64, "df_queries": pl.Int64, "df_residual": pl.Int64,
    "ms_residual": pl.Float64, "f": pl.Float64, "p_value": pl.Float64, "f_queries": pl.Float64,
    "p_queries": pl.Float64, "eta_squared": pl.Float64, "omega_squared": pl.Float64, "note": pl.String,
}

__all__ = ["Block", "TwoWay", "anova", "anova_values", "block", "randomized_tukey", "tukey", "tukey_pairs", "two_way"]
