"""The one validation layer: per-query statistics of a run, the checks on them, and which
queries are evaluated.

Both engines compute the same per-query statistics (one grouped pass over the run; the
DuckDB engine in SQL) and hand them to :func:`check_run`, so an error reads the same
whichever engine found it.  The statistics are small (one row per ranking), and they also
give the number of items of each ranking and the set of queries to evaluate.
"""

from __future__ import annotations

from typing import Any, Literal, Sequence

import polars as pl

from rank_polars.errors import DataError, MetricNameError, RankPolarsError, examples, tally, warn
from rank_polars.inputs import Inputs
from rank_polars.io import ParquetFiles
from rank_polars.plan import GRADE, ITEM, N_RET, Q, QGRADE, RANK, SCORE, Plan
from rank_polars.proof import PositionProof

Missing = Literal["zero", "skip"]

# (statistic column, how it is computed in Polars, the message when it is non-zero)
_STATS = {
    "rank_null": (lambda: pl.col(RANK).null_count(), "{pos}: null positions"),
    "rank_lt1": (lambda: (pl.col(RANK) < 1).sum(), "{pos}: positions must be >= 1 (1 = shown first)"),
    "rank_dup": (
        lambda: pl.len() - pl.col(RANK).n_unique(),
        "{pos}: duplicate positions within a ranking",
    ),
    "score_bad": (
        lambda: pl.col(SCORE).is_null().sum() + pl.col(SCORE).is_nan().sum(),
        "{score}: null or NaN scores",
    ),
    "item_null": (lambda: pl.col(ITEM).null_count(), "{item}: null item ids"),
    "item_dup": (
        # distinct 64-bit hashes: half the cost of distinct strings; a collision (~1e-16
        # per 100-item ranking) can only raise a spurious error, never change a number
        lambda: pl.len() - pl.col(ITEM).hash().n_unique(),
        "{item}: duplicate items within a ranking (keep one row per query and item, or pass duplicates='first')",
    ),
    "grade_bad": (
        # an infinite grade has no gain (inf/inf is NaN): refused like a missing one
        lambda: pl.col(GRADE).is_null().sum() + pl.col(GRADE).cast(pl.Float64).is_infinite().sum()
        + pl.col(GRADE).cast(pl.Float64).is_nan().sum(),
        "{rel}: null or NaN relevance labels or infinite ones (label every row with a finite grade, or pass qrels=)",
    ),
    # labels="run": each contributing row must be judged in the qrels with its own label
    "label_mismatch": (
        lambda: (pl.col(QGRADE).is_null() | (pl.col(QGRADE) != pl.col(GRADE))).sum(),
        "{rel}: the run's labels disagree with the qrels (labels='run' needs every relevant or judged "
        "row of the run judged in the qrels with the same grade; pass labels='qrels' to use the qrels' grades)",
    ),
}


def check_metrics_argument(metrics: object) -> None:
    """``metrics`` is a name, a spec, or a list or tuple of them (else :class:`MetricNameError`)."""
    from rank_polars.measures import Measure

    def ok(m: object) -> bool:
        return isinstance(m, (str, Measure))

    if not (ok(metrics) or isinstance(metrics, (list, tuple)) and all(ok(m) for m in metrics)):
        shown = type(metrics).__name__ if not isinstance(metrics, (list, tuple)) else next(
            type(m).__name__ for m in metrics if not ok(m))
        raise MetricNameError(
            f"metrics: expected a metric name such as 'ndcg@10', a spec such as rp.ndcg(k=10), or a list of them; "
            f"got {shown}: {metrics!r}"
        )


def check_names(names: dict[str, object], by: object) -> list[str]:
    """Column-name arguments (role -> name) and ``by``: non-empty strings without NUL, the
    query and item columns distinct from each other and from the other roles.  Returns the
    ``by`` columns as a list.  Checked before any engine sees a name (a NUL in a name makes
    Polars panic when the frame goes to Arrow)."""
    if by is None:
        by_cols: list[object] = []
    elif isinstance(by, str):
        by_cols = [by]
    elif isinstance(by, (list, tuple)):
        by_cols = list(by)
    else:
        raise RankPolarsError(f"by: expected a column name or a list of them, got {type(by).__name__}: {by!r}")
    for role, name in [*names.items(), *(("by", b) for b in by_cols)]:
        if not isinstance(name, str) or not name or "\x00" in name:
            raise RankPolarsError(f"{role}: a column name must be a non-empty string without NUL characters, got {name!r}")
    for role in ("query", "item"):
        others = [r for r, n in names.items() if r != role and n == names[role]]
        if others:
            raise RankPolarsError(
                f"{role} and {others[0]} are the same column {names[role]!r}: each role needs a column of its own"
            )
    return [str(b) for b in by_cols]


def check_output_names(by: list[str], labels: list[str], query: str, per_query: bool) -> None:
    """The result's columns (the ``by`` columns, ``queries`` or the query column, one per
    metric) must not collide."""
    names = [*by, query if per_query else "queries", *labels]
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise RankPolarsError(
                f"the result would have two columns named {name!r} (the 'by' columns, "
                f"{'the query column' if per_query else 'queries'} and the metrics' names): rename the input column"
            )
        seen.add(name)


Scope = Literal["all", "contributing"]


def ranking_check_scope(inputs: Inputs, plan: Plan) -> Scope:
    """Where the ranking checks (:func:`ranking_stats`: positions, item ids, repeated rows)
    run.

    Under position order a position, an item id and a repeated row can change a value only
    where a contributing (relevant or judged) row is involved: a null position of a row that
    adds 0 to every metric, or a position two such rows share, changes nothing; a position
    or an item that a contributing row shares with another row does (see
    :func:`repeat_checks`).  That is unless the order comes
    from scores (every row moves the ones below it, and ties are broken by item id), a
    metric reads the ranking's length, or ``checks="strict"`` (trec_eval refuses any
    repeated item).  So by default these checks run inside the metric pass over the
    contributing rows, ~5% of a log, and the pass over every row reads only the keys (and
    the labels, when they come from the run).  A measure family beside the plan reads rows
    the plan's contributing predicate does not know (``Plan.families``): every row then.
    """
    if inputs.checks == "strict" or inputs.order == "score" or plan.reads_n_ret() or plan.families:
        return "all"
    return "contributing"


def ranking_stats(inputs: Inputs, duplicates: str) -> list[str]:
    """The checks that can change a value only through a row's place in its ranking: null
    or out-of-range positions and null items, and the two distinct counts (duplicate
    positions and items; ``checks="fast"`` skips those)."""
    names = ["rank_null", "rank_lt1", "item_null"] if inputs.order == "position" else ["item_null"]
    if inputs.checks == "fast":
        return names
    names += ["rank_dup"] if inputs.order == "position" else []
    return names + (["item_dup"] if duplicates == "error" else [])


def stat_names(inputs: Inputs, duplicates: str, plan: Plan) -> list[str]:
    """The statistics of the pass over every row of the run: scores and labels (a null one
    hides whether the row contributes), and the ranking checks when
    :func:`ranking_check_scope` says ``"all"``."""
    names = ["score_bad"] if inputs.order == "score" else []
    if inputs.run_labels:
        names.append("grade_bad")
    if ranking_check_scope(inputs, plan) == "all":
        # families that read only the rows relevant in their own judgments and count the items
        # repeated there (diversity, within the cutoff) leave the items over every row alone:
        # an item no measure reads, repeated or null (a null id matches no judgment), changes
        # nothing, as for the plan's contributing rows (0.8 s, then 0.25 s, at 20M rows)
        names += [n for n in ranking_stats(inputs, duplicates)
                  if not (n in ("item_dup", "item_null") and families_count_repeats(inputs, duplicates, plan))]
    return names


def families_count_repeats(inputs: Inputs, duplicates: str, plan: Plan) -> bool:
    """Whether the call's families count the items repeated among the rows they read, in place
    of the distinct count of items over every row (``Plan.own_repeats``; the null items over
    every row are then left alone too): under the default checks, with repeats refused and the
    order given by positions (scores order every row)."""
    return plan.own_repeats and inputs.checks == "full" and duplicates == "error" and inputs.order == "position"


def contributing_stat_names(inputs: Inputs, duplicates: str, plan: Plan) -> list[str]:
    """The checks the metric pass computes over the contributing rows: the ranking checks, and
    with ``labels="run"`` the agreement of the run's labels with the qrels."""
    names = ranking_stats(inputs, duplicates) if ranking_check_scope(inputs, plan) == "contributing" else []
    return names + (["label_mismatch"] if inputs.qrels is not None and inputs.labels == "run" else [])


def repeat_checks(run_labels: bool, names: list[str]) -> list[str]:
    """The contributing-row checks that look beyond the contributing rows: a repeat that
    involves one contributing row changes a value even when the other row adds nothing.

    A non-relevant row at a relevant row's position makes the order of the two ambiguous
    (``rank_dup``); an item shown twice, once relevant, has two ranks (``item_dup``).  So
    these count, per ranking, the rows of the whole run that share a position (or an item)
    with a contributing row, beyond the first: a semi-join of the run against the few
    contributing rows.  With judgments (``labels="qrels"``) every copy of a judged item is a
    contributing row, and the item count over those rows suffices.
    """
    return [n for n in names if n == "rank_dup" or (n == "item_dup" and run_labels)]


def _repeat_value(name: str) -> tuple[str, pl.Expr]:
    # items by their 64-bit hash, as item_dup counts them: 8 bytes instead of a string
    return (RANK, pl.col(RANK)) if name == "rank_dup" else (ITEM, pl.col(ITEM).hash())


def repeat_keys_polars(contributing: pl.LazyFrame, keys: list[str], names: list[str]) -> list[pl.LazyFrame]:
    """The (ranking, position or item) pairs of the contributing rows, one 64-bit hash each
    (per name, a frame of the query and a column of hashes named after the check): small
    (~5% of a log), collected before the metric pass so that :func:`repeats_polars` finds the rows sharing them with ``is_in``, which
    streams, where a join of the whole run with them does not (Polars' streaming joins hold
    the probe side: 13.7 GiB at 200M rows).  Collected as a column, not imploded: a
    streaming ``implode`` of 11M hashes peaked at 1.42 GiB, the column at 0.20.  The query
    lets a metric pass over a range of queries probe only that range's hashes."""
    frames = []
    for name in names:
        col, value = _repeat_value(name)
        hashes = pl.struct(*keys, value.alias(col)).hash().alias(name)
        frames.append(contributing.filter(pl.col(col).is_not_null()).select(Q, hashes))
    return frames


def keys_in(keys: list[str], rankings: pl.DataFrame) -> pl.Expr:
    """Whether a row's ranking (its ``keys``) is one of ``rankings``, by a 64-bit hash of the
    keys: a collision only adds a ranking, so a count over the rows it selects can only add
    rows to check, never miss one."""
    return pl.struct(*keys).hash().is_in(rankings.select(pl.struct(*keys).hash()).to_series().implode())


def repeats_polars(run: pl.LazyFrame, contributing: pl.LazyFrame, keys: list[str], names: list[str],
                   shown: dict[str, pl.Series] | None = None, unproven: pl.DataFrame | None = None) -> pl.LazyFrame:
    """Per ranking, the counts of :func:`repeat_checks` as ``check_column(name)`` columns.

    Items are compared by their 64-bit hash, as ``item_dup`` counts them: the join then
    carries 8 bytes, not a string.  A collision can only add a row that is counted only if
    its hash repeats in its ranking: a spurious error, never a missed one.  With ``shown``
    (:func:`repeat_keys_polars`, collected) the rows are found by ``is_in`` on one hash of
    (ranking, value) instead of a join (same rule for collisions).  With ``unproven`` (the
    keys of the rankings :class:`~rank_polars.proof.PositionProof` left open) the positions
    are counted in those rankings only (found by ``is_in`` on a hash of the keys: a
    collision only adds a ranking to count).
    """
    counts = None
    for name in names:
        col, value = _repeat_value(name)
        rows, source = run, contributing
        if name == "rank_dup" and unproven is not None:
            open_keys = keys_in(keys, unproven)
            rows, source = run.filter(open_keys), contributing.filter(open_keys)
        # a null position or id is refused on its own (rank_null, item_null): not a repeat
        if shown is not None and name in shown:
            hashes = shown[name]
            probe = rows.filter(pl.col(col).is_not_null()).select(*keys, value.alias(col))
            shared = probe.filter(pl.struct(*keys, col).hash().is_in(hashes.implode()))
        else:
            seen = source.filter(pl.col(col).is_not_null()).select(*keys, value.alias(col))
            shared = rows.select(*keys, value.alias(col)).join(seen, on=[*keys, col], how="semi", nulls_equal=True)
        count = shared.group_by(keys).agg((pl.len() - pl.col(col).n_unique()).cast(pl.Int64).alias(check_column(name)))
        counts = count if counts is None else counts.join(count, on=keys, how="full", coalesce=True, nulls_equal=True)
    assert counts is not None
    return counts


def check_column(stat: str) -> str:
    """Name of a contributing-row statistic in the per-query table of an engine."""
    return f"__rp_chk_{stat}"


def stat_exprs(names: list[str], depth: int | None = None) -> list[pl.Expr]:
    """The statistics ``names``; with ``depth`` (:func:`repeat_depth`) the repeats are counted
    among the rows at positions 1..depth only."""
    out = []
    for name in names:
        expr = _STATS[name][0]()
        if depth is not None and name in ("rank_dup", "item_dup"):
            # the rows below depth (or without a position) become one null value: no filter
            # inside the streaming group-by (a filter there took 40% longer and 0.5 GiB more)
            top = (pl.col(RANK) <= depth).fill_null(False)
            value = pl.when(top).then(pl.col(RANK) if name == "rank_dup" else pl.col(ITEM).hash())
            expr = top.sum() - (value.n_unique() - (~top).any().cast(pl.UInt32))
        out.append(expr.cast(pl.Int64).alias(name))
    return out


def repeat_depth(inputs: Inputs, plan: Plan) -> int | None:
    """How deep repeated positions and items can change a value when the checks cover every
    row only because of a measure family (``Plan.families``): a family at k reads the top k
    (``Plan.check_depth``), so a repeat below every cutoff changes nothing.  None: every row
    (scores decide the order, ``checks="strict"``, a metric reads the ranking's length, or a
    family reads the whole list)."""
    if inputs.order != "position" or inputs.checks == "strict" or not plan.families or plan.reads_n_ret():
        return None
    return plan.check_depth


#: The distinct counts of the pass over every row (``rank_dup``, ``item_dup``) hold each
#: row's value until its ranking is done, ~85 bytes a row: 17.6 GiB at 200M rows, where the
#: rest of the pass holds 3.7.  Past this many rows (or when the run's size is not known
#: beforehand) they are counted after the pass, range by range of query ids
#: (``polars_engine.distinct_counts``), so the memory stays bounded.
DISTINCT_ROWS = 25_000_000
DISTINCT = ("rank_dup", "item_dup")


def run_stats_polars(inputs: Inputs, duplicates: str, plan: Plan, proof: PositionProof | None = None,
                     extra: Sequence[pl.Expr] = (), rows: Sequence[pl.Expr] = (), distinct: bool = True) -> pl.LazyFrame:
    """One row per ranking: its length and every check's count of offending rows (and, with
    ``proof``, its columns: see :mod:`rank_polars.proof`; and the ``extra`` aggregates, which
    may read the per-row columns ``rows``).  ``distinct=False``: without the distinct counts
    (:data:`DISTINCT`), which ``polars_engine.distinct_counts`` then adds.  With ``proof``,
    repeated positions are the proof's to settle (``polars_engine.distinct_counts`` of the
    rankings it leaves open), not a
    distinct count's."""
    names = [n for n in stat_names(inputs, duplicates, plan)
             if (distinct or n not in DISTINCT) and not (proof is not None and n == "rank_dup")]
    aggs = [pl.len().alias(N_RET), *stat_exprs(names, repeat_depth(inputs, plan)), *extra]
    run = inputs.run if proof is None else proof.with_word(inputs.run)
    if rows:
        run = run.with_columns(rows)
    return run.group_by(inputs.keys).agg(*aggs, *(proof.aggs() if proof is not None else []))


def check_contributing(table: pl.DataFrame, inputs: Inputs, names: list[str]) -> pl.DataFrame:
    """Raise on the duplicate counts an engine computed over the contributing rows; return
    the per-query table without them."""
    if not names:
        return table
    check_run(table.select(*inputs.keys, *(pl.col(check_column(n)).alias(n) for n in names)), inputs)
    return table.drop(check_column(n) for n in names)


def check_values(table: pl.DataFrame, plan: Plan, inputs: Inputs) -> None:
    """Raise :class:`DataError` if a metric is not a finite number on some query.

    Grades are finite (the checks refuse the others), so this happens only when a sum
    overflows float64: ``2^grade - 1`` (``gain="exp"``, ERR) is infinite from grade 1024 on,
    and nDCG or ERR then divide infinity by infinity.  Never a NaN in the output.
    """
    labels = [label for label, _ in plan.outputs]
    finite = [pl.col(label).is_finite().fill_null(False) for label in labels]
    bad = table.filter(~pl.all_horizontal(finite))
    if not bad.height:
        warn_unreachable_thresholds(plan.outputs, inputs)
        return
    metric = next(label for label in labels if not bad[label].is_finite().fill_null(False).all())
    where = examples((_where(row, inputs) for row in bad.sort(inputs.keys).iter_rows(named=True)), quote=False)
    side = inputs.qrels if inputs.qrels is not None else inputs.run
    # the engine's table may carry the ids in another type than the input (a categorical read
    # back as text from DuckDB): compared as text, which every id type has
    as_text = pl.col(Q).cast(pl.String)
    top = (side.with_columns(as_text).join(bad.lazy().select(as_text).unique(), on=Q, how="semi")
           .select(pl.col(GRADE).cast(pl.Float64).max()))
    raise DataError(
        f"metric {metric!r} is not a finite number on {bad.height} queries, e.g. query {where}: the largest grade "
        f"there is {top.collect().item()}, and 2^grade overflows from grade 1024 on (gain='exp', err); "
        "rescale the grades or use a linear gain"
    )


def warn_unreachable_thresholds(outputs: Sequence[tuple[str, Any]], inputs: Inputs) -> None:
    """A :class:`CoverageWarning` for each metric whose ``rel=`` threshold no grade reaches.

    Such a metric is 0 on every query, which reads like a bad system rather than a
    threshold above the data's scale (labels in [0, 1] and ``p(rel=2)@5``).  The largest
    finite grade is read (one column; from the judgments when given) only when a metric
    sets ``rel``.

    Examples
    --------
    >>> import warnings, polars as pl, rank_polars as rp
    >>> log = pl.DataFrame({"query": ["q1", "q1"], "item": ["a", "b"], "position": [1, 2], "relevance": [0.0, 0.8]})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = rp.evaluate(log, ["p(rel=2)@5"])
    >>> print(caught[0].message)
    metric 'p(rel=2)@5' counts an item as relevant from grade 2 (rel=2), above every grade in the data (the largest is 0.8): it is 0 on every query
    """
    for label, rel, top in unreachable_thresholds(outputs, inputs):
        seen = "there are no finite grades" if top is None else f"the largest is {top:g}"
        warn(f"metric {label!r} counts an item as relevant from grade {rel:g} (rel={rel:g}), above every grade "
             f"in the data ({seen}): it is 0 on every query")


def warn_undefined(table: pl.DataFrame, outputs: Sequence[tuple[str, Any]], inputs: Inputs) -> None:
    """A CoverageWarning for each measure a family leaves undefined (null) on some queries: the
    ILS of a one-item list, the serendipity of a user without history, EPC / EFD of a list with
    nothing relevant, a CTR with no row in the top k.  Their means are over the queries that
    have a value while ``queries`` counts every one: said, not silent."""
    for label, measure in outputs:
        if measure.AGGREGATE == "catalog" or label not in table.columns:
            continue
        undefined = table.filter(pl.col(label).is_null())
        if inputs.absent is not None and measure.missing_scores_best:  # said by leave_out_missing
            undefined = undefined.join(inputs.absent, on=inputs.keys, how="anti", nulls_equal=True)
        if undefined.height:
            some = undefined.get_column(Q).drop_nulls().cast(pl.String).unique().sort().head(3).to_list()
            warn(f"{label}: undefined (null) on {undefined.height:,} of {table.height:,} queries, left out of its mean "
                 f"(e.g. {inputs.columns.query} {examples(some, 3)}); per_query=True shows them")


def warn_all_zero(table: pl.DataFrame, outputs: Sequence[tuple[str, Any]], inputs: Inputs) -> None:
    """A CoverageWarning when, with judgments, every per-query measure is 0 on every query (for
    the gain measures: no retrieved item is relevant anywhere).  A real ranker seldom scores so; ids written two ways
    do (``"d1 "`` against ``"d1"``, ``"007"`` against ``7``: by the id rule different items), and
    nothing else would say so.  Free: it reads the values already computed."""
    labels = [label for label, measure in outputs if measure.AGGREGATE != "catalog" and label in table.columns]
    if inputs.qrels is None or not labels or not table.height:
        return
    if table.select(pl.all_horizontal((pl.col(label).fill_null(0.0) == 0.0).all() for label in labels)).item():
        # a threshold above every grade explains its zeros, and has its own warning
        explained = {label for label, _, _ in unreachable_thresholds(outputs, inputs)}
        labels = [label for label in labels if label not in explained]
        if not labels:
            return
        warn(f"{', '.join(labels)}: 0 on every one of the {table.height:,} queries; if that is unexpected, check "
             f"that the run and the judgments write the ids alike (by the id rule 'd1 ' is not 'd1' and '007' is not 7)")


def unreachable_thresholds(outputs: Sequence[tuple[str, Any]], inputs: Inputs) -> list[tuple[str, float, float | None]]:
    """``(label, rel, largest grade)`` of each metric whose ``rel=`` threshold no grade reaches
    (the largest finite grade read only when a metric sets ``rel``; Spark frames: none)."""
    wanted = [(label, spec.params["rel"]) for label, spec in outputs
              if getattr(spec, "params", None) and spec.params.get("rel") is not None]
    side = inputs.qrels if inputs.qrels is not None else inputs.run
    if not wanted or not isinstance(side, pl.LazyFrame):
        return []
    grade = pl.col(GRADE).cast(pl.Float64)
    top = side.select(grade.filter(grade.is_finite()).max()).collect().item()
    return [(label, rel, top) for label, rel in wanted if top is None or rel > top]


VERSION_COLUMNS = ("model", "version", "system", "variant", "tag")


def by_hint(inputs: Inputs) -> str:
    """``; the run has a 'model' column: did you mean by="model"?`` for repeats in an ungrouped
    log that holds several versions (each version's rankings then look like one); else nothing."""
    if inputs.by or not isinstance(inputs.run_source, (pl.LazyFrame, ParquetFiles)):
        return ""
    source = inputs.run_source.scan() if isinstance(inputs.run_source, ParquetFiles) else inputs.run_source
    names = source.collect_schema().names()  # only on this error path: a schema, no rows
    col = next((c for c in VERSION_COLUMNS if c in names), None)
    return f'; the run has a {col!r} column: did you mean by="{col}"?' if col else ""


def _where(row: dict, inputs: Inputs) -> str:
    extra = ", ".join(f"{name}={row[f'__rp_by{i}']!r}" for i, name in enumerate(inputs.by))
    return repr(row[Q]) + (f" ({extra})" if extra else "")


def check_run(stats: pl.DataFrame, inputs: Inputs) -> None:
    """Raise :class:`DataError` naming the column, the problem and a few offending queries."""
    c = inputs.columns
    if stats.select(pl.col(Q).is_null().any()).item():
        rows = stats.filter(pl.col(Q).is_null())[N_RET].sum()
        raise DataError(f"run: column {c.query!r} has null query ids ({rows} rows)")
    names = {"pos": repr(c.position), "score": repr(c.score), "item": repr(c.item), "rel": repr(c.relevance)}
    for stat, (_, message) in _STATS.items():
        if stat not in stats.columns:
            continue
        bad = stats.filter(pl.col(stat) > 0)
        if bad.height:
            where = examples((_where(row, inputs) for row in bad.sort(inputs.keys).iter_rows(named=True)), quote=False)
            counted = tally(int(bad[stat].sum()), bad.height, stat, inputs.checks)
            hint = by_hint(inputs) if stat.endswith("_dup") else ""
            raise DataError("run: column " + message.format(**names) + f" ({counted}), e.g. query {where}{hint}")


# (statistic of the judgments, per query; the message when it is non-zero).  A null query
# id forms a group of its own.
_QSTATS = {
    "q_item_null": "column {item} has {n} null values",
    "q_grade_null": "column {rel} has {n} null values",
    "q_grade_nan": "column {rel} has {n} NaN grades or infinite ones (every grade must be a finite number)",
    "q_dup": "duplicate judgments for the same (query, item) in columns {query}, {item} ({n} rows)",
}


def qrels_stats_polars(inputs: Inputs, contributes: pl.Expr) -> pl.LazyFrame:
    """Per-query statistics of the judgments (``contributes``: the plan's predicate over a
    judgment's grade, as a Polars expression).

    Null ids and grades are counted over every judgment.  Duplicate (query, item) pairs are
    counted as distinct 64-bit item hashes among the judgments that contribute (by default:
    a repeated judgment that no metric reads changes nothing, and ~80% of judgments are
    not relevant), among all of them with ``checks="strict"``.  ``"fast"`` counts them too:
    two grades for one contributing item make a value depend on row order, and the count
    runs over the few contributing judgments only.
    The distinct count is a pass of its own over the judgments it needs (filtered at the
    Parquet reader): inside the null counts' group-by, as a filtered aggregate, it held
    every judgment in memory.
    """
    assert inputs.qrels is not None
    grade = pl.col(GRADE)
    counts = [pl.len().alias("q_n"), contributes.sum().alias("q_contributing"), pl.col(ITEM).null_count().alias("q_item_null"),
              grade.null_count().alias("q_grade_null"), (grade.is_nan() | grade.is_infinite()).sum().alias("q_grade_nan")]
    stats = inputs.qrels.group_by(Q).agg(e.cast(pl.Int64) for e in counts)
    judgments = inputs.qrels if inputs.checks == "strict" else inputs.qrels.filter(contributes)
    dup = (pl.len() - pl.col(ITEM).hash().n_unique()).cast(pl.Int64).alias("q_dup")
    return stats.join(judgments.group_by(Q).agg(dup), on=Q, how="left").with_columns(pl.col("q_dup").fill_null(0))


def check_qrels(qstats: pl.DataFrame, inputs: Inputs) -> None:
    """Raise :class:`DataError` on the per-query statistics of the judgments."""
    c = inputs.columns.judged  # the judgments' own names
    names = {"query": repr(c.query), "item": repr(c.item), "rel": repr(c.relevance)}
    null_query = qstats.filter(pl.col(Q).is_null())
    if null_query.height:
        raise DataError(f"qrels: column {c.query!r} has {int(null_query['q_n'].sum())} null values")
    for stat, message in _QSTATS.items():
        if stat not in qstats.columns:
            continue
        bad = qstats.filter(pl.col(stat) > 0)
        if bad.height:
            text = message.format(n=int(bad[stat].sum()), **names)
            raise DataError(f"qrels: {text}, e.g. query {examples(bad[Q].sort().to_list())}")


def universe(stats: pl.DataFrame, inputs: Inputs, judged: pl.DataFrame | None, missing: Missing) -> pl.DataFrame:
    """The (group, query) pairs to evaluate, with each ranking's length (0 when missing).

    With judgments only judged queries count; a judged query absent from a group's run is
    scored 0 (``missing="zero"``, trec_eval ``-c``) or left out (``"skip"``).  Everything
    dropped or zero-filled is reported in a :class:`CoverageWarning`.
    """
    keys, by = inputs.keys, inputs.by_internal
    stats = stats.select(*keys, N_RET)
    if inputs.emptied is not None:  # judged_only: a ranking of unjudged rows alone has length 0, not absent
        emptied = inputs.emptied.collect()
        stats = pl.concat([stats, emptied.with_columns(pl.lit(0, stats.schema[N_RET]).alias(N_RET))], how="vertical_relaxed")
    if judged is None:
        return stats
    judged_queries = judged.select(Q)  # one row per judged query (check_qrels' statistics)
    # a membership test, not joins on the (group, query) keys: at 10M rankings the left join of
    # every (group, judged query) with the rankings took 3.5 s and +1.8 GiB, the peak of the call
    is_judged = stats.select(pl.col(Q).is_in(judged_queries.to_series().implode(), nulls_equal=True)).to_series()
    present = stats
    if not is_judged.all():  # (a copy of every ranking otherwise)
        ids = stats.filter(~is_judged)[Q].unique().sort().to_list()
        warn(
            f"{len(ids)} queries of the run have no judgments and are not evaluated, e.g. {examples(ids)}",
        )
        present = stats.filter(is_judged)
    # a group that ranked fewer judged queries than there are misses some: only those groups'
    # (group, judged query) pairs are looked up (none, in a complete run)
    if by:
        ranked = stats.select(by).unique().join(present.group_by(by).len(), on=by, how="left", nulls_equal=True)
        short = ranked.filter(pl.col("len").fill_null(0) < judged_queries.height).select(by)
        expected = short.join(judged_queries, how="cross")
    else:
        expected = judged_queries if present.height < judged_queries.height else judged_queries.clear()
    absent = expected.join(present, on=keys, how="anti", nulls_equal=True)
    if absent.height:
        ids = absent[Q].unique().sort().to_list()
        fate = "scored 0 and counted (missing='zero')" if missing == "zero" else "left out (missing='skip')"
        warn(
            f"{absent.height} (group, judged query) pairs have no ranking in the run and are {fate}, "
            f"e.g. query {examples(ids)}",
        )
    if missing == "skip" or not absent.height:
        return present
    inputs.absent = absent.select(*keys)
    return pl.concat([present, absent.select(*keys, pl.lit(0, present.schema[N_RET]).alias(N_RET))])


def leave_out_missing(table: pl.DataFrame, outputs: Sequence[tuple[str, Any]], inputs: Inputs) -> pl.DataFrame:
    """``table`` with the lower-is-better measures null where a judged query's ranking was missing
    (``missing="zero"``): a missing list would otherwise score their best value, 0 (no ILS, no
    popularity, no fall-out, no abandonment), and look better than any list shown.  They are left
    out of those measures' means, and a CoverageWarning says how many; the higher-is-better
    measures keep the 0 that ``missing="zero"`` means (trec_eval ``-c``)."""
    lower = [label for label, spec in outputs if spec.missing_scores_best and label in table.columns]
    if inputs.absent is None or not inputs.absent.height or not lower:
        return table
    flag = "__rp_absent"
    flagged = table.join(inputs.absent.with_columns(pl.lit(True).alias(flag)), on=inputs.keys, how="left",
                         nulls_equal=True).with_columns(pl.col(flag).fill_null(False))
    missing = flagged.filter(pl.col(flag))
    if not missing.height:
        return table
    some = missing.get_column(Q).cast(pl.String).unique().sort().head(3).to_list()
    warn(f"{', '.join(lower)}: {missing.height:,} (group, judged query) pairs without a ranking are left out of these "
         f"lower-is-better measures, not scored 0 (their best value), e.g. {inputs.columns.query} {examples(some, 3)}")
    return flagged.with_columns(pl.when(pl.col(flag)).then(None).otherwise(pl.col(label)).alias(label)
                                for label in lower).drop(flag)
