"""Evaluation as a daily job: a store of per-query values, every segment, a release gate.

* :mod:`.segments` — where the per-query values of two versions are paired query by query and
  split by segment (``compare(..., segments=[...])``: the difference per segment value);
* :mod:`.gate` — :func:`rank_polars.gate`: a one-sided test per metric and segment against a
  margin, with the metric's direction, a verdict and a Markdown summary;
* :mod:`.store` — the Parquet store of per-query values per (time, group), its manifest and
  the fingerprints that say what is already evaluated;
* :mod:`.track` — :func:`rank_polars.track`: evaluate the partitions the store lacks, return
  the series (per day, or per window of the stored values).
* :mod:`.sums` — sums with the same bits on every run: the engines' fixed point within its bound,
  checked once, else ordered sums; means and sds from them.

No metric is computed here: the values come from :func:`rank_polars.evaluate`.  This file
imports nothing, so that :mod:`rank_polars.stats.compare` can load :mod:`.segments` alone.
"""
