"""Statistics over per-query values: is one version really better than another?

* :mod:`.tests` — the paired tests (t, Wilcoxon, sign, randomisation, bootstrap), effect sizes
  and multiple-comparison corrections, on per-query differences;
* :mod:`.resampling` — the vectorised, deterministic sign flips and bootstrap they use;
* :mod:`.intervals` — confidence intervals on every aggregate of ``evaluate`` (``ci=``);
* :mod:`.compare` — :func:`rank_polars.compare`: versions against a baseline, query by query
  (its rows per pair of versions: :mod:`.pairs`; catalogue-level measures: :mod:`.catalog`);
* :mod:`.anova` — :func:`rank_polars.anova`: many versions at once (two-way ANOVA, Tukey's HSD);
* :mod:`.planning` — :func:`rank_polars.queries_needed`: how many queries a test needs.

No metric is computed here: the values come from :func:`rank_polars.evaluate`.  This file
imports nothing, so that the lower modules (tests, resampling, intervals) load without the
higher ones (compare, anova), which import ``evaluate``.
"""
