"""trec_eval's judgment-group measures (``-R qrels_jg``, ``-m qrels_jg``): ``map_avgjg``,
``P_avgjg`` and ``Rprec_mult_avgjg``.

A ``qrels_jg`` file is a qrels file whose second (iter) field names a judgment group: one set of
judgments per user.  trec_eval (``form_res_rels_jg.c``, ``m_*_avgjg.c``) evaluates the ranking
against each group's judgments as if they were a qrels file of their own, and averages the
groups' values per query.  Here each (query, group) becomes one query of an ordinary
evaluation — the same specs as ``map``, ``P`` and ``Rprec_mult`` (:mod:`.measures`), ranked and
computed by :func:`.evaluation.rank` and :func:`rank_polars.evaluate` — and the mean over the
groups is taken per query.  So these are formulas, only evaluated once per judgment group.
"""

from __future__ import annotations

import warnings

import polars as pl

from rank_polars.errors import CoverageWarning
from rank_polars.evaluate import evaluate as evaluate_specs
from rank_polars.dropins.trec_eval.checks import duplicate_docs, first, first_reader, missing_query
from rank_polars.dropins.trec_eval.evaluation import Failure, rank, specs
from rank_polars.dropins.trec_eval.measures import Column
from rank_polars.dropins.trec_eval.options import Options

_SEP = "\x1f"  # joins query and group into one key; trec_eval's fields never contain it (no whitespace, no control)


def _key() -> pl.Expr:
    return pl.concat_str("query", pl.lit(_SEP), "jg").alias("key")


def evaluate(run: pl.DataFrame, qrels_jg: pl.DataFrame, columns: list[Column],
             opts: Options) -> tuple[pl.DataFrame, Failure | None]:
    """``query`` (evaluation order) with one column per printed judgment-group label, and the
    first query at which trec_eval stops (the values of the queries before it are the ones it printed)."""
    failure = first_failure(run, qrels_jg, columns, opts)
    if failure is not None:  # only the queries before it are evaluated (later ones may not be computable)
        before = qrels_jg.select("query").unique().sort("query").head(failure.index)
        qrels_jg = qrels_jg.join(before, on="query", how="semi")
    return per_query(run, qrels_jg, columns, opts), failure


def per_query(run: pl.DataFrame, qrels_jg: pl.DataFrame, columns: list[Column], opts: Options) -> pl.DataFrame:
    """``query`` (evaluation order) and one column per printed judgment-group label."""
    queries = qrels_jg.select("query").unique().sort("query")
    wanted = {label: spec for label, spec in specs([c for c in columns if c.measure.needs == "jg"],
                                                     opts.level).items()}
    if not wanted:
        return queries
    groups = qrels_jg.select("query", "jg").unique().with_columns(_key())
    judgments = qrels_jg.with_columns(_key()).select(pl.col("key").alias("query"), "item", "grade")
    keyed_run = run.join(groups, on="query").select(pl.col("key").alias("query"), "item", "score")
    ranked = rank(keyed_run, judgments, opts)
    unique = list(dict.fromkeys(wanted.values()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverageWarning)
        values = evaluate_specs(ranked.select("query", "item", "position"), unique,
                          qrels=judgments.rename({"grade": "relevance"}), per_query=True, missing="zero")
    values = values.select(pl.col("query").alias("key"), *(pl.col(s.name).alias(label) for label, s in wanted.items()))
    # summed in trec_eval's order (groups by name), then divided: the same rounding as its ``+=``
    means = groups.sort("query", "jg").join(values, on="key", how="left", maintain_order="left").group_by(
        "query", maintain_order=True).agg(pl.col(label).fill_null(0.0).sum() / pl.len() for label in wanted)
    return queries.join(means, on="query", how="left", maintain_order="left")


def first_failure(run: pl.DataFrame, qrels_jg: pl.DataFrame, columns: list[Column], opts: Options) -> Failure | None:
    """The first query at which trec_eval stops: no results (without ``-c``) or a docno twice in
    its ranking (``-M``-cut; the docno shown is the smallest)."""
    queries = qrels_jg.select("query").unique().sort("query")
    reader = first_reader(columns, "jg")
    ranked = run.sort(["query", "score", "item"], descending=[False, True, True]).filter(
        pl.int_range(1, pl.len() + 1).over("query") <= max(opts.max_docs, 0))
    dups = duplicate_docs(queries, ranked, reader, "form_res_qrels") if reader is not None else None
    return first(missing_query(queries, run, opts), dups)
