"""Every segment: two versions' per-query values paired by query, then split by segment value.

A *segment* is a column of the log that describes the query (``country``, ``query_type``,
``device``): one value per query, the same in every version's rows.  The per-query values
come from :func:`rank_polars.evaluate` grouped by version only (grouping by segment too would,
with judgments, give each segment every judged query zero-filled); each query's segment values
are then read from the log (:func:`segment_map`) and joined on.

The pairs are stacked in one long table (:func:`paired`: a row per pair of versions, metric and
query with the two values) and summarised per (metric, pair, segment, value) in one
``group_by`` (:func:`summary`): count, means and the standard deviation of the per-query
differences, from which the t statistics of every segment come at once (no loop per segment).
Every segment's rows carry the overall row too (segment and value ``"(all)"``).

:func:`compare_segments` is ``compare(..., segments=[...])``; :mod:`rank_polars.monitor.gate`
builds its one-sided tests on the same :func:`paired` and :func:`summary`.
"""

from __future__ import annotations

import itertools
from typing import Any, Literal, Mapping, Sequence

import numpy as np
import polars as pl

from rank_polars.errors import CoverageWarning, DataError, RankPolarsError, examples, warn
from rank_polars.inputs import Source, scan
from rank_polars.measures import MetricLike, parse_all
from rank_polars.engines.exact import adder, within_bound
from rank_polars.monitor.sums import exact_moments, moments, spread_terms, square_sums, square_terms
from rank_polars.presentation import did_you_mean
from rank_polars.schema import Schema, as_schema
from rank_polars.stats import tests as stats

#: The segment and value of the rows over every query.
ALL = "(all)"
#: Why a segment value has no test: fewer paired queries than ``min_queries``.
TOO_FEW = "fewer queries than min_queries"
_SPREAD_RTOL = 1e-12  # as stats.tests.degenerate: differences within this share of the values' scale are equal


def check_segments(segments: Any, min_queries: Any, by: str, query: str, empty: bool = False) -> list[str]:
    """The segment columns as a list (``empty``: none is allowed); refuse what cannot be one (the
    version or query column) and a ``min_queries`` below two."""
    if isinstance(segments, str):
        segments = [segments]
    if not isinstance(segments, (list, tuple)) or not (segments or empty) or not all(isinstance(s, str) and s for s in segments):
        raise RankPolarsError(f"segments must be a list of column names, e.g. ['country'], got {segments!r}")
    if len(set(segments)) < len(segments):
        raise RankPolarsError(f"segments: {examples([s for s in segments if segments.count(s) > 1])} given twice")
    for s in segments:
        if s in (by, query):
            raise RankPolarsError(f"segments: {s!r} is the {'version' if s == by else 'query'} column, not a segment")
    if isinstance(min_queries, bool) or not isinstance(min_queries, int) or min_queries < 2:
        raise RankPolarsError(f"min_queries must be an integer >= 2 (a t test needs two queries), got {min_queries!r}")
    return list(segments)


def segment_map(run: Source, segments: Sequence[str], query: str, position: str | None = None,
                queries: pl.Series | None = None) -> pl.DataFrame:
    """One row per query of ``run`` with its value of each segment column (as text; null stays null).

    A query with two values of a segment (``country`` that differs between versions, or between
    two rankings) is an error naming the segment and a few queries: the segment must describe the
    query, or its value per version would be paired with the other's.  With ``position`` (a
    column of the log) the values are read from each ranking's first row (``position == 1``: a
    tenth of a log of ten results, the rows every version has), and then from every row of the
    ``queries`` (the evaluated ones) that have no such row; without it, from every row.

    Examples
    --------
    >>> import polars as pl
    >>> log = pl.DataFrame({"query": ["q1", "q1", "q2"], "country": ["fr", "fr", "de"], "n": [1, 2, 1]})
    >>> segment_map(log, ["country"], "query")
    shape: (2, 2)
    ┌───────┬─────────┐
    │ query ┆ country │
    │ ---   ┆ ---     │
    │ str   ┆ str     │
    ╞═══════╪═════════╡
    │ q1    ┆ fr      │
    │ q2    ┆ de      │
    └───────┴─────────┘
    """
    lf = scan(run)
    names = lf.collect_schema().names()
    for column in (query, *segments):
        if column not in names:
            raise RankPolarsError(f"segments: no column {column!r} in the log{did_you_mean(column, names) or ''}; "
                                  f"columns are {examples(names, 12)}")
    first = position is not None and position in names
    table = (lf.filter(pl.col(position) == 1) if first else lf).select(query, *segments).unique().collect()
    if first and queries is not None:
        rest = queries.filter(~queries.is_in(table[query].implode())).unique()
        if rest.len():  # rankings without a position 1 (and judged queries no version showed)
            extra = lf.filter(pl.col(query).is_in(rest.cast(table.schema[query]).implode()))
            table = pl.concat([table, extra.select(query, *segments).unique().collect()])
    table = table.sort(query, nulls_last=True)
    if table[query].n_unique() < table.height:
        counts = table.group_by(query).agg(pl.col(s).n_unique() for s in segments)
        for s in segments:
            bad = counts.filter(pl.col(s) > 1)[query].sort().to_list()
            if bad:
                raise DataError(f"segment {s!r}: {len(bad)} queries have more than one value, e.g. {examples(bad)}; "
                                "a segment describes the query (one value in every row and version of it): "
                                "a column that varies within a query cannot split the paired differences")
    return table.with_columns(pl.col(s).cast(pl.String) for s in segments)


def version_pairs(versions: Sequence[Any], baseline: Any, by: str) -> list[tuple[Any, Any]]:
    """``(baseline, version)`` for every other version, or every pair in sorted order without one."""
    if baseline is None:
        return list(itertools.combinations(versions, 2))
    if baseline not in versions:
        raise RankPolarsError(f"baseline {baseline!r} is not a version in column {by!r}; versions are "
                              f"{examples(versions, 10)}")
    return [(baseline, v) for v in versions if v != baseline]


def paired(per: pl.DataFrame, by: str, query: str, labels: Sequence[str], pairs: Sequence[tuple[Any, Any]],
           missing: str, better: Mapping[str, bool]) -> pl.DataFrame:
    """The long table ``baseline, version, metric, query, x, y`` (x the baseline's value, y the version's).

    A query one version lacks counts 0 with ``missing="zero"`` for a higher-is-better metric and is
    left out otherwise (a lower-is-better metric's 0 would be its best value: as evaluate does,
    ``Measure.missing_scores_best``), as is a value the metric leaves undefined (null); a
    :class:`CoverageWarning` says how many were filled or left out.
    """
    dtype = per.schema[by]
    frames, filled, dropped = [], 0, 0
    for base, version in pairs:
        x = per.filter(pl.col(by) == base).select(query, *labels).with_columns(__in_x=pl.lit(True))
        y = per.filter(pl.col(by) == version).select(query, *labels).with_columns(__in_y=pl.lit(True))
        # in any order: the sums over these rows are order-free (summary)
        both = x.join(y, on=query, how="full", coalesce=True, suffix="__y")
        absent = both.filter(pl.col("__in_x").is_null() | pl.col("__in_y").is_null()).height
        for label in labels:
            fill = pl.lit(0.0) if missing == "zero" and better[label] else pl.lit(None, dtype=pl.Float64)
            rows = both.select(
                pl.lit(base, dtype=dtype).alias("baseline"), pl.lit(version, dtype=dtype).alias("version"),
                pl.lit(label).alias("metric"), query,
                pl.when(pl.col("__in_x")).then(pl.col(label).cast(pl.Float64)).otherwise(fill).alias("x"),
                pl.when(pl.col("__in_y")).then(pl.col(f"{label}__y").cast(pl.Float64)).otherwise(fill).alias("y"),
            )
            kept = rows.drop_nulls(["x", "y"])
            filled += absent if missing == "zero" and better[label] else 0
            dropped += rows.height - kept.height
            frames.append(kept)
    if filled or dropped:
        warn(f"pairing the versions by query: {filled} (query, metric) pairs scored 0 for the version lacking the query, {dropped} left "
             "out (a query one version lacks on a lower-is-better metric, with missing='skip', or a value the "
             "metric leaves undefined)", CoverageWarning)
    schema = {"baseline": dtype, "version": dtype, "metric": pl.String, query: per.schema[query],
              "x": pl.Float64, "y": pl.Float64}
    return pl.concat(frames) if frames else pl.DataFrame(schema=schema)


def with_segments(long: pl.DataFrame, segments_of: pl.DataFrame, segments: Sequence[str], query: str) -> pl.LazyFrame:
    """``long`` with each query's value of every segment column (null for a query the log does not
    describe: a judged query no version showed)."""
    if not segments:
        return long.lazy()
    # categorical codes here, over one row per query, rather than the text hashed in each group-by
    coded = segments_of.lazy().select(query, *(pl.col(s).cast(pl.String).cast(pl.Categorical) for s in segments))
    return long.lazy().join(coded, on=query, how="left")


def _categorical(column: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """A segment column as categorical codes (:func:`with_segments` gives them), its values as text."""
    return column if isinstance(dtype, pl.Categorical) else column.cast(pl.String).cast(pl.Categorical)


def summary(rows: pl.LazyFrame, segments: Sequence[str], d: pl.Expr, e: pl.Expr | None = None,
            keys: Sequence[str] = ("metric", "baseline", "version"), keep: bool = False) -> pl.DataFrame:
    """Per group of ``keys`` over every query (segment and value ``"(all)"``) and per value of each
    segment column of ``rows``: ``n``, ``mean_x``, ``mean_y``, the mean and standard deviation of the
    per-query ``d`` (and of a second per-query value ``e``; ``keep``: its sorted list too, for a rank
    test), ``flat_d`` / ``flat_e`` (every value the same within rounding, as ``stats.degenerate``)
    and ``scale`` (the largest absolute value compared).

    One ``group_by`` per segment column over the paired rows (never a copy of them per segment).
    The sums are the engines' fixed point (:mod:`rank_polars.monitor.sums`: the same bits whatever
    order the joins deliver the rows in, no sort), its bound checked once per group of ``keys`` (a
    segment value's rows are a part of one), else ordered sums.
    """
    keys = list(keys)
    named = ["d", *([] if e is None else ["e"])]
    # collected once: the join of the segments, then read by every pass below
    body = rows.with_columns(d.alias("d"), *([] if e is None else [e.alias("e")])).collect()
    terms = {"x": pl.col("x"), "y": pl.col("y")}
    for c in named:
        terms |= spread_terms(c, pl.col(c))
    exact = all(within_bound(body, terms, keys).values())
    add = adder(exact)
    aggs = [pl.len().alias("n"), (add(pl.col("x")) / pl.len()).alias("mean_x"), (add(pl.col("y")) / pl.len()).alias("mean_y"),
            pl.max_horizontal(pl.col("x", "y", "d").abs().max()).alias("scale")]
    for c in named:
        if exact:  # whole-number sums, the moments from them after the group-bys
            aggs += square_sums(c)
        else:
            mean, sd = moments(pl.col(c), add)
            aggs += [mean.alias(f"mean_{c}"), sd.alias(f"sd_{c}")]
        aggs.append((pl.col(c).max() - pl.col(c).min()).alias(f"__range_{c}"))
    aggs += [pl.col("e").sort().alias("values")] if keep and e is not None else []
    # computed once for the eleven group-bys: the terms' whole numbers, and the text keys as
    # categorical codes (grouping by codes costs a third of hashing the text)
    texts = [k for k in keys if body.schema[k] == pl.String]
    body = body.with_columns(*(t for c in named if exact for t in square_terms(pl.col(c), c)),
                             *(pl.col(k).cast(pl.Categorical) for k in texts))
    lazy = body.lazy()
    parts = [lazy.group_by(keys).agg(aggs).with_columns(segment=pl.lit(ALL), value=pl.lit(ALL))]
    parts += [lazy.group_by([*keys, _categorical(pl.col(s), body.schema[s]).alias("value")]).agg(aggs)
              .with_columns(pl.col("value").cast(pl.String), segment=pl.lit(s)) for s in segments]
    table = pl.concat(pl.collect_all(parts), how="diagonal").with_columns(pl.col(k).cast(pl.String) for k in texts)
    for c in named if exact else ():
        table = exact_moments(table, c)
    flat = [(pl.col(f"__range_{c}") <= _SPREAD_RTOL * pl.col("scale")).alias(f"flat_{c}") for c in named]
    return table.with_columns(flat).select(*keys, "segment", "value", "n", "mean_x", "mean_y",
                                           *[f"{k}_{c}" for c in named for k in ("mean", "sd", "flat")], "scale",
                                           *(["values"] if keep and e is not None else []))


def t_statistics(table: pl.DataFrame, min_queries: int, of: str = "d") -> tuple[np.ndarray, np.ndarray, np.ndarray, list[Any]]:
    """``(t, df, se, note)`` of the mean of ``of`` (``"d"`` or ``"e"``) in each row of a :func:`summary`:
    NaN where there is no test, with why (fewer than ``min_queries`` queries, or the same value on
    every query: ``stats.degenerate``'s notes)."""
    n = table["n"].to_numpy().astype(np.float64)
    mean = table[f"mean_{of}"].to_numpy().astype(np.float64)
    sd = table[f"sd_{of}"].fill_null(np.nan).to_numpy().astype(np.float64)
    scale = table["scale"].to_numpy().astype(np.float64)
    flat = table[f"flat_{of}"].fill_null(True).to_numpy() | ~(sd > 0)  # n < 2: no spread either
    few = n < min_queries
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.where(flat | few, np.nan, sd / np.sqrt(n))
        t = mean / se
    note = [TOO_FEW if f else (stats.NO_DIFFERENCE if abs(m) <= _SPREAD_RTOL * max(s, 0.0) else
                               stats.SAME_DIFFERENCE) if fl else None
            for f, fl, m, s in zip(few, flat, mean, scale)]
    return t, n - 1, se, note


def compare_segments(
    run: Source,
    metrics: MetricLike | Sequence[MetricLike],
    segments: Sequence[str],
    *,
    qrels: Source | None = None,
    by: str = "model",
    baseline: Any = None,
    test: str | None = None,
    correction: Literal["bonferroni", "holm", "bh"] | None = "holm",
    alpha: float = 0.05,
    confidence: float = 0.95,
    missing: str = "zero",
    engine: str = "polars",
    min_queries: int = 30,
    schema: Schema | None = None,
    **evaluate_kwargs: Any,
) -> pl.DataFrame:
    """``compare(..., segments=[...])``: the difference of each pair of versions per segment value.

    One row per (metric, pair, segment, value), the overall rows (segment ``"(all)"``) included,
    each a two-sided paired t test with its ``confidence`` interval; ``p_adjusted`` corrects over
    every row tested (all metrics, pairs, segments and values); a value with fewer than
    ``min_queries`` paired queries is shown, not tested (``note``).  Rows come per metric in the
    order given, then by ``loss`` (how much the version loses against the baseline, in the
    metric's units and direction: positive is worse), largest first: where the version loses.

    Examples
    --------
    >>> import rank_polars as rp
    >>> log = rp.datasets.monitoring_log(days=1, queries_per_day=400, seed=1)
    >>> out = compare_segments(log, ["ndcg@10"], ["country"], baseline="v1", min_queries=20)
    >>> out.filter(pl.col("version") == "v2").select("segment", "value", "n_queries", "diff", "significant")
    shape: (5, 5)
    ┌─────────┬───────┬───────────┬──────────┬─────────────┐
    │ segment ┆ value ┆ n_queries ┆ diff     ┆ significant │
    │ ---     ┆ ---   ┆ ---       ┆ ---      ┆ ---         │
    │ str     ┆ str   ┆ i64       ┆ f64      ┆ bool        │
    ╞═════════╪═══════╪═══════════╪══════════╪═════════════╡
    │ country ┆ us    ┆ 170       ┆ 0.006438 ┆ false       │
    │ country ┆ fr    ┆ 103       ┆ 0.007176 ┆ false       │
    │ country ┆ de    ┆ 80        ┆ 0.014661 ┆ false       │
    │ (all)   ┆ (all) ┆ 400       ┆ 0.015389 ┆ false       │
    │ country ┆ jp    ┆ 47        ┆ 0.067001 ┆ false       │
    └─────────┴───────┴───────────┴──────────┴─────────────┘
    """
    from rank_polars.evaluate import evaluate

    query = as_schema(schema, query=evaluate_kwargs.get("query")).column("query")
    segments = check_segments(segments, min_queries, by, query)
    if test not in (None, "paired_t"):
        raise RankPolarsError(f"compare: segments= tests every segment value with the paired t test (one pass over "
                              f"every value); test={test!r} is not available with segments")
    given = [metrics] if isinstance(metrics, str) or not isinstance(metrics, Sequence) else list(metrics)
    outputs = parse_all(given)
    catalog = [label for label, spec in outputs if spec.AGGREGATE == "catalog"]
    if catalog:
        raise RankPolarsError(f"compare: {catalog[0]!r} is one value per version over all its lists: it has no "
                              "per-query value to split by segment")
    if schema is not None:
        evaluate_kwargs["schema"] = schema
    per = evaluate(run, given, qrels=qrels, by=by, per_query=True, missing=missing,  # type: ignore[arg-type]
                   engine=engine, **evaluate_kwargs)  # type: ignore[arg-type]
    better = {label: bool(getattr(spec, "HIGHER_IS_BETTER", True)) for label, spec in outputs}
    position = as_schema(schema, position=evaluate_kwargs.get("position")).column("position")
    return segment_values(per, segment_map(run, segments, query, position, per[query]), segments, by=by, query=query,
                          baseline=baseline,
                          better=better, correction=correction, alpha=alpha, confidence=confidence, missing=missing,
                          min_queries=min_queries)


def segment_values(per: pl.DataFrame, segments_of: pl.DataFrame, segments: Sequence[str], *, by: str, query: str,
                   baseline: Any, better: Mapping[str, bool], correction: str | None, alpha: float,
                   confidence: float, missing: str, min_queries: int) -> pl.DataFrame:
    """:func:`compare_segments` on per-query values already computed (``per``: ``by``, ``query``, a
    column per metric, as ``evaluate(per_query=True)``) and the segments of each query."""
    from scipy import stats as sp

    labels = list(better)
    versions = per[by].drop_nulls().unique().sort().to_list()
    if len(versions) < 2:
        raise RankPolarsError(f"compare: needs at least 2 versions in column {by!r}, found {len(versions)}")
    long = paired(per, by, query, labels, version_pairs(versions, baseline, by), missing, better)
    table = summary(with_segments(long, segments_of, segments, query), segments, pl.col("y") - pl.col("x"))
    t, df, se, note = t_statistics(table, min_queries)
    with np.errstate(invalid="ignore"):
        p = 2 * sp.t.sf(np.abs(t), df)
        half = sp.t.ppf((1 + confidence) / 2, df) * se
    mean = table["mean_d"].to_numpy()
    p_adj = stats.adjust(p, correction)  # type: ignore[arg-type]
    sign = pl.col("metric").replace_strict({k: 1.0 if v else -1.0 for k, v in better.items()}, return_dtype=pl.Float64)
    out = table.with_columns(
        pl.Series("ci_low", mean - half), pl.Series("ci_high", mean + half), pl.Series("p_value", p),
        pl.Series("p_adjusted", p_adj), pl.Series("note", note, dtype=pl.String),
    ).with_columns(pl.col(pl.Float64).fill_nan(None))
    order = {label: i for i, label in enumerate(labels)}
    return (out.with_columns(
                pl.col("mean_d").alias("diff"),
                pl.when(pl.col("mean_x") != 0).then(pl.col("mean_d") / pl.col("mean_x")).alias("rel_diff"),
                (-sign * pl.col("mean_d")).alias("loss"),
                (pl.col("p_adjusted") < alpha).fill_null(False).alias("significant"),
                sign.gt(0).alias("higher_is_better"))
            .sort(pl.col("metric").replace_strict(order, return_dtype=pl.Int64), pl.col("loss"), "segment", "value",
                  descending=[False, True, False, False], nulls_last=True)
            .select("metric", "segment", "value", "baseline", "version", pl.col("n").cast(pl.Int64).alias("n_queries"),
                    pl.col("mean_x").alias("mean_baseline"), pl.col("mean_y").alias("mean_version"), "diff",
                    "rel_diff", "loss", "ci_low", "ci_high", "p_value", "p_adjusted", "significant",
                    "higher_is_better", "note"))


def where_it_loses(table: pl.DataFrame, n: int = 5) -> str:
    """Lines saying, per metric and pair, the segment values where the version loses significantly
    (at most ``n``, worst first), or that it loses significantly nowhere.

    Examples
    --------
    >>> import rank_polars as rp
    >>> log = rp.datasets.monitoring_log(days=2, queries_per_day=300, regression=("v2", "country", "fr", 1))
    >>> print(where_it_loses(compare_segments(log, ["ndcg@10"], ["country"], baseline="v1")), end="")
    ndcg@10, v2 against v1: loses in country=fr (-0.1400 [-0.1700, -0.1099], p 2.21e-15)
    ndcg@10, v3 against v1: no segment value loses significantly
    """
    lines = []
    for (metric, base, version), part in table.group_by(["metric", "baseline", "version"], maintain_order=True):
        worse = part.filter(pl.col("significant") & (pl.col("loss") > 0) & (pl.col("segment") != ALL)).head(n)
        where = "; ".join(f"{r['segment']}={r['value']} ({r['diff']:+.4f} [{r['ci_low']:+.4f}, {r['ci_high']:+.4f}], "
                          f"p {r['p_adjusted']:.3g})" for r in worse.iter_rows(named=True))
        lines.append(f"{metric}, {version} against {base}: " + (f"loses in {where}" if where else
                                                                  "no segment value loses significantly"))
    return "\n".join(lines) + "\n" if lines else ""


__all__ = ["ALL", "TOO_FEW", "check_segments", "compare_segments", "paired", "segment_map",
           "segment_values", "summary", "t_statistics", "version_pairs", "where_it_loses", "with_segments"]
