"""``evaluate``: metrics per model version (or any grouping) over a ranking log."""

from __future__ import annotations

import contextlib
import functools
from dataclasses import replace
from typing import Any, Literal, Mapping, Sequence

import polars as pl

from rank_polars.engines.base import Engine as EngineBase
from rank_polars.engines.base import auxiliary_tables, split_outputs
from rank_polars.engines.exact import adder, within_bound
from rank_polars.engines.polars_engine import PolarsEngine
from rank_polars.errors import RankPolarsError
from rank_polars.families.diversity import bind_subtopics
from rank_polars.inputs import Columns, Inputs, Source, judgments_as_log, prepare
from rank_polars.judges.table import one_judge
from rank_polars.measures import MetricLike, parse_all
from rank_polars.measures.base import GM_FLOOR, Measure, refuse_ties_by_position
from rank_polars.measures.clicks import click_column, clicks_named, first_click, first_labelled, is_click
from rank_polars.measures.counts import NumQ
from rank_polars.plan import ITEM, RANK, SCORE, Plan, Q, build_plan
from rank_polars.progress import ProgressLike, resolve
from rank_polars.schema import Schema, as_schema
from rank_polars.validate import (
    Missing,
    check_metrics_argument,
    check_names,
    check_output_names,
    check_values,
    leave_out_missing,
    warn_all_zero,
    warn_undefined,
)

Engine = Literal["polars", "duckdb", "spark"]
_UNIVERSE_ONLY = "__rp_num_q"  # the plan's one metric when only measure families are requested


def evaluate(
    run: Source,
    metrics: MetricLike | Sequence[MetricLike],
    *,
    qrels: Source | None = None,
    labels: Literal["qrels", "run"] = "qrels",
    by: str | Sequence[str] | None = None,
    per_query: bool | Literal["spark"] = False,
    missing: Missing = "zero",
    engine: Engine = "polars",
    duplicates: Literal["error", "first"] = "error",
    checks: Literal["full", "strict", "fast"] = "full",
    schema: Schema | None = None,
    query: str | None = None,
    item: str | None = None,
    position: str | None = None,
    score: str | None = None,
    relevance: str | None = None,
    streaming: bool = True,
    duckdb_memory_limit: str | None = None,
    duckdb_temp_directory: str | None = None,
    spark: Any = None,
    order: Literal["auto", "position", "score"] = "auto",
    progress: ProgressLike = False,
    ci: float | None = None,
    ci_method: Literal["t", "bootstrap", "bca"] = "t",
    judge: str | None = None,
    by_judge: bool = False,
    bounds: bool = False,
    judged_only: bool = False,
) -> pl.DataFrame:
    """Evaluate ranking metrics over a long-format log, per group.

    Parameters
    ----------
    run
        One row per shown item: query, item, ``position`` (1 = first; taken as given) or
        ``score`` (higher first; ties broken by item id descending, as trec_eval), a
        ``relevance`` label unless ``qrels`` are given, and any grouping columns.
        A DataFrame, a LazyFrame, or Parquet path(s) / glob / hive-partitioned folder.
    metrics
        Names such as ``"ndcg@10"``, ``"ap(denom=min)@5"``, ``"mrr"`` or specs such as
        ``rp.ndcg(k=10, gain="exp")``; output columns are named by the string given.
        Click metrics (``ctr@10``, ``click_rr``, ``abandonment``: :mod:`rank_polars.measures.clicks`)
        always read the run's ``click`` column (the schema's ``click=``, or a spec's own
        ``click=``), whatever ``qrels`` and ``labels`` say; every other metric reads the labels
        or the judgments, as without them: a value never depends on the other metrics of the
        call.  ``relevance="click"`` makes the clicks the labels too (``rr`` or ``p@5``
        counting clicks).
    qrels
        Judgments ``query, item, relevance``.  When given they alone decide relevance (the
        run's relevance column is not read), only judged queries are evaluated, and the
        ideal ranking, R and bpref's N come from all judgments of the query.
    labels
        With ``qrels``, where the grades of the shown rows come from.  ``"qrels"``
        (default): the judgments, joined to the run.  ``"run"``: the run's ``relevance``
        column, so the whole log is never joined with the judgments (not faster with the
        default checks: refusing an item shown twice reads every row's item id, see
        ``docs/data-model.md``); the judgments still give the ideal ranking, R, N and the
        judged queries.
        Every relevant or judged row of the run must then be judged in the qrels with the
        same grade, or a ``DataError`` names the rows that disagree.  (A relevant judged
        item shown but labelled 0 in the run cannot be told from an unjudged one without
        the join: use ``"run"`` only for logs whose labels were copied from these qrels.)
    by
        Grouping column(s), e.g. ``"model"``; each group is judged on every judged query.
    per_query
        One row per (group, query) instead of the aggregates (means; sums for the
        ``num_*`` counts, geometric means for ``gm_map`` / ``gm_bpref``: each spec's ``AGGREGATE``).
    missing
        A judged query absent from a group's run: ``"zero"`` scores it 0 and counts it
        (trec_eval ``-c``, ir_measures), ``"skip"`` leaves it out (trec_eval 9, pytrec_eval).
    engine
        ``"polars"`` (lazy, streaming by default; past 4M contributing rows the metric pass
        runs per range of query ids, see the "Engines and scale" page), ``"duckdb"`` (same
        numbers, in SQL; bounded by ``duckdb_memory_limit``, default half the memory up to 1.5 GiB, spilling to
        ``duckdb_temp_directory``) or ``"spark"`` (the same SQL in Spark, through ``spark=``
        or the active ``SparkSession``; ``run`` / ``qrels`` may then also be Spark DataFrames
        or table names).  With ``"spark"``, ``per_query="spark"`` returns the per-query values
        as a Spark DataFrame (checked, not collected).
    duplicates
        ``"error"`` (default) on a repeated (query, item) within a ranking, or ``"first"``
        to keep its first occurrence (lowest position, or highest score).
    checks
        Every check runs over the rows where its column can change a value.  Scores, labels
        and null judgment ids or grades are checked everywhere.  Positions, item ids and
        repeated rows (duplicate positions or items within a ranking, which cost a distinct
        count per ranking) can only change a value where a row contributes, so ``"full"``
        (default) checks them among the contributing rows (relevant or judged rows, ~5% of a
        log, inside the metric pass), or among all rows when ordering by score, when a
        metric reads the ranking length or when a measure family is asked for (clicks,
        diversity, beyond accuracy: they read rows a relevance label does not mark; their
        repeats are looked for down to the deepest cutoff of the call): a position or an
        item that a contributing row shares with any other row of the ranking is refused (the order, or the rank, would be
        ambiguous); duplicate judgments are looked for among the contributing judgments.
        Repeats among rows that are neither relevant nor judged, and their null positions,
        cannot change any number and are not looked for.  ``"strict"`` checks every
        row and judgment, as trec_eval does (it also refuses an item shown twice with
        different labels).  ``"fast"`` skips the run's duplicate counts (repeated judgments of
        a contributing item are always refused: which grade wins would depend on row order).
    duckdb_memory_limit, duckdb_temp_directory
        DuckDB's ``memory_limit`` (e.g. ``"8GB"``; default half the memory, at most 1.5 GiB, or
        1 GiB with ``labels="run"``, whose check holds more beside the limit)
        and the folder it spills to (default a fresh temporary folder, removed afterwards).
    spark
        With ``engine="spark"``: the ``SparkSession`` to run in (default the active one).
    schema, query, item, position, score, relevance
        The column names of the log's roles, and of the judgments' where they differ: a
        :class:`rank_polars.Schema` (``Schema(query="search_id", relevance="label",
        judgments=Schema(relevance="grade"))``), or the flat keywords for the log's (default: each
        role's own name).  A keyword and the schema naming a role differently is an error.
    order
        ``"auto"`` (default): by ``position`` when the run has that column, else by
        ``score``.  ``"position"`` / ``"score"``: by that column, even when the other exists.
    progress
        ``True``: show the phases (checking the run and judgments, the metric pass) on
        stderr or in the notebook; a :class:`rank_polars.progress.Progress` to report to.
        Off by default.
    ci, ci_method
        ``ci=0.95`` adds ``<metric>_low`` and ``<metric>_high`` after each metric: a confidence
        interval on its aggregate with queries as the unit, ``"t"`` (default, from the groups'
        counts, means and standard deviations), ``"bootstrap"`` (percentile) or ``"bca"``
        (10,000 seeded resamples of the queries); sums and geometric means get the interval
        of that aggregate (:mod:`rank_polars.stats.intervals`).  Off by default; not with ``per_query``.
    judged_only
        ``True``: the rows whose (query, item) is not judged (no judgment ``>= 0``; without
        ``qrels``, a negative label) are removed before ranks are numbered, for every metric:
        trec_eval's ``-J``, pytrec_eval's ``judged_docs_only_flag``, ir_measures'
        ``judged_only=True``.  By score the rest is ranked as usual; by position its positions
        become 1, 2, ... in their order.  A ranking left without a row is a ranking of length
        0 (scored as such, not ``missing``).  In every engine (Spark removes the rows in Spark).
    judge, by_judge
        Judgments of several judges in one table (a ``judge`` column, the schema's ``judge``
        role, or a dict ``{judge: judgments}``): ``judge="llm-a"`` reads that judge's labels;
        ``by_judge=True`` evaluates under each judge, the tables stacked under a ``judge`` column
        (:mod:`rank_polars.judges`).  Several judges and neither is an error naming them.
    bounds
        ``True`` adds ``<metric>_low`` (unjudged shown items read as not relevant: the metric
        itself) and ``<metric>_high`` (read as relevant at the judgments' top grade) after each
        metric: what the unjudged items leave open (:mod:`rank_polars.judges.calls`).  With
        ``qrels``; not with ``ci``.

    Returns
    -------
    pl.DataFrame
        The ``by`` columns, ``queries`` (how many queries were averaged) and one column per
        metric, or with ``per_query=True`` the ``by`` columns, the query column and the
        metrics.  Queries dropped or zero-filled are reported by a ``CoverageWarning``.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> log = pl.DataFrame({
    ...     "model": ["a", "a", "a", "b", "b", "b"],
    ...     "query": ["q1", "q1", "q2", "q1", "q1", "q2"],
    ...     "item": ["x", "y", "z", "y", "x", "z"],
    ...     "position": [1, 2, 1, 1, 2, 1],
    ...     "relevance": [0, 1, 1, 1, 0, 1],
    ... })
    >>> rp.evaluate(log, ["ndcg@10", "mrr"], by="model")
    shape: (2, 4)
    ┌───────┬─────────┬──────────┬──────┐
    │ model ┆ queries ┆ ndcg@10  ┆ mrr  │
    │ ---   ┆ ---     ┆ ---      ┆ ---  │
    │ str   ┆ u32     ┆ f64      ┆ f64  │
    ╞═══════╪═════════╪══════════╪══════╡
    │ a     ┆ 2       ┆ 0.815465 ┆ 0.75 │
    │ b     ┆ 2       ┆ 1.0      ┆ 1.0  │
    └───────┴─────────┴──────────┴──────┘
    """
    if missing not in ("zero", "skip"):
        raise RankPolarsError(f"missing must be 'zero' or 'skip', got {missing!r}")
    if ci is not None:  # intervals on the aggregates (rank_polars.stats.intervals)
        from rank_polars.stats.intervals import check_ci

        check_ci(ci, ci_method)
        if per_query:
            raise RankPolarsError("ci= is an interval on each group's aggregate: it has no per-query value")
    if checks not in ("full", "strict", "fast"):
        raise RankPolarsError(f"checks must be 'full', 'strict' or 'fast', got {checks!r}")
    if duplicates not in ("error", "first"):
        raise RankPolarsError(f"duplicates must be 'error' or 'first', got {duplicates!r}")
    if labels not in ("qrels", "run"):
        raise RankPolarsError(f"labels must be 'qrels' or 'run', got {labels!r}")
    if engine not in ("polars", "duckdb", "spark"):
        raise RankPolarsError(f"engine must be 'polars', 'duckdb' or 'spark', got {engine!r}")
    if per_query == "spark" and engine != "spark":
        raise RankPolarsError("per_query='spark' keeps the values in Spark: it needs engine='spark'")
    call = dict(locals())  # the arguments, for rank_polars.judges to evaluate again
    mapping = as_schema(schema, query=query, item=item, position=position, score=score, relevance=relevance)
    if by_judge or bounds:  # each judge's labels in turn, or the bounds unjudged items leave open
        from rank_polars.judges.calls import evaluate_again

        return evaluate_again(evaluate, call, mapping)
    qrels = one_judge(qrels, mapping, judge)  # one judge's labels: several are never mixed
    query, item, position, score = (mapping.column(r) for r in ("query", "item", "position", "score"))
    names = {"query": query, "item": item, "position": position, "score": score, "relevance": mapping.column("relevance")}
    by_cols = check_names(names, by)
    check_metrics_argument(metrics)
    outputs = clicks_named(parse_all(metrics), mapping.click)
    # one reading per call: the click metrics read the run's click column (carried beside the
    # labels), every other metric the labels or the judgments (measures.clicks)
    click = click_column(outputs)
    relevance = mapping.column("relevance")
    check_output_names(by_cols, [label for label, _ in outputs], query, per_query)
    columns = replace(Columns.of(mapping), click=click)
    qrels = judgments_as_log(qrels, columns)
    plan_outputs, families = split_outputs(outputs)
    # subtopic judgments given as qrels: the diversity specs read them
    qrels, families = bind_subtopics(qrels, families, query, item, relevance, grades_needed=bool(plan_outputs),
                                     in_memory=engine == "polars", strict=checks == "strict",
                                     prefilter=engine in ("polars", "duckdb"))
    if families and per_query:
        catalog = next((label for label, spec in families if spec.AGGREGATE == "catalog"), None)
        if catalog is not None:
            raise RankPolarsError(f"metric {catalog!r} is one value per group over all its lists: it has no per-query "
                                  "value (evaluate it without per_query)")
        if per_query == "spark":
            raise RankPolarsError(f"per_query='spark' keeps the plan's metrics in Spark; {families[0][0]!r} is "
                                  "computed by its family: use per_query=True")
    # only measure families requested: the plan still checks the inputs and gives the
    # universe of (group, query) pairs, with one free metric (num_q reads no row)
    plan = build_plan(plan_outputs or [(_UNIVERSE_ONLY, NumQ())], families)
    if engine == "spark":  # Spark frames and table names too; the same schema checks
        from rank_polars.engines.spark_engine import SparkEngine

        spark_runner = SparkEngine(spark, resolve(progress))  # it reports its own phases
        reading = functools.partial(spark_runner.prepare, judged_only=judged_only)
    else:
        reading = functools.partial(prepare, judged_only=judged_only)
    # a log of what was shown, without labels, for measures of what is shown alone (coverage,
    # novelty, diversity: Measure.NEEDS_LABELS)
    needs_labels = any(spec.NEEDS_LABELS for _, spec in outputs)
    # click metrics alone read no label: not the run's relevance column (a click log has none),
    # whatever labels= says (with qrels the judgments still choose the queries)
    reads_labels = not all(is_click(spec) for _, spec in outputs)
    inputs = reading(run, qrels=qrels, by=by, columns=columns,
                     labels=labels if reads_labels or qrels is None else "qrels",
                     order=order, needs_labels=needs_labels, auxiliary=auxiliary_tables(families),
                     reads_labels=reads_labels, labelled_metric=first_labelled(outputs),
                     click_metric=first_click(outputs))
    refuse_ties_by_position(outputs, inputs.order)
    display = spark_runner.progress if engine == "spark" else resolve(progress)
    inputs.checks = checks
    if duplicates == "first":
        inputs.run = _keep_first(inputs)

    runner: EngineBase
    phase: contextlib.AbstractContextManager[Any] = contextlib.nullcontext()
    if engine == "duckdb":
        from rank_polars.engines.duckdb_engine import LABELS_RUN_CAP, DuckDBEngine, default_memory_limit

        if duckdb_memory_limit is None and labels == "run":
            duckdb_memory_limit = default_memory_limit(LABELS_RUN_CAP)
        runner = DuckDBEngine(memory_limit=duckdb_memory_limit, temp_directory=duckdb_temp_directory)
        phase = display.phase(f"evaluating in DuckDB{_files(run)}")
    elif engine == "spark":
        runner = spark_runner  # its phases: starting Spark, reading, checking, metric pass, families
    else:
        # the Polars engine reports its own phases (checking, metric passes)
        runner = PolarsEngine(streaming, display, _files(run))
    with phase:
        if per_query == "spark":
            return spark_runner.keep(plan, inputs, missing=missing, duplicates=duplicates)
        table = runner.evaluate(plan, inputs, missing=missing, duplicates=duplicates, families=families)
    check_values(table, plan, inputs)
    table = leave_out_missing(table, outputs, inputs)
    return finish(table, outputs, inputs, per_query, ci, ci_method)


def _files(source: object) -> str:
    """`` (12 files)`` for a folder, glob or list of Parquet files; nothing for a frame."""
    from rank_polars.io import files_of

    if not isinstance(source, (str, list, tuple)) and not hasattr(source, "__fspath__"):
        return ""
    try:
        n = sum(len(files_of(s)) for s in source) if isinstance(source, (list, tuple)) else len(files_of(source))
    except (OSError, RankPolarsError):  # the readers name a bad path themselves
        return ""
    return f" ({n:,} files)" if n > 1 else ""


def _keep_first(inputs: Inputs) -> pl.LazyFrame:
    """Drop repeated (query, item) rows of a ranking, keeping the first shown."""
    keys = [*inputs.keys, ITEM]
    order = pl.col(RANK) if inputs.order == "position" else -pl.col(SCORE)
    others = [c for c in inputs.run.collect_schema().names() if c not in keys]
    return inputs.run.group_by(keys).agg(pl.col(c).sort_by(order).first() for c in others)


def _summed(label: str, measure: Measure) -> pl.Expr:
    """What ``label``'s aggregate adds up over queries: the values, or their logarithms (gmean)."""
    col = pl.col(label)
    return col.clip(lower_bound=GM_FLOOR).log() if measure.AGGREGATE == "gmean" else col


def aggregate_expr(label: str, measure: Measure, exact: bool = True) -> pl.Expr:
    """The per-query column ``label`` combined over queries as the spec's ``AGGREGATE`` says.

    ``"mean"``; ``"sum"`` (the ``num_*`` counts); ``"gmean"``: trec_eval's geometric mean
    ``exp(mean(ln(max(x, 1e-5))))`` (``gm_map``, ``gm_bpref``); ``"catalog"``: the group's
    one value (a measure family's, :mod:`rank_polars.engines.base`).  The sums are in fixed
    point (``fixed_sum``: the same bits whatever order the engine delivered the queries in, and
    in every engine), or with ``exact=False`` (values beyond its bound) in ascending order.
    """
    col = pl.col(label)
    if measure.AGGREGATE == "catalog":  # one value per group, on each of its rows
        return col.first()
    summed = _summed(label, measure)
    total = adder(exact)(summed)
    if measure.AGGREGATE == "sum":
        return total
    if measure.AGGREGATE == "gmean":
        return pl.when(summed.count() > 0).then((total / summed.count()).exp())
    # the mean of the values a measure defines (a family may leave some null), null if none
    return pl.when(col.count() > 0).then(total / col.count())


def finish(table: pl.DataFrame, outputs: Plan | Sequence[tuple[str, Measure]], inputs: Inputs,
           per_query: bool, ci: float | None = None, ci_method: str = "t") -> pl.DataFrame:
    """One row per group, each metric aggregated over queries as its spec says
    (:func:`aggregate_expr`: mean, sum or geometric mean), or the per-query rows; with the
    user's column names restored.  ``outputs``: the requested ``(label, spec)`` pairs (or a
    plan, for its outputs)."""
    if isinstance(outputs, Plan):
        outputs = outputs.outputs
    by_int = inputs.by_internal
    names = dict(zip(by_int, inputs.by))
    labels = [label for label, _ in outputs]
    if per_query:
        out = table.sort([*by_int, Q], nulls_last=True).rename({**names, Q: inputs.columns.query})
        return out.select(*inputs.by, inputs.columns.query, *labels)
    warn_undefined(table, outputs, inputs)
    warn_all_zero(table, outputs, inputs)
    # a group's bound is at most the whole table's: one check decides the fixed point for every group
    exact = within_bound(table, {label: _summed(label, m) for label, m in outputs if m.AGGREGATE != "catalog"})
    means = [aggregate_expr(label, measure, exact=exact.get(label, True)) for label, measure in outputs]
    if by_int:
        out = table.group_by(by_int).agg(pl.len().alias("queries"), *means).sort(by_int, nulls_last=True)
    else:
        out = table.select(pl.len().alias("queries"), *means)
    if ci is not None:
        from rank_polars.stats.intervals import intervals

        bounds = intervals(table, outputs, by_int, ci, ci_method)  # type: ignore[arg-type]
        out = out.join(bounds, on=by_int, how="left", nulls_equal=True) if by_int else pl.concat([out, bounds], how="horizontal")
        labels = [c for label in labels for c in (label, f"{label}_low", f"{label}_high")]
    return out.rename(names).select(*inputs.by, "queries", *labels)


def refuse_shaping(caller: str, kwargs: Mapping[str, Any]) -> None:
    """Refuse the options of ``evaluate`` that change the per-query table's keys, for a caller that
    reads one value per (version, query) (``compare``, ``anova``, ``gate``, ``track``): ``per_query``
    and ``by`` it sets itself; ``by_judge`` (a row per judge too) and ``bounds`` (three columns per
    metric) would have it mix the judges' values or read the wrong column."""
    for name in ("per_query", "by"):
        if name in kwargs:
            raise RankPolarsError(f"{caller}: {name}= is not an evaluate option here ({caller} sets it)")
    for name, what in (("by_judge", "a table per judge"), ("bounds", "each metric's bounds")):
        if kwargs.get(name):
            raise RankPolarsError(f"{caller}: {name}=True is evaluate's ({what}); {caller} reads one label set: "
                                  "choose it with judge='...', one call per judge")


__all__ = ["evaluate", "refuse_shaping"]
