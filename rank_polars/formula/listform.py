"""Compile a metric spec to one Polars expression over a ranked list of grades.

This is the engine of :mod:`rank_polars.formula.exprs` and the ``ranking`` namespace: the expression reduces a column (already in
ranked order, e.g. ``pl.col("relevance").sort_by("position")``) to one value, so it works
in ``select`` over a whole frame and in ``group_by(...).agg(...)`` per group.

Where the formula's judgment aggregates (:mod:`rank_polars.formula.tree`: the ideal ranking
``irank``, R, bpref's N, the top judged grade) read from:

* by default the list carries its own judgments: the ideal ranking is the list sorted by
  grade, R counts its relevant grades, N its judged non-relevant ones;
* with ``ideal=`` (the grades of every judgment of the query, one list per ranking: what
  :func:`rank_polars.with_judgments` attaches) they read those judgments, as ``evaluate``
  reads its ``qrels=``;
* with ``r=`` / ``n=`` the aggregates R and N are those numbers (R as the specs write it,
  :meth:`~rank_polars.measures.base.Measure.n_relevant`; N, the judged non-relevant
  judgments, as bpref and fall-out write it).  Given without ``ideal=``, every judgment
  aggregate the formula reads must be one of them.

Null or negative grades are unjudged.  A NaN or infinite grade (in the list or the ideal), or
a value that is not a finite number (``2^grade`` overflows from grade 1024 on), is an error
naming the column, as in ``evaluate``: no NaN comes out, and none is read as a grade.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence, Union

import polars as pl

from rank_polars.errors import RankPolarsError
from rank_polars.formula import tree as d

if TYPE_CHECKING:
    from polars._typing import IntoExpr

    from rank_polars.measures.base import Measure

#: What ``ideal=`` takes: a ``List`` column's name (its first value per ranking is read), an
#: expression giving one list of grades per ranking, or the grades themselves.
IdealLike = Union[str, pl.Expr, pl.Series, Sequence[float]]
#: What ``r=`` and ``n=`` take: a column's name (its first value per ranking), an expression
#: giving one number per ranking, or a number.
CountLike = Union[str, pl.Expr, int, float]


def _to_expr(value: IntoExpr) -> pl.Expr:
    if isinstance(value, pl.Expr):
        return value
    if isinstance(value, str):
        return pl.col(value)
    if isinstance(value, pl.Series):
        return pl.lit(value)
    raise TypeError(f"expected a column name or a Polars expression, got {type(value).__name__}")


def ideal_expr(ideal: IdealLike) -> pl.Expr:
    """One list of judged grades per ranking: a column name reads the ranking's first value
    (every row of a ranking carries the same list), an expression is taken as it is, grades
    given as a sequence or a Series become a literal list."""
    if isinstance(ideal, pl.Expr):
        return ideal
    if isinstance(ideal, str):
        return pl.col(ideal).first()
    if isinstance(ideal, pl.Series) or (isinstance(ideal, Sequence) and not isinstance(ideal, (bytes, bytearray))):
        return pl.lit(pl.Series([pl.Series(ideal, dtype=pl.Float64)]))
    raise TypeError(f"ideal= takes a List column's name, an expression or a sequence of grades, got {type(ideal).__name__}")


def count_expr(count: CountLike, keyword: str) -> pl.Expr:
    """``r=`` or ``n=`` as an expression: a name reads the ranking's first value."""
    if isinstance(count, pl.Expr):
        return count
    if isinstance(count, str):
        return pl.col(count).first()
    if isinstance(count, (int, float)) and not isinstance(count, bool):
        return pl.lit(float(count), dtype=pl.Float64)
    raise TypeError(f"{keyword}= takes a column name, an expression or a number, got {type(count).__name__}")


def nonrelevant_judged(measure: Measure) -> d.Node:
    """N: the judged non-relevant judgments of the query, the aggregate bpref and fall-out read."""
    return d.judgment_sum(d.ind(d.JUDGED & ~measure.relevant()))


def _refused(message: pl.Expr) -> pl.Expr:
    """Null where ``message`` is null, else an error quoting it.

    An expression has no ``raise``; a strict cast of text that is not a number fails with
    the text in its message, in every context a list form runs in (select, group_by, over,
    the streaming engine, ``list.eval``).  The message is built from the data (a count, the
    top grade), so no optimiser can fold it to a constant and fail on good data."""
    return message.cast(pl.Int8, strict=True)


def _checked(value: pl.Expr, grades: pl.Expr, measure: Measure, relevance: pl.Expr,
             ideal: pl.Expr | None, lists: pl.Expr | None) -> pl.Expr:
    """``value``, or an error naming the column where the list's grades, the ideal's or the
    value are not finite numbers (``evaluate`` refuses both: :func:`rank_polars.validate.check_values`),
    or where ``ideal=`` gives more than one list for a ranking.

    Polars reads NaN above every number, so a NaN grade counted as relevant (ap of [1, NaN]
    was 1) and -inf as unjudged: refused, as ``evaluate`` refuses such labels.  Nulls pass
    (an unjudged item)."""
    name = relevance.meta.output_name(raise_if_undetermined=False)
    where = f"{measure.name} over column {name!r}" if name else f"{measure.name} over a list of grades"
    # one struct so that the value is computed once: in group_by and list.eval Polars does
    # not share a subexpression, and the check reading ``value`` again doubled the cost
    top = grades.max() if ideal is None else pl.max_horizontal(grades.max(), ideal.max())
    parts = [value.alias("value"), (~grades.is_finite()).sum().alias("bad"), top.alias("top")]
    if ideal is not None and lists is not None:
        parts += [(~ideal.is_finite()).sum().alias("bad_ideal"), lists.alias("lists")]
    fields = pl.struct(*parts)
    value, bad, top = pl.field("value"), pl.field("bad"), pl.field("top")
    message = pl.when(bad > 0).then(
        pl.concat_str(pl.lit(f"{where}: a grade is NaN or infinite ("), bad.cast(pl.String),
                      pl.lit(" such grade in the list); grades must be finite numbers (a null grade is an unjudged item)")))
    if ideal is not None:
        message = message.when(pl.field("lists") > 1).then(
            pl.concat_str(pl.lit(f"{where}: ideal= gives "), pl.field("lists").cast(pl.String),
                          pl.lit(" lists for one ranking; give one list of judged grades per ranking, e.g. "
                                 "pl.col('ideal').first() or ideal='ideal'")))
        message = message.when(pl.field("bad_ideal") > 0).then(
            pl.concat_str(pl.lit(f"{where}: a grade of ideal= is NaN or infinite ("), pl.field("bad_ideal").cast(pl.String),
                          pl.lit(" such grade); judged grades must be finite numbers")))
    message = message.when(~value.is_finite()).then(
        pl.concat_str(pl.lit(f"{where} is not a finite number: the largest grade is "), top.cast(pl.String),
                      pl.lit(", and 2^grade overflows from grade 1024 on (gain='exp', err); "
                             "rescale the grades or use a linear gain")))
    # the value itself where the check is null (a failing check raises): Polars evaluates
    # the check wherever it evaluates the value
    checked = pl.when(_refused(message).is_null()).then(value)
    return fields.struct.with_fields(checked.alias("value")).struct.field("value")


def _judgment_aggs(node: d.Node) -> dict[str, d.Agg]:
    """The aggregates over the query's judgments (not the run list's own) that ``node`` reads, by key."""
    return {n.key(): n for n in d.walk(node)
            if isinstance(n, d.Agg) and (n.level == "global" or n.level == "judgments" and n.source == "judgments")}


def _counts(measure: Measure, value: d.Node, ideal: bool, r: CountLike | None, n: CountLike | None) -> dict[str, pl.Expr]:
    """The judgment aggregates that ``r=`` and ``n=`` stand for, by key; an error where one is
    given and the formula does not read it, or where, without ``ideal=``, the formula reads a
    judgment aggregate neither stands for."""
    reads = _judgment_aggs(value)
    given = {keyword: (node.key(), count_expr(count, keyword))
             for keyword, count, node in (("r", r, measure.n_relevant()), ("n", n, nonrelevant_judged(measure)))
             if count is not None}
    for keyword, (key, _) in given.items():
        if key not in reads:
            what = "R, the relevant judgments" if keyword == "r" else "N, the judged non-relevant judgments"
            raise RankPolarsError(f"{measure.name} reads no {what}: {keyword}= does not apply to it")
    counts = dict(given.values())
    glob = next((agg for agg in reads.values() if agg.level == "global"), None)
    if glob is not None and (ideal or counts):
        raise RankPolarsError(f"{measure.name} reads the top grade of every judgment, which the judgments of one query "
                              "do not hold: pass max= (the top of the grade scale, e.g. qrels['relevance'].max())")
    if counts and not ideal:
        left = [key for key in reads if key not in counts]
        if left:
            needs = ("N, the judged non-relevant judgments: pass n=" if nonrelevant_judged(measure).key() in left
                     else "R, the relevant judgments: pass r=" if measure.n_relevant().key() in left
                     else "the query's judgments: pass ideal=")
            raise RankPolarsError(f"{measure.name} also reads {needs} (or ideal=, the query's judged grades)")
    return counts


def list_expr(measure: Measure, relevance: IntoExpr, *, ideal: IdealLike | None = None,
              r: CountLike | None = None, n: CountLike | None = None) -> pl.Expr:
    """One expression reducing ``relevance`` (grades in ranked order) to the value of ``measure``.

    ``ideal``: the query's judged grades (:func:`ideal_expr`); ``r``, ``n``: R and N
    (:func:`count_expr`).  Without any of them the list carries its own judgments.
    """
    relevance = _to_expr(relevance)
    grades = relevance.cast(pl.Float64)
    length = grades.len()
    tree = measure.value()
    counts = _counts(measure, tree, ideal is not None, r, n)
    given = None if ideal is None else ideal_expr(ideal)
    judged = grades if given is None else given.explode().cast(pl.Float64)

    def ordered(source: pl.Expr, order: d.Node) -> pl.Expr:
        """Judgments in ideal order: by ``order`` descending (``irank``'s order is the grade;
        gain maps and G order by a mapped gain)."""
        if isinstance(order, d.Col) and order.name == "grade" and not isinstance(order, d.IRank):
            return source.sort(descending=True, nulls_last=True)
        key = d.to_polars(order, scope(source, None, {}, source.len()))
        return source.sort_by(key, descending=True, nulls_last=True)

    def scope(g: pl.Expr, rank_name: str | None, orders: dict[str, pl.Expr], size: pl.Expr) -> Any:
        """The leaves over ``g``, a list of ``size`` grades (the ranked list, or judgments in
        ideal order when ``rank_name`` is ``"irank"``)."""
        def leaf(node: d.Node) -> pl.Expr:
            if isinstance(node, d.Col) and node.name == "irank":
                # the rank in this scope's ideal order; an IRank naming another order cannot be read here
                if rank_name != "irank" or (isinstance(node, d.IRank) and orders.get("order") != node.order.key()):
                    raise TypeError(f"{node!r} is read outside its judgment scope")
                return pl.int_range(1, size + 1, dtype=pl.Int64)
            if isinstance(node, d.Col):
                if node.name == rank_name:
                    return pl.int_range(1, size + 1, dtype=pl.Int64)
                if node.name == "grade":
                    return g
                if node.name == "judged":
                    return g.is_not_null() & (g >= 0)
                if node.name == "n_ret":
                    return length
                raise TypeError(f"column {node.name!r} is not available in a ranked list")
            if isinstance(node, d.Cum):
                return d.to_polars(node.arg, leaf).cum_sum()
            if isinstance(node, d.Agg):
                if node.key() in counts:
                    return counts[node.key()].cast(pl.Float64)
                inner = leaf if node.level == "rows" else judgments(node.arg, node.source)
                agg = d.to_polars(node.arg, inner)
                return agg.sum() if node.kind == "sum" else agg.max().fill_null(0.0)
            if isinstance(node, d.IdealCum):
                # the running sum over the ideal ranking (by node.order), read at position ``at``
                # of this scope: the whole sum past the end, 0 before the start (the 0 prepended)
                order = node.order
                ideal_order = ordered(judged, order)
                positive = d.to_polars(order, scope(ideal_order, None, {}, judged.len())) > 0
                values = d.to_polars(node.arg, scope(ideal_order, "irank", {"order": order.key()}, judged.len()))
                running = pl.lit(0.0).append(pl.when(positive).then(values).otherwise(0.0).fill_null(0.0).cum_sum())
                at = d.to_polars(node.at, leaf).cast(pl.Int64)
                return running.gather(at.clip(0, judged.len()).cast(pl.UInt32))
            raise TypeError(f"cannot compile {node!r}")

        return leaf

    def judgments(arg: d.Node, source: str) -> Any:
        # one ideal order per judgment aggregate (a formula reading two orders cannot be a list)
        orders = {x.order.key(): x.order for x in d.walk(arg) if isinstance(x, d.IRank)}
        if d.reads([arg], "irank") and not any(isinstance(x, d.IRank) for x in d.walk(arg)):
            orders.setdefault(d.GRADE.key(), d.GRADE)
        if len(orders) > 1:
            raise TypeError(f"a judgment aggregate reads two ideal orders: {sorted(orders)}")
        order = next(iter(orders.values()), d.GRADE)
        # ideal=run (idcg, ndcg): the ranked list's own items, whatever the judgments
        base = grades if source == "run" else judged
        return scope(ordered(base, order), "irank", {"order": order.key()}, base.len())

    value = d.to_polars(tree, scope(grades, "rank", {}, length))
    checks = None if given is None else (judged, given.len())
    return _checked(value, grades, measure, relevance, *(checks or (None, None))).alias(measure.name)
