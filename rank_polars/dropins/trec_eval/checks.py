"""Where trec_eval stops before printing everything, for any ``-R`` format.

trec_eval evaluates query after query (in byte order of the relevance file's qids) and, per
query, measure after measure (its table order); the first problem ends the run with status 4 (a
judged query without results and no ``-c``, a measure that cannot read this relevance format,
duplicate documents, inconsistent preferences).  Each check here returns a :class:`Failure`
``(query index, measure position)``; :func:`first` keeps the one trec_eval meets first.
"""

from __future__ import annotations

import polars as pl

from rank_polars.dropins.trec_eval.evaluation import Failure
from rank_polars.dropins.trec_eval.measures import REL_FORMATS, Column
from rank_polars.dropins.trec_eval.options import Options

# what each measure family's code prints when the relevance information is of another format
_WRONG_FORMAT = {
    "qrels": "trec_eval.form_res_qrels: rel_info format not qrels or results format not trec_results\n",
    "prefs": "trec_eval.form_prefs_info: prefs_info format not (prefs or qrels_prefs) or results format "
             "not trec_results\n",
    "jg": "trec_eval: rel_info format not qrels_jg or results format not trec_results\n",
}


def cannot(name: str) -> str:
    return f"trec_eval: Can't calculate measure '{name}'\n"


def first(*failures: Failure | None) -> Failure | None:
    """The failure trec_eval meets first (a tie goes to the earlier argument)."""
    found = [f for f in failures if f is not None]
    return min(found, key=lambda f: (f.index, f.position)) if found else None


def wrong_format(columns: list[Column], rel_format: str) -> Failure | None:
    """A measure that reads another relevance format fails at the first query."""
    kind = REL_FORMATS[rel_format]
    for position, column in enumerate(columns):
        need = column.measure.needs
        if need not in ("none", kind):
            return Failure(0, 4, _WRONG_FORMAT[need] + cannot(column.measure.name), position)
    return None


def first_reader(columns: list[Column], kind: str) -> tuple[int, str] | None:
    """Position and name of the first measure that reads ``kind`` information (its errors are named after it)."""
    return next(((i, c.measure.name) for i, c in enumerate(columns) if c.measure.needs == kind), None)


def missing_query(queries: pl.DataFrame, run: pl.DataFrame, opts: Options) -> Failure | None:
    """Without ``-c``, a judged query with no results stops trec_eval 10 (status 4)."""
    if opts.complete:
        return None
    gone = queries.with_row_index("index").join(run.select("query").unique(), on="query", how="anti")
    if gone.height == 0:
        return None
    index, qid = gone.row(0)
    return Failure(index, 4, f"trec_eval: result qid '{qid}' not found in qrels\n")


def duplicate_docs(queries: pl.DataFrame, ranked: pl.DataFrame, reader: tuple[int, str], who: str) -> Failure | None:
    """A docno twice in a query's (``-M``-cut) ranking: trec_eval prints it without a newline."""
    dups = ranked.group_by("query", "item").len().filter(pl.col("len") > 1).group_by("query").agg(
        pl.col("item").min())
    found = queries.with_row_index("index").join(dups, on="query").sort("index")
    if found.height == 0:
        return None
    index, _, item = found.row(0)
    return Failure(index, 4, f"trec_eval.{who}: duplicate docs {item}" + cannot(reader[1]), reader[0])
