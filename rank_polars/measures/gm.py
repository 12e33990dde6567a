"""Geometric-mean variants: ``gm_map`` and ``gm_bpref``.

Per query they are AP and bpref; over queries they combine as trec_eval's geometric mean,
``exp(mean(ln(max(x, 1e-5))))`` (``AGGREGATE = "gmean"``, floor :data:`~.base.GM_FLOOR`), so a
query scoring 0 (or a judged query missing from the run, with ``missing="zero"``) weighs as
1e-5 instead of zeroing the mean.  trec_eval stores ``ln(max(x, 1e-5))`` per query and
prints only the 'all' line; pytrec_eval returns that logarithm per query.
"""

from __future__ import annotations

from rank_polars.measures.ap import AP
from rank_polars.measures.others import Bpref


class GMAP(AP):
    """gm_map: AP per query, geometric mean (floored at 1e-5) over queries."""

    NAME = "gm_map"
    ALIASES = ("gmap",)
    AGGREGATE = "gmean"


class GMBpref(Bpref):
    """gm_bpref: bpref per query, geometric mean (floored at 1e-5) over queries."""

    NAME = "gm_bpref"
    ALIASES = ()
    AGGREGATE = "gmean"
