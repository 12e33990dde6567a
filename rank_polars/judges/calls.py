"""``evaluate(..., by_judge=True)`` and ``evaluate(..., bounds=True)``: one call, several label sets.

Both are ``evaluate`` run again on other judgments, so every engine, metric and check follows:

* ``by_judge=True``: each judge's labels in turn (the judgments read once), the tables stacked
  under a ``judge`` column.  One engine pass per judge: the judges' label sets are different
  judgments, and the engines join one set with the log.
* ``bounds=True``: the bounds that unjudged items leave open.  ``<metric>_low`` reads every
  unjudged shown item as not relevant (what ``evaluate`` does anyway: it is the metric), and
  ``<metric>_high`` as relevant at the top grade of the judgments (at least 1).  The high side
  is one more pass over judgments that hold, beside the real ones, every (query, item) some
  version showed for a judged query and nobody judged: one relevance assignment for every
  version, so their high values compare.  That pass skips the checks the first one made
  (``checks="fast"``) and its warnings (the first pass gave them).  For counts and shares of
  the top k (P@k, success@k, judged@k, DCG@k) the two values bound every assignment of the
  unjudged items; for a normalised metric (nDCG, AP, R-precision) they are its values at the two
  extreme assignments, not a minimum and maximum over all of them (an unjudged item made relevant
  also raises the ideal).

The functions take ``evaluate`` itself, so this module sits below it.
"""

from __future__ import annotations

import inspect
import warnings
from dataclasses import replace
from typing import Any, Callable, Mapping

import polars as pl

from rank_polars import io as rio
from rank_polars.errors import RankPolarsError
from rank_polars.inputs import Columns, judgments_as_log, lazy, resolve
from rank_polars.judges.table import one_judge, per_judge
from rank_polars.measures import parse_all
from rank_polars.schema import Schema

Evaluate = Callable[..., pl.DataFrame]
_FLAT = ("query", "item", "position", "score", "relevance")


def evaluate_again(evaluate: Evaluate, call: Mapping[str, Any], schema: Schema) -> pl.DataFrame:
    """``call`` (``evaluate``'s arguments) under each judge (``by_judge``) or with its bounds."""
    wanted = inspect.signature(evaluate).parameters  # not the locals evaluate made before it asked
    call = {**{k: v for k, v in call.items() if k in wanted}, **{k: None for k in _FLAT}, "schema": schema}
    if call["by_judge"]:
        return _by_judge(evaluate, call, schema)
    return _bounds(evaluate, call, schema)


def _by_judge(evaluate: Evaluate, call: dict[str, Any], schema: Schema) -> pl.DataFrame:
    if call["judge"] is not None:
        raise RankPolarsError(f"judge={call['judge']!r} and by_judge=True: give one (one judge's labels, or each judge's)")
    if call["qrels"] is None:
        raise RankPolarsError("by_judge=True evaluates under each judge of the judgments: pass qrels=")
    if call["per_query"] == "spark":
        raise RankPolarsError("by_judge=True returns one table of every judge: use per_query=True, not 'spark'")
    column = schema.judged("judge")
    by = [call["by"]] if isinstance(call["by"], str) else list(call["by"] or [])
    if column in by:
        raise RankPolarsError(f"by_judge=True adds the column {column!r}: it cannot also be a 'by' column")
    parts = per_judge(call["qrels"], schema)
    if not parts:
        raise RankPolarsError("by_judge=True: the judgments have no row, so no judge to evaluate under")
    tables = [evaluate(**{**call, "qrels": rows, "by_judge": False}).select(pl.lit(who, pl.String).alias(column), pl.all())
              for who, rows in parts.items()]
    return pl.concat(tables, how="vertical_relaxed")


def top_grade(grades: pl.Expr) -> pl.Expr:
    """The grade an unjudged item takes on the high side: the judgments' top grade, at least 1."""
    return pl.max_horizontal(grades.max().fill_null(1.0), pl.lit(1.0))


def _bounds(evaluate: Evaluate, call: dict[str, Any], schema: Schema) -> pl.DataFrame:
    if call["qrels"] is None or call["labels"] != "qrels":
        raise RankPolarsError("bounds=True reads which shown items are unjudged from the judgments: pass qrels= "
                              "(and labels='qrels')")
    if call["ci"] is not None:
        raise RankPolarsError("bounds=True and ci= both name their columns <metric>_low and <metric>_high: "
                              "ask for one per call")
    if call["per_query"] == "spark" or call["engine"] == "spark":
        raise RankPolarsError("bounds=True runs with engine='polars' or 'duckdb' (to_sql(..., bounds=True) writes "
                              "the SQL for Spark)")
    labels = bounded_labels(call["metrics"])
    low = evaluate(**{**call, "bounds": False})
    judged = one_judge(call["qrels"], schema, call["judge"])
    columns = Columns.of(schema)
    log = replace(schema, judgments=None)
    judgments = lazy(resolve(judgments_as_log(judged, columns), "qrels",
                             rio.numeric_roles(relevance=columns.relevance), columns))
    run = lazy(resolve(call["run"], "run", rio.numeric_roles(columns.position, columns.score, columns.relevance),
                       columns))
    high_qrels = assumed_relevant(run, judgments, columns.query, columns.item, columns.relevance)
    with warnings.catch_warnings():  # the first pass warned about these queries already
        warnings.simplefilter("ignore")
        high = evaluate(**{**call, "qrels": high_qrels, "judge": None, "bounds": False, "schema": log,
                           "checks": "fast"})
    return with_bounds(low, high, labels)


def bounded_labels(metrics: Any) -> list[str]:
    """The labels of ``metrics`` whose bounds ``bounds=True`` adds; a diversity measure is refused:
    an unjudged item relevant at the top grade is relevant to which subtopics?  (Its high side
    would read the judged subtopics alone and call the metric settled.)"""
    outputs = parse_all(metrics)
    subtopical = [label for label, spec in outputs if "subtopics" in getattr(spec, "SOURCES", {})]
    if subtopical:
        raise RankPolarsError(f"bounds=True: {subtopical[0]} reads subtopic judgments, and an unjudged item's "
                              "subtopics are unknown, so its bounds are not defined; ask for the other metrics' "
                              "bounds in a call of their own")
    return [label for label, _ in outputs]


def assumed_relevant(run: pl.LazyFrame, judgments: pl.LazyFrame, query: str, item: str, relevance: str) -> pl.DataFrame:
    """The judgments plus every (query, item) of the run for a judged query that is not judged,
    at the top grade (:func:`top_grade`): the world where every unjudged item is relevant."""
    casts = rio.id_casts(run.collect_schema(), judgments.collect_schema(), (query, item))
    run = run.with_columns(pl.col(c).cast(t) for c, t in casts.items())
    judged = judgments.select(query, item, pl.col(relevance).cast(pl.Float64)).with_columns(
        pl.col(c).cast(t) for c, t in casts.items())
    # the anti-join first: the unjudged rows are few, the shown rows many
    unjudged = (run.select(query, item).join(judged.select(query).unique(), on=query, how="semi")
                .join(judged, on=[query, item], how="anti").unique())
    top = judged.select(top_grade(pl.col(relevance)).alias(relevance))
    return pl.concat([judged, unjudged.join(top, how="cross")], how="vertical_relaxed").collect()


def with_bounds(low: pl.DataFrame, high: pl.DataFrame, labels: list[str]) -> pl.DataFrame:
    """``low``'s table with ``<metric>_low`` (its own values) and ``<metric>_high`` (``high``'s)
    after each metric, matched on the other columns (the groups, or the groups and query)."""
    keys = [c for c in low.columns if c not in labels and c != "queries"]
    clash = [f"{label}_{side}" for label in labels for side in ("low", "high") if f"{label}_{side}" in low.columns]
    if clash:
        raise RankPolarsError(f"bounds=True adds the column {clash[0]!r}, which the table already has")
    highs = high.select(*keys, *(pl.col(label).alias(f"{label}_high") for label in labels))
    out = low.join(highs, on=keys, how="left", nulls_equal=True) if keys else pl.concat([low, highs], how="horizontal")
    out = out.with_columns(pl.col(label).alias(f"{label}_low") for label in labels)
    ordered = [c for label in labels for c in (label, f"{label}_low", f"{label}_high")]
    return out.select(*[c for c in low.columns if c not in labels], *ordered)


__all__ = ["assumed_relevant", "bounded_labels", "evaluate_again", "top_grade", "with_bounds"]
