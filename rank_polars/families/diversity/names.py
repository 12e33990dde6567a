"""The names the submodules of :mod:`rank_polars.families.diversity` share: the columns of their
frames and statements, the measures normalised by the greedy ideal, and how the specs are
grouped (by the parameters they share, by the subtopic table they read).  It imports none of
the other submodules: every one of them imports it.
"""

from __future__ import annotations

from typing import Any, Sequence


SUB = "__rp_subtopic"
POS = "__rp_ideal_rank"
G = "__rp_gain"
C = "__rp_seen"
SUBC = "__rp_subtopic_code"
LIST = "__rp_list"  # a ranking's code: its group's code times the queries' count, plus its query's
QC = "__rp_query_code"
GC = "__rp_group_code"
ITEMH = "__rp_item_hash"  # a run row's item, hashed (its repeats are counted as the engines count them)

#: the measures normalised by the greedy ideal
IDEAL_KINDS = frozenset({"ndcg", "nerr", "nnrbp"})


def _key(spec: Any) -> tuple[Any, ...]:
    return (spec.params["alpha"], spec.params["rel"], spec.params["judged_only"], spec.params["subtopic"],
            id(spec.sources.get("subtopics")))


def _tables(outputs: Sequence[tuple[str, Any]]) -> dict[int, list[tuple[str, Any]]]:
    """The specs by the subtopic table they read (one warning per table)."""
    tables: dict[int, list[tuple[str, Any]]] = {}
    for label, spec in outputs:
        tables.setdefault(id(spec.sources.get("subtopics")), []).append((label, spec))
    return tables
