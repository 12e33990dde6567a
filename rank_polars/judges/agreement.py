"""``rp.agreement``: how far judges agree, per pair of judges and over all of them.

Every statistic is a function of counts summed over queries, so each is computed the same way
on the whole sample and on each bootstrap resample of the queries (the interval's unit, as for a
metric): Polars group-bys give per-query counts (no loop over queries or items), one sparse
matrix holds them, and a resample is a vector of query multiplicities times that matrix.

* **Cohen's kappa** (per pair, on the items both judged): ``1 - sum(w * O) / sum(w * E)`` over
  the confusion matrix ``O`` of the two judges' grades and its expectation ``E`` under independent
  marginals; weights ``w`` 0 on the diagonal and 1 elsewhere (``cohen_kappa``), ``|i - j|``
  (``_linear``) or ``(i - j)^2`` (``_quadratic``) with ``i, j`` the positions of the grades among
  those the two judges used (scikit-learn's ``cohen_kappa_score``: a scale 0, 1, 3 is three
  steps, not four).
* **Krippendorff's alpha** (per pair and over all judges; items judged by one judge only are
  left out, missing judgments allowed): ``1 - (n - 1) sum(o * d) / sum(n_c n_k d)`` over the
  coincidence matrix ``o`` (each item's pairs of grades, weighted ``1 / (m_u - 1)``), with the
  nominal, ordinal (ranks from the grades' frequencies) or interval (squared difference of the
  grades) distance ``d`` (the ``krippendorff`` package's definitions).
* **Fleiss' kappa** (per pair and over all judges): on the items every judge of the set judged
  (statsmodels' ``fleiss_kappa`` needs the same number of ratings per item).

Undefined values are null, never a number: a kappa when the expected disagreement is 0 (both
judges gave one and the same grade to every item: agreement by chance is certain), an alpha when
every grade is the same or no item has two judgments, any statistic without an item.  The
interval is the percentile bootstrap over queries (``n_resamples`` seeded resamples, the
deterministic draws of :mod:`rank_polars.stats.resampling`), over the resamples where the
statistic is defined.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any, Sequence

import numpy as np
import polars as pl

from rank_polars.errors import RankPolarsError
from rank_polars.inputs import Source
from rank_polars.judges.table import check_judgments, judgments_of
from rank_polars.schema import Schema, as_schema
from rank_polars.stats.resampling import _uniform_indices, percentile_ci

Q, I, G, J, C = "__rp_q", "__rp_i", "__rp_g", "__rp_j", "__rp_c"
PAIR_STATISTICS = ("cohen_kappa", "cohen_kappa_linear", "cohen_kappa_quadratic", "krippendorff_alpha_nominal",
                   "krippendorff_alpha_ordinal", "krippendorff_alpha_interval", "fleiss_kappa")
ALL_STATISTICS = ("krippendorff_alpha_nominal", "krippendorff_alpha_ordinal", "krippendorff_alpha_interval",
                  "fleiss_kappa")
_CHUNK = 1 << 20  # query draws per resampling step: bounded memory


def long_judgments(judgments: Source, schema: Schema | None, judges: Sequence[str] | None) -> tuple[pl.DataFrame, list]:
    """The judgments under internal names with each grade's category index ``C`` (grades sorted),
    checked, restricted to ``judges``; and the grades (the categories' values)."""
    mapping = as_schema(schema)
    names = [mapping.judged(r) for r in ("query", "item", "relevance", "judge")]
    frame = check_judgments(judgments_of(judgments, mapping), *names)
    frame = frame.rename(dict(zip(names, (Q, I, G, J))))
    if judges is not None:
        have = set(frame[J].unique().to_list())
        unknown = [j for j in judges if j not in have]
        if unknown:
            raise RankPolarsError(f"judges: {unknown[0]!r} is not a judge of the judgments ({', '.join(map(repr, sorted(have, key=str)))})")
        frame = frame.filter(pl.col(J).is_in(list(judges)))
    grades = frame[G].unique().sort()
    frame = frame.join(pl.DataFrame({G: grades, C: pl.int_range(grades.len(), eager=True).cast(pl.Int64)}), on=G)
    return frame, grades.to_list()


def pair_counts(frame: pl.DataFrame) -> pl.DataFrame:
    """Per pair of judges (``a < b``) and query: how many items got grade ``ca`` from a and ``cb`` from b."""
    left = frame.select(Q, I, pl.col(J).alias("a"), pl.col(C).alias("ca"))
    right = frame.select(Q, I, pl.col(J).alias("b"), pl.col(C).alias("cb"))
    joined = left.join(right, on=[Q, I]).filter(pl.col("a").cast(pl.String) < pl.col("b").cast(pl.String))
    return joined.group_by("a", "b", Q, "ca", "cb").agg(pl.len().cast(pl.Int64).alias("n"))


def _unit_counts(frame: pl.DataFrame) -> pl.DataFrame:
    """Per item: its number of judgments ``m`` and, per grade, how many judges gave it (``n``)."""
    per = frame.group_by(Q, I, C).agg(pl.len().cast(pl.Int64).alias("n"))
    return per.with_columns(pl.col("n").sum().over(Q, I).alias("m"))


def coincidence_counts(frame: pl.DataFrame) -> pl.DataFrame:
    """Per query and item size ``m`` (judgments of the item, at least 2): the pairs of grades
    ``(c, k)`` among its judgments, ``n_c (n_k - [c = k])`` summed (Krippendorff's coincidences
    before the weight ``1 / (m - 1)``)."""
    units = _unit_counts(frame).filter(pl.col("m") >= 2)
    pairs = units.join(units.select(Q, I, pl.col(C).alias("k"), pl.col("n").alias("nk")), on=[Q, I])
    value = pl.col("n") * (pl.col("nk") - (pl.col(C) == pl.col("k")).cast(pl.Int64))
    return (pairs.with_columns(value.alias("p")).filter(pl.col("p") > 0)
            .group_by(Q, "m", C, "k").agg(pl.col("p").sum()))


def fleiss_counts(frame: pl.DataFrame, raters: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """On the items all ``raters`` judged: per query, the items and the sum of squared grade
    counts; per query and grade, the judgments of that grade."""
    units = _unit_counts(frame).filter(pl.col("m") == raters)
    items = units.group_by(Q).agg(pl.col(I).n_unique().cast(pl.Int64).alias("items"),
                                  (pl.col("n") ** 2).sum().alias("squares"))
    totals = units.group_by(Q, C).agg(pl.col("n").sum().alias("n"))
    return items, totals


# -- the statistics, each over a batch of summed counts (one row: the sample; more: resamples) ----


def cohen(o: np.ndarray, weight: str) -> np.ndarray:
    """Weighted kappa of confusion matrices ``o`` (R x K x K); NaN where undefined."""
    k = o.shape[-1]
    i, j = np.indices((k, k))
    w = {"none": (i != j).astype(float), "linear": np.abs(i - j).astype(float), "quadratic": ((i - j) ** 2).astype(float)}[weight]
    n = o.sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        e = o.sum(axis=2)[:, :, None] * o.sum(axis=1)[:, None, :] / n[:, None, None]
        observed, expected = (w * o).sum(axis=(1, 2)), (w * e).sum(axis=(1, 2))
        return np.where(expected > 0, 1.0 - observed / np.where(expected > 0, expected, 1.0), np.nan)


def krippendorff(o: np.ndarray, values: np.ndarray, level: str) -> np.ndarray:
    """Alpha of coincidence matrices ``o`` (R x K x K) over grade ``values``; NaN where undefined."""
    n_c = o.sum(axis=2)
    n = n_c.sum(axis=1)
    if level == "nominal":
        d = np.broadcast_to(1.0 - np.eye(values.size), o.shape)
    elif level == "interval":
        d = np.broadcast_to((values[:, None] - values[None, :]) ** 2, o.shape)
    else:  # ordinal: the grades' frequencies between c and k, minus half of the ends'
        cum = np.concatenate([np.zeros((o.shape[0], 1)), np.cumsum(n_c, axis=1)], axis=1)
        lo, hi = np.minimum.outer(np.arange(values.size), np.arange(values.size)), np.maximum.outer(
            np.arange(values.size), np.arange(values.size))
        between = cum[:, hi + 1] - cum[:, lo]
        d = (between - (n_c[:, :, None] + n_c[:, None, :]) / 2.0) ** 2
    observed = (o * d).sum(axis=(1, 2))
    expected = (n_c[:, :, None] * n_c[:, None, :] * d).sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(expected > 0, 1.0 - (n - 1.0) * observed / np.where(expected > 0, expected, 1.0), np.nan)


def fleiss(items: np.ndarray, squares: np.ndarray, totals: np.ndarray, raters: int) -> np.ndarray:
    """Fleiss' kappa from the items, the sums of squared counts and the per-grade totals (R x K)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        ratings = items * raters
        agreement = (squares - ratings) / (ratings * (raters - 1.0))
        p = totals / ratings[:, None]
        chance = (p**2).sum(axis=1)
        return np.where((items > 0) & (chance < 1.0), (agreement - chance) / np.where(chance < 1.0, 1.0 - chance, 1.0), np.nan)


# -- the design: which summed count each column of the per-query matrix holds --------------------


class _Columns:
    """Named blocks of columns of the per-query count matrix."""

    def __init__(self) -> None:
        self.blocks: dict[Any, tuple[int, tuple[int, ...]]] = {}
        self.width = 0

    def add(self, key: Any, shape: tuple[int, ...]) -> int:
        self.blocks[key] = (self.width, shape)
        self.width += int(np.prod(shape))
        return self.blocks[key][0]

    def take(self, sums: np.ndarray, key: Any) -> np.ndarray:
        start, shape = self.blocks[key]
        return sums[:, start : start + int(np.prod(shape))].reshape(sums.shape[0], *shape)


def _sparse(rows: np.ndarray, cols: np.ndarray, values: np.ndarray, shape: tuple[int, int]) -> Any:
    from scipy import sparse

    return sparse.csr_array((values.astype(np.float64), (rows, cols)), shape=shape)


def _resampled(matrix: Any, n_queries: int, n_resamples: int, seed: int) -> np.ndarray:
    """The column sums of ``n_resamples`` bootstrap resamples of the matrix's rows (queries)."""
    rng = np.random.default_rng(seed)
    out = np.empty((n_resamples, matrix.shape[1]))
    step = max(1, _CHUNK // max(n_queries, 1))
    buffer = np.empty(step * n_queries, np.uint64)
    for start in range(0, n_resamples, step):
        r = min(step, n_resamples - start)
        drawn = _uniform_indices(rng, n_queries, buffer[: r * n_queries])
        rows = np.repeat(np.arange(r), n_queries) * n_queries + drawn
        weights = np.bincount(rows, minlength=r * n_queries).reshape(r, n_queries).astype(np.float64)
        out[start : start + r] = (matrix.T @ weights.T).T
    return out


def agreement(
    judgments: Source,
    *,
    judges: Sequence[str] | None = None,
    ci: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 0,
    schema: Schema | None = None,
) -> pl.DataFrame:
    """Agreement between judges: per pair and over all of them, with bootstrap intervals over queries.

    Parameters
    ----------
    judgments
        ``query, item, relevance, judge`` (the schema's names), from any source the judgments are
        read from, or ``{judge: judgments}``.  One grade per (query, item, judge).
    judges
        The judges to compare (default: all).
    ci, n_resamples, seed
        The percentile bootstrap interval over queries: its level, resamples and seed.
    schema
        The judgments' column names (``rp.Schema(judge="rater", relevance="grade")``).

    Returns
    -------
    pl.DataFrame
        ``judges`` (``"a|b"`` for a pair, ``"all"``), ``statistic``, ``value``, ``ci_low``,
        ``ci_high``, ``items`` (the items the statistic reads).  Null where undefined (see the module).

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> judgments = pl.DataFrame({
    ...     "query": ["q1"] * 8 + ["q2"] * 8,
    ...     "item": ["a", "b", "c", "d"] * 4,
    ...     "judge": (["people"] * 4 + ["llm"] * 4) * 2,
    ...     "relevance": [0, 1, 2, 2, 0, 2, 2, 2, 1, 0, 0, 2, 1, 0, 1, 2],
    ... })
    >>> rp.agreement(judgments, n_resamples=200).filter(pl.col("judges") != "all")
    shape: (7, 6)
    ┌────────────┬─────────────────────────────┬──────────┬──────────┬──────────┬───────┐
    │ judges     ┆ statistic                   ┆ value    ┆ ci_low   ┆ ci_high  ┆ items │
    │ ---        ┆ ---                         ┆ ---      ┆ ---      ┆ ---      ┆ ---   │
    │ str        ┆ str                         ┆ f64      ┆ f64      ┆ f64      ┆ i64   │
    ╞════════════╪═════════════════════════════╪══════════╪══════════╪══════════╪═══════╡
    │ llm|people ┆ cohen_kappa                 ┆ 0.619048 ┆ 0.555556 ┆ 0.636364 ┆ 8     │
    │ llm|people ┆ cohen_kappa_linear          ┆ 0.733333 ┆ 0.714286 ┆ 0.733333 ┆ 8     │
    │ llm|people ┆ cohen_kappa_quadratic       ┆ 0.833333 ┆ 0.8      ┆ 0.833333 ┆ 8     │
    │ llm|people ┆ krippendorff_alpha_nominal  ┆ 0.638554 ┆ 0.558824 ┆ 0.642857 ┆ 8     │
    │ llm|people ┆ krippendorff_alpha_ordinal  ┆ 0.840593 ┆ 0.732143 ┆ 0.840593 ┆ 8     │
    │ llm|people ┆ krippendorff_alpha_interval ┆ 0.840426 ┆ 0.807692 ┆ 0.840426 ┆ 8     │
    │ llm|people ┆ fleiss_kappa                ┆ 0.614458 ┆ 0.529412 ┆ 0.619048 ┆ 8     │
    └────────────┴─────────────────────────────┴──────────┴──────────┴──────────┴───────┘
    """
    if not 0 < ci < 1:
        raise RankPolarsError(f"ci must be between 0 and 1, got {ci!r}")
    if not isinstance(n_resamples, int) or n_resamples < 1:
        raise RankPolarsError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    frame, grades = long_judgments(judgments, schema, judges)
    names = sorted(frame[J].unique().to_list(), key=str)
    if len(names) < 2:
        raise RankPolarsError(f"agreement needs two judges or more; the judgments have {len(names)} "
                              f"({', '.join(map(repr, names))})")
    values = np.asarray(grades, dtype=np.float64)
    k = values.size
    pairs = pair_counts(frame)
    coincide = coincidence_counts(frame)
    fl_items, fl_totals = fleiss_counts(frame, len(names))
    queries = pl.concat([pairs.select(Q), coincide.select(Q)]).unique().sort(Q)
    index = queries.with_columns(pl.int_range(pl.len()).alias("__rp_row"))
    cols = _Columns()
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def block(table: pl.DataFrame, key: Any, shape: tuple[int, ...], cells: pl.Expr, value: str) -> None:
        start = cols.add(key, shape)
        rows = table.join(index, on=Q, how="inner")
        parts.append((rows["__rp_row"].to_numpy(), (start + rows.select(cells).to_series()).to_numpy(),
                      rows[value].to_numpy()))

    chosen = list(combinations(names, 2))
    for a, b in chosen:
        block(pairs.filter((pl.col("a") == a) & (pl.col("b") == b)), (a, b), (k, k), pl.col("ca") * k + pl.col("cb"), "n")
    sizes = range(2, len(names) + 1)
    for m in sizes:
        block(coincide.filter(pl.col("m") == m), ("alpha", m), (k, k), pl.col(C) * k + pl.col("k"), "p")
    block(fl_items, "fleiss_items", (1,), pl.repeat(0, pl.len()), "items")
    block(fl_items, "fleiss_squares", (1,), pl.repeat(0, pl.len()), "squares")
    block(fl_totals, "fleiss_totals", (k,), pl.col(C), "n")
    rows, cells, counts = (np.concatenate(p) for p in zip(*parts)) if parts else (np.zeros(0, int),) * 3
    matrix = _sparse(rows, cells, counts, (max(index.height, 1), cols.width))
    whole = np.asarray(matrix.sum(axis=0)).reshape(1, -1)
    resampled = _resampled(matrix, index.height, n_resamples, seed) if index.height else np.full((n_resamples, cols.width), np.nan)

    out: list[dict[str, Any]] = []

    def emit(judges_label: str, statistic: str, compute: Any, items: int) -> None:
        value = float(compute(whole)[0]) if items else float("nan")
        low = high = float("nan")
        if np.isfinite(value):
            draws = compute(resampled)
            low, high = percentile_ci(draws[np.isfinite(draws)], ci)
        out.append({"judges": judges_label, "statistic": statistic, "value": value, "ci_low": low, "ci_high": high,
                    "items": items})

    for a, b in chosen:
        label = f"{a}|{b}"
        o_pair = (a, b)
        used = np.flatnonzero((cols.take(whole, o_pair)[0].sum(axis=0) + cols.take(whole, o_pair)[0].sum(axis=1)) > 0)
        items = int(cols.take(whole, o_pair).sum())

        def confusion(s: np.ndarray, key: tuple = o_pair, used: np.ndarray = used) -> np.ndarray:
            return cols.take(s, key)[:, used][:, :, used]

        def coincidences(s: np.ndarray, key: tuple = o_pair) -> np.ndarray:
            o = cols.take(s, key)
            return o + o.transpose(0, 2, 1)

        for weight, name in (("none", "cohen_kappa"), ("linear", "cohen_kappa_linear"), ("quadratic", "cohen_kappa_quadratic")):
            emit(label, name, lambda s, w=weight, f=confusion: cohen(f(s), w), items)
        for level in ("nominal", "ordinal", "interval"):
            emit(label, f"krippendorff_alpha_{level}", lambda s, lv=level, f=coincidences: krippendorff(f(s), values, lv), items)
        emit(label, "fleiss_kappa", lambda s, f=coincidences: _fleiss_of_pairs(f(s)), items)

    def all_coincidences(s: np.ndarray) -> np.ndarray:
        return sum(cols.take(s, ("alpha", m)) / (m - 1.0) for m in sizes)

    paired_items = int(frame.group_by(Q, I).len().filter(pl.col("len") >= 2).height)
    for level in ("nominal", "ordinal", "interval"):
        emit("all", f"krippendorff_alpha_{level}", lambda s, lv=level: krippendorff(all_coincidences(s), values, lv),
             paired_items)
    emit("all", "fleiss_kappa", lambda s: fleiss(cols.take(s, "fleiss_items")[:, 0], cols.take(s, "fleiss_squares")[:, 0],
                                                 cols.take(s, "fleiss_totals"), len(names)),
         int(whole[0, cols.blocks["fleiss_items"][0]]))
    table = pl.DataFrame(out, schema={"judges": pl.String, "statistic": pl.String, "value": pl.Float64,
                                      "ci_low": pl.Float64, "ci_high": pl.Float64, "items": pl.Int64})
    return table.with_columns(pl.col("value", "ci_low", "ci_high").fill_nan(None))


def _fleiss_of_pairs(o: np.ndarray) -> np.ndarray:
    """Fleiss' kappa of two judges from their symmetric coincidences (each item counted twice)."""
    items = o.sum(axis=(1, 2)) / 2.0
    agree = np.trace(o, axis1=1, axis2=2) / 2.0  # items both judges gave one grade
    squares = agree * 4.0 + (items - agree) * 2.0
    return fleiss(items, squares, o.sum(axis=2), 2)


def _pair_label(a: str = "a", b: str = "b") -> pl.Expr:
    return pl.concat_str(pl.col(a).cast(pl.String), pl.lit("|"), pl.col(b).cast(pl.String)).alias("judges")


def grade_confusion(judgments: Source, *, judges: Sequence[str] | None = None, schema: Schema | None = None) -> pl.DataFrame:
    """The confusion matrix of grades per pair of judges, long: on the items both judged, how many
    got ``grade_a`` from the first judge of the pair and ``grade_b`` from the second.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> judgments = pl.DataFrame({"query": ["q1"] * 6, "item": ["a", "b", "c"] * 2,
    ...                           "judge": ["people"] * 3 + ["llm"] * 3, "relevance": [0, 1, 2, 1, 1, 2]})
    >>> rp.grade_confusion(judgments)
    shape: (3, 4)
    ┌────────────┬─────────┬─────────┬───────┐
    │ judges     ┆ grade_a ┆ grade_b ┆ items │
    │ ---        ┆ ---     ┆ ---     ┆ ---   │
    │ str        ┆ f64     ┆ f64     ┆ i64   │
    ╞════════════╪═════════╪═════════╪═══════╡
    │ llm|people ┆ 1.0     ┆ 0.0     ┆ 1     │
    │ llm|people ┆ 1.0     ┆ 1.0     ┆ 1     │
    │ llm|people ┆ 2.0     ┆ 2.0     ┆ 1     │
    └────────────┴─────────┴─────────┴───────┘
    """
    frame, grades = long_judgments(judgments, schema, judges)
    values = pl.Series(grades, dtype=pl.Float64)
    counts = pair_counts(frame).group_by("a", "b", "ca", "cb").agg(pl.col("n").sum().alias("items"))
    return (counts.select(_pair_label(), values.gather(counts["ca"]).alias("grade_a"),
                          values.gather(counts["cb"]).alias("grade_b"), "items")
            .sort("judges", "grade_a", "grade_b"))


def agreement_per_query(judgments: Source, *, judges: Sequence[str] | None = None,
                        schema: Schema | None = None) -> pl.DataFrame:
    """Per pair of judges and query, on the items both judged: the share given the same grade
    (``agreement``) and Cohen's kappa (``cohen_kappa``, null where undefined), long like
    :func:`agreement`: ``judges, query, statistic, value, items``.  Where judges disagree most is
    where to look first (a vague query, a judge's misreading).

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> judgments = pl.DataFrame({"query": ["q1"] * 4 + ["q2"] * 4, "item": ["a", "b"] * 4,
    ...                           "judge": ["people", "people", "llm", "llm"] * 2, "relevance": [0, 1, 0, 1, 0, 1, 1, 1]})
    >>> rp.agreement_per_query(judgments)
    shape: (4, 5)
    ┌────────────┬───────┬─────────────┬───────┬───────┐
    │ judges     ┆ query ┆ statistic   ┆ value ┆ items │
    │ ---        ┆ ---   ┆ ---         ┆ ---   ┆ ---   │
    │ str        ┆ str   ┆ str         ┆ f64   ┆ i64   │
    ╞════════════╪═══════╪═════════════╪═══════╪═══════╡
    │ llm|people ┆ q1    ┆ agreement   ┆ 1.0   ┆ 2     │
    │ llm|people ┆ q1    ┆ cohen_kappa ┆ 1.0   ┆ 2     │
    │ llm|people ┆ q2    ┆ agreement   ┆ 0.5   ┆ 2     │
    │ llm|people ┆ q2    ┆ cohen_kappa ┆ 0.0   ┆ 2     │
    └────────────┴───────┴─────────────┴───────┴───────┘
    """
    mapping = as_schema(schema)
    frame, _ = long_judgments(judgments, mapping, judges)
    counts = pair_counts(frame)
    keys = ["a", "b", Q]
    rows = counts.group_by(*keys, pl.col("ca").alias(C)).agg(pl.col("n").sum().alias("row"))
    cols = counts.group_by(*keys, pl.col("cb").alias(C)).agg(pl.col("n").sum().alias("col"))
    chance = rows.join(cols, on=[*keys, C]).group_by(keys).agg((pl.col("row") * pl.col("col")).sum().alias("rc"))
    per = counts.group_by(keys).agg(pl.col("n").sum().alias("items"),
                                    pl.col("n").filter(pl.col("ca") == pl.col("cb")).sum().alias("same"))
    per = per.join(chance, on=keys, how="left").with_columns(pl.col("rc").fill_null(0))
    n = pl.col("items").cast(pl.Float64)
    observed, expected = pl.col("same") / n, pl.col("rc") / (n * n)
    kappa = pl.when(expected < 1.0).then((observed - expected) / (1.0 - expected))
    out = per.select(_pair_label(), pl.col(Q).alias(mapping.judged("query")), "items",
                     observed.alias("agreement"), kappa.alias("cohen_kappa"))
    return (out.unpivot(["agreement", "cohen_kappa"], index=["judges", mapping.judged("query"), "items"],
                        variable_name="statistic")
            .select("judges", mapping.judged("query"), "statistic", "value", "items")
            .sort("judges", mapping.judged("query"), "statistic"))


__all__ = ["agreement", "agreement_per_query", "cohen", "fleiss", "grade_confusion", "krippendorff"]
