"""``rp.leaderboard_agreement``: what the choice of judge does to the decision between versions.

The versions are evaluated under each judge in one call (``evaluate(..., by_judge=True,
per_query=True)``), then, per metric and pair of judges (``"a|b"``, in the order of ``judges``):

* ``kendall_tau``: Kendall's tau-b between the two rankings of the versions (by their means;
  ties count as in ``scipy.stats.kendalltau``);
* ``tau_ap``: Yilmaz, Aslam and Robertson's AP correlation (SIGIR 2008), which weighs a swap near
  the top more: ``2 / (N - 1) * sum over i = 2..N of C(i) / (i - 1) - 1``, where the versions are
  taken in the order of the second judge and ``C(i)`` counts the versions above the i-th that the
  first judge (the reference) also ranks above it.  Not symmetric: list the reference judge
  first in ``judges``.  Tied means are ordered by version name;
* ``rbo``: rank-biased overlap (Webber, Moffat and Zobel 2010), extrapolated (their eq. 32, the
  ``rbo`` package's ``rbo_ext``), with persistence ``p``.

``flips``: each pair of versions under each pair of judges, with the paired t-test's verdict
(:func:`rank_polars.stats.tests.paired_t_p`; ``">"``, ``"<"`` or ``"="`` at ``alpha``) under each:
``flipped`` where they differ, the decision that depends on who judged.  ``shifts``: each
version's value under each judge minus under the reference judge (the first): LLM judges favour
LLM-based rankers (Balog, Metzler and Qin, SIGIR 2025), so a version whose shift stands out is
the one to look at.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Literal, Sequence

import numpy as np
import polars as pl

from rank_polars.errors import RankPolarsError
from rank_polars.evaluate import evaluate
from rank_polars.inputs import Source
from rank_polars.judges.table import check_pair_names, per_judge
from rank_polars.measures import MetricLike, parse_all
from rank_polars.schema import Schema, as_schema
from rank_polars.stats.tests import paired_t_p


@dataclass(frozen=True)
class LeaderboardAgreement:
    """The tables of :func:`leaderboard_agreement` (see :mod:`rank_polars.judges.leaderboard`)."""

    #: ``judge, metric, rank, <by>, value``: each judge's leaderboard (rank 1 = best)
    rankings: pl.DataFrame
    #: ``judges, metric, statistic, value``: ``kendall_tau``, ``tau_ap``, ``rbo`` per pair of judges
    correlations: pl.DataFrame
    #: ``judges, metric, version_a, version_b, diff_a, p_a, verdict_a, diff_b, p_b, verdict_b, flipped``
    flips: pl.DataFrame
    #: ``judge, metric, <by>, value, reference, shift``: each version's value minus the reference judge's
    shifts: pl.DataFrame


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau-b of two score vectors (NaN when one is constant)."""
    sx = np.sign(x[:, None] - x[None, :])
    sy = np.sign(y[:, None] - y[None, :])
    upper = np.triu_indices(x.size, 1)
    sx, sy = sx[upper], sy[upper]
    denominator = math.sqrt(float(np.count_nonzero(sx)) * float(np.count_nonzero(sy)))
    return float((sx * sy).sum() / denominator) if denominator else math.nan


def tau_ap(reference: Sequence[Any], estimate: Sequence[Any]) -> float:
    """AP correlation of ``estimate`` (a ranking, best first) against ``reference`` (the truth)."""
    n = len(estimate)
    if n < 2:
        return math.nan
    position = {v: i for i, v in enumerate(reference)}
    true = np.array([position[v] for v in estimate])
    above = np.tril(true[None, :] < true[:, None], k=-1).sum(axis=1)  # C(i): the ones above i ranked above it
    i = np.arange(1, n)
    return float(2.0 / (n - 1) * (above[1:] / i).sum() - 1.0)


def rbo_ext(first: Sequence[Any], second: Sequence[Any], p: float) -> float:
    """Extrapolated rank-biased overlap of two rankings of the same items (Webber et al., eq. 32)."""
    k = len(first)
    if k == 0:
        return math.nan
    seen_a: set[Any] = set()
    seen_b: set[Any] = set()
    overlap = np.empty(k)
    common = 0
    for d, (a, b) in enumerate(zip(first, second)):  # one step per version, not per query
        common += (a in seen_b) + (b in seen_a) + (a == b)
        seen_a.add(a)
        seen_b.add(b)
        overlap[d] = common
    depth = np.arange(1, k + 1)
    return float(overlap[-1] / k * p**k + (1 - p) / p * (overlap / depth * p**depth).sum())


def _order(values: pl.DataFrame, version: str, higher: bool) -> list[Any]:
    ordered = values.sort(["value", version], descending=[higher, False], nulls_last=True)
    return ordered[version].to_list()


def _verdict(diff: float, p: float, alpha: float, higher: bool) -> str:
    if not (p < alpha):
        return "="
    return ">" if (diff > 0) == higher else "<"


def leaderboard_agreement(
    log: Source,
    metrics: MetricLike | Sequence[MetricLike],
    judgments: Source,
    *,
    by: str = "model",
    judges: Sequence[str] | None = None,
    alpha: float = 0.05,
    p: float = 0.9,
    missing: Literal["zero", "skip"] = "zero",
    engine: Literal["polars", "duckdb"] = "polars",
    schema: Schema | None = None,
) -> LeaderboardAgreement:
    """The versions ranked under each judge, and how far those rankings and verdicts agree.

    Parameters
    ----------
    log, metrics
        As for :func:`rank_polars.evaluate`.
    judgments
        Judgments with a judge column (the schema's ``judge`` role) or ``{judge: judgments}``.
    by
        The column telling the versions apart.
    judges
        The judges, in order: the first is the reference (``tau_ap``'s truth, ``shifts``' zero);
        default all, sorted.
    alpha
        The paired t-test's level for ``flips``.
    p
        RBO's persistence (0 < p < 1).
    missing, engine, schema
        As for :func:`rank_polars.evaluate`.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> log = pl.DataFrame({"model": ["a"] * 4 + ["b"] * 4, "query": ["q1", "q1", "q2", "q2"] * 2,
    ...                     "item": ["x", "y", "z", "w", "y", "x", "w", "z"], "position": [1, 2] * 4})
    >>> judgments = pl.DataFrame({"judge": ["people"] * 4 + ["llm"] * 4, "query": ["q1", "q1", "q2", "q2"] * 2,
    ...                           "item": ["x", "y", "z", "w"] * 2, "relevance": [1, 0, 1, 0, 0, 1, 0, 1]})
    >>> board = rp.leaderboard_agreement(log, "p@1", judgments, judges=["people", "llm"])
    >>> board.rankings
    shape: (4, 5)
    ┌────────┬────────┬──────┬───────┬───────┐
    │ judge  ┆ metric ┆ rank ┆ model ┆ value │
    │ ---    ┆ ---    ┆ ---  ┆ ---   ┆ ---   │
    │ str    ┆ str    ┆ i64  ┆ str   ┆ f64   │
    ╞════════╪════════╪══════╪═══════╪═══════╡
    │ people ┆ p@1    ┆ 1    ┆ a     ┆ 1.0   │
    │ people ┆ p@1    ┆ 2    ┆ b     ┆ 0.0   │
    │ llm    ┆ p@1    ┆ 1    ┆ b     ┆ 1.0   │
    │ llm    ┆ p@1    ┆ 2    ┆ a     ┆ 0.0   │
    └────────┴────────┴──────┴───────┴───────┘
    >>> board.correlations
    shape: (3, 4)
    ┌────────────┬────────┬─────────────┬───────┐
    │ judges     ┆ metric ┆ statistic   ┆ value │
    │ ---        ┆ ---    ┆ ---         ┆ ---   │
    │ str        ┆ str    ┆ str         ┆ f64   │
    ╞════════════╪════════╪═════════════╪═══════╡
    │ people|llm ┆ p@1    ┆ kendall_tau ┆ -1.0  │
    │ people|llm ┆ p@1    ┆ tau_ap      ┆ -1.0  │
    │ people|llm ┆ p@1    ┆ rbo         ┆ 0.9   │
    └────────────┴────────┴─────────────┴───────┘
    """
    if not 0 < p < 1:
        raise RankPolarsError(f"p (RBO's persistence) must be between 0 and 1, got {p!r}")
    if not 0 < alpha < 1:
        raise RankPolarsError(f"alpha must be between 0 and 1, got {alpha!r}")
    if not isinstance(by, str):
        raise RankPolarsError(f"by must be one column name (the versions), got {by!r}")
    mapping = as_schema(schema)
    parts = per_judge(judgments, mapping, judges)
    names = list(parts)
    check_pair_names(names)
    if len(names) < 2:
        raise RankPolarsError(f"leaderboard_agreement compares judges: the judgments have {len(names)}")
    outputs = parse_all(metrics)
    labels = [label for label, _ in outputs]
    higher = {label: spec.HIGHER_IS_BETTER for label, spec in outputs}
    column = mapping.judged("judge")
    query = mapping.column("query")
    per = pl.concat([evaluate(log, metrics, qrels=rows, by=by, per_query=True, missing=missing, engine=engine,
                              schema=mapping).select(pl.lit(who).alias(column), pl.all())
                     for who, rows in parts.items()], how="vertical_relaxed")
    long = per.unpivot(labels, index=[column, by, query], variable_name="metric")
    means = long.group_by(column, "metric", by).agg(pl.col("value").mean())
    rankings = []
    order: dict[tuple[str, str], list[Any]] = {}
    for who in names:
        for label in labels:
            values = means.filter((pl.col(column) == who) & (pl.col("metric") == label))
            order[who, label] = _order(values, by, higher[label])
            ranked = values.join(pl.DataFrame({by: order[who, label], "rank": range(1, len(order[who, label]) + 1)},
                                              schema_overrides={by: values.schema[by]}), on=by)
            rankings.append(ranked.select(column, "metric", "rank", by, "value").sort("rank"))
    # each judge's per-query values of each metric, one column per version: a pair's differences
    # are two of its columns
    tables = {(who, label): (long.filter((pl.col(column) == who) & (pl.col("metric") == label))
                             .with_columns(pl.col(by).cast(pl.String)).pivot(on=by, index=query, values="value"))
              for who in names for label in labels}
    correlations, flips, shifts = [], [], []
    for a, b in combinations(names, 2):
        pair = f"{a}|{b}"
        for label in labels:
            versions = order[a, label]
            va = means.filter((pl.col(column) == a) & (pl.col("metric") == label))
            vb = means.filter((pl.col(column) == b) & (pl.col("metric") == label))
            x = va.join(pl.DataFrame({by: versions}, schema={by: va.schema[by]}), on=by, how="right")["value"].to_numpy()
            y = vb.join(pl.DataFrame({by: versions}, schema={by: vb.schema[by]}), on=by, how="right")["value"].to_numpy()
            for statistic, value in (("kendall_tau", kendall_tau_b(x, y)), ("tau_ap", tau_ap(versions, order[b, label])),
                                     ("rbo", rbo_ext(versions, order[b, label], p))):
                correlations.append({"judges": pair, "metric": label, "statistic": statistic, "value": value})
            flips.extend(_flips(tables, label, a, b, pair, alpha, higher[label]))
    reference = names[0]
    ref = means.filter(pl.col(column) == reference).select("metric", by, pl.col("value").alias("reference"))
    shifts = (means.join(ref, on=["metric", by], how="left")
              .with_columns((pl.col("value") - pl.col("reference")).alias("shift"))
              .filter(pl.col(column) != reference)
              .sort(column, "metric", by))
    flip_schema = {"judges": pl.String, "metric": pl.String, "version_a": pl.String, "version_b": pl.String,
                   "diff_a": pl.Float64, "p_a": pl.Float64, "verdict_a": pl.String, "diff_b": pl.Float64,
                   "p_b": pl.Float64, "verdict_b": pl.String, "flipped": pl.Boolean}
    return LeaderboardAgreement(
        rankings=pl.concat(rankings).with_columns(pl.col("rank").cast(pl.Int64)),
        correlations=pl.DataFrame(correlations, schema={"judges": pl.String, "metric": pl.String,
                                                        "statistic": pl.String, "value": pl.Float64}),
        flips=pl.DataFrame(flips, schema=flip_schema),
        shifts=shifts.select(column, "metric", by, "value", "reference", "shift"),
    )


def _flips(tables: dict[tuple[str, str], pl.DataFrame], label: str, a: str, b: str, pair: str,
           alpha: float, higher: bool) -> list[dict[str, Any]]:
    """Each pair of versions' paired t-test verdict under judges ``a`` and ``b`` (``tables``: a
    judge's per-query values of a metric, a column per version)."""
    versions = sorted(set(tables[a, label].columns[1:]) & set(tables[b, label].columns[1:]))
    values = {who: tables[who, label].select(versions).to_numpy() for who in (a, b)}
    rows = []
    for i, j in combinations(range(len(versions)), 2):
        row: dict[str, Any] = {"judges": pair, "metric": label, "version_a": versions[i], "version_b": versions[j]}
        for who, side in ((a, "a"), (b, "b")):
            d = values[who][:, i] - values[who][:, j]
            d = d[~np.isnan(d)]  # the queries both versions have a value on
            diff = float(d.mean()) if d.size else math.nan
            pvalue = paired_t_p(d)
            row |= {f"diff_{side}": diff, f"p_{side}": pvalue, f"verdict_{side}": _verdict(diff, pvalue, alpha, higher)}
        row["flipped"] = row["verdict_a"] != row["verdict_b"]
        rows.append(row)
    return rows


__all__ = ["LeaderboardAgreement", "kendall_tau_b", "leaderboard_agreement", "rbo_ext", "tau_ap"]
