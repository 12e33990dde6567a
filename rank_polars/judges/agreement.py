"""``rp.agreement``: how far judges agree, per pair of judges and over all of them.

Every statistic is a function of counts summed over queries, so each is computed the same way
on the whole sample and on each bootstrap resample of the queries (the interval's unit, as for a
metric): two streamed Polars group-bys count each query's items by their pattern of grades (no
loop over queries or items), one sparse matrix holds each query's counts per pair of judges,
and a resample is a vector of query multiplicities times that matrix.

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

from rank_polars.errors import RankPolarsError, examples
from rank_polars.inputs import Source
from rank_polars.judges.table import check_judgments, check_pair_names, judgments_of
from rank_polars.schema import Schema, as_schema
from rank_polars.stats.resampling import _uniform_indices, percentile_ci

Q, I, G, J, C = "__rp_q", "__rp_i", "__rp_g", "__rp_j", "__rp_c"
PAIR_STATISTICS = ("cohen_kappa", "cohen_kappa_linear", "cohen_kappa_quadratic", "krippendorff_alpha_nominal",
                   "krippendorff_alpha_ordinal", "krippendorff_alpha_interval", "fleiss_kappa")
ALL_STATISTICS = ("krippendorff_alpha_nominal", "krippendorff_alpha_ordinal", "krippendorff_alpha_interval",
                  "fleiss_kappa")
_CHUNK = 1 << 20  # query draws per resampling step: bounded memory
_DENSE = 1 << 23  # entries of a counts matrix built dense before it is made sparse (64 MiB)
_EXACT32 = float(1 << 24)  # whole numbers below this are exact in float32, and their sums while below it
_WORD = 62  # bits of an Int64 sum a packed word uses (its sign bit and one more left free)


def long_judgments(judgments: Source, schema: Schema | None, judges: Sequence[str] | None
                   ) -> tuple[pl.DataFrame, list, list[str]]:
    """The judgments under internal names, checked, restricted to ``judges``, each judge and grade
    as a small integer (``J``: the judge's position among the judges, ``C``: the grade's among
    the grades); the grades, sorted; the judges."""
    mapping = as_schema(schema)
    names = [mapping.judged(r) for r in ("query", "item", "relevance", "judge")]
    frame = check_judgments(judgments_of(judgments, mapping), *names, duplicates=False)
    frame = frame.rename(dict(zip(names, (Q, I, G, J))))
    seen = frame.select(pl.col(J).unique().implode(), pl.col(G).unique().sort().implode())  # side by side
    have, grades = sorted(seen[J][0].to_list(), key=str), seen[G][0]
    check_pair_names(have)
    if judges is not None:
        unknown = [j for j in judges if j not in have]
        if unknown:
            raise RankPolarsError(f"judges: {unknown[0]!r} is not a judge of the judgments ({', '.join(map(repr, have))})")
        frame = frame.filter(pl.col(J).is_in(list(judges)))
        have = [j for j in have if j in judges]
        grades = frame[G].unique().sort()  # the chosen judges' grades
    if frame.schema[J] in (pl.String, pl.Categorical) or isinstance(frame.schema[J], pl.Enum):
        judge = pl.col(J).cast(pl.Enum(have)).to_physical()  # an Enum's codes: each text looked up once
    else:
        judge = pl.col(J).replace_strict(have, range(len(have)), return_dtype=pl.UInt32)
    category = pl.lit(grades).search_sorted(pl.col(G))  # the grades are sorted: a binary search, no hashing
    return frame.select(Q, I, judge, category.alias(C)), grades.to_list(), have


def _above(column: str, start: int, dtype: pl.DataType) -> pl.Expr:
    """An integer column minus its minimum, as Int64 (without overflow in a narrow type or in UInt64)."""
    return (pl.col(column) - start).cast(pl.Int64) if dtype == pl.UInt64 else pl.col(column).cast(pl.Int64) - start


def _item_keys(frame: pl.DataFrame) -> tuple[list[str], list[pl.Expr], int, int]:
    """The group-by keys of a judgment's (query, item), their expressions, a span and an offset:
    one Int64 ``(query - offset) * span + item offset`` when both ids are integers whose ranges
    fit (hashed several times faster than two columns); otherwise the two columns, span 0."""
    if frame.height and frame.schema[Q].is_integer() and frame.schema[I].is_integer():
        (q0, q1), (i0, i1) = ((int(frame[c].min()), int(frame[c].max())) for c in (Q, I))  # type: ignore[arg-type]
        span = i1 - i0 + 1
        if (q1 - q0 + 1) * span < 1 << 62:
            return [Q], [(_above(Q, q0, frame.schema[Q]) * span + _above(I, i0, frame.schema[I])).alias(Q)], span, q0
    return [Q, I], [pl.col(Q), pl.col(I)], 0, 0


def patterns(frame: pl.DataFrame, grades: list, judges: list, query: str = "query") -> pl.DataFrame:
    """Per query, each pattern of grades its items got: judge ``i``'s grade category
    (``__rp_c<i>``, its index among ``grades``; null where it did not judge), ``m`` (how many
    judged) and ``n`` (how many of the query's items got it); a judge grading an item twice is
    refused.  Every statistic is a sum over items, so the patterns (a few per query) stand for
    the items (a hundred per query).

    Two group-bys of integer sums, streamed: per (query, item), each judgment adds its category
    + 1 into its judge's field of a packed word (as many words as the fields need); per query,
    the items are counted by their words.  A field has a bit to spare, so a judge's repeated
    grades make fewer nonzero fields than judgments: a field's sum of m grades spills into at
    most m - 1 fields (the item's words are then set to 0, which no pattern is).
    """
    if not judges:  # no judgments
        return frame.select(Q, *(pl.lit(0, pl.Int64).alias(c) for c in ("m", "n"))).clear()
    width = len(grades).bit_length() + 1  # categories 1..k (0: not judged), and the spare bit
    per = max(1, _WORD // width)  # judges per packed word
    words = [f"__rp_w{w}" for w in range(-(-len(judges) // per))]
    fields = [pl.col(words[i // per]) // (1 << i % per * width) % (1 << width) for i in range(len(judges))]
    judge = pl.col(J).cast(pl.Int64)
    term = (pl.col(C).cast(pl.Int64) + 1) * pl.lit(2, pl.Int64).pow(judge % per * width)
    names, keys, span, q0 = _item_keys(frame)
    items = (frame.lazy().select(*keys, J, C)
             .select(*names, *((term if len(words) == 1 else pl.when(judge // per == w).then(term).otherwise(0)).alias(name)
                               for w, name in enumerate(words)))
             .group_by(names).agg(pl.len().alias("__rp_len"), *(pl.col(w).sum() for w in words)))
    once = pl.sum_horizontal(f > 0 for f in fields) == pl.col("__rp_len")
    packed = [pl.when(once).then(pl.col(w)).otherwise(0).alias(w) for w in words]
    bits = len(judges) * width  # of a pattern in one word
    if span and len(words) == 1 and (frame[Q].max() - q0 + 1) << bits < 1 << 62:  # type: ignore[operator]
        # one integer per (query, pattern) too: the query's offset above the pattern's bits
        table = items.select((pl.col(Q) // span * (1 << bits) + packed[0]).alias(Q)).group_by(Q).agg(pl.len().alias("n"))
        table = table.select(pl.col(Q) // (1 << bits), (pl.col(Q) % (1 << bits)).alias(words[0]), "n")
    else:
        table = items.select(pl.col(Q) // span if span else pl.col(Q), *packed).group_by(Q, *words).agg(pl.len().alias("n"))
    if span:  # back to the query ids (in UInt64 above Int64's range)
        dtype = frame.schema[Q]
        query_id = pl.col(Q).cast(dtype) + q0 if dtype == pl.UInt64 else (pl.col(Q) + q0).cast(dtype)
        table = table.with_columns(query_id)
    table = table.with_columns(pl.col("n").cast(pl.Int64)).collect(engine="streaming")
    twice = table.filter(pl.all_horizontal(pl.col(w) == 0 for w in words))
    if twice.height:
        raise RankPolarsError(f"qrels: {twice['n'].sum()} (query, item) pairs are judged twice by one judge, e.g. in "
                              f"{query}s {examples(twice[Q].unique().sort().to_list())}; keep one grade per judge")
    return table.select(Q, *(pl.when(f > 0).then(f - 1).alias(f"__rp_c{i}") for i, f in enumerate(fields)),
                        pl.sum_horizontal(f > 0 for f in fields).cast(pl.Int64).alias("m"), "n")


def pair_counts(table: pl.DataFrame, judges: list[str]) -> pl.DataFrame:
    """Per pair of judges (``a < b`` in ``judges``' order), query and ``m``: how many items got
    grade ``ca`` from a and ``cb`` from b (items both judged), from :func:`patterns`; one
    group-by on one integer code."""
    pairs = list(combinations(range(len(judges)), 2))
    k = 1 + max([int(table[f"__rp_c{i}"].max() or 0) for i in range(len(judges))] or [0])
    r = len(judges) + 1
    parts = [table.lazy().filter(pl.col(f"__rp_c{x}").is_not_null() & pl.col(f"__rp_c{y}").is_not_null())
             .select(Q, (((p * r + pl.col("m")) * k + pl.col(f"__rp_c{x}")) * k + pl.col(f"__rp_c{y}")).alias("__rp_code"), "n")
             for p, (x, y) in enumerate(pairs)]
    if not parts:  # one judge: no pair
        return pl.DataFrame(schema={"a": pl.String, "b": pl.String, Q: table.schema[Q], "m": pl.Int64, "ca": pl.Int64,
                                    "cb": pl.Int64, "n": pl.Int64})
    counts = pl.concat(parts).group_by(Q, "__rp_code").agg(pl.col("n").sum()).collect()
    code = pl.col("__rp_code")
    pair = code // (k * k * r)
    return counts.select(
        pair.replace_strict(range(len(pairs)), [judges[x] for x, _ in pairs], return_dtype=pl.String).alias("a"),
        pair.replace_strict(range(len(pairs)), [judges[y] for _, y in pairs], return_dtype=pl.String).alias("b"),
        Q, (code // (k * k) % r).alias("m"), (code // k % k).alias("ca"), (code % k).alias("cb"), "n")


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


def _query_counts(table: pl.DataFrame, raters: int, k: int) -> tuple[Any, int]:
    """The counts every statistic reads, per query (sparse, queries x columns) from
    :func:`patterns`; the number of queries.  The rows: the queries with an item two judges
    judged, sorted (the bootstrap's units); the columns: one block per (pair of judges, m), the
    pair's K x K confusion counts on the query's items judged m times."""
    paired = table.filter(pl.col("m") >= 2)
    index = paired.select(pl.col(Q).unique().sort()).with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("__rp_row"))
    paired = paired.join(index, on=Q)
    row, m, n = (paired[c].to_numpy() for c in ("__rp_row", "m", "n"))
    grade = [paired[f"__rp_c{i}"].fill_null(-1).to_numpy() for i in range(raters)]
    rows, cells, counts = [], [], []
    for p, (x, y) in enumerate(combinations(range(raters), 2)):  # a pair of judges at a time, every query at once
        both = (grade[x] >= 0) & (grade[y] >= 0)
        rows.append(row[both])
        cells.append(((p * (raters - 1) + m[both] - 2) * k + grade[x][both]) * k + grade[y][both])
        counts.append(n[both])
    shape = (max(index.height, 1), raters * (raters - 1) // 2 * (raters - 1) * k * k)
    return _sparse(np.concatenate(rows), np.concatenate(cells), np.concatenate(counts), shape), index.height


def _sparse(rows: np.ndarray, cols: np.ndarray, values: np.ndarray, shape: tuple[int, int]) -> Any:
    """A CSR matrix of the counts, repeated cells summed: through a dense one when it fits in
    ``_DENSE`` entries (a bincount, several times faster than sorting the cells)."""
    from scipy import sparse

    if shape[0] * shape[1] <= _DENSE:
        dense = np.bincount(rows * shape[1] + cols, weights=values, minlength=shape[0] * shape[1])
        return sparse.csr_array(dense.reshape(shape))
    return sparse.csr_array((values.astype(np.float64), (rows, cols)), shape=shape)


def _resampled(matrix: Any, n_queries: int, n_resamples: int, seed: int) -> np.ndarray:
    """The column sums of ``n_resamples`` bootstrap resamples of the matrix's rows (queries).

    A sparse product, not a dense BLAS one: as fast on one thread, and not slowed down a
    hundredfold when BLAS's threads share busy cores.  In float32 (a third faster) where that is
    exact: whole counts whose sums, hence every partial sum (no term is negative), stay below
    2^24; a step whose sums reach it is done again in float64, so the numbers are float64's."""
    rng = np.random.default_rng(seed)
    out = np.empty((n_resamples, matrix.shape[1]))
    narrow = matrix.astype(np.float32) if matrix.data.max(initial=0) < _EXACT32 else None
    step = max(1, _CHUNK // max(n_queries, 1))
    buffer = np.empty(step * n_queries, np.uint64)
    for start in range(0, n_resamples, step):
        r = min(step, n_resamples - start)
        drawn = _uniform_indices(rng, n_queries, buffer[: r * n_queries]).reshape(r, n_queries)
        rows = (drawn + np.arange(0, r * n_queries, n_queries)[:, None]).ravel()
        weights = np.bincount(rows, minlength=r * n_queries).reshape(r, n_queries)
        sums = None if narrow is None else (narrow.T @ weights.T.astype(np.float32)).T
        if sums is None or sums.max(initial=0) >= _EXACT32:
            sums = (matrix.T @ weights.T.astype(np.float64)).T
        out[start : start + r] = sums
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
    frame, grades, names = long_judgments(judgments, schema, judges)
    if len(names) < 2:
        raise RankPolarsError(f"agreement needs two judges or more; the judgments have {len(names)} "
                              f"({', '.join(map(repr, names))})")
    values = np.asarray(grades, dtype=np.float64)
    k, raters = values.size, len(names)
    counted = patterns(frame, grades, names, as_schema(schema).judged("query"))
    chosen = list(combinations(names, 2))
    sizes = range(2, raters + 1)
    blocks = {(a, b, m): i for i, (a, b, m) in enumerate((a, b, m) for a, b in chosen for m in sizes)}
    matrix, n_queries = _query_counts(counted, raters, k)
    whole = np.asarray(matrix.sum(axis=0)).reshape(1, -1)
    resampled = (_resampled(matrix, n_queries, n_resamples, seed) if n_queries
                 else np.full((n_resamples, matrix.shape[1]), np.nan))

    def block(sums: np.ndarray, a: str, b: str, m: int) -> np.ndarray:
        start = blocks[a, b, m] * k * k
        return sums[:, start : start + k * k].reshape(sums.shape[0], k, k)

    def confusion(sums: np.ndarray, a: str, b: str) -> np.ndarray:
        return sum(block(sums, a, b, m) for m in sizes)

    out: list[dict[str, Any]] = []

    def emit(judges_label: str, statistic: str, compute: Any, n_items: int) -> None:
        value = float(compute(whole)[0]) if n_items else float("nan")
        low = high = float("nan")
        if np.isfinite(value):
            draws = compute(resampled)
            low, high = percentile_ci(draws[np.isfinite(draws)], ci)
        out.append({"judges": judges_label, "statistic": statistic, "value": value, "ci_low": low, "ci_high": high,
                    "items": n_items})

    for a, b in chosen:
        o = confusion(whole, a, b)[0]
        used = np.flatnonzero(o.sum(axis=0) + o.sum(axis=1) > 0)  # the grades this pair used
        n_items = int(o.sum())

        def used_confusion(s: np.ndarray, a: str = a, b: str = b, used: np.ndarray = used) -> np.ndarray:
            return confusion(s, a, b)[:, used][:, :, used]

        def coincidences(s: np.ndarray, a: str = a, b: str = b) -> np.ndarray:
            o = confusion(s, a, b)
            return o + o.transpose(0, 2, 1)

        for weight, name in (("none", "cohen_kappa"), ("linear", "cohen_kappa_linear"), ("quadratic", "cohen_kappa_quadratic")):
            emit(f"{a}|{b}", name, lambda s, w=weight, f=used_confusion: cohen(f(s), w), n_items)
        for level in ("nominal", "ordinal", "interval"):
            emit(f"{a}|{b}", f"krippendorff_alpha_{level}",
                 lambda s, lv=level, f=coincidences: krippendorff(f(s), values, lv), n_items)
        emit(f"{a}|{b}", "fleiss_kappa", lambda s, f=coincidences: _fleiss_of_pairs(f(s)), n_items)

    def all_coincidences(s: np.ndarray) -> np.ndarray:
        # an item judged m times: its m(m-1) ordered pairs of grades, each weighing 1 / (m - 1)
        total = np.zeros((s.shape[0], k, k))
        for a, b in chosen:
            for m in sizes:
                o = block(s, a, b, m)
                total += (o + o.transpose(0, 2, 1)) / (m - 1.0)
        return total

    def all_fleiss(s: np.ndarray) -> np.ndarray:
        # the items every judge judged: the pairs of grades of their C(J, 2) pairs of judges
        o = sum(block(s, a, b, raters) for a, b in chosen)
        n_items = o.sum(axis=(1, 2)) / (raters * (raters - 1) / 2.0)
        squares = raters * n_items + 2.0 * np.trace(o, axis1=1, axis2=2)
        totals = (o.sum(axis=2) + o.sum(axis=1)) / (raters - 1.0)
        return fleiss(n_items, squares, totals, raters)

    paired = int(counted.filter(pl.col("m") >= 2)["n"].sum())
    for level in ("nominal", "ordinal", "interval"):
        emit("all", f"krippendorff_alpha_{level}", lambda s, lv=level: krippendorff(all_coincidences(s), values, lv),
             paired)
    emit("all", "fleiss_kappa", all_fleiss, int(counted.filter(pl.col("m") == raters)["n"].sum()))
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
    frame, grades, names = long_judgments(judgments, schema, judges)
    values = pl.Series(grades, dtype=pl.Float64)
    table = patterns(frame, grades, names, as_schema(schema).judged("query"))
    counts = pair_counts(table, names).group_by("a", "b", "ca", "cb").agg(pl.col("n").sum().alias("items"))
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
    frame, grades, names = long_judgments(judgments, mapping, judges)
    counts = pair_counts(patterns(frame, grades, names, mapping.judged("query")), names)
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
