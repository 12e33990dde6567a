"""``-Z FILE``: every per-query value as a z-score against a reference mean and deviation.

trec_eval (``convert_zscores.c``) converts each query's values before they are summed into the
'all' line: ``(value - mean) / stddev``; with a deviation of 0, 0 if the value equals the mean;
-1000000 when the file has no line for the query and measure (or the deviation is 0 and the value
differs).  The geometric means convert the log of the floored value, as trec_eval stores it.
"""

from __future__ import annotations

import polars as pl

from rank_polars.dropins.trec_eval.measures import Column
from rank_polars.dropins.trec_eval.output import MIN_GEO_MEAN

MISSING_ZSCORE_VALUE = -1000000.0


def to_zscores(table: pl.DataFrame, columns: list[Column], zscores: pl.DataFrame) -> pl.DataFrame:
    """``table`` (``query`` + one column per label) with every numeric value converted."""
    numeric = [c for c in columns if c.measure.value != "text" and c.label in table.columns]
    if not numeric:
        return table
    raw = table.with_columns(
        pl.col(c.label).clip(lower_bound=MIN_GEO_MEAN).log() for c in numeric if c.measure.summary == "gmean"
    )
    long = raw.select("query", *(pl.col(c.label).cast(pl.Float64) for c in numeric)).unpivot(
        index="query", variable_name="label", value_name="value"
    )
    value, mean, sd = pl.col("value"), pl.col("mean"), pl.col("sd")
    z = (
        long.join(zscores, on=["query", "label"], how="left", maintain_order="left")
        .with_columns(
            pl.when(mean.is_null()).then(MISSING_ZSCORE_VALUE)
            .when(sd != 0).then((value - mean) / sd)
            .when(value == mean).then(0.0)
            .otherwise(MISSING_ZSCORE_VALUE)
            .alias("value")
        )
        .pivot("label", index="query", values="value")
    )
    return table.drop(c.label for c in numeric).join(z, on="query", how="left", maintain_order="left")
