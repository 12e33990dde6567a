"""Everything that reads clicks.

* :mod:`.metrics` — the click family's compute functions (``ctr@k``, ``click_rr``,
  ``abandonment``, ...; the specs are :mod:`rank_polars.measures.clicks`), in both engines;
* :mod:`.position_bias` — :func:`rank_polars.position_bias`: examination per position;
* :mod:`.counterfactual` — :func:`rank_polars.counterfactual`: off-policy estimates of a
  candidate ranker from a logged one (IPS, SNIPS, ...).

This file imports nothing: :mod:`.metrics` is an engine-level family, the other two are library
functions on top of ``evaluate``.
"""
