"""Every metric as a plain function returning ``pl.Expr`` over a ranked list of grades.

Use them in ``select`` over one ranked list, or in ``group_by(...).agg(...)`` with the
grades already in ranked order, e.g. ``ndcg(pl.col("relevance").sort_by("position"), 10)``.
The same functions back the ``ranking`` expression namespace and the SQL macros of ``sql/``.

Each function builds the metric's spec (:mod:`rank_polars.measures`) and compiles its
formula over the list (:mod:`rank_polars.formula.listform`); the length of the list is the
number retrieved.  Where the ideal ranking, R (the relevant judgments) and N (the judged
non-relevant ones) come from:

* by default, the list carries its own judgments: they come from the list's grades (a log
  that carries its labels, ``evaluate(log, ...)`` without ``qrels=``);
* with ``ideal=``, the query's ideal ranking: its judged grades above 0 (one list per ranking:
  a ``List`` column's name such as ``ideal="ideal"``, which :func:`rank_polars.with_judgments`
  adds, an expression such as ``pl.col("ideal").first()``, or the grades themselves; grade-0
  judgments may be in it).  The ideal ranking and R come from it, as
  ``evaluate(log, ..., qrels=judgments)`` reads them: ``ideal=`` alone is enough for nDCG,
  IDCG, AP, recall, F1, R-precision, iprec and relative precision, R counted at the function's
  ``rel=``.  bpref and fall-out read N, the judged non-relevant judgments, which an ideal
  ranking need not hold: they also take ``n=``, the query's grade-0 judgments left out of
  ``ideal=`` (``n="num_nonrel"``; ``n=0`` when the list holds every judgment);
* without ``ideal=``, ``r=`` and ``n=`` (a column's name, an expression or a number per
  ranking) are R and N themselves; ``r=`` beside ``ideal=`` overrides the R counted there.

The functions that take them are those whose formula reads the query's judgments: ``ndcg``,
``idcg`` (the ideal ranking), ``ap``, ``recall``, ``f1``, ``rprec``, ``iprec``, ``iprec_avg``,
``precision(relative=True)`` (R), ``bpref`` (R and N), ``fallout`` (N).  ``err`` reads the top
grade of every judgment, not of one query: give it ``max=``.  The others read the list alone.
Metrics that need judgments the list does not hold (the collection-level counts ``num_rel``,
``set_r``, ``utility``'s missed documents) or several queries (``gm_map``, ``num_q``) have no
function here: use :func:`rank_polars.evaluate`.

A null grade is an unjudged item.  A NaN or infinite grade, or a value that is not a finite
number (``2^grade`` overflows float64 from grade 1024 on), fails the expression (Polars'
``InvalidOperationError``) with a message naming the metric and the column, as ``evaluate``
refuses them: never a NaN in the output, nor a NaN read as a grade.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rank_polars.formula.listform import CountLike, IdealLike, list_expr
from rank_polars.measures.ap import AP
from rank_polars.measures.dcg import CG, DCG, IDCG, NDCG
from rank_polars.measures.others import Bpref, ERR, Judged, RBP
from rank_polars.measures.rr import RR
from rank_polars.measures.set_based import F1, Fallout, Hits, Precision, RPrecision, Recall, Success
from rank_polars.measures.counts import Unjudged
from rank_polars.measures.iprec import ELEVEN, IPrec, IPrecAvg
from rank_polars.formula.exprs_diversity import alpha_dcg, err_ia, map_ia, nrbp, p_ia, strec  # ndeval's, over subtopic lists

if TYPE_CHECKING:
    import polars as pl
    from polars._typing import IntoExpr


def ap(
    relevance: IntoExpr, k: int | None = None, *, rel: float | None = None, denom: str = "r",
    ideal: IdealLike | None = None, r: CountLike | None = None,
) -> pl.Expr:
    """Average precision of a ranked list; R is the number of relevant grades in the list.

    With ``ideal=`` (the query's ideal ranking), R counts the relevant grades there; ``r=``
    gives R itself (the query's relevant judgments, retrieved or not).

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> df = pl.DataFrame({"relevance": [1, 0, 1, 1, 0, 1, 0, 0]})
    >>> df.select(rp.exprs.ap("relevance", 8), rp.exprs.ap("relevance", 8, r=6).alias("R = 6"))
    shape: (1, 2)
    ┌──────────┬──────────┐
    │ ap@8     ┆ R = 6    │
    │ ---      ┆ ---      │
    │ f64      ┆ f64      │
    ╞══════════╪══════════╡
    │ 0.770833 ┆ 0.513889 │
    └──────────┴──────────┘
    """
    return list_expr(AP(k, rel=rel, denom=denom), relevance, ideal=ideal, r=r)


def cg(relevance: IntoExpr, k: int | None = None, *, gain: str = "linear") -> pl.Expr:
    """Cumulative gain of the first ``k`` grades of a ranked list (all of them without ``k``).

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> df = pl.DataFrame({"list": [1, 1, 1, 2, 2, 2],
    ...                    "relevance": [0.99, 0.91, 0.83, 0.99, 0.94, 0.88]})
    >>> df.group_by("list", maintain_order=True).agg(rp.exprs.cg("relevance").round(2))
    shape: (2, 2)
    ┌──────┬──────┐
    │ list ┆ cg   │
    │ ---  ┆ ---  │
    │ i64  ┆ f64  │
    ╞══════╪══════╡
    │ 1    ┆ 2.73 │
    │ 2    ┆ 2.81 │
    └──────┴──────┘
    """
    return list_expr(CG(k, gain=gain), relevance)


def dcg(
    relevance: IntoExpr, k: int | None = None, *, gain: str = "linear", discount: str = "log2"
) -> pl.Expr:
    """Discounted cumulative gain: sum of gain(rel_i) / log2(i + 1) over the first ``k`` items.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> df = pl.DataFrame({"relevance": [0.99, 0.94, 0.88]})
    >>> df.select(rp.exprs.dcg("relevance", 3))
    shape: (1, 1)
    ┌──────────┐
    │ dcg@3    │
    │ ---      │
    │ f64      │
    ╞══════════╡
    │ 2.023074 │
    └──────────┘
    """
    return list_expr(DCG(k, gain=gain, discount=discount), relevance)


def idcg(
    relevance: IntoExpr,
    k: int | None = None,
    *,
    gain: str = "linear",
    discount: str = "log2",
    ideal_cut: str = "k",
    ideal: IdealLike | None = None,
) -> pl.Expr:
    """Ideal DCG: the DCG of the list's own grades sorted in descending order.

    With ``ideal=``, the DCG of those grades (the query's ideal ranking) sorted.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> pl.DataFrame({"relevance": [0, 1, 3]}).select(rp.exprs.idcg("relevance", 2))
    shape: (1, 1)
    ┌─────────┐
    │ idcg@2  │
    │ ---     │
    │ f64     │
    ╞═════════╡
    │ 3.63093 │
    └─────────┘
    """
    return list_expr(IDCG(k, gain=gain, discount=discount, ideal_cut=ideal_cut), relevance, ideal=ideal)


def ndcg(
    relevance: IntoExpr,
    k: int | None = None,
    *,
    gain: str = "linear",
    discount: str = "log2",
    ideal_cut: str = "k",
    ideal: IdealLike | None = None,
) -> pl.Expr:
    """Normalised DCG of a ranked list: DCG@k / IDCG@k, the ideal being the list sorted.

    With ``ideal=`` (the query's ideal ranking, e.g. ``ideal="ideal"`` on the rows of
    :func:`rank_polars.with_judgments`), the ideal is those grades sorted, as ``evaluate``
    reads it from ``qrels=``.  0 when the ideal has no positive grade (IDCG = 0).

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> df = pl.DataFrame({"relevance": [0.99, 0.94, 0.74, 0.88, 0.71, 0.68]})
    >>> df.select(rp.exprs.ndcg("relevance", 5))
    shape: (1, 1)
    ┌──────────┐
    │ ndcg@5   │
    │ ---      │
    │ f64      │
    ╞══════════╡
    │ 0.996291 │
    └──────────┘

    A null grade is an unjudged item; the judgments of the query hold items the list missed:

    >>> df = pl.DataFrame({"relevance": [0, 2, None, 1]})
    >>> df.select(rp.exprs.ndcg("relevance", 3), rp.exprs.ndcg("relevance", 3, ideal=[3, 2, 1, 1, 0]).alias("judged"))
    shape: (1, 2)
    ┌──────────┬──────────┐
    │ ndcg@3   ┆ judged   │
    │ ---      ┆ ---      │
    │ f64      ┆ f64      │
    ╞══════════╪══════════╡
    │ 0.479625 ┆ 0.264993 │
    └──────────┴──────────┘
    """
    return list_expr(NDCG(k, gain=gain, discount=discount, ideal_cut=ideal_cut), relevance, ideal=ideal)


def bpref(
    relevance: IntoExpr, *, rel: float | None = None, ideal: IdealLike | None = None, r: CountLike | None = None,
    n: CountLike | None = None,
) -> pl.Expr:
    """bpref of a ranked list whose every item is judged (negative grades: unjudged).

    R and N (the judged non-relevant items) are counted in the list; with ``ideal=`` (the
    query's ideal ranking), R is counted there and ``n=`` gives the grade-0 judgments it leaves
    out; without it, ``r=`` and ``n=`` are R and N.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> pl.DataFrame({"relevance": [0, 1, 0, 1]}).select(rp.exprs.bpref("relevance"))
    shape: (1, 1)
    ┌───────┐
    │ bpref │
    │ ---   │
    │ f64   │
    ╞═══════╡
    │ 0.25  │
    └───────┘
    """
    return list_expr(Bpref(rel=rel), relevance, ideal=ideal, r=r, n=n)


def err(relevance: IntoExpr, k: int | None = None, *, max: float | None = None) -> pl.Expr:
    """Expected reciprocal rank of a ranked list of grades.

    ``max`` is the top grade of the scale; without it, the list's own top grade (``evaluate``
    reads the top grade of all the judgments): pass ``max`` for ``evaluate``'s numbers on
    lists whose top grades differ.  It takes no ``ideal=``: the judgments of one query do not
    hold the top grade of all the others (``max=qrels["relevance"].max()`` gives ``evaluate``'s).

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> pl.DataFrame({"relevance": [0, 1, 2]}).select(rp.exprs.err("relevance", max=4))
    shape: (1, 1)
    ┌────────────┐
    │ err(max=4) │
    │ ---        │
    │ f64        │
    ╞════════════╡
    │ 0.089844   │
    └────────────┘
    """
    return list_expr(ERR(k, max=max), relevance)


def rbp(relevance: IntoExpr, k: int | None = None, *, p: float = 0.8, rel: float | None = None) -> pl.Expr:
    """Rank-biased precision of a ranked list.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> pl.DataFrame({"relevance": [1, 0, 1]}).select(rp.exprs.rbp("relevance", p=0.5))
    shape: (1, 1)
    ┌────────────┐
    │ rbp(p=0.5) │
    │ ---        │
    │ f64        │
    ╞════════════╡
    │ 0.625      │
    └────────────┘
    """
    return list_expr(RBP(k, p=p, rel=rel), relevance)


def judged(relevance: IntoExpr, k: int | None = None) -> pl.Expr:
    """Share of the first k items that are judged (null or negative grade: unjudged).

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> pl.DataFrame({"relevance": [1, None, 0, -1]}).select(rp.exprs.judged("relevance", 4))
    shape: (1, 1)
    ┌──────────┐
    │ judged@4 │
    │ ---      │
    │ f64      │
    ╞══════════╡
    │ 0.5      │
    └──────────┘
    """
    return list_expr(Judged(k), relevance)


def rr(relevance: IntoExpr, k: int | None = None, *, rel: float | None = None) -> pl.Expr:
    """Reciprocal rank of the first relevant item of a ranked list.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> df = pl.DataFrame({"query": [1, 1, 1, 2, 2, 2, 3, 3, 3],
    ...                    "relevance": [0, 0, 1, 0, 1, 0, 1, 0, 0]})
    >>> per_query = df.group_by("query").agg(rp.exprs.rr("relevance"))
    >>> per_query.select(pl.col("rr").mean().round(4).alias("mrr"))
    shape: (1, 1)
    ┌────────┐
    │ mrr    │
    │ ---    │
    │ f64    │
    ╞════════╡
    │ 0.6111 │
    └────────┘
    """
    return list_expr(RR(k, rel=rel), relevance)


def precision(
    relevance: IntoExpr, k: int | None = None, *, rel: float | None = None, relative: bool = False,
    ideal: IdealLike | None = None, r: CountLike | None = None,
) -> pl.Expr:
    """Precision at k of a ranked list (``relative=True``: divided by min(k, R), trec_eval's relative_P).

    With ``relative=True``, R is counted in the list, or in ``ideal=``, or given by ``r=``.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> df = pl.DataFrame({"relevance": [1, 0, 1, 1, 0, 1, 0, 0]})
    >>> df.select(rp.exprs.precision("relevance", 1), rp.exprs.precision("relevance", 8))
    shape: (1, 2)
    ┌─────┬─────┐
    │ p@1 ┆ p@8 │
    │ --- ┆ --- │
    │ f64 ┆ f64 │
    ╞═════╪═════╡
    │ 1.0 ┆ 0.5 │
    └─────┴─────┘
    """
    return list_expr(Precision(k, rel=rel, relative=relative), relevance, ideal=ideal, r=r)


def recall(
    relevance: IntoExpr, k: int | None = None, *, rel: float | None = None, ideal: IdealLike | None = None,
    r: CountLike | None = None,
) -> pl.Expr:
    """Recall at k of a ranked list; R is the number of relevant grades in the list.

    With ``ideal=`` (the query's ideal ranking), R counts the relevant grades there; ``r=``
    gives R itself.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> df = pl.DataFrame({"relevance": [1, 0, 1, 1, 0, 1, 0, 0]})
    >>> df.select(rp.exprs.recall("relevance", 1))
    shape: (1, 1)
    ┌──────┐
    │ r@1  │
    │ ---  │
    │ f64  │
    ╞══════╡
    │ 0.25 │
    └──────┘
    """
    return list_expr(Recall(k, rel=rel), relevance, ideal=ideal, r=r)


def f1(
    relevance: IntoExpr, k: int | None = None, *, rel: float | None = None, ideal: IdealLike | None = None,
    r: CountLike | None = None,
) -> pl.Expr:
    """F1 at k: the harmonic mean of precision and recall at k.

    Recall's R: the relevant grades of the list, or of ``ideal=``, or ``r=``.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> df = pl.DataFrame({"relevance": [1, 0, 1, 1, 0, 1, 0, 0]})
    >>> df.select(rp.exprs.f1("relevance", 8).round(4))
    shape: (1, 1)
    ┌────────┐
    │ f1@8   │
    │ ---    │
    │ f64    │
    ╞════════╡
    │ 0.6667 │
    └────────┘
    """
    return list_expr(F1(k, rel=rel), relevance, ideal=ideal, r=r)


def success(relevance: IntoExpr, k: int | None = None, *, rel: float | None = None) -> pl.Expr:
    """1 if a relevant item is among the first k of a ranked list, else 0 (hit@k).

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> df = pl.DataFrame({"relevance": [0, 0, 1]})
    >>> df.select(rp.exprs.success("relevance", 2), rp.exprs.success("relevance", 3))
    shape: (1, 2)
    ┌───────────┬───────────┐
    │ success@2 ┆ success@3 │
    │ ---       ┆ ---       │
    │ f64       ┆ f64       │
    ╞═══════════╪═══════════╡
    │ 0.0       ┆ 1.0       │
    └───────────┴───────────┘
    """
    return list_expr(Success(k, rel=rel), relevance)


def hits(relevance: IntoExpr, k: int | None = None, *, rel: float | None = None) -> pl.Expr:
    """The number of relevant items among the first k of a ranked list (ranx's ``hits``).

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> df = pl.DataFrame({"relevance": [1, 0, 2, 1]})
    >>> df.select(rp.exprs.hits("relevance", 3), rp.exprs.hits("relevance"))
    shape: (1, 2)
    ┌────────┬──────┐
    │ hits@3 ┆ hits │
    │ ---    ┆ ---  │
    │ f64    ┆ f64  │
    ╞════════╪══════╡
    │ 2.0    ┆ 3.0  │
    └────────┴──────┘
    """
    return list_expr(Hits(k, rel=rel), relevance)


def fallout(
    relevance: IntoExpr, k: int | None = None, *, rel: float | None = None, ideal: IdealLike | None = None,
    n: CountLike | None = None,
) -> pl.Expr:
    """Fall-out at k: the judged non-relevant items among the first k over the list's judged
    non-relevant items (grade 0; a null or negative grade is unjudged), 0 when it has none.

    With ``ideal=`` (the query's ideal ranking), ``n=`` gives the grade-0 judgments it leaves
    out (the judged non-relevant ones below ``rel`` in it count too); without it, ``n=`` is N.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> df = pl.DataFrame({"relevance": [0, 1, 0, None, 0]})
    >>> df.select(rp.exprs.fallout("relevance", 2).round(4), rp.exprs.fallout("relevance", 3).round(4))
    shape: (1, 2)
    ┌───────────┬───────────┐
    │ fallout@2 ┆ fallout@3 │
    │ ---       ┆ ---       │
    │ f64       ┆ f64       │
    ╞═══════════╪═══════════╡
    │ 0.3333    ┆ 0.6667    │
    └───────────┴───────────┘
    """
    return list_expr(Fallout(k, rel=rel), relevance, ideal=ideal, n=n)


def rprec(
    relevance: IntoExpr, *, rel: float | None = None, mult: float = 1.0, ideal: IdealLike | None = None,
    r: CountLike | None = None,
) -> pl.Expr:
    """R-precision: precision at R, the number of relevant grades in the list (``mult``: at floor(mult R + 0.9)).

    With ``ideal=`` (the query's ideal ranking), R counts the relevant grades there; ``r=``
    gives R itself.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> df = pl.DataFrame({"relevance": [1, 0, 1, 1, 0, 1, 0, 0]})
    >>> df.select(rp.exprs.rprec("relevance"))
    shape: (1, 1)
    ┌───────┐
    │ rprec │
    │ ---   │
    │ f64   │
    ╞═══════╡
    │ 0.75  │
    └───────┘
    """
    return list_expr(RPrecision(rel=rel, mult=mult), relevance, ideal=ideal, r=r)


def iprec(
    relevance: IntoExpr, recall: float, *, rel: float | None = None, ideal: IdealLike | None = None,
    r: CountLike | None = None,
) -> pl.Expr:
    """Interpolated precision at a recall level (trec_eval 10's iprec_at_recall).

    The level reads R: the relevant grades of the list, or of ``ideal=``, or ``r=``.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> df = pl.DataFrame({"relevance": [0, 1, 0, 1, 1, 0]})
    >>> df.select(rp.exprs.iprec("relevance", 0.5), rp.exprs.iprec("relevance", 1.0))
    shape: (1, 2)
    ┌───────────────────┬─────────────────┐
    │ iprec(recall=0.5) ┆ iprec(recall=1) │
    │ ---               ┆ ---             │
    │ f64               ┆ f64             │
    ╞═══════════════════╪═════════════════╡
    │ 0.6               ┆ 0.6             │
    └───────────────────┴─────────────────┘
    """
    return list_expr(IPrec(recall=recall, rel=rel), relevance, ideal=ideal, r=r)


def iprec_avg(
    relevance: IntoExpr, levels: tuple[float, ...] = ELEVEN, *, rel: float | None = None,
    ideal: IdealLike | None = None, r: CountLike | None = None,
) -> pl.Expr:
    """Interpolated precision averaged over recall levels (trec_eval's 11pt_avg).

    The levels read R: the relevant grades of the list, or of ``ideal=``, or ``r=``.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> df = pl.DataFrame({"relevance": [1, 0, 1, 0]})
    >>> df.select(rp.exprs.iprec_avg("relevance", (0.0, 0.5, 1.0)).round(4))
    shape: (1, 1)
    ┌──────────────────────────┐
    │ 11pt_avg(levels=0;0.5;1) │
    │ ---                      │
    │ f64                      │
    ╞══════════════════════════╡
    │ 0.8889                   │
    └──────────────────────────┘
    """
    return list_expr(IPrecAvg(levels=levels, rel=rel), relevance, ideal=ideal, r=r)


def unj(relevance: IntoExpr, k: int | None = None) -> pl.Expr:
    """Share of unjudged (null or negative) grades among the first k; missing positions are judged.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> pl.DataFrame({"relevance": [1, None, 0, -1]}).select(rp.exprs.unj("relevance", 5))
    shape: (1, 1)
    ┌───────┐
    │ unj@5 │
    │ ---   │
    │ f64   │
    ╞═══════╡
    │ 0.4   │
    └───────┘
    """
    return list_expr(Unjudged(k), relevance)


__all__ = [
    "ap", "bpref", "cg", "dcg", "err", "f1", "fallout", "hits", "idcg", "iprec", "iprec_avg", "judged", "ndcg", "precision",
    "rbp", "recall", "rprec", "rr", "success", "unj",
    "alpha_dcg", "err_ia", "map_ia", "nrbp", "p_ia", "strec",
]
