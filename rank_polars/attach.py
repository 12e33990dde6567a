"""``with_judgments``: a log with its judgments attached, for the ``ranking`` namespace.

``evaluate(log, metrics, qrels=judgments)`` joins the judgments itself; the list-form functions
(:mod:`rank_polars.formula.exprs`, the ``ranking`` namespace) reduce one column of grades in a
``group_by`` of the user's own, and read the ideal ranking, R and N from ``ideal=`` (or ``r=`` /
``n=``).  This puts those on the log, once: each shown row's grade, and per ranking the query's
judged grades and its number of relevant judgments, checked by the same validation layer
(:mod:`rank_polars.inputs`, :mod:`rank_polars.validate`) as ``evaluate``.
"""

from __future__ import annotations

from typing import Literal, Sequence, overload

import polars as pl

from rank_polars.errors import RankPolarsError
from rank_polars.inputs import Columns, Source, judgments_as_log, lazy, prepare
from rank_polars.judges.table import one_judge
from rank_polars.schema import Schema, as_schema
from rank_polars.validate import Missing, check_names, check_qrels, qrels_stats_polars


@overload
def with_judgments(log: pl.DataFrame, qrels: Source, *, by: str | Sequence[str] | None = ...,
                   missing: Missing = ..., schema: Schema | None = ..., query: str | None = ...,
                   item: str | None = ..., position: str | None = ..., score: str | None = ...,
                   relevance: str | None = ..., ideal: str = ..., num_rel: str = ..., num_nonrel: str = ...,
                   order: Literal["auto", "position", "score"] = ..., judge: str | None = ...) -> pl.DataFrame: ...


@overload
def with_judgments(log: Source, qrels: Source, *, by: str | Sequence[str] | None = ...,
                   missing: Missing = ..., schema: Schema | None = ..., query: str | None = ...,
                   item: str | None = ..., position: str | None = ..., score: str | None = ...,
                   relevance: str | None = ..., ideal: str = ..., num_rel: str = ..., num_nonrel: str = ...,
                   order: Literal["auto", "position", "score"] = ..., judge: str | None = ...) -> pl.LazyFrame: ...


def with_judgments(
    log: Source,
    qrels: Source,
    *,
    by: str | Sequence[str] | None = None,
    missing: Missing = "zero",
    schema: Schema | None = None,
    query: str | None = None,
    item: str | None = None,
    position: str | None = None,
    score: str | None = None,
    relevance: str | None = None,
    ideal: str = "ideal",
    num_rel: str = "num_rel",
    num_nonrel: str = "num_nonrel",
    order: Literal["auto", "position", "score"] = "auto",
    judge: str | None = None,
) -> pl.DataFrame | pl.LazyFrame:
    """The log with its judgments attached: what the ``ranking`` namespace needs to give
    ``evaluate(log, metrics, qrels=qrels)``'s numbers in a ``group_by`` of your own.

    Added to every row of the log:

    * the shown row's grade, under the log's relevance name (the schema's ``relevance``; null
      when the item is unjudged).  A relevance column the log has is replaced: ``evaluate``
      reads the judgments alone when given them;
    * ``ideal``: the query's ideal ranking, a ``List`` of its judged grades above 0, highest
      first.  Pass it as ``ideal="ideal"`` (each ranking's first value; ``pl.col("ideal").first()``
      is the same): nDCG and IDCG read the ideal ranking from it, and every measure reading R
      (AP, recall, R-precision, F1, iprec, bpref, ...) counts R in it, at its own ``rel=``;
    * ``num_rel``: R (grades above 0), for ``r=`` where no list is wanted;
    * ``num_nonrel``: the query's judgments graded 0 (judged, not relevant), left out of
      ``ideal`` (four in five judgments of a pool, which change no gain and no R); bpref and
      fall-out, which read N, take it as ``n="num_nonrel"`` beside ``ideal=``.

    The rankings are ``evaluate``'s: only judged queries count, so rankings of queries without
    any judgment are left out (``evaluate`` leaves them out and warns; nothing of the log is
    read here, so nothing can warn: ``rp.diagnose`` counts them).  A judged query that a group
    (a distinct value of the ``by`` columns in the log) did not rank gets one row with a null
    item, position and grade with ``missing="zero"`` (default, as ``evaluate``): a ranking of
    one unjudged item, which scores 0 on every measure that reads the judgments, as
    ``evaluate`` scores it; ``"skip"`` adds none (``evaluate(missing="skip")``).  Where
    ``evaluate`` leaves such a ranking out (fall-out, lower is better) or a measure reads the
    list's length (``unj``, ``judged``, ``idcg(ideal_cut=list)``), filter those rows out
    (``pl.col("item").is_not_null()``).

    The judgments are read once, here, and checked as ``evaluate`` checks them (their columns,
    null ids or grades, NaN grades, a (query, item) judged twice); ids are matched by the id
    rule of ``docs/data-model.md``.  The log is checked for its columns and their types, not
    row by row: ``rp.diagnose`` finds repeated items and positions.

    Parameters
    ----------
    log
        One row per shown item, as ``evaluate`` reads it: a DataFrame (a DataFrame is
        returned), a LazyFrame or Parquet path(s) (a LazyFrame is returned: nothing of the log
        is read until it is collected).
    qrels
        Judgments ``query, item, relevance`` (their own names through
        ``schema=rp.Schema(judgments=rp.Schema(...))``), any source ``evaluate`` accepts.
    by
        The grouping columns (``"model"``) whose every group is judged on every judged query:
        the missing rankings are looked for per group.
    missing
        ``"zero"``: a row for each (group, judged query) without a ranking; ``"skip"``: none.
    schema, query, item, position, score, relevance
        The column names, as in ``evaluate`` (a :class:`rank_polars.Schema`, or the flat keywords).
    ideal, num_rel, num_nonrel
        The names of the three columns added per ranking.
    order
        As in ``evaluate``: the log needs a position or a score column (by score, sort the grades
        as ``evaluate`` ranks: ``sort_by("score", pl.col("item").cast(pl.String), descending=True)``,
        ties broken by the item id's text, descending).
    judge
        As in ``evaluate``: judgments of several judges (a judge column) give the labels of
        ``judge``; without it they are refused, naming the judges.

    Returns
    -------
    pl.DataFrame or pl.LazyFrame
        The log's columns, the grade, ``ideal``, ``num_rel`` and ``num_nonrel``.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> log = pl.DataFrame({"model": ["a", "a", "a", "b", "b"], "query": ["q1", "q1", "q2", "q1", "q1"],
    ...                     "item": ["x", "y", "z", "y", "x"], "position": [1, 2, 1, 1, 2]})
    >>> qrels = pl.DataFrame({"query": ["q1", "q1", "q1", "q2"], "item": ["x", "y", "w", "z"],
    ...                       "relevance": [0, 2, 1, 1]})
    >>> ranked = pl.col("relevance").sort_by("position")
    >>> per_query = (rp.with_judgments(log, qrels, by="model")
    ...              .group_by("model", "query")
    ...              .agg(ranked.ranking.ndcg(10, ideal="ideal"), ranked.ranking.ap(ideal="ideal")))
    >>> means = per_query.group_by("model").agg(pl.len().alias("queries"), pl.col("ndcg@10", "ap").mean())
    >>> means.sort("model")
    shape: (2, 4)
    ┌───────┬─────────┬──────────┬───────┐
    │ model ┆ queries ┆ ndcg@10  ┆ ap    │
    │ ---   ┆ ---     ┆ ---      ┆ ---   │
    │ str   ┆ u32     ┆ f64      ┆ f64   │
    ╞═══════╪═════════╪══════════╪═══════╡
    │ a     ┆ 2       ┆ 0.739812 ┆ 0.625 │
    │ b     ┆ 2       ┆ 0.380094 ┆ 0.25  │
    └───────┴─────────┴──────────┴───────┘
    >>> means.sort("model").equals(rp.evaluate(log, ["ndcg@10", "ap"], qrels=qrels, by="model"))  # b's q2: 0 in both
    True
    """
    mapping = as_schema(schema, query=query, item=item, position=position, score=score, relevance=relevance)
    columns = Columns.of(mapping)
    names = {"query": columns.query, "item": columns.item, "position": columns.position, "score": columns.score,
             "relevance": columns.relevance, "ideal": ideal, "num_rel": num_rel, "num_nonrel": num_nonrel}
    by_cols = check_names(names, by)
    if missing not in ("zero", "skip"):
        raise RankPolarsError(f"missing must be 'zero' or 'skip', got {missing!r}")
    # the validation layer reads both sides as evaluate does: columns, id types (the id rule)
    judged_by = one_judge(qrels, mapping, judge)  # one label set: several judges' rows are never one
    inputs = prepare(log, qrels=judgments_as_log(judged_by, columns), by=by_cols, columns=columns, order=order)
    assert inputs.qrels is not None and inputs.qrels_source is not None and inputs.run_source is not None
    # every judgment is read (the grades of the shown rows, the ideal): a (query, item) judged
    # twice is refused wherever it is, as checks="strict" refuses it
    inputs.checks = "strict"
    check_qrels(qrels_stats_polars(inputs, pl.lit(True)).collect(), inputs)

    run = lazy(inputs.run_source)
    taken = [c for c in (ideal, num_rel, num_nonrel) if c in run.collect_schema().names()]
    if taken:
        raise RankPolarsError(f"run: the log already has a column {taken[0]!r}; name the added columns otherwise "
                              f"(with_judgments(..., ideal='...', num_rel='...', num_nonrel='...'))")
    q, i, rel = columns.query, columns.item, columns.relevance
    judged = lazy(inputs.qrels_source)
    dtype = judged.collect_schema()[rel]
    grade = pl.col(rel) if dtype.is_integer() or dtype.is_float() else pl.col(rel).cast(pl.Float64)
    judged = judged.select(q, i, grade.alias(rel))
    # the ideal ranking holds the grades above 0 (trec_eval's): the grade-0 judgments, four in
    # five of a pool, change no gain and no R, and are counted instead of copied onto every row
    positive = pl.col(rel) > 0
    per_query = judged.group_by(q).agg(
        pl.col(rel).filter(positive).sort(descending=True).alias(ideal),
        positive.sum().cast(pl.UInt32).alias(num_rel),
        (pl.col(rel) == 0).sum().cast(pl.UInt32).alias(num_nonrel),
    )
    # unjudged queries leave with the inner join: evaluate evaluates judged queries only
    out = (run.drop(rel, strict=False)
           .join(judged, on=[q, i], how="left")
           .join(per_query, on=q, how="inner"))
    if missing == "zero":
        keys = [*by_cols, q]
        present = run.select(keys).unique()  # one pass over the log's keys; the groups from its rankings
        expected = present.select(by_cols).unique().join(per_query, how="cross") if by_cols else per_query
        absent = expected.join(present, on=keys, how="anti", nulls_equal=True)
        out = pl.concat([out, absent], how="diagonal")
    return out.collect() if isinstance(log, pl.DataFrame) else out


__all__ = ["with_judgments"]
