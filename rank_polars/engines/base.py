"""What every engine offers, and the path by which a measure family plugs into all of them.

An engine (:class:`rank_polars.engines.polars_engine.PolarsEngine`,
:class:`rank_polars.engines.duckdb_engine.DuckDBEngine`,
:class:`rank_polars.engines.spark_engine.SparkEngine`) turns a checked plan and its inputs
into one row per evaluated (group, query): :meth:`Engine.evaluate`.  ``evaluate`` only
orchestrates (parse, plan, read, engine, checks, finish).

**Measure families.**  A measure that is not a formula of the plan (it reads a history, a
catalogue, item features or subtopic judgments, or it is one number per group over all of
its lists) is a :class:`rank_polars.measures.base.FamilyMeasure`.  Its ``FAMILY`` names a
module with two functions, one per kind of engine:

``polars_values(outputs, frames: FamilyFrames) -> pl.LazyFrame``
    ``outputs``: the ``(label, spec)`` pairs of that family and kind requested in one call.
``sql_values(outputs, tables: FamilySql) -> str | list[str]``
    A ``SELECT`` (DuckDB dialect; Spark's is translated) over the names ``tables`` gives; in
    an engine's session (``tables.query`` set) it may be a list of them, each over its own
    rankings (a range of query ids of ``tables.universe_frame``, so that each fits in
    memory), whose rows the engine concatenates.  ``to_sql`` (no session) takes one.

and optionally a third, for a family whose values are aggregates of each ranking's own rows:

``polars_ranking_aggs(outputs, inputs) -> tuple[list[pl.Expr], list[pl.Expr]] | None``
    Per-row columns and per-ranking aggregates over the run's own rows (keys, ``ITEM``,
    ``RANK`` and the columns the run carries: ``GRADE``, ``CLICK``), which the Polars engine
    computes in its checking pass (one row per ranking, over every row of the run) instead of
    a pass of the family's own, when the run is ranked by position (None: the family's own
    pass); ``polars_values`` then finds them collected in ``frames.per_ranking``.  The click
    family is one (it reads the run's click column whatever the judgments): its six online
    metrics cost one pass over a 200M-row log, not two.

Both return the keys (``frames.keys``: the group columns then the query) and one Float64
column per label when the specs' ``AGGREGATE`` is a mean/sum/gmean over queries, or the
group columns alone (``frames.groups``) and one column per label for ``"catalog"``.  The
engine then joins them with the plan's table (:func:`attach`): per-query values onto each
evaluated (group, query), the spec's ``ABSENT`` where the family returned no row (0, as a
ranking without a contributing row scores 0; or null for a mean over the top k's items, on a
ranking with rows but none in its top k), so ``missing``, ``per_query`` and the aggregation
keep working; per-group values onto each row of their group, read once per group by ``finish``.

A family that reads only the run rows relevant in its own judgments (diversity:
``FamilyMeasure.checks_own_repeats``) counts the items repeated among them itself, in a call
of such measures alone, and hands them to ``frames.repeats`` (Polars) or returns them as
``REPEATS...`` columns (SQL): the engine then counts no item over every row.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import polars as pl

from rank_polars.errors import RankPolarsError
from rank_polars.inputs import Columns, Inputs, scan
from rank_polars.measures.base import FamilyMeasure, Measure
from rank_polars.plan import ITEM, N_RET, Q, Plan
from rank_polars.validate import Missing

Outputs = Sequence[tuple[str, FamilyMeasure]]


class Engine(ABC):
    """The one interface of the three engines."""

    @abstractmethod
    def evaluate(self, plan: Plan, inputs: Inputs, *, missing: Missing, duplicates: str,
                 families: Outputs = ()) -> pl.DataFrame:
        """One row per evaluated (group, query): the internal keys, one Float64 column per
        output of ``plan`` and of ``families`` (:func:`attach`)."""


def split_outputs(outputs: Sequence[tuple[str, Measure]]) -> tuple[list[tuple[str, Measure]], list[tuple[str, FamilyMeasure]]]:
    """The outputs computed by the plan, and those computed by their family."""
    plan = [(label, m) for label, m in outputs if not isinstance(m, FamilyMeasure)]
    families = [(label, m) for label, m in outputs if isinstance(m, FamilyMeasure)]
    return plan, families


def family_groups(families: Outputs) -> list[tuple[Any, bool, list[tuple[str, FamilyMeasure]]]]:
    """``(module, catalog, outputs)`` for each family and kind, in the order first requested:
    one call of the family's function per group."""
    groups: dict[tuple[str, bool], list[tuple[str, FamilyMeasure]]] = {}
    for label, spec in families:
        groups.setdefault((spec.FAMILY, spec.AGGREGATE == "catalog"), []).append((label, spec))
    out = []
    for (name, catalog), outputs in groups.items():
        try:
            module = importlib.import_module(name)
        except ImportError as e:
            raise RankPolarsError(f"metric {outputs[0][0]!r}: its family module {name!r} cannot be imported: {e}") from None
        out.append((module, catalog, outputs))
    return out


def _source(spec: FamilyMeasure, name: str) -> Any:
    if name not in spec.SOURCES:
        raise RankPolarsError(f"{spec.NAME} carries no table {name!r}; it declares {', '.join(spec.SOURCES) or 'none'}")
    source = spec.sources[name]
    if source is None:
        raise RankPolarsError(spec.needs_table(name))
    return source


def auxiliary_tables(families: Outputs) -> list[tuple[str, Any]]:
    """Each table the families' specs carry, once, with its name for messages (``"novelty
    history"``): :func:`rank_polars.inputs.prepare` reads the run's ids so that these match."""
    seen: dict[int, tuple[str, Any]] = {}
    for _, spec in families:
        for name, source in spec.sources.items():
            if source is not None and id(source) not in seen:
                seen[id(source)] = (f"{spec.NAME} {name}", source)
    return list(seen.values())


def _internal(names: Sequence[str], columns: Columns) -> dict[str, str]:
    """The run's query / item column names in an auxiliary table, to the internal names."""
    return {user: internal for user, internal in ((columns.query, Q), (columns.item, ITEM)) if user in names}


@dataclass
class FamilyFrames:
    """What a family's ``polars_values`` reads.

    ``run``: the run ranked (keys, ``ITEM``, ``RANK``, ``GRADE`` when the run's labels are
    read, ``CLICK`` when the call has click metrics); ``qrels``: the judgments (``Q``,
    ``ITEM``, ``GRADE``) or None; ``universe``: the evaluated (group, query) pairs with
    ``N_RET``, after ``missing``; ``per_ranking``: the
    keys and the family's ``polars_ranking_aggs``, when the engine computed them in its
    checking pass (one row per ranking of the run), else None.
    """

    run: pl.LazyFrame
    qrels: pl.LazyFrame | None
    universe: pl.DataFrame
    keys: list[str]
    columns: Columns
    per_ranking: pl.DataFrame | None = None
    ids: dict[str, pl.DataType] = field(default_factory=dict)  # Inputs.ids
    # a family that counts its own repeated items (FamilyMeasure.checks_own_repeats) hands them
    # to this (:func:`repeat_refusal`), with the depth they count to; None: the engine counted
    # the items over every row (or the checks leave them alone)
    repeats: Callable[[pl.DataFrame], None] | None = None
    repeat_depth: int | None = None
    checks: str = "full"  # Inputs.checks: "strict" refuses any repeated judgment a family reads

    @property
    def groups(self) -> list[str]:
        return self.keys[:-1]

    def source(self, spec: FamilyMeasure, name: str) -> pl.LazyFrame:
        """The table ``spec`` carries as ``name`` (e.g. ``"history"``), its query and item
        columns renamed to ``Q`` / ``ITEM``."""
        frame = scan(_source(spec, name), f"{spec.NAME} {name}")
        return self.read_ids(frame.rename(_internal(frame.collect_schema().names(), self.columns)))

    def read_ids(self, frame: pl.LazyFrame) -> pl.LazyFrame:
        """``frame``'s ``Q`` / ``ITEM`` read as the run's are (the id rule, which ``prepare``
        applied against every table of the families: text, or 64-bit integers)."""
        ids = {Q: self.ids.get(self.columns.query), ITEM: self.ids.get(self.columns.item)}
        schema = frame.collect_schema()
        return frame.with_columns(pl.col(c).cast(t) for c, t in ids.items()
                                  if t is not None and c in schema and schema[c] != t)


@dataclass
class FamilySql:
    """What a family's ``sql_values`` reads: CTE names of the statement it is placed in.

    ``run``: the ranked run (keys, ``ITEM``, ``RANK``, ``GRADE`` with the run's labels,
    ``CLICK`` with click metrics);
    ``qrels``: the judgments (``Q``, ``ITEM``, ``GRADE``, ``JUDGED``) or None;
    ``universe``: the evaluated (group, query) pairs with ``N_RET``; ``relation``: a table
    expression over any source a spec carries (the engine's ``auxiliary``).
    """

    run: str
    qrels: str | None
    universe: str
    keys: list[str]
    columns: Columns
    relation: Callable[[Any, str, str], str]
    query: Callable[[str], pl.DataFrame]
    # in an engine's session: ``on_driver(select, compute)`` runs the SELECT, applies ``compute``
    # (a Polars function of its rows) on the driver and returns a table expression over the result,
    # registered in the session (``SqlRunner.on_driver``: the diversity family's greedy ideal);
    # None (to_sql): the family writes the computation in SQL
    on_driver: Callable[[str, Callable[[pl.DataFrame], pl.DataFrame]], str] | None = None
    # the engines' statements add sums of fractions in a fixed order (``SUM(x ORDER BY k)``: the
    # same bits every run, as the plan's, see sql_engine.Source); to_sql's plain SUM reads in
    # every dialect (Snowflake and BigQuery have no ordered SUM)
    ordered: bool = False
    # the run's ids read as text (Inputs.ids): a table's query / item ids are then cast to text
    # (the id rule), instead of the database comparing text with numbers its own way
    text_ids: tuple[str, ...] = ()
    # in an engine's session: the universe as a Polars frame (keys and ``N_RET``), from which a
    # family cuts its work into ranges of query ids (polars_engine.bounds_of); None in to_sql
    universe_frame: pl.DataFrame | None = None
    # as FamilyFrames': the statements then return each ranking's repeated items in columns
    # named REPEATS..., which sql_family_values hands to ``repeats`` and drops
    repeats: Callable[[pl.DataFrame], None] | None = None
    repeat_depth: int | None = None
    checks: str = "full"  # Inputs.checks: "strict" refuses any repeated judgment a family reads
    _names: dict[int, str] = field(default_factory=dict)

    @property
    def groups(self) -> list[str]:
        return self.keys[:-1]

    def source(self, spec: FamilyMeasure, name: str) -> str:
        """A table expression over the table ``spec`` carries as ``name``, its query and item
        columns also under ``Q`` / ``ITEM``."""
        from rank_polars.engines.sql_engine import quote

        source = _source(spec, name)
        key = id(source)
        if key not in self._names:
            self._names[key] = self.relation(source, f"__rp_aux{len(self._names)}", f"{spec.NAME} {name}")
        table = self._names[key]
        names = self.query(f"SELECT * FROM {table} AS t LIMIT 0").columns
        extra = ", ".join(f"CAST({quote(user)} AS VARCHAR) AS {quote(internal)}" if user in self.text_ids
                          else f"{quote(user)} AS {quote(internal)}"
                          for user, internal in _internal(names, self.columns).items())
        return f"(SELECT *{', ' + extra if extra else ''} FROM {table} AS {quote('__rp_t')})"


_RETURNED = "__rp_family_row"
_SHOWN = "__rp_family_shown"  # the (group, query) has rows in the run (N_RET > 0)

#: a family's count, per ranking, of the rows repeating an item among the rows it reads (the
#: prefix of the SQL statements' columns; the ranking's rows beyond each item's first)
REPEATS = "__rp_item_dup"


def repeat_refusal(inputs: Inputs, duplicates: str, plan: Plan) -> Callable[[pl.DataFrame], None] | None:
    """What a family that counts its own repeated items hands them to (``FamilyFrames.repeats``):
    the keys and :data:`REPEATS` of the rankings with a repeat, refused with the run's message
    for ``item_dup`` (``validate.check_run``); None unless the engine left the count to the
    families (``validate.families_count_repeats``)."""
    from rank_polars.validate import check_run, families_count_repeats

    if not families_count_repeats(inputs, duplicates, plan):
        return None

    def refuse(found: pl.DataFrame) -> None:
        check_run(found.select(*inputs.keys, pl.col(REPEATS).cast(pl.Int64).alias("item_dup")), inputs)

    return refuse


def _repeats_keys(values: pl.DataFrame, on: list[str]) -> bool:
    """Whether two rows of ``values`` share their ``on`` columns: distinct 64-bit hashes prove
    they do not (at 10M rankings 0.37 s and +0.2 GiB, where ``is_duplicated`` took 0.97 s and
    +1.7 GiB, the peak of a 200M-row call); only when some hashes repeat are the rows compared."""
    if values.select(pl.struct(on).hash().n_unique()).item() == values.height:
        return False
    return bool(values.select(on).is_duplicated().any())


def _absent(spec: FamilyMeasure, shown: bool) -> pl.Expr:
    """The value of a ranking ``spec``'s family returned no row for: its ``ABSENT``; None only
    where the ranking has rows in the run (``shown``: the ``_SHOWN`` column is there), else 0."""
    if spec.ABSENT is None:
        return pl.when(pl.col(_SHOWN)).then(pl.lit(None, pl.Float64)).otherwise(0.0) if shown else pl.lit(0.0)
    return pl.lit(float(spec.ABSENT), pl.Float64)


def attach(table: pl.DataFrame, results: Sequence[tuple[bool, Outputs, pl.DataFrame]], keys: list[str],
           universe: pl.DataFrame | None = None) -> pl.DataFrame:
    """The per-query ``table`` with the families' values: per-query ones joined on the keys
    (where a family returned no row: the spec's ``ABSENT``, 0 or null, and 0 for a ranking
    missing from the run, ``universe``'s ``N_RET`` 0), per-group ones (``catalog``) on the
    group columns."""
    if universe is not None and any(spec.ABSENT is None for catalog, outputs, _ in results if not catalog
                                    for _, spec in outputs):
        # whether each (group, query) has rows in the run: only those can have an empty top k
        table = table.join(universe.select(*keys, (pl.col(N_RET) > 0).alias(_SHOWN)), on=keys, how="left",
                           nulls_equal=True)
    for catalog, outputs, values in results:
        labels = [label for label, _ in outputs]
        on = keys[:-1] if catalog else keys
        missing = [c for c in [*on, *labels] if c not in values.columns]
        if missing:
            raise RankPolarsError(f"family of {labels[0]!r} returned no column {missing[0]!r}")
        # a null the family returns is a value it leaves undefined (an intra-list similarity of a
        # one-item list): it stays null, out of the mean; only a missing row becomes 0
        values = values.select(*on, *(pl.col(label).cast(pl.Float64) for label in labels), pl.lit(True).alias(_RETURNED))
        if _repeats_keys(values, on) if on else values.height > 1:
            raise RankPolarsError(f"family of {labels[0]!r} returned more than one row per {'group' if catalog else 'query'}")
        if on:
            # streamed, in no particular order (every aggregate over queries is order-free): at
            # 10M rankings 1.75 s and +1.1 GiB, where the in-memory join keeping the table's
            # order took 2.6 s and +2.2 GiB, the peak of a 200M-row call
            table = (table.lazy().join(values.lazy(), on=on, how="left", nulls_equal=True)
                     .collect(engine="streaming"))
        else:
            table = table.join(values, how="cross")
        if not catalog:
            shown = _SHOWN in table.columns
            table = table.with_columns(pl.when(pl.col(_RETURNED).is_null()).then(_absent(spec, shown))
                                       .otherwise(pl.col(label)).alias(label) for label, spec in outputs)
        table = table.drop(_RETURNED)
    return table.drop(_SHOWN, strict=False)


def ranking_aggs(families: Outputs, inputs: Inputs) -> tuple[list[pl.Expr], list[pl.Expr]] | None:
    """The per-row columns and per-ranking aggregates of every family in the call, for the
    Polars engine's checking pass; None unless each family offers them
    (``polars_ranking_aggs``, which sees the inputs: whether the run carries what it reads) and
    the run carries its positions (no rank to compute from scores)."""
    if not families or inputs.order != "position":
        return None
    rows: list[pl.Expr] = []
    aggs: list[pl.Expr] = []
    for module, _, outputs in family_groups(families):
        hook = getattr(module, "polars_ranking_aggs", None)
        found = hook(outputs, inputs) if hook is not None else None
        if found is None:
            return None
        rows += found[0]
        aggs += found[1]
    return rows, aggs


def polars_family_values(families: Outputs, frames: FamilyFrames, streaming: bool = True) -> list[tuple[bool, Outputs, pl.DataFrame]]:
    """Every family's values, computed by its ``polars_values``, collected together."""
    groups = family_groups(families)
    lazy = [module.polars_values(outputs, frames) for module, _, outputs in groups]
    collected = pl.collect_all(lazy, engine="streaming" if streaming else "auto") if lazy else []
    return [(catalog, outputs, values) for (_, catalog, outputs), values in zip(groups, collected)]


def sql_family_values(families: Outputs, tables: FamilySql, render: Callable[[str], str]) -> list[tuple[bool, Outputs, pl.DataFrame]]:
    """Every family's values, each statement of its ``sql_values`` rendered over the CTEs of
    the metric pass (``render``) and run by ``tables.query``; a list of statements (each over
    rankings of its own) run one after the other, their rows concatenated."""
    out = []
    for module, catalog, outputs in family_groups(families):
        statements = module.sql_values(outputs, tables)
        if isinstance(statements, str):
            values = tables.query(render(statements))
        else:
            values = pl.concat([tables.query(render(sql)) for sql in statements], how="vertical_relaxed")
        counted = [c for c in values.columns if c.startswith(REPEATS)]
        if counted:  # one count per set of the family's parameters: the largest is the ranking's
            if tables.repeats is not None:
                tables.repeats(values.select(*tables.keys, pl.max_horizontal(counted).alias(REPEATS))
                               .filter(pl.col(REPEATS) > 0))
            values = values.drop(counted)
        out.append((catalog, outputs, values))
    return out


__all__ = ["REPEATS", "Engine", "FamilyFrames", "FamilySql", "attach", "family_groups", "polars_family_values",
           "ranking_aggs", "repeat_refusal", "split_outputs", "sql_family_values"]
