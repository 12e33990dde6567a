"""The beyond-accuracy measures in SQL (DuckDB dialect), the same formulas as
:mod:`rank_polars.families.beyond.polars`: every value a set-based statement over the ranked
run, the judgments and the spec's tables; similarities of feature vectors and categories as
sums over the list, never over pairs of items; co-occurrence from the pairs of each user's
history items that a list (or a user's shown and history items) asks for.  A shown item
missing from the catalogue or the features stops the statement with DuckDB's ``error()``
carrying the same message as the Polars engine (the engine turns it into a
:class:`rank_polars.errors.DataError`).

In the engines' statements (``FamilySql.ordered``) every sum of fractions is added in the
order the Polars engine adds it (:func:`ordered`: ``SUM(x ORDER BY k)``), or for normalised
vectors' components and cosine weights exactly (:func:`exact_sum`): the same bits every run;
``to_sql`` keeps plain ``SUM``s, which every dialect reads.  A sum of whole numbers in a
DOUBLE (counts, popularities, 0/1 flags: below 2^53) is exact in any order and stays plain.

The measures live in parts of this package: :mod:`.sql_context` (what they share: the
statement's :class:`Ctx`, ordered sums, the checks), :mod:`.sql_popularity` (coverage, Gini,
popularity, novelty, EPC, EFD) and :mod:`.sql_similarity` (ILS, diversity, serendipity).  This
module is the one the rest of the code imports: the dispatch (:data:`MEASURES`,
:func:`values`), the budgets past which a statement runs per range of query ids
(:func:`ranges`), and the parts' names.
"""

from __future__ import annotations

from typing import Any, Callable

from rank_polars.engines.base import FamilySql, Outputs
from rank_polars.engines.sql_engine import quote
from rank_polars.measures.beyond import Beyond
from rank_polars.plan import Q
from rank_polars.families.beyond.checks import list_cells, shown_cells
from rank_polars.families.beyond.sql_context import QQ, Ctx
from rank_polars.families.beyond.sql_popularity import (aplt, arp, catalog_coverage, efd, entropy, epc, exposure_gini, gini,
                                                        novelty, pop_reo, pop_rsp)
from rank_polars.families.beyond.sql_similarity import ils, serendipity

# the parts' other names, importable from here as when this module held them all
from rank_polars.families.beyond.sql_context import (  # noqa: F401
    G, I, R, by, check_matched, check_missing, checked, ordered, popular)
from rank_polars.families.beyond.sql_popularity import (  # noqa: F401
    expected, flagged, popularity, short_head, std_over_mean, with_pop)
from rank_polars.families.beyond.sql_similarity import (  # noqa: F401
    PAIR_KEY, PAIR_SCALE, Vectors, cooccurrence_dots, exact_sum, ils_cooccurrence, vectors)


MEASURES: dict[str, Callable[[str, Beyond, Ctx], str]] = {
    "catalog_coverage": catalog_coverage, "entropy": entropy, "gini": gini, "exposure_gini": exposure_gini,
    "arp": arp, "aplt": aplt, "aclt": aplt, "pop_reo": pop_reo, "pop_rsp": pop_rsp, "novelty": novelty,
    "epc": epc, "efd": efd, "ils": ils, "diversity": ils, "serendipity": serendipity,
}


#: The shown rows' vector components (top-k rows x dimensions) one statement of per-list
#: measures holds when one of them is serendipity over feature vectors: past it (in an engine's
#: session) the statement runs once per range of query ids (:func:`ranges`; as the diversity
#: family's ``SQL_RANGE_ROWS``), each reading the shown rows and the history of its users alone.
#: What one statement holds grows with its users' profiles (d exact sums each) and its shown
#: rows' d components, whichever side of their join DuckDB builds on.  2^26 is ~1M rows of 64
#: dimensions; on the 20M-row benchmark (2M shown rows, 64-d), whole process: 2 statements
#: 9.4 s, 1.05 GiB of RSS; 4: 11.0 s, 1.0 GiB; one: 13.1 s, 1.8 GiB (DuckDB spilling).
SERENDIPITY_CELLS = 1 << 26


#: The pairs of shown items one statement holds when it computes co-occurrence ILS
#: (:func:`ils_cooccurrence`): past it the statement runs once per range of query ids, each
#: with the pairs of its lists alone (the history's pairs are made again in each: they are kept
#: only where a list of the range holds them).  On 200k lists of 10 (9M pairs, a 5M-row
#: history), whole process: 2^21, 5 statements, 8.4 s and 1.33 GiB of RSS; 2^22: 6.4 s, 1.41
#: GiB; 2^23 (2 statements): 6.0 s, 1.46 GiB; one statement: 5.4 s, 2.05 GiB.
COOCCURRENCE_PAIRS = 1 << 23


#: The (shown item, history row) pairs of one user one statement holds when it computes
#: serendipity by co-occurrence (:func:`cooccurrence_dots`; as the Polars engine's
#: ``beyond_polars.DOTS_CHUNK``): past it the statement runs once per range of query ids, each
#: making the history's pairs again (kept only where its users need them).  200k lists of 10
#: over a 5M-row history (50M pairs): 12 statements of 2^22, 32.6 s, 1.9 GiB of process RSS;
#: statements of 2^23 ran out of DuckDB's default 1.5 GiB.
DOTS_ROWS = 1 << 22


def _dots_rows(universe: Any, tables: FamilySql, checked_specs: dict[str, dict[str, Any]],
               specs: list[Beyond], k: int | None) -> Any:
    """``Q, HELD``: per query, its lists' shown rows (to rank ``k``) times its user's history
    rows, the pairs :func:`cooccurrence_dots` holds for it (the histories of ``specs``, summed)."""
    import polars as pl

    ctx = Ctx(tables, checked_specs)
    per_user = [tables.query(f"SELECT {QQ}, count(*) AS __rp_h FROM {ctx.history(spec)} GROUP BY {QQ}") for spec in specs]
    counts = (pl.concat(per_user).group_by(Q).agg(pl.col("__rp_h").sum())
              .with_columns(pl.col(Q).cast(universe.schema[Q])))
    with_h = universe.join(counts, on=Q, how="left").with_columns(pl.col("__rp_h").fill_null(0))
    return list_cells(with_h, k, lambda shown: shown * pl.col("__rp_h"))


def ranges(outputs: Outputs, tables: FamilySql, checked_specs: dict[str, dict[str, Any]]) -> list[tuple[Any, Any]]:
    """The ``(lo, hi)`` bounds of ranges of query ids holding about :data:`SERENDIPITY_CELLS`
    shown components each (``polars_engine.query_bounds`` over ``tables.universe_frame``), when
    the per-list ``outputs`` hold serendipity over feature vectors, or about
    :data:`COOCCURRENCE_PAIRS` pairs of shown items with co-occurrence ILS (the finer of the
    two); ``[(None, None)]``: one statement (as ``to_sql``'s, which has no session)."""
    universe = tables.universe_frame
    dense = [(spec.k, info.dim) for label, spec in outputs if spec.NAME == "serendipity"  # type: ignore[attr-defined]
             and (info := checked_specs[label].get("features")) is not None and info.kind == "vector"]
    paired = [spec.k for _, spec in outputs if spec.NAME in ("ils", "diversity")  # type: ignore[attr-defined]
              and spec.params["sim"] == "cooccurrence"]
    dotted = [spec for _, spec in outputs if spec.NAME == "serendipity"  # type: ignore[attr-defined]
              and spec.params["sim"] == "cooccurrence"]
    if tables.query is None or universe is None or not (dense or paired or dotted):
        return [(None, None)]
    from rank_polars.engines.polars_engine import query_bounds

    def deepest(ks: list[int | None]) -> int | None:
        return None if None in ks else max(k for k in ks if k is not None)

    cuts = [[(None, None)]]
    if dense:
        cuts.append(query_bounds(shown_cells(universe, deepest([k for k, _ in dense]), max(d for _, d in dense)),
                                 SERENDIPITY_CELLS))
    if paired:
        pairs = list_cells(universe, deepest(paired), lambda shown: shown * (shown - 1) // 2)
        cuts.append(query_bounds(pairs, COOCCURRENCE_PAIRS))
    if dotted:
        held = _dots_rows(universe, tables, checked_specs, dotted, deepest([spec.k for spec in dotted]))
        cuts.append(query_bounds(held, DOTS_ROWS))
    return max(cuts, key=len)


def values(outputs: Outputs, tables: FamilySql, checked_specs: dict[str, dict[str, Any]]) -> str | list[str]:
    """The statement of ``outputs`` (one family group: per-list or per-group measures), or for
    per-list measures with serendipity over vectors past :data:`SERENDIPITY_CELLS`, one per range
    of query ids (:func:`ranges`), the first with the checks: a list lies in one range, so
    their rows concatenated are the one statement's."""
    catalog = outputs[0][1].AGGREGATE == "catalog"
    bounds = [(None, None)] if catalog else ranges(outputs, tables, checked_specs)
    statements = [statement(outputs, Ctx(tables, checked_specs, b, first=i == 0), catalog) for i, b in enumerate(bounds)]
    return statements[0] if len(statements) == 1 else statements


def statement(outputs: Outputs, ctx: Ctx, catalog: bool) -> str:
    on = ctx.groups if catalog else ctx.keys
    parts = [MEASURES[spec.NAME](label, spec, ctx) for label, spec in outputs]  # type: ignore[arg-type]
    if len(parts) == 1:
        return parts[0]
    union = " UNION ALL BY NAME ".join(f"({p})" for p in parts)
    labels = ", ".join(f"max({quote(label)}) AS {quote(label)}" for label, _ in outputs)
    cols = ", ".join(on)
    return f"SELECT {cols + ', ' if cols else ''}{labels} FROM ({union}) AS parts" + (f" GROUP BY {cols}" if cols else "")


__all__ = ["MEASURES", "values"]
