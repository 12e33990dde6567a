"""The plans an expert would write by hand for the judges' benchmark (``judges_costs.py``): nDCG@10
and AP by version, under one judge, under every judge, and with the bounds unjudged items leave
open.  Plain Polars as ``worker.hand_polars`` writes it: no check, plain float sums, the
judgments' grades as trec_eval reads them (linear gain, relevant above 0).  Several judges share
what they can: one join of the log with a grade column per judge, one window holding every
judge's running count, one group-by.  The bounds likewise: one left join telling judged from
unjudged rows, the low and high running counts in one window, the high ideal from the judged
grades and each query's unjudged shown items at the top grade.

Each returns the means ``judge, model, ndcg@10, ap`` (with the bounds: ``ndcg@10_high``,
``ap_high`` too), which ``judges_costs.py`` holds against the engine's to 1e-9.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

KEYS = ["model", "query"]
POS = pl.col("position")


def _sums(grade: str, count: str) -> list[pl.Expr]:
    """DCG@10 and AP's sum of precisions over a ranking's rows (``grade`` null: not relevant)."""
    g = pl.col(grade)
    return [pl.when(POS <= 10).then(g / (POS + 1).log(2)).sum().alias(f"dcg_{grade}"),
            pl.when(g > 0).then(pl.col(count) / POS).sum().alias(f"ap_{grade}")]


def _ideal(positive: pl.LazyFrame, name: str) -> pl.LazyFrame:
    """Per query: the ideal DCG@10 and R of its positive grades (``query, relevance``)."""
    i = pl.int_range(1, pl.len() + 1)
    return positive.sort("query", "relevance", descending=[False, True]).group_by("query").agg(
        pl.col("relevance").head(10).dot(1 / (i.head(10) + 1).log(2)).alias(f"idcg_{name}"),
        pl.len().alias(f"R_{name}"))


def _values(name: str) -> list[pl.Expr]:
    dcg, ap, idcg, r = (pl.col(f"{c}_{name}").fill_null(0.0) for c in ("dcg", "ap", "idcg", "R"))
    return [pl.when(idcg > 0).then(dcg / idcg).otherwise(0.0).mean().alias(f"ndcg@10_{name}"),
            pl.when(r > 0).then(ap / r).otherwise(0.0).mean().alias(f"ap_{name}")]


def hand(folder: Path, judges: list[str], bounds: bool = False) -> pl.DataFrame:
    """The means under each of ``judges`` (``bounds``: one judge, with its high side)."""
    log = pl.scan_parquet(folder / "log.parquet").select(*KEYS, "item", "position")
    judgments = pl.scan_parquet(folder / "judgments.parquet").filter(pl.col("judge").is_in(judges)).with_columns(
        pl.col("relevance").cast(pl.Float64))
    positive = judgments.filter(pl.col("relevance") > 0)
    rankings = log.select(KEYS).unique()  # every query is judged by every judge here
    if bounds:
        (judge,) = judges
        top = max(judgments.select(pl.col("relevance").max()).collect().item() or 1.0, 1.0)
        rows = log.join(judgments.select("query", "item", "relevance"), on=["query", "item"], how="left")
        rows = rows.filter(pl.col("relevance").is_null() | (pl.col("relevance") > 0)).with_columns(
            pl.when(pl.col("relevance") > 0).then(pl.col("relevance")).alias("low"),
            pl.col("relevance").fill_null(top).alias("high"))
        rows = rows.with_columns(pl.col(c).is_not_null().cum_sum().over(KEYS, order_by="position").alias(f"k_{c}")
                                 for c in ("low", "high"))
        sums = rows.group_by(KEYS).agg(*_sums("low", "k_low"), *_sums("high", "k_high"))
        unjudged = rows.filter(pl.col("relevance").is_null()).select("query", "item").unique().with_columns(
            relevance=pl.lit(top))
        ideal = _ideal(positive.select("query", "relevance"), "low").join(
            _ideal(pl.concat([positive.select("query", "relevance"), unjudged.select("query", "relevance")]), "high"),
            on="query", how="full", coalesce=True)
        per = rankings.join(sums, on=KEYS, how="left").join(ideal, on="query", how="left")
        out = per.group_by("model").agg(*_values("low"), *_values("high")).collect(engine="streaming")
        return out.select(pl.lit(judge).alias("judge"), "model", pl.col("ndcg@10_low").alias("ndcg@10"),
                          pl.col("ap_low").alias("ap"), pl.col("ndcg@10_high"), pl.col("ap_high"))
    names = [f"j{n}" for n in range(len(judges))]
    # one row per judged item, a grade column per judge (null: not relevant to that judge)
    wide = positive.group_by("query", "item").agg(
        pl.when(pl.col("judge") == who).then(pl.col("relevance")).max().alias(name) for who, name in zip(judges, names))
    rows = log.join(wide, on=["query", "item"])
    rows = rows.with_columns(pl.col(n).is_not_null().cum_sum().over(KEYS, order_by="position").alias(f"k_{n}")
                             for n in names)
    sums = rows.group_by(KEYS).agg(e for n in names for e in _sums(n, f"k_{n}"))
    per = rankings.join(sums, on=KEYS, how="left")
    for who, name in zip(judges, names):
        per = per.join(_ideal(positive.filter(pl.col("judge") == who).select("query", "relevance"), name),
                       on="query", how="left")
    out = per.group_by("model").agg(e for n in names for e in _values(n)).collect(engine="streaming")
    return pl.concat([out.select(pl.lit(who).alias("judge"), "model", pl.col(f"ndcg@10_{n}").alias("ndcg@10"),
                                 pl.col(f"ap_{n}").alias("ap")) for who, n in zip(judges, names)])
