"""The Polars engine: a lazy plan over the long-format run (see :mod:`rank_polars.plan`).

Shape of the plan, chosen so that it streams and stays lean on large logs:

1. rank: ``position`` as given, or an ordinal rank by (score desc, item desc) per ranking;
2. contributing rows: the run filtered to the rows that can change a value (after an inner
   join with the *filtered* judgments when qrels are given; the join's build side is small);
3. per-query judgment aggregates (R, N, IDCG@k) over the judgments, the ideal rank being a
   window over judgments only;
4. per-query row aggregates over the contributing rows (running sums are windows over
   those rows only), then each metric's formula, 0-filled for rankings without hits.

Steps 2-4 hold the contributing judgments and rows; Polars' streaming engine does not
spill, so past ``HELD_ROWS`` of them they run once per range of query ids
(:func:`metric_passes`).  :class:`PolarsEngine` runs the checking passes, then the metric
passes, as the SQL engines run their statements (:mod:`rank_polars.engines.sql_runner`).
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import replace
from typing import Any, Sequence

import polars as pl

from rank_polars.formula import tree as d
from rank_polars.inputs import Inputs
from rank_polars.plan import GRADE, IRANK, ITEM, JUDGED, N_RET, Q, QGRADE, RANK, SCORE, Plan
from rank_polars.progress import NoProgress, Progress
from rank_polars.proof import COLUMNS as PROOF_COLUMNS
from rank_polars.proof import PositionProof
from rank_polars.validate import (
    DISTINCT,
    DISTINCT_ROWS,
    Missing,
    check_column,
    check_contributing,
    check_qrels,
    check_run,
    contributing_stat_names,
    keys_in,
    qrels_stats_polars,
    repeat_checks,
    repeat_depth,
    repeat_keys_polars,
    repeats_polars,
    run_stats_polars,
    stat_exprs,
    stat_names,
    universe,
)
from rank_polars.engines.base import Engine, FamilyFrames, Outputs, attach, polars_family_values, ranking_aggs, repeat_refusal


def _col(n: d.Node) -> pl.Expr:
    if isinstance(n, d.Col):
        return pl.col(n.name)
    if isinstance(n, (d.IdealCum, d.TieSum)):  # joined onto the rows by _join_ideal_cum / added by ranked_run
        return pl.col(n.column)
    raise TypeError(f"unexpected {n!r} after planning")


def _label_leaf(n: d.Node) -> pl.Expr:
    # the contributing predicate over the run's own columns, ``judged`` spelled out
    if isinstance(n, d.Col) and n.name == JUDGED:
        return pl.col(GRADE) >= 0
    return _col(n)


def contributes_expr(plan: Plan) -> pl.Expr:
    """The plan's contributing predicate over a row's or judgment's own grade (no derived
    column, so a filter on it reaches the Parquet reader)."""
    return d.to_polars(plan.contributes, _label_leaf)


_COMPILED: dict[tuple[type, str], pl.Expr] = {}


def compile_expr(node: d.Node) -> pl.Expr:
    """``node`` as a Polars expression over the planned columns.  Compiled once per formula: a
    node's key is its canonical text (equal keys, equal formulas; with the node's type, as a
    column's name is its whole key) and an expression is immutable, so one serves every plan
    that holds the formula (a plan compiles hundreds)."""
    key = (type(node), node.key())
    compiled = _COMPILED.get(key)
    if compiled is None:
        if len(_COMPILED) >= 4096:  # bounded: a long session plans many metric sets
            _COMPILED.clear()
        compiled = _COMPILED[key] = d.to_polars(node, _col)
    return compiled


def ordered_sum(values: pl.Expr, order: str | None = None) -> pl.Expr:
    """The sum of ``values`` added one by one in ``order`` (a column), or in ascending order of
    the values themselves: the same double whatever order the rows arrive in, however many
    threads (a plain ``sum`` adds them as the streaming engine delivers them).  The engines'
    fallback where :func:`fixed_sum` cannot hold a sum, and trec_eval's own arithmetic (the
    ``trec-eval`` command adds a ranking's terms in rank order, as trec_eval does).

    >>> import polars as pl
    >>> rows = pl.DataFrame({"rank": [3, 1, 2], "x": [0.1, 0.2, 0.3]})
    >>> rows.select(ordered_sum(pl.col("x"), "rank")).item()  # (0.2 + 0.3) + 0.1
    0.6
    >>> rows.select(ordered_sum(pl.col("x"))).item()  # (0.1 + 0.2) + 0.3
    0.6000000000000001
    """
    ordered = values.sort_by(order) if order is not None else values.sort()
    # nulls add nothing, as in ``sum`` (an empty list sums to 0).  A list's sum adds its values
    # one by one from the first (``cum_sum().last()``'s bits)
    return ordered.drop_nulls().implode().list.sum().first()


#: A sum of fractions is exact in fixed point: each term ``x`` as the integer
#: ``floor(x * 2^64)`` (an ``Int128``; one unit is 5.4e-20), added as integers, which is
#: associative: every thread count, partition and arrival order gives the same integer, and
#: one rounding makes it a double.  No sort: a ranking's terms are added as they stream by.
#: DuckDB computes the same integers (``HUGEINT``), so the engines agree bit for bit wherever
#: their terms do.
FIXED_SCALE = 2.0 ** 64
#: A group's sum is exact while its terms are below 2^40 and fewer than 2^22 (its integer then
#: stays below 2^126): :func:`fixed_bound` is below this then.  No ranking metric's terms reach
#: it with grades below 2^40.  A group beyond it is summed again in rank order
#: (:func:`ordered_sum`), never wrapped around.
FIXED_BOUND = 2.0 ** 62
_TERMS = 2.0 ** 22  # the most terms, and (FIXED_BOUND / _TERMS = 2^40) the largest |term|
EXACT = "__rp_exact"  # per query: every fixed-point sum of the row within FIXED_BOUND
#: Set by the ``trec-eval`` command: a ranking's terms added one by one in rank order, as
#: trec_eval adds them (its printed digits then follow trec_eval's arithmetic, not the exact sum).
RANK_ORDER_SUMS: ContextVar[bool] = ContextVar("rank_polars_rank_order_sums", default=False)
_BOUND = "__rp_bound_"  # a fixed-point sum's bound column: its name after this prefix


def fixed_sum(values: pl.Expr) -> pl.Expr:
    """The sum of ``values`` in fixed point (:data:`FIXED_SCALE`): the same double in any order.
    Exact to 5.4e-20 per term while :func:`fixed_bound` is below :data:`FIXED_BOUND`.

    >>> import polars as pl
    >>> rows = pl.DataFrame({"x": [0.1, 0.2, 0.3]})
    >>> rows.select(fixed_sum(pl.col("x"))).item() == rows.reverse().select(fixed_sum(pl.col("x"))).item()
    True
    """
    return fixed_terms(values).sum().cast(pl.Float64) / FIXED_SCALE


def fixed_terms(values: pl.Expr) -> pl.Expr:
    """Each value as the integer ``floor(v * 2^64)`` (``Int128``) that :func:`fixed_sum` adds."""
    return (values * FIXED_SCALE).floor().cast(pl.Int128, strict=False)  # beyond Int128: null, and out of bound


def fixed_bound(values: pl.Expr) -> pl.Expr:
    """The larger of the largest ``|term|`` times 2^22 and the number of terms times 2^40 (0 for
    none), infinite where a term is not a finite number: :func:`fixed_sum` is exact below
    :data:`FIXED_BOUND`, and a NaN or infinite term (an overflowing gain) takes the rank-order
    sum, whose non-finite value the checks refuse, instead of adding nothing."""
    bound = pl.max_horizontal(values.abs().max().fill_null(0.0) * _TERMS, values.count() * (FIXED_BOUND / _TERMS))
    return pl.when((~values.is_finite()).any()).then(float("inf")).otherwise(bound)


def _aggregate(agg: d.Agg, name: str, order: str | None = None, exact: bool = True) -> list[pl.Expr]:
    """``agg`` per group: a sum of fractions in fixed point (:func:`fixed_sum`) with its bound
    column, or with ``exact=False`` added in ``order`` (:func:`ordered_sum`): rank order over a
    ranking's rows (as trec_eval adds), ideal-rank order over the ideal ranking."""
    inner = compile_expr(agg.arg)
    if agg.kind != "sum":
        return [inner.max().alias(name)]
    if d.integral(agg.arg):  # a count is exact in any order: a plain sum
        return [inner.sum().alias(name)]
    if exact:
        return [fixed_sum(inner).alias(name), fixed_bound(inner).alias(_BOUND + name)]
    return [ordered_sum(inner, order).alias(name)]


_ORDER = "__rp_order"  # a group's rows' positions in its order, taken once per group


def _grouped(frame: pl.LazyFrame, keys: list[str], aggs: dict[str, d.Agg], order: str | None,
             extra: Sequence[pl.Expr] = (), exact: bool = True) -> pl.LazyFrame:
    """``frame`` grouped by ``keys`` with one column per aggregate (:func:`_aggregate`) and
    ``extra``.  Added in ``order`` (``exact=False``), the group's order is taken once (an
    arg-sort per group) and every sum of fractions is its values as a list, gathered in that
    order after the group-by and summed (:func:`ordered_sum`'s bits): one sort per group
    instead of one per sum."""
    ordered = {n: a for n, a in aggs.items()
               if not exact and order is not None and a.kind == "sum" and not d.integral(a.arg)}
    if len(ordered) < 2:
        return frame.group_by(keys).agg(*(e for n, a in aggs.items() for e in _aggregate(a, n, order, exact)), *extra)
    plain = [e for n, a in aggs.items() if n not in ordered for e in _aggregate(a, n, exact=False)]
    lists = [compile_expr(a.arg).alias(n) for n, a in ordered.items()]
    grouped = frame.group_by(keys).agg(pl.col(order).arg_sort().alias(_ORDER), *lists, *plain, *extra)
    return grouped.with_columns(pl.col(n).list.gather(pl.col(_ORDER)).list.drop_nulls().list.sum()
                                for n in ordered).drop(_ORDER)


def _within_bounds(frame: pl.LazyFrame | pl.DataFrame) -> pl.Expr:
    """Every fixed-point sum of a row within its bound (the bound columns of ``frame``)."""
    bounds = [c for c in frame.collect_schema().names() if c.startswith(_BOUND)]
    return pl.all_horizontal(pl.col(c).fill_null(0.0) < FIXED_BOUND for c in bounds) if bounds else pl.lit(True)


def _ideal(judg: pl.LazyFrame, order: d.Node, jkeys: list[str]) -> pl.LazyFrame:
    """The judgments with ``order > 0``, numbered by ``order`` descending (the ideal rank)."""
    key = compile_expr(order)
    return judg.filter(key > 0).with_columns(key.rank("ordinal", descending=True).over(jkeys).cast(pl.Int64).alias(IRANK))


def _join_ideal_cum(rows: pl.LazyFrame, judg: pl.LazyFrame, jkeys: list[str], name: str, icum: d.IdealCum) -> pl.LazyFrame:
    """``rows`` with the column ``name``: the ideal's running sum of ``icum.arg`` at ``icum.at``."""
    ideal = _ideal(judg, icum.order, jkeys)
    for inner_name, inner in d.ideal_cums([icum.arg]).items():  # read at a judgment's own ideal rank
        ideal = _join_ideal_cum(ideal, judg, jkeys, inner_name, inner)
    ideal = ideal.with_columns(compile_expr(icum.arg).cast(pl.Float64).alias(name))
    at_pos = ideal.select(*jkeys, pl.col(IRANK).alias("__rp_at"), pl.col(name).cum_sum().over(jkeys, order_by=IRANK))
    total = ideal.group_by(jkeys).agg(ordered_sum(pl.col(name), IRANK).alias("__rp_total"))
    at = compile_expr(icum.at).cast(pl.Int64)
    joined = rows.with_columns(at.alias("__rp_at")).join(at_pos, on=[*jkeys, "__rp_at"], how="left", nulls_equal=True)
    joined = joined.join(total, on=jkeys, how="left", nulls_equal=True)
    value = pl.when(pl.col("__rp_at") < 1).then(0.0).otherwise(pl.coalesce(name, "__rp_total", pl.lit(0.0)))
    return joined.with_columns(value.alias(name)).drop("__rp_at", "__rp_total")


def ranked_run(inputs: Inputs, ties: dict[str, d.TieSum] | None = None) -> pl.LazyFrame:
    """The run with its ranks; ``ties``: the :class:`~rank_polars.formula.tree.TieSum` columns,
    windows over the rows tied in score (by position every row is a tie of its own)."""
    run = inputs.run
    if inputs.order == "score":
        # trec_eval's order: score descending, ties by item id descending, byte-wise
        tiebreak = pl.col(ITEM).cast(pl.String)
        run = run.with_columns(
            pl.struct(SCORE, tiebreak).rank("ordinal", descending=True).over(inputs.keys).cast(pl.Int64).alias(RANK)
        )
    if ties:  # -0.0 + 0.0 is 0.0: one tie with 0.0, as the order has it
        tie = [*inputs.keys, pl.col(SCORE) + 0.0 if inputs.order == "score" else pl.col(RANK)]
        # + 0 * rank: a constant (the count's 1.0) is a value per row, not one summed once
        per_row = {c: compile_expr(t.arg) + pl.col(RANK) * 0.0 for c, t in ties.items()}
        # in fixed point: a tie's rows arrive in any order (its weights are at most 1, far within the bound)
        run = run.with_columns(fixed_sum(value).over(tie).alias(c) for c, value in per_row.items())
    return run


def repeat_sources(plan: Plan, inputs: Inputs, checks: Sequence[str]) -> list[pl.LazyFrame]:
    """With the run's own labels, the contributing rows are a filter of the run at the reader:
    their (ranking, position / item) hashes are collected with the checking passes, so the
    metric pass finds the rows sharing them by ``is_in`` (streams) instead of a join (holds
    the run).  With judgments the contributing rows need the join itself: none.  Repeated
    positions are left to :mod:`rank_polars.proof` (the rankings it leaves open are few, and
    are counted by a join of their rows alone)."""
    repeats = [c for c in repeat_checks(inputs.run_labels, list(checks)) if c != "rank_dup"]
    if not repeats or not inputs.run_labels or inputs.order != "position":
        return []
    contributing = inputs.run.filter(contributes_expr(plan))
    return repeat_keys_polars(contributing, inputs.keys, repeats)


#: The contributing rows the metric pass may hold at once: the join's build side (the
#: contributing judgments) and the windows over the contributing rows of the run, ~90 bytes
#: each (measured at 200M rows).  Beyond it the pass runs once per range of query ids,
#: each range a streaming query of its own (:func:`query_ranges`).
HELD_ROWS = 4_000_000
HELD = "__rp_held"  # per ranking or judged query: the rows it adds to the metric pass


def held_rows(uni: pl.DataFrame, judged: pl.DataFrame | None, stats: pl.DataFrame) -> pl.DataFrame:
    """Per query, the rows the metric pass holds for it (``Q``, ``HELD``): with judgments its
    contributing judgments, once for the join's build side and once per ranking (at most as
    many hits); with the run's labels, its contributing rows."""
    if judged is None:
        return stats.group_by(Q).agg(pl.col(HELD).sum())
    rankings = uni.group_by(Q).agg(pl.len().alias("__rp_rankings"))
    held = judged.select(Q, pl.col("q_contributing")).join(rankings, on=Q, how="inner")
    return held.select(Q, (pl.col("q_contributing") * (1 + pl.col("__rp_rankings"))).alias(HELD))


def query_bounds(held: pl.DataFrame, budget: int | None = None) -> list[tuple[Any, Any]]:
    """The ``(lo, hi)`` bounds of ranges of query ids (``lo <= id < hi``; None: unbounded on that
    side) cutting the queries, in id order, into ranges that each hold about ``budget`` rows of
    ``held`` (``Q``, ``HELD``); ``[(None, None)]``: one pass.  Ranges of ids, not hashes: a
    Parquet log sorted by query then skips the row groups outside each range, so the ranges
    read the log about once in all.  The Polars engine reads them as predicates
    (:func:`query_ranges`), the SQL engines as ``WHERE`` terms (``sql_engine.range_sql``)."""
    budget = HELD_ROWS if budget is None else budget
    total = int(held[HELD].sum() or 0)
    parts = -(-total // budget)
    if parts <= 1:
        return [(None, None)]
    cum = held.sort(Q).with_columns(pl.col(HELD).cum_sum().alias("__rp_cum"))
    cuts = sorted({cum.filter(pl.col("__rp_cum") > total * i // parts)[Q][0] for i in range(1, parts)})
    bounds: list[Any] = [None, *cuts, None]
    return list(zip(bounds, bounds[1:]))


def range_expr(lo: Any, hi: Any) -> pl.Expr | None:
    """The predicate ``lo <= Q < hi`` (a None bound: no term; None: no predicate at all)."""
    terms = ([pl.col(Q) >= lo] if lo is not None else []) + ([pl.col(Q) < hi] if hi is not None else [])
    return pl.all_horizontal(terms) if terms else None


def query_ranges(held: pl.DataFrame, budget: int | None = None) -> list[pl.Expr | None]:
    """Predicates on the query id for the ranges of :func:`query_bounds` (``[None]``: one pass)."""
    return [range_expr(lo, hi) for lo, hi in query_bounds(held, budget)]


def held_per_query(per_ranking: pl.DataFrame) -> pl.DataFrame:
    """``Q, HELD``: the run rows of each query, from ``per_ranking`` (keys and ``N_RET``, one
    row per ranking; a null query id is in no range)."""
    return per_ranking.filter(pl.col(Q).is_not_null()).group_by(Q).agg(pl.col(N_RET).sum().alias(HELD))


def ranges_of(per_ranking: pl.DataFrame, budget: int) -> list[pl.Expr | None]:
    """:func:`query_ranges` over the run rows of ``per_ranking`` (:func:`held_per_query`):
    ranges of query ids holding about ``budget`` run rows each (one, without counting them
    per query, when all of them fit: 0.1 s at 1M rankings)."""
    return [range_expr(lo, hi) for lo, hi in bounds_of(per_ranking, budget)]


def bounds_of(per_ranking: pl.DataFrame, budget: int) -> list[tuple[Any, Any]]:
    """:func:`query_bounds` over the run rows of ``per_ranking``: the bounds of
    :func:`ranges_of`'s ranges (the SQL engines render them as SQL)."""
    if int(per_ranking[N_RET].sum() or 0) <= budget:  # all of them fit: no count per query
        return [(None, None)]
    return query_bounds(held_per_query(per_ranking), budget)


def distinct_counts(stats: pl.DataFrame, inputs: Inputs, names: Sequence[str], plan: Plan,
                    collect: Any, only: pl.DataFrame | None = None) -> pl.DataFrame:
    """``stats`` (the pass over every row, one row per ranking) with the distinct counts
    ``names`` added, each range of query ids holding about :data:`DISTINCT_ROWS` rows counted
    by a streaming group-by of its own (``collect``); a ranking is in one range, so each
    count is the one the whole pass would give.  ``only``: the keys of the rankings to count
    (found by a hash of their keys: a collision only adds a ranking to count), the others 0."""
    if not names:
        return stats
    exprs = stat_exprs(list(names), repeat_depth(inputs, plan))
    rows, held = inputs.run, stats
    if only is not None:
        rows = rows.filter(keys_in(inputs.keys, only))
        held = stats.join(only, on=inputs.keys, how="semi", nulls_equal=True)
    found = []
    for part in ranges_of(held, DISTINCT_ROWS):
        run = rows if part is None else rows.filter(part)
        # only the rankings with a repeat come back: the join below stays small
        counts = run.group_by(inputs.keys).agg(exprs).filter(pl.any_horizontal(pl.col(n) > 0 for n in names))
        found.append(collect(counts))
    counts = pl.concat(found)
    joined = stats.join(counts, on=inputs.keys, how="left", nulls_equal=True)
    return joined.with_columns(pl.col(n).fill_null(0) for n in names)


def metric_passes(plan: Plan, inputs: Inputs, uni: pl.DataFrame, checks: Sequence[str], shown: list[pl.DataFrame],
                  unproven: pl.DataFrame | None, held: pl.DataFrame | None, exact: bool = True) -> list[pl.LazyFrame]:
    """The metric pass (:func:`per_query`), one per range of query ids when ``held``
    (:func:`held_rows`) exceeds the budget; ``shown``: the collected repeat hashes of
    :func:`repeat_sources`, with their query.  ERR's pass is never cut: it reads the top
    grade of all judgments."""
    ranges = query_ranges(held) if held is not None and not plan.global_aggs else [None]
    passes = []
    for part in ranges:
        part_inputs, part_uni, part_shown = inputs, uni, shown
        if part is not None:  # the filters reach the Parquet readers (row groups skipped)
            qrels = inputs.qrels.filter(part) if inputs.qrels is not None else None
            part_inputs, part_uni = replace(inputs, run=inputs.run.filter(part), qrels=qrels), uni.filter(part)
            part_shown = [frame.filter(part) for frame in shown]
        repeat_keys = {frame.columns[-1]: frame.to_series(-1) for frame in part_shown} or None
        passes.append(per_query(plan, part_inputs, part_uni, checks, repeat_keys, unproven, exact))
    return passes


def per_query(plan: Plan, inputs: Inputs, uni: pl.DataFrame, checks: Sequence[str] = (),
              repeat_keys: dict[str, pl.Series] | None = None, unproven: pl.DataFrame | None = None,
              exact: bool = True) -> pl.LazyFrame:
    """One row per evaluated (group, query): the keys and one column per requested metric.

    ``checks``: statistics of :mod:`rank_polars.validate` to count over the contributing
    rows (the duplicate counts), added as ``check_column(stat)`` columns.  ``repeat_keys``:
    the contributing rows' (ranking, value) hashes, collected beforehand
    (:func:`repeat_sources`), for the repeat checks; ``unproven``: the rankings whose
    positions the checking pass did not prove distinct (:mod:`rank_polars.proof`), the only
    ones where repeated positions are counted.  ``exact``: sums of fractions in fixed point,
    with the :data:`EXACT` column saying where each held (:func:`fixed_sum`); else in rank order.
    """
    keys = inputs.keys
    ties = plan.tie_columns()  # carried with the rank (formula.tree.TieSum)
    run = ranked_run(inputs, ties)

    judged = (pl.col(GRADE) >= 0).alias(JUDGED)
    # only the contributing judgments: every judgment aggregate adds 0 for the others (see
    # plan.Plan), and the filter reaches the Parquet reader of the judgments
    qrels = inputs.qrels.filter(contributes_expr(plan)).with_columns(judged) if inputs.qrels is not None else None
    if not inputs.run_labels:
        rows = run.select(*keys, ITEM, RANK, *ties).join(qrels, on=[Q, ITEM], how="inner")
    else:
        # the run's own labels: no join of the whole run with the judgments, and the filter
        # on the label reaches the Parquet reader
        rows = run.select(*keys, ITEM, RANK, GRADE, *ties).filter(contributes_expr(plan))
        rows = rows.with_columns(pl.col(GRADE).cast(pl.Float64)).with_columns(judged)
        if qrels is not None:
            # labels="run": the qrels' grade of each contributing row, to check.  A run row
            # agrees only with a judgment that contributes too (the predicate reads the grade
            # alone), so the build side is the filtered judgments, not all of them.
            judgments = qrels.select(Q, ITEM, pl.col(GRADE).alias(QGRADE))
            rows = rows.join(judgments, on=[Q, ITEM], how="left")
    # The contributing rows are the run's own judgments (labels, or ideal=run): uncut.  The
    # row aggregates may stop at the deepest cutoff any metric looks at (their formulas hold
    # the cutoffs); but when the same group-by also counts the checks, which need every
    # contributing row, one uncut pass is cheaper than a second one.
    labelled = rows.select(*keys, RANK, GRADE, JUDGED, *ties)
    repeats = repeat_checks(inputs.run_labels, list(checks))  # counted over the whole run
    contributing = rows
    if checks:
        # the item checks need only a null flag and a 64-bit hash of the id (as their
        # statistics count it): the windows and the group-by then carry 8 bytes, not a string
        item = pl.col(ITEM)
        rows = rows.with_columns(pl.when(item.is_not_null()).then(item.hash()).alias(ITEM))
    else:
        rows = labelled if plan.depth is None else labelled.filter(pl.col(RANK) <= plan.depth)

    universe = uni.lazy()
    stats = universe
    for source in sorted(plan.sources()):
        aggs = {n: a for n, a in plan.judgment_aggs.items() if a.source == source}
        if source == "judgments" and qrels is not None:
            judg, jkeys = qrels, [Q]
        else:
            judg, jkeys = labelled, keys
        # the ideal rank is a window over the positively graded judgments only (see
        # plan.ideal_split); the other aggregates need no window
        # (one window per ideal order: the grade, or a gain map's gain, see _dsl.IRank)
        split = [(o, sub) for ideal, part in plan.ideal_split(aggs)
                 for o, sub in (d.ideal_orders(part) if ideal else [(None, part)])]
        for order, part in split:
            if order is not None:
                judg_part = _ideal(judg, order, jkeys)
            else:
                judg_part = judg
            part_keys = jkeys
            if plan.judgments_need_n_ret():
                judg_part = judg_part.join(universe.select(*keys, N_RET), on=jkeys, how="inner", nulls_equal=True)
                part_keys = keys
            grouped = _grouped(judg_part, part_keys, part, IRANK if order is not None else None, exact=exact)
            stats = stats.join(grouped, on=part_keys, how="left", nulls_equal=True)
    stats = stats.with_columns(pl.col(n).fill_null(0.0) for n in plan.judgment_aggs)

    glob = None
    if plan.global_aggs:
        # over the contributing judgments too: ERR's top grade (the one global aggregate)
        # differs from the top of all judgments only when no grade is positive, where ERR is 0
        everything = qrels if qrels is not None else labelled
        glob = everything.select(e for n, a in plan.global_aggs.items() for e in _aggregate(a, n, exact=exact))

    refs = plan.row_refs
    judgment_refs = [n for n in plan.judgment_aggs if n in refs]
    if judgment_refs:
        rows = rows.join(stats.select(*keys, *judgment_refs), on=keys, how="inner", nulls_equal=True)
    if glob is not None and refs & set(plan.global_aggs):
        rows = rows.join(glob, how="cross")
    for name, icum in d.ideal_cums([*plan.row_aggs.values(), *plan.cums.values()]).items():
        judg, jkeys = (qrels, [Q]) if qrels is not None else (labelled, keys)
        rows = _join_ideal_cum(rows, judg, jkeys, name, icum)
    for level in plan.cum_levels():  # a running sum may read an earlier one
        rows = rows.with_columns(
            compile_expr(arg).cum_sum().over(keys, order_by=RANK).alias(name) for name, arg in level.items()
        )
    if plan.tie_maxes:  # after the running sums, which they may read (formula.tree.TieMax)
        tie = [*keys, compile_expr(d.TIE)]
        rows = rows.with_columns(compile_expr(arg).max().over(tie).alias(name) for name, arg in plan.tie_maxes.items())
    in_pass = [c for c in checks if c not in repeats]
    counts = [e.alias(check_column(c)) for c, e in zip(in_pass, stat_exprs(in_pass))]
    row_aggs = _grouped(rows, keys, plan.row_aggs, RANK, counts, exact)

    # a null group key is a group like any other (nulls_equal on every join on the keys)
    table = stats.join(row_aggs, on=keys, how="left", nulls_equal=True)
    if repeats:
        counted = repeats_polars(run, contributing, keys, repeats, repeat_keys, unproven)
        table = table.join(counted, on=keys, how="left", nulls_equal=True)
    table = table.with_columns(
        *(pl.col(n).fill_null(0.0) for n in plan.row_aggs), *(pl.col(check_column(c)).fill_null(0) for c in checks)
    )
    if glob is not None:
        table = table.join(glob, how="cross")
    values: list[Any] = [compile_expr(v).cast(pl.Float64).alias(label) for label, v in plan.values.items()]
    within = [_within_bounds(table).alias(EXACT)] if exact else []
    return table.select(*keys, *values, *(check_column(c) for c in checks), *within)


class PolarsEngine(Engine):
    """Evaluate a plan with Polars' lazy engine (streaming unless ``streaming=False``).

    Two collections: the checking passes (one row per ranking of the run, one per judged
    query, the repeat hashes of :func:`repeat_sources`) collected together, then the metric
    passes of :func:`metric_passes`; ``progress`` reports each, ``files`` (e.g. ``" (12
    files)"``) is added to the first one's title.
    """

    def __init__(self, streaming: bool = True, progress: Progress | None = None, files: str = "") -> None:
        self.streaming = streaming
        self.progress = progress if progress is not None else NoProgress()
        self.files = files

    def collect(self, lf: pl.LazyFrame) -> pl.DataFrame:
        return lf.collect(engine="streaming" if self.streaming else "auto")

    def _metric_passes(self, plan: Plan, inputs: Inputs, uni: pl.DataFrame, checks: Sequence[str],
                       shown: list[pl.DataFrame], unproven: pl.DataFrame | None, held: pl.DataFrame | None,
                       exact: bool = True) -> pl.DataFrame:
        """The metric passes (:func:`metric_passes`) collected one after the other, concatenated."""
        ranged = metric_passes(plan, inputs, uni, checks, shown, unproven, held, exact)
        tables = []
        title = f"metric pass ({len(plan.outputs)} metrics, {uni.height:,} queries)"
        with self.progress.phase(title, total=len(ranged), unit="query ranges") as step:
            for metric_pass in ranged:
                tables.append(self.collect(metric_pass))
                step(1)
        return pl.concat(tables)

    def evaluate(self, plan: Plan, inputs: Inputs, *, missing: Missing, duplicates: str,
                 families: Outputs = ()) -> pl.DataFrame:
        """One row per evaluated (group, query): the internal keys, one Float64 column per
        metric (the plan's, then the families' of :mod:`rank_polars.engines.base`)."""
        display = self.progress
        # the two checking passes (over every row of the run, over every judgment) run together
        # and keep one row per ranking / judged query; the judgments stay a lazy scan
        checks = contributing_stat_names(inputs, duplicates, plan)
        # distinct counts over every row (a family, score order, checks="strict") in the same
        # pass only while their memory is bounded: see validate.DISTINCT_ROWS
        every = [n for n in stat_names(inputs, duplicates, plan) if n in DISTINCT]
        # repeated positions are counted only in the rankings this proof leaves open, among the
        # contributing rows or (a family beside the plan) every row
        proof = (PositionProof() if "rank_dup" in [*repeat_checks(inputs.run_labels, checks), *every] else None)
        every = [n for n in every if not (proof is not None and n == "rank_dup")]
        # without judgments, the rows the metric pass will hold are counted in the same pass
        held_count = [contributes_expr(plan).sum().alias(HELD)] if inputs.qrels is None else []
        # the families' per-ranking aggregates (the click metrics) ride along the same pass
        riding = ranking_aggs(families, inputs)
        family_rows, family_aggs = riding if riding is not None else ([], [])
        fused = not every or (inputs.rows is not None and inputs.rows <= DISTINCT_ROWS)
        passes = [run_stats_polars(inputs, duplicates, plan, proof, [*held_count, *family_aggs], family_rows,
                                   distinct=fused)]
        if inputs.qrels is not None:
            passes.append(qrels_stats_polars(inputs, contributes_expr(plan)))
        repeat_passes = repeat_sources(plan, inputs, checks)
        passes.extend(repeat_passes)
        # no common-subplan caching: the two judgment passes share a scan, which Polars would
        # otherwise cache whole (38.5M judgments: +1.3 GiB at 200M rows) instead of streaming it
        no_cache = pl.QueryOptFlags(comm_subplan_elim=False)
        checking = "checking the run" + (" and judgments" if inputs.qrels is not None else "") + self.files
        with display.phase(checking):
            stats, *rest = pl.collect_all(passes, engine="streaming" if self.streaming else "auto",
                                          optimizations=no_cache)
            if not fused:
                stats = distinct_counts(stats, inputs, every, plan, self.collect)
        judged = rest[0] if inputs.qrels is not None else None
        shown = rest[len(rest) - len(repeat_passes):] if repeat_passes else []
        per_ranking = None
        if riding is not None:
            names = [e.meta.output_name() for e in family_aggs]
            per_ranking, stats = stats.select(*inputs.keys, *names), stats.drop(names)
        unproven = None
        if proof is not None:
            unproven = proof.unproven(stats, inputs.keys)
            stats = stats.drop(PROOF_COLUMNS)
            if "rank_dup" not in checks:  # every row's: counted here, in the open rankings alone
                # (a distinct count over every row cost 0.5 s of the 1.7 s pass at 20M rows)
                stats = (distinct_counts(stats, inputs, ["rank_dup"], plan, self.collect, unproven) if unproven.height
                         else stats.with_columns(pl.lit(0, pl.Int64).alias("rank_dup")))
                unproven = None
            elif not unproven.height:
                checks = [c for c in checks if c != "rank_dup"]
        check_run(stats, inputs)
        if judged is not None:
            check_qrels(judged, inputs)
        uni = universe(stats, inputs, judged, missing)
        # a plan reading no row (families alone) holds none: one metric pass, no count
        held = held_rows(uni, judged, stats) if self.streaming and plan.reads_rows() else None
        exact = not RANK_ORDER_SUMS.get()
        table = self._metric_passes(plan, inputs, uni, checks, shown, unproven, held, exact)
        if exact and not table[EXACT].all():
            # a sum beyond the fixed point's bound (grades of 2^40 and more): all of them in
            # rank order instead, the same bits every run too
            table = self._metric_passes(plan, inputs, uni, checks, shown, unproven, held, exact=False)
        table = check_contributing(table.drop(EXACT, strict=False), inputs, checks)
        if not families:
            return table
        frames = FamilyFrames(ranked_run(inputs), inputs.qrels, uni, inputs.keys, inputs.columns, per_ranking,
                              inputs.ids, repeat_refusal(inputs, duplicates, plan), plan.check_depth, inputs.checks)
        with display.phase(f"measure families ({len(families)} metrics)"):
            return attach(table, polars_family_values(families, frames, self.streaming), inputs.keys, uni)


__all__ = ["HELD", "HELD_ROWS", "PolarsEngine", "bounds_of", "contributes_expr", "held_per_query", "held_rows",
           "metric_passes", "per_query", "query_bounds", "query_ranges", "range_expr", "ranges_of", "ranked_run",
           "repeat_sources"]
