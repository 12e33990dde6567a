"""The beyond-accuracy measures in Polars (lazy; the few scalars of a history are collected).

Every similarity is a sum over the list, never over pairs: an item is a vector u_i (its
normalised features, its normalised category indicator, or its history column over
sqrt(pop)), and for a list of n items ``sum_{i != j} u_i . u_j = |sum_i u_i|^2 - sum_i |u_i|^2``.
The cost per list is k rows times the vector length (dense features), the items'
categories, or the items' history rows (co-occurrence).

Every sum of fractions is added in a fixed order (:func:`ordered_sum`; the same bits whatever
order the streaming engine delivers the rows in, however many threads): over a list's rows in
rank order, over items or popularities in ascending order of the terms; or exactly, whatever
the order (:func:`exact_sum`: a user's profile).  A sum of whole numbers held in Float64
(counts, popularities, 0/1 flags: below 2^53) is exact in any order and stays a plain sum.

The measures live in parts of this package: :mod:`.polars_context` (what they share: the
call's :class:`Ctx`, popularity, the checks and their messages, the exact sum),
:mod:`.polars_popularity` (coverage, Gini, popularity, novelty, EPC, EFD),
:mod:`.polars_similarity` (ILS and diversity), :mod:`.polars_pairs` (co-occurrence by the
pairs of the users' histories) and :mod:`.polars_serendipity`.  This module is the one the
rest of the code imports: the dispatch (:data:`MEASURES`, :func:`values`) and the parts'
names.  A budget (``ILS_CHUNK``, ``COOC_CHUNK``, ``PAIR_CHUNK``, ``DOTS_CHUNK``,
``SERENDIPITY_CELLS``) is read by the part that defines it: set it there.
"""

from __future__ import annotations

from typing import Any, Callable

import polars as pl

from rank_polars.engines.base import FamilyFrames, Outputs
from rank_polars.measures.beyond import Beyond
from rank_polars.families.beyond import polars_pairs, polars_serendipity, polars_similarity
from rank_polars.families.beyond.polars_context import Ctx
from rank_polars.families.beyond.polars_popularity import (aplt, arp, catalog_coverage, efd, entropy, epc, exposure_gini,
                                                           gini, novelty, pop_reo, pop_rsp)
from rank_polars.families.beyond.polars_serendipity import serendipity
from rank_polars.families.beyond.polars_similarity import ils

# the parts' other names, importable from here as when this module held them all
from rank_polars.families.beyond.polars_context import (  # noqa: F401
    CAT, DIM, HEAD_FLAG, POP, REL, W, exact_sum, missing_items, missing_message, popularity, short_head, unmatched_message)
from rank_polars.families.beyond.polars_pairs import PAIR_CHUNK, HistoryPairs, cooccurrence_pairs  # noqa: F401
from rank_polars.families.beyond.polars_serendipity import (  # noqa: F401
    DOTS_CHUNK, SERENDIPITY_CELLS, cooccurrence_dots, serendipity_ranges)
from rank_polars.families.beyond.polars_similarity import (  # noqa: F401
    COOC_CHUNK, ILS_CHUNK, UNKNOWN, Vectors, ils_sparse, ils_vectors)


MEASURES: dict[str, Callable[[str, Beyond, Ctx], pl.LazyFrame]] = {
    "catalog_coverage": catalog_coverage, "entropy": entropy, "gini": gini, "exposure_gini": exposure_gini,
    "arp": arp, "aplt": aplt, "aclt": aplt, "pop_reo": pop_reo, "pop_rsp": pop_rsp, "novelty": novelty,
    "epc": epc, "efd": efd, "ils": ils, "diversity": ils, "serendipity": serendipity,
}


def values(outputs: Outputs, frames: FamilyFrames, checked: dict[str, dict[str, Any]]) -> pl.LazyFrame:
    ctx = Ctx(frames, checked)
    catalog = outputs[0][1].AGGREGATE == "catalog"
    on = ctx.groups if catalog else ctx.keys
    parts = [MEASURES[spec.NAME](label, spec, ctx) for label, spec in outputs]  # type: ignore[arg-type]
    out = parts[0]
    for part in parts[1:]:
        out = out.join(part, on=on, how="full", coalesce=True, nulls_equal=True) if on else out.join(part, how="cross")
    # x + 0.0 is x, but for -0.0, which Polars' products and logs give where SQL gives 0.0
    # (the novelty of an item every user had, -log2(1) * 1; EFD when every novelty is 0): the
    # same bits in both engines, and no "-0.0" printed
    return out.with_columns(pl.col(label) + 0.0 for label, _ in outputs)


__all__ = ["MEASURES", "popularity", "short_head", "values"]
