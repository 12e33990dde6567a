"""``gate``: may the candidate ship?  A one-sided test per metric and segment against a margin.

For each metric (and each segment value, with ``segments=``) the candidate's per-query values are
paired with the baseline's (:mod:`rank_polars.monitor.segments`) and turned into the candidate's
*improvement* in the metric's direction, plus the margin it may lose::

    e_i = s (y_i - x_i) + m + r x_i        s = +1 (higher is better) or -1 (lower is better)

with ``x`` the baseline's value, ``y`` the candidate's, ``m`` an absolute margin (``margin=0.005``)
and ``r`` a relative one (``margin="1%"``: the candidate may lose 1% of the baseline's mean,
``mean(y) >= 0.99 mean(x)``, which is exactly ``mean(e) >= 0`` with ``e = y - 0.99 x``; for a
lower-is-better metric ``mean(y) <= 1.01 mean(x)``).  The null hypothesis is "the candidate
loses at most the margin" (``mean(e) >= 0``); the candidate **regresses** on a row when the
one-sided test rejects it (``p_regression``, corrected over every row tested: Holm by default,
so that the gate fails on a release that loses nothing with probability at most ``alpha``,
however many metrics and segments it looks at).  ``p_non_inferior`` is the opposite one-sided
test (``mean(e) <= 0`` rejected: the candidate is shown to lose less than the margin);
``require="non-inferiority"`` makes that the condition to pass (the burden on the candidate:
a gate on too few queries then fails).

The test is the paired t test (``scipy.stats.ttest_1samp(e, 0, alternative=...)``) or the
Wilcoxon signed-rank test of ``e`` (``test="wilcoxon"``, one SciPy call per row).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, Sequence

import numpy as np
import polars as pl

from rank_polars.errors import RankPolarsError
from rank_polars.inputs import Source
from rank_polars.measures import MetricLike, parse_all
from rank_polars.monitor.segments import ALL, TOO_FEW, check_segments, paired, segment_map, summary, t_statistics, with_segments
from rank_polars.schema import Schema, as_schema
from rank_polars.stats import tests as stats

Margin = float | str | Mapping[str, float | str]
STATUS_ORDER = {"regression": 0, "inconclusive": 1, "too few queries": 2, "non-inferior": 3}


@dataclass(frozen=True)
class GateResult:
    """What :func:`gate` decided: ``table`` (one row per metric and segment value), ``verdict``
    (``"pass"`` or ``"fail"``) and how it was reached; :meth:`markdown` for a CI page."""

    table: pl.DataFrame
    verdict: Literal["pass", "fail"]
    baseline: Any
    candidate: Any
    alpha: float
    correction: str | None
    require: str
    margins: dict[str, str] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """Whether the candidate passes (``verdict == "pass"``)."""
        return self.verdict == "pass"

    def to_dict(self) -> dict[str, Any]:
        """The verdict, the settings and every row, as JSON-ready values."""
        rows = [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
                for r in self.table.iter_rows(named=True)]
        return {"verdict": self.verdict, "passed": self.passed, "baseline": self.baseline,
                "candidate": self.candidate, "alpha": self.alpha, "correction": self.correction,
                "require": self.require, "margins": self.margins, "rows": rows}

    def markdown(self, limit: int = 20) -> str:
        """A Markdown summary: the verdict, then the failing rows and the overall rows (at most ``limit``)."""
        t = self.table
        bad = t.filter(pl.col("status") == "regression") if self.require == "no-regression" else \
            t.filter(pl.col("status") != "non-inferior")
        shown = pl.concat([bad, t.filter(pl.col("segment") == ALL)])
        shown = shown.unique(["metric", "segment", "value"], keep="first", maintain_order=True).head(limit)
        tested = t.filter(pl.col("p_regression").is_not_null()).height
        head = "PASS" if self.passed else "FAIL"
        margins = ", ".join(f"{k} {v}" for k, v in self.margins.items())
        level = f"{1 - 2 * self.alpha:.0%}"
        lines = [f"## Gate: {self.candidate} against {self.baseline}: **{head}**", "",
                 f"{len(bad)} of {t.height} rows {'regress' if self.require == 'no-regression' else 'fail'}; "
                 f"margin: {margins}; alpha {self.alpha} over {tested} tests"
                 f"{' (' + self.correction + ')' if self.correction else ''}; "
                 f"{'fails on a significant loss beyond the margin' if self.require == 'no-regression' else 'passes only where non-inferiority is shown'}.",
                 "", f"| metric | segment | value | queries | {self.baseline} | {self.candidate} | diff | margin | "
                 f"{level} interval | p (adjusted) | status |", "|---|---|---|--:|--:|--:|--:|--:|---|--:|---|"]
        for r in shown.iter_rows(named=True):
            interval = "—" if r["ci_low"] is None else f"[{r['ci_low']:+.4f}, {r['ci_high']:+.4f}]"
            p = "—" if r["p_adjusted"] is None else f"{r['p_adjusted']:.3g}"
            lines.append(f"| {r['metric']} | {r['segment']} | {r['value']} | {r['n_queries']} | "
                         f"{r['mean_baseline']:.4f} | {r['mean_candidate']:.4f} | {r['diff']:+.4f} | "
                         f"{r['margin']:.4f} | {interval} | {p} | {r['status']} |")
        hidden = len(bad) - shown.join(bad, on=["metric", "segment", "value"], how="semi", nulls_equal=True).height
        verb = "regressing" if self.require == "no-regression" else "failing"
        if t.height > shown.height:
            lines += ["", f"{t.height - shown.height} more rows, "
                      f"{f'{hidden} of them {verb} (see the JSON or the table)' if hidden else f'none {verb}'}."]
        return "\n".join(lines) + "\n"


def parse_margin(margin: Any, labels: Sequence[str]) -> dict[str, tuple[float, float]]:
    """``{label: (absolute, relative)}`` of ``margin``: a number in the metric's units, a percentage of
    the baseline's mean (``"1%"``), or a ``{metric: margin}`` naming every metric.

    Examples
    --------
    >>> parse_margin("1%", ["ndcg@10"]), parse_margin({"ndcg@10": 0.01, "mrr": "2.5%"}, ["ndcg@10", "mrr"])
    ({'ndcg@10': (0.0, 0.01)}, {'ndcg@10': (0.01, 0.0), 'mrr': (0.0, 0.025)})
    """
    def one(value: Any, label: str) -> tuple[float, float]:
        if isinstance(value, str) and value.strip().endswith("%"):
            try:
                share = float(value.strip()[:-1]) / 100
            except ValueError:
                share = math.nan
            if math.isfinite(share) and 0 <= share < 1:
                return 0.0, share
        elif not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value) and value >= 0:
            return float(value), 0.0
        raise RankPolarsError(f"margin for {label}: a number >= 0 in the metric's units (0.005) or a percentage of "
                              f"the baseline's mean ('1%'), got {value!r}")

    if isinstance(margin, Mapping):
        unknown = [k for k in margin if k not in labels]
        absent = [k for k in labels if k not in margin]
        if unknown or absent:
            raise RankPolarsError(f"margin: a dict names each metric once; {'unknown ' + repr(unknown[0]) if unknown else 'no margin for ' + repr(absent[0])} "
                                  f"(the metrics are {', '.join(labels)})")
        return {label: one(margin[label], label) for label in labels}
    return {label: one(margin, label) for label in labels}


def gate(
    log: Source,
    metrics: MetricLike | Sequence[MetricLike],
    *,
    baseline: Any,
    candidate: Any,
    margin: Margin,
    qrels: Source | None = None,
    by: str = "model",
    segments: Sequence[str] | None = None,
    alpha: float = 0.05,
    test: Literal["paired_t", "wilcoxon"] = "paired_t",
    correction: Literal["bonferroni", "holm", "bh"] | None = "holm",
    require: Literal["no-regression", "non-inferiority"] = "no-regression",
    min_queries: int = 30,
    missing: Literal["zero", "skip"] = "zero",
    engine: Literal["polars", "duckdb", "spark"] = "polars",
    schema: Schema | None = None,
    **evaluate_kwargs: Any,
) -> GateResult:
    """Decide whether ``candidate`` may replace ``baseline``: a one-sided test per metric and segment value.

    Parameters
    ----------
    log, metrics, qrels, missing, engine, schema
        As for :func:`rank_polars.evaluate`, which computes the per-query values (``by`` the versions).
    baseline, candidate
        The two values of ``by`` compared (the queries are paired by id).
    margin
        How much the candidate may lose before it counts as a regression: a number in the metric's
        units (``0.005``), a percentage of the baseline's mean (``"1%"``), or a dict per metric.
        The loss is read in each metric's direction (``Measure.HIGHER_IS_BETTER``: a rise of
        abandonment, ILS, ARP or fall-out is a loss).
    segments
        Log columns describing the query (``["country", "query_type"]``): every value is tested
        too (``min_queries`` paired queries at least; fewer: shown, not tested).
    alpha, correction
        The level, and the correction over every row tested (metrics x segment values).
    test
        ``"paired_t"`` (default) or ``"wilcoxon"`` on the per-query improvements.
    require
        ``"no-regression"`` (default): fail when some row regresses significantly beyond the
        margin.  ``"non-inferiority"``: pass only when every tested row is shown to lose less
        than the margin.

    Returns
    -------
    GateResult
        ``.table``: ``metric, segment, value, baseline, candidate, n_queries, mean_baseline,
        mean_candidate, diff`` (candidate - baseline), ``margin`` (in the metric's units),
        ``ci_low, ci_high`` (the two-sided ``1 - 2 alpha`` t interval on ``diff``, whose one
        side is the one-sided test's bound for an absolute margin), ``p_regression, p_adjusted,
        p_non_inferior, status`` (``regression``, ``inconclusive``, ``non-inferior``,
        ``too few queries``), ``higher_is_better, note``; ``.verdict``; ``.markdown()``.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> log = rp.datasets.monitoring_log(days=30, queries_per_day=200)
    >>> late = log.filter(pl.col("date") >= pl.date(2026, 11, 21))
    >>> result = rp.gate(late, ["ndcg@10"], baseline="v1", candidate="v3", margin=0.01, segments=["country"])
    >>> result.verdict
    'fail'
    >>> result.table.select("segment", "value", "diff", "status").head(3)
    shape: (3, 4)
    ┌─────────┬───────┬───────────┬──────────────┐
    │ segment ┆ value ┆ diff      ┆ status       │
    │ ---     ┆ ---   ┆ ---       ┆ ---          │
    │ str     ┆ str   ┆ f64       ┆ str          │
    ╞═════════╪═══════╪═══════════╪══════════════╡
    │ country ┆ fr    ┆ -0.143365 ┆ regression   │
    │ (all)   ┆ (all) ┆ -0.022232 ┆ regression   │
    │ country ┆ jp    ┆ 0.006143  ┆ inconclusive │
    └─────────┴───────┴───────────┴──────────────┘
    """
    from rank_polars.evaluate import evaluate, refuse_shaping

    refuse_shaping("gate", evaluate_kwargs)
    query = as_schema(schema, query=evaluate_kwargs.get("query")).column("query")
    segs = check_segments([] if segments is None else segments, min_queries, by, query, empty=segments is None)
    given = [metrics] if isinstance(metrics, str) or not isinstance(metrics, Sequence) else list(metrics)
    outputs = parse_all(given)
    if schema is not None:
        evaluate_kwargs["schema"] = schema
    per = evaluate(log, given, qrels=qrels, by=by, per_query=True, missing=missing, engine=engine, **evaluate_kwargs)
    position = as_schema(schema, position=evaluate_kwargs.get("position")).column("position")
    segments_of = segment_map(log, segs, query, position, per[query]) if segs else per.select(query).unique()
    better = {label: bool(getattr(spec, "HIGHER_IS_BETTER", True)) for label, spec in outputs}
    return gate_values(per, segments_of, segs, by=by, query=query, baseline=baseline, candidate=candidate,
                       margin=margin, better=better, alpha=alpha, test=test, correction=correction, require=require,
                       min_queries=min_queries, missing=missing)


def gate_values(per: pl.DataFrame, segments_of: pl.DataFrame, segments: Sequence[str], *, by: str, query: str,
                baseline: Any, candidate: Any, margin: Margin, better: Mapping[str, bool], alpha: float = 0.05,
                test: str = "paired_t", correction: str | None = "holm", require: str = "no-regression",
                min_queries: int = 30, missing: str = "zero") -> GateResult:
    """:func:`gate` on per-query values already computed (``per``: ``by``, ``query`` and a column per
    metric of ``better``, ``{metric: higher is better}``) and each query's segments (``segments_of``)."""
    _check(alpha, test, correction, require)
    labels = list(better)
    versions = per[by].unique().to_list()
    for role, version in (("baseline", baseline), ("candidate", candidate)):
        if version not in versions:
            raise RankPolarsError(f"gate: {role} {version!r} is not a version in column {by!r}; versions are "
                                  f"{', '.join(map(repr, sorted(versions, key=str)[:10]))}")
    if baseline == candidate:
        raise RankPolarsError(f"gate: baseline and candidate are both {baseline!r}")
    margins = parse_margin(margin, labels)
    long = paired(per, by, query, labels, [(baseline, candidate)], missing, better)
    rows = with_segments(long, segments_of, segments, query)
    table = decide(rows, segments, better, margins, alpha=alpha, test=test, correction=correction,
                   min_queries=min_queries)
    tested = table.filter(pl.col("p_regression").is_not_null())
    if require == "no-regression":
        verdict = "fail" if (table["status"] == "regression").any() else "pass"
    else:
        verdict = "pass" if tested.height and (tested["status"] == "non-inferior").all() else "fail"
    shown = {label: f"{r * 100:g}%" if r else f"{a:g}" for label, (a, r) in margins.items()}
    return GateResult(table.rename({"version": "candidate", "mean_version": "mean_candidate"}), verdict,  # type: ignore[arg-type]
                      baseline, candidate, alpha, correction, require, shown)


def decide(rows: pl.LazyFrame, segments: Sequence[str], better: Mapping[str, bool],
           margins: Mapping[str, tuple[float, float]], *, alpha: float, test: str = "paired_t",
           correction: str | None = "holm", min_queries: int = 30, family: Sequence[str] = ()) -> pl.DataFrame:
    """The gate's table from the paired rows (``metric, baseline, version, x, y``, the ``segments``
    columns and any ``family`` columns): one row over every query and one per segment value, per
    metric, the tests corrected within each ``family`` (all rows when empty; the statistical tests
    simulate many logs at once as families)."""
    from scipy import stats as sp

    def per_metric(values: Mapping[str, float]) -> pl.Expr:
        return pl.col("metric").replace_strict(dict(values), return_dtype=pl.Float64)

    sign = per_metric({k: 1.0 if v else -1.0 for k, v in better.items()})
    absolute, relative = per_metric({k: a for k, (a, _) in margins.items()}), per_metric({k: r for k, (_, r) in margins.items()})
    e = sign * (pl.col("y") - pl.col("x")) + absolute + relative * pl.col("x")
    keys = ["metric", "baseline", "version", *family]
    if test == "wilcoxon" or any(r for _, r in margins.values()):
        table = summary(rows, segments, pl.col("y") - pl.col("x"), e=e, keys=keys, keep=test == "wilcoxon")
    else:  # e = +-d + a constant per metric: its mean and spread are d's, moved (no second set of sums)
        table = summary(rows, segments, pl.col("y") - pl.col("x"), keys=keys)
        table = table.with_columns((sign * pl.col("mean_d") + absolute).alias("mean_e"), pl.col("sd_d").alias("sd_e"),
                                   pl.col("flat_d").alias("flat_e"))
    t, df, se, note = t_statistics(table, min_queries, of="e")
    mean_e = table["mean_e"].to_numpy()
    with np.errstate(invalid="ignore"):
        if test == "wilcoxon":
            p_reg, p_ni = _wilcoxon(table, min_queries)
        else:
            p_reg, p_ni = sp.t.cdf(t, df), sp.t.sf(t, df)
        # the same improvement on every query: no spread to test against, the sign decides
        flat = np.array([n is not None and n != TOO_FEW for n in note])
        p_reg = np.where(flat, (mean_e >= 0).astype(float), p_reg)
        p_ni = np.where(flat, (mean_e <= 0).astype(float), p_ni)
        _, _, se_d, _ = t_statistics(table, min_queries, of="d")
        half = sp.t.ppf(1 - alpha, df) * se_d
    out = table.with_columns(pl.Series("p_regression", p_reg), pl.Series("p_non_inferior", p_ni),
                             pl.Series("half", half), pl.Series("note", note, dtype=pl.String),
                             pl.int_range(pl.len()).alias("__row"))
    out = out.with_columns(pl.col(pl.Float64).fill_nan(None))
    adjusted = []
    for _, part in (out.group_by(list(family), maintain_order=True) if family else [((), out)]):
        q_reg = stats.adjust(part["p_regression"].fill_null(np.nan).to_numpy(), correction)  # type: ignore[arg-type]
        q_ni = stats.adjust(part["p_non_inferior"].fill_null(np.nan).to_numpy(), correction)  # type: ignore[arg-type]
        adjusted.append(pl.DataFrame({"__row": part["__row"], "p_adjusted": q_reg, "__ni": q_ni}))
    out = out.join(pl.concat(adjusted).with_columns(pl.col(pl.Float64).fill_nan(None)), on="__row")
    status = (pl.when(pl.col("p_adjusted") < alpha).then(pl.lit("regression"))
              .when(pl.col("__ni") < alpha).then(pl.lit("non-inferior"))
              .when(pl.col("note") == TOO_FEW).then(pl.lit("too few queries"))
              .otherwise(pl.lit("inconclusive")))
    order = {label: i for i, label in enumerate(better)}
    return (out.with_columns(status.alias("status"), (absolute + relative * pl.col("mean_x")).alias("margin"),
                             (-sign * pl.col("mean_d")).alias("loss"), sign.gt(0).alias("higher_is_better"))
            .sort([*family, pl.col("metric").replace_strict(order, return_dtype=pl.Int64),
                   pl.col("status").replace_strict(STATUS_ORDER, return_dtype=pl.Int64), "loss"],
                  descending=[*(False for _ in family), False, False, True], nulls_last=True)
            .select(*family, "metric", "segment", "value", "baseline", "version", pl.col("n").cast(pl.Int64).alias("n_queries"),
                    pl.col("mean_x").alias("mean_baseline"), pl.col("mean_y").alias("mean_version"),
                    pl.col("mean_d").alias("diff"), "margin", (pl.col("mean_d") - pl.col("half")).alias("ci_low"),
                    (pl.col("mean_d") + pl.col("half")).alias("ci_high"), "p_regression", "p_adjusted",
                    "p_non_inferior", "status", "higher_is_better", "note"))


def _wilcoxon(table: pl.DataFrame, min_queries: int) -> tuple[np.ndarray, np.ndarray]:
    """One-sided Wilcoxon signed-rank p-values of each row's improvements (``scipy.stats.wilcoxon``)."""
    from scipy import stats as sp

    p_reg, p_ni = np.full(table.height, np.nan), np.full(table.height, np.nan)
    for i, values in enumerate(table["values"].to_list()):
        e = np.asarray(values, dtype=np.float64)
        if e.size >= min_queries and np.any(e != 0):
            p_reg[i] = sp.wilcoxon(e, alternative="less").pvalue
            p_ni[i] = sp.wilcoxon(e, alternative="greater").pvalue
    return p_reg, p_ni


def _check(alpha: Any, test: Any, correction: Any, require: Any) -> None:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 0.5:
        raise RankPolarsError(f"gate: alpha must be between 0 and 0.5 (a one-sided level), got {alpha!r}")
    if test not in ("paired_t", "wilcoxon"):
        raise RankPolarsError(f"gate: test must be 'paired_t' or 'wilcoxon', got {test!r}")
    if correction not in (None, "bonferroni", "holm", "bh"):
        raise RankPolarsError(f"gate: correction must be None, 'bonferroni', 'holm' or 'bh', got {correction!r}")
    if require not in ("no-regression", "non-inferiority"):
        raise RankPolarsError(f"gate: require must be 'no-regression' or 'non-inferiority', got {require!r}")


__all__ = ["GateResult", "decide", "gate", "gate_values", "parse_margin"]
