"""The run ranked and evaluated as trec_eval 10 does it, on the Polars engine.

* Ranking (``form_res_rels.c``): per query, score descending, ties by docno descending
  (byte-wise), then ``-M`` keeps the first N, then ``-J`` drops documents not judged >= 0.
* Which queries: every query of the qrels, in byte order; run queries without judgments are
  ignored.  A judged query missing from the run stops trec_eval 10 with status 4, unless ``-c``
  gives it a one-document ranking of a non-judged "bogus" document (whose ``num_ret``, ``utility``,
  ``relstring``, ``unj_*`` and ``rbp_resid`` are then set to 0 or empty, exactly as trec_eval does).
* Errors are found up front, vectorised, and reported for the first query (in evaluation order)
  that has one, after the ``-q`` lines of the queries before it — as trec_eval's output would be.
* The measures are rank_polars specs (:mod:`.measures`), computed by :func:`rank_polars.evaluate`
  with ``per_query=True`` on the ranked rows; ``relstring`` is read off the ranked rows.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import polars as pl

from rank_polars.errors import CoverageWarning, RankPolarsError
from rank_polars.engines.polars_engine import RANK_ORDER_SUMS
from rank_polars.evaluate import evaluate
from rank_polars.measures import Measure, parse
from rank_polars.dropins.trec_eval.measures import Column
from rank_polars.dropins.trec_eval.options import Options, TrecEvalExit

BOGUS_DOC = "ceci_nest_pas_un_docno"
# printed labels trec_eval resets for a -c query missing from the run (trec_eval.c, "clean up leftovers")
_ZEROED = ("num_ret", "utility", "rbp_resid")


@dataclass
class Failure:
    """trec_eval stops at query number ``index`` (0-based, in evaluation order), while computing
    the measure printed at ``position`` in the column list (-1: before any measure)."""

    index: int
    status: int
    message: str
    position: int = -1


def rank(run: pl.DataFrame, qrels: pl.DataFrame, opts: Options, judged_only: bool | None = None) -> pl.DataFrame:
    """``query, item, position, grade`` of the judged queries' documents, as trec_eval ranks them.

    ``judged_only=False`` leaves ``-J`` out: trec_eval looks for duplicate documents in the
    ``-M``-cut ranking before ``-J`` drops the unjudged ones (``form_res_rels.c``).
    """
    run = run.join(qrels.select("query").unique(), on="query", how="semi")
    if opts.complete:
        missing = qrels.select("query").unique().join(run.select("query").unique(), on="query", how="anti")
        bogus = missing.with_columns(item=pl.lit(BOGUS_DOC), score=pl.lit(1.0))
        run = pl.concat([run, bogus.select(run.columns)])
    ranked = run.sort(["query", "score", "item"], descending=[False, True, True]).with_columns(
        position=pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over("query")
    )
    ranked = ranked.filter(pl.col("position") <= max(opts.max_docs, 0))
    first_grade = qrels.unique(["query", "item"], keep="first", maintain_order=True)
    ranked = ranked.join(first_grade, on=["query", "item"], how="left", maintain_order="left")
    if opts.judged_only if judged_only is None else judged_only:
        ranked = ranked.filter(pl.col("grade") >= 0).with_columns(
            position=pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over("query")
        )
    return ranked.select("query", "item", "position", "grade")


def first_failure(
    qrels: pl.DataFrame, run: pl.DataFrame, ranked: pl.DataFrame, opts: Options, columns: list[Column]
) -> Failure | None:
    """The first query (in evaluation order) at which trec_eval would stop, and its message.

    ``ranked`` is the ``-M``-cut ranking before ``-J`` (see :func:`rank`).  The checks, in the
    order trec_eval makes them for one query: results missing (no ``-c``), a document ranked twice,
    a document judged twice, no judgment >= 0 in the first query evaluated (``form_res_rels``
    allocates ``max_rel + 1`` levels: none, and nothing allocated before, is a failure without a
    message of its own), then ``utility``'s coefficients.
    """
    queries = qrels.select("query").unique().sort("query").with_row_index("index")
    checked = next((c.measure.name for c in columns if c.measure.name not in ("runid", "num_q")), None)
    found: list[pl.DataFrame] = []
    if not opts.complete:
        missing = queries.join(run.select("query").unique(), on="query", how="anti")
        found.append(missing.select("index", kind=pl.lit(0), item=pl.lit(None, pl.String)))
    if checked is not None:
        for kind, frame in ((1, ranked), (2, qrels)):
            dups = frame.group_by("query", "item").len().filter(pl.col("len") > 1)
            dups = dups.group_by("query").agg(pl.col("item").min()).join(queries, on="query")
            found.append(dups.select("index", kind=pl.lit(kind), item="item"))
        top = qrels.group_by("query").agg(pl.col("grade").max()).join(queries, on="query")
        found.append(top.filter((pl.col("index") == 0) & (pl.col("grade") < 0)).select(
            "index", kind=pl.lit(3), item=pl.lit(None, pl.String)))
    utility = next((c for c in columns if c.measure.name == "utility"), None)
    if utility is not None and len(utility.param) != 4:  # type: ignore[arg-type]
        found.append(pl.DataFrame({"index": [0], "kind": [4], "item": [None]},
                                  schema={"index": pl.UInt32, "kind": pl.Int32, "item": pl.String}))
    problems = pl.concat([f.cast({"index": pl.UInt32, "kind": pl.Int32}) for f in found]) if found else None
    if problems is None or problems.height == 0:
        return None
    index, kind, item = problems.sort("index", "kind").row(0)
    position = -1 if kind == 0 else next(i for i, c in enumerate(columns) if c.measure.name == (
        "utility" if kind == 4 else checked))
    qid = queries.row(index)[1]
    cannot = f"trec_eval: Can't calculate measure '{checked}'\n"
    message = {
        0: f"trec_eval: result qid '{qid}' not found in qrels\n",
        1: f"trec_eval.form_res_qrels: duplicate docs {item}" + cannot,
        2: f"trec_eval.form_res_rels: duplicate docs {item}\n" + cannot,
        3: cannot,
        4: "trec_eval.calc_utility: improper number of coefficients\ntrec_eval: Can't calculate measure 'utility'\n",
    }[kind]
    return Failure(index, 4, message, position)


def specs(columns: list[Column], level: int, num_docs: int = 0) -> dict[str, Measure]:
    """Printed label -> rank_polars spec (``-l`` applied as ``rel=`` where the spec declares it,
    ``-N`` as utility's ``docs=``)."""
    out: dict[str, Measure] = {}
    for column in columns:
        if column.spelling is None:
            continue
        try:
            spec = parse(column.spelling)
        except RankPolarsError as e:
            raise TrecEvalExit(2, f"rank-polars trec-eval: measure '{column.label}' is not available: {e}\n"
                                  f"trec_eval: Cannot initialize measure '{column.measure.name}'\n") from None
        extra: dict[str, object] = {}
        if level != 1 and column.measure.level and "rel" in spec.PARAMS:
            extra["rel"] = level
        if num_docs and column.measure.name == "utility" and "docs" in spec.PARAMS:
            extra["docs"] = num_docs
        if extra:
            spec = type(spec)(spec.k, **{**spec.params, **extra})
        out[column.label] = spec
    return out


def per_query(ranked: pl.DataFrame, qrels: pl.DataFrame, columns: list[Column], opts: Options) -> pl.DataFrame:
    """``query`` (evaluation order), ``bogus``, and one column per printed label."""
    queries = qrels.select("query").unique().sort("query")
    table = queries
    wanted = specs(columns, opts.level, opts.num_docs_in_coll)
    unique = list(dict.fromkeys(wanted.values()))
    if unique:
        judgments = qrels.rename({"grade": "relevance"})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CoverageWarning)
            # trec_eval's arithmetic: each ranking's terms added in rank order
            order = RANK_ORDER_SUMS.set(True)
            try:
                values = evaluate(ranked.select("query", "item", "position"), unique, qrels=judgments,
                                  per_query=True, missing="zero")
            finally:
                RANK_ORDER_SUMS.reset(order)
        values = values.select("query", *(pl.col(s.name).alias(label) for label, s in wanted.items()))
        table = table.join(values, on="query", how="left", maintain_order="left")
    bogus = ranked.group_by("query").agg((pl.col("item") == BOGUS_DOC).all().alias("bogus")) if opts.complete \
        else ranked.select("query").unique().with_columns(bogus=pl.lit(False))
    table = table.join(bogus, on="query", how="left", maintain_order="left").with_columns(
        pl.col("bogus").fill_null(opts.complete)
    )
    for column in columns:
        if column.measure.name == "relstring":
            table = table.join(relstring(ranked, column), on="query", how="left", maintain_order="left")
            table = table.with_columns(pl.col(column.label).fill_null(""))  # no document ranked (-M0, -J)
    table = with_c_arithmetic(table, ranked, qrels, columns, opts.level)
    return table.with_columns(
        pl.when(pl.col("bogus")).then(_reset(c)).otherwise(pl.col(c.label)).alias(c.label)
        for c in columns if _zeroed(c)
    )


def with_c_arithmetic(table: pl.DataFrame, ranked: pl.DataFrame, qrels: pl.DataFrame, columns: list[Column],
                      level: int) -> pl.DataFrame:
    """``set_F``, ``iprec_at_recall``, ``11pt_avg`` and ``infAP`` with trec_eval's own operations, in its order.

    ``set_F`` is ``(x + 1) * P * R / (x * P + R)`` when a relevant document is retrieved (else 0):
    with ``x = -1`` that is ``0 / (R - P)``, a ``-0.0`` when ``P > R`` and a NaN when they are
    equal, which trec_eval prints as ``-0.0000`` and ``-nan``.  ``iprec_at_recall`` of a query
    with no ranked document starts from ``0 / 0`` (NaN), which trec_eval stores for every level
    whose cutoff ``lround(level * num_rel)`` is not above 0 (``m_iprec_at_recall.c``), and which
    ``11pt_avg`` adds to its sum when one of its levels has such a cutoff (``m_11pt_avg.c``).
    """
    wanted = [c for c in columns if c.measure.name in ("set_F", "iprec_at_recall", "11pt_avg", "infAP")
              and c.label in table.columns]
    if not wanted:
        return table
    relevant = pl.col("grade") >= max(level, 0)  # trec_eval counts levels >= 0 only
    counts = (
        table.select("query")
        .join(ranked.group_by("query").agg(ret=pl.len(), rel_ret=relevant.sum()), on="query", how="left")
        .join(qrels.unique(["query", "item"], keep="first").group_by("query").agg(rel=relevant.sum()),
              on="query", how="left")
        .select(pl.col("ret", "rel_ret", "rel").fill_null(0).cast(pl.Float64))
    )
    ret, rel_ret, rel = (counts.get_column(c) for c in ("ret", "rel_ret", "rel"))
    out = []
    for c in wanted:
        if c.measure.name == "infAP":
            inf_ap = table.select("query").join(_inf_ap(ranked, level), on="query", how="left").get_column("sum")
            out.append(inf_ap.fill_null(0.0).zip_with(rel == 0, inf_ap.fill_null(0.0) / rel).alias(c.label))
        elif c.measure.name == "set_F":
            x = float(c.param[0])  # type: ignore[index]
            p, r = rel_ret / ret, rel_ret / rel
            value = (x + 1.0) * p * r / (x * p + r)
            out.append(value.zip_with(rel_ret > 0, pl.zeros(len(value), eager=True)).alias(c.label))
        else:
            levels = (c.param,) if c.measure.name == "iprec_at_recall" else c.param
            # some level's cutoff lround(level * num_rel) is <= 0: level * num_rel < 0.5 for the lowest
            nan = (ret == 0) & (rel * min(float(v) for v in levels) < 0.5)  # type: ignore[union-attr]
            out.append(table.get_column(c.label).cast(pl.Float64).zip_with(~nan, (ret - ret) / 0.0).alias(c.label))
    return table.with_columns(out)


INFAP_EPSILON = 0.00001  # trec_eval.h


def _inf_ap(ranked: pl.DataFrame, level: int) -> pl.DataFrame:
    """``query, sum``: m_infap.c's sum over the judged relevant documents, term by term as it
    computes them and added in rank order (a cumulative sum is sequential), before the division
    by ``num_rel``.  A value on a rounding boundary of the 4th decimal (0.01875) then prints as
    trec_eval prints it."""
    grade = pl.col("grade")
    relevant = grade.is_not_null() & (grade >= 0) & ~(grade < level)
    nonrel = grade.is_not_null() & (grade >= 0) & (grade < level)
    unjudged = grade < 0  # in the pool, not judged
    ordered = ranked.sort("query", "position").with_columns(
        r=relevant.cast(pl.Int64).cum_sum().over("query"),
        n=nonrel.cast(pl.Int64).cum_sum().over("query"),
        u=unjudged.cast(pl.Int64).cum_sum().over("query"),
        fj=(pl.col("position") - 1).cast(pl.Float64),
    ).filter(relevant)
    fj, r, n, u = pl.col("fj"), pl.col("r"), pl.col("n"), pl.col("u")
    term = pl.when(fj == 0).then(1.0).otherwise(
        1.0 / (fj + 1.0)
        + (fj / (fj + 1.0)) * ((r - 1 + n + u).cast(pl.Float64) / fj)
        * (((r - 1).cast(pl.Float64) + INFAP_EPSILON) / ((r - 1 + n).cast(pl.Float64) + 2 * INFAP_EPSILON))
    )
    return ordered.group_by("query", maintain_order=True).agg(sum=term.cum_sum().last())


def _zeroed(column: Column) -> bool:
    return column.label in (*_ZEROED, "relstring") or column.label.startswith("unj")


def _reset(column: Column) -> pl.Expr:
    return pl.lit("") if column.label == "relstring" else pl.lit(0.0)


def relstring(ranked: pl.DataFrame, column: Column) -> pl.DataFrame:
    """trec_eval's ``relstring``: one character per ranked document (grade 0-9, '>' above 9,
    '-' not in the qrels, '.' a negative grade), for the first N documents."""
    n = max(int(column.param[0]), 0)  # type: ignore[index]
    grade = pl.col("grade")
    char = (
        pl.when(grade.is_null()).then(pl.lit("-"))
        .when(grade < 0).then(pl.lit("."))
        .when(grade > 9).then(pl.lit(">"))
        .otherwise(grade.cast(pl.String))
    )
    return (
        ranked.filter(pl.col("position") <= n)
        .sort("query", "position")
        .group_by("query", maintain_order=True)
        .agg(char.str.join("").alias(column.label))
    )
