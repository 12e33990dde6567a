"""Compile a metric spec to one Polars expression over a ranked list of grades.

This is the engine of :mod:`rank_polars.formula.exprs` and the ``ranking`` namespace: the expression reduces a column (already in
ranked order, e.g. ``pl.col("relevance").sort_by("position")``) to one value, so it works
in ``select`` over a whole frame and in ``group_by(...).agg(...)`` per group.

Where the formula's judgment aggregates (:mod:`rank_polars.formula.tree`: the ideal ranking
``irank``, R, bpref's N, the top judged grade) read from:

* by default the list carries its own judgments: the ideal ranking is the list sorted by
  grade, R counts its relevant grades, N its judged non-relevant ones;
* with ``ideal=`` (the query's ideal ranking: its judged grades above 0, one list per
  ranking, what :func:`rank_polars.with_judgments` attaches) they read those judgments, as
  ``evaluate`` reads its ``qrels=``; a formula that reads the grade-0 judgments too (bpref's
  and fall-out's N, R at ``rel <= 0``, a gain of grade 0: :func:`_reads_zeros`) also takes
  ``n=``, their number, and reads them appended to the ideal;
* without ``ideal=``, ``r=`` / ``n=`` are R and N themselves (R as the specs write it,
  :meth:`~rank_polars.measures.base.Measure.n_relevant`; N, the judged non-relevant
  judgments, as bpref and fall-out write it), and every judgment aggregate the formula
  reads must be one of them; ``r=`` beside ``ideal=`` overrides the R counted there.

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

#: What ``ideal=`` takes: a ``List`` column's name or an expression giving lists (the first
#: value per ranking is read: every row of a ranking carries the same list), or the grades themselves.
IdealLike = Union[str, pl.Expr, pl.Series, Sequence[float]]
#: What ``r=`` and ``n=`` take: a column's name or an expression (the first value per ranking
#: is read), or a number.
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
    """``ideal=`` as an expression giving lists of judged grades (of which :func:`list_expr`
    reads each ranking's first): a column name is that column, grades given as a sequence or a
    Series become a literal list."""
    if isinstance(ideal, pl.Expr):
        return ideal
    if isinstance(ideal, str):
        return pl.col(ideal)
    if isinstance(ideal, pl.Series) or (isinstance(ideal, Sequence) and not isinstance(ideal, (bytes, bytearray))):
        return pl.lit(pl.Series([pl.Series(ideal, dtype=pl.Float64)]))
    raise TypeError(f"ideal= takes a List column's name, an expression or a sequence of grades, got {type(ideal).__name__}")


def count_expr(count: CountLike, keyword: str) -> pl.Expr:
    """``r=`` or ``n=`` as an expression (of which :func:`list_expr` reads each ranking's first
    value): a name is that column, a number a literal."""
    if isinstance(count, pl.Expr):
        return count
    if isinstance(count, str):
        return pl.col(count)
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


def _checked(value: pl.Expr, grades: pl.Expr, measure: Measure, relevance: pl.Expr, absent: pl.Expr | None) -> pl.Expr:
    """``value``, or an error naming the column where the grades (``grades``: the list's, and
    ``ideal=``'s when given) or the value are not finite numbers (``evaluate`` refuses both:
    :func:`rank_polars.validate.check_values`), or where ``ideal=``, ``r=`` or ``n=`` is null
    (``absent``: their nulls; a ranking without judgments, which ``evaluate`` leaves out).

    Polars reads NaN above every number, so a NaN grade counted as relevant (ap of [1, NaN]
    was 1) and -inf as unjudged: refused, as ``evaluate`` refuses such labels.  Nulls pass
    (an unjudged item)."""
    name = relevance.meta.output_name(raise_if_undetermined=False)
    where = f"{measure.name} over column {name!r}" if name else f"{measure.name} over a list of grades"
    # one struct so that the value is computed once: in group_by and list.eval Polars does
    # not share a subexpression, and the check reading ``value`` again doubled the cost
    parts = [value.alias("value"), (~grades.is_finite()).sum().alias("bad"), grades.max().alias("top")]
    if absent is not None:
        parts.append(absent.alias("absent"))
    fields = pl.struct(*parts)
    value, bad, top = pl.field("value"), pl.field("bad"), pl.field("top")
    message = pl.when(bad > 0).then(
        pl.concat_str(pl.lit(f"{where}: a grade is NaN or infinite ("), bad.cast(pl.String),
                      pl.lit(" such grade in the list or ideal=); grades must be finite numbers (a null grade is an "
                             "unjudged item)")))
    if absent is not None:
        message = message.when(pl.field("absent") > 0).then(
            # the data in the message, so that no optimiser folds it to a constant (_refused)
            pl.concat_str(pl.lit(f"{where}: ideal=, r= or n= is null for a ranking ("), pl.field("absent").cast(pl.String),
                          pl.lit(" null): its query has no judgments, and evaluate leaves such queries out; "
                                 "filter them out (rp.with_judgments does), or give an empty list")))
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


def _reads_zeros(agg: d.Agg) -> bool:
    """Whether a judgment aggregate changes with a judgment graded 0: its term at grade 0 (judged,
    first in the ideal order) is not 0.  N does (bpref, fall-out), R at ``rel <= 0`` does, a gain
    map giving grade 0 a gain does; the gains and R at ``rel > 0`` do not."""
    constants = {"grade": 0.0, "judged": True, "irank": 1, "rank": 1, "n_ret": 1}

    def leaf(node: d.Node) -> pl.Expr:
        if isinstance(node, d.Col) and node.name in constants:
            return pl.lit(constants[node.name])
        raise TypeError(f"cannot probe {node!r}")

    try:
        term = pl.select(d.to_polars(agg.arg, leaf).cast(pl.Float64)).item()
    except TypeError:  # a term reading more than a judgment's own grade and rank: take it as reading zeros
        return True
    return term is None or term != 0


def _counts(measure: Measure, value: d.Node, ideal: bool, r: CountLike | None,
            n: CountLike | None) -> tuple[dict[str, pl.Expr], pl.Expr | None]:
    """The judgment aggregates that ``r=`` and ``n=`` stand for, by key, and with ``ideal=`` the
    number of grade-0 judgments to add to it (``n=``).  An error where one is given and the
    formula does not read what it stands for; where, without ``ideal=``, the formula reads a
    judgment aggregate neither stands for; where, with ``ideal=`` and without ``n=``, the
    formula reads the grade-0 judgments (:func:`_reads_zeros`), which the ideal ranking need
    not hold."""
    reads = _judgment_aggs(value)
    r_key, n_key = measure.n_relevant().key(), nonrelevant_judged(measure).key()
    zeros = [agg for key, agg in reads.items() if agg.level == "judgments" and key != r_key or r is None and key == r_key]
    applies = {"r": r_key in reads, "n": any(map(_reads_zeros, zeros)) if ideal else n_key in reads}
    for keyword, count in (("r", r), ("n", n)):
        if count is not None and not applies[keyword]:
            what = ("R, the relevant judgments" if keyword == "r" else "N, the judged non-relevant judgments"
                    if not ideal else "grade-0 judgments")
            raise RankPolarsError(f"{measure.name} reads no {what}: {keyword}= does not apply to it")
    glob = next((agg for agg in reads.values() if agg.level == "global"), None)
    if glob is not None and (ideal or r is not None or n is not None):
        raise RankPolarsError(f"{measure.name} reads the top grade of every judgment, which the judgments of one query "
                              "do not hold: pass max= (the top of the grade scale, e.g. qrels['relevance'].max())")
    counts = {} if r is None else {r_key: count_expr(r, "r")}
    if not ideal:
        if n is not None:
            counts[n_key] = count_expr(n, "n")
        left = [key for key in reads if key not in counts]
        if counts and left:
            needs = ("N, the judged non-relevant judgments: pass n=" if n_key in left
                     else "R, the relevant judgments: pass r=" if r_key in left
                     else "the query's judgments: pass ideal=")
            raise RankPolarsError(f"{measure.name} also reads {needs} (or ideal=, the query's judged grades)")
        return counts, None
    if n is None and applies["n"]:
        what = ("N, the judged non-relevant judgments" if n_key in reads
                else "the judgments graded 0 (R at rel <= 0, or a gain of grade 0)")
        alone = r is None and r_key in reads and not any(_reads_zeros(agg) for key, agg in reads.items() if key != r_key)
        raise RankPolarsError(f"{measure.name} reads {what}, and ideal= (the ideal ranking) need not hold the grade-0 "
                              "judgments: pass n=, their number (rp.with_judgments' num_nonrel; n=0 when ideal= "
                              f"holds every judgment){', or r=, R itself' if alone else ''}")
    return counts, None if n is None else count_expr(n, "n")


def list_expr(measure: Measure, relevance: IntoExpr, *, ideal: IdealLike | None = None,
              r: CountLike | None = None, n: CountLike | None = None) -> pl.Expr:
    """One expression reducing ``relevance`` (grades in ranked order) to the value of ``measure``.

    ``ideal``: the query's ideal ranking (:func:`ideal_expr`); ``r``, ``n``: R and N, or with
    ``ideal`` R and the grade-0 judgments (:func:`count_expr`).  Without any of them the list
    carries its own judgments.

    Everything the formula reads is packed into one list per ranking, ``[R, N or the grade-0
    judgments, length of the ideal, *ideal (sorted), *grades]`` (the parts given), and the
    formula is compiled once inside ``list.eval`` over it: Polars evaluates an expression once per reference in a
    ``group_by`` (and ``list.eval``), so each leaf reading the grades sorted the user's list
    again (nDCG@10 with the ideal read it six times); the packed list is read once.
    """
    relevance = _to_expr(relevance)
    tree = measure.value()
    if any(isinstance(x, (d.TieSum, d.TieMax)) for x in d.walk(tree)):
        raise RankPolarsError(f"{measure.name} reads the ties of the scores, which a list of grades does not hold: "
                              f"use rank_polars.evaluate(log, [{measure.name!r}]) on a log ordered by score")
    counts, zeros = _counts(measure, tree, ideal is not None, r, n)
    header = [count.first().cast(pl.Float64) for count in [*counts.values(), *([] if zeros is None else [zeros])]]
    slot = dict(zip(counts, range(len(header))))
    if ideal is not None:
        given = ideal_expr(ideal).first().cast(pl.List(pl.Float64))
        # sorted here, once per ranking by a list kernel: inside list.eval the sort ran once per
        # reference to a judgment's grade; its length null for a null list (refused in the eval)
        header.append(given.list.len().cast(pl.Float64))
        ranked = pl.coalesce(given, pl.lit([], dtype=pl.List(pl.Float64))).list.sort(descending=True, nulls_last=True)
        packed = pl.concat_list([*header, ranked, relevance.cast(pl.Float64).implode()])
    else:
        packed = pl.concat_list([*header, relevance.cast(pl.Float64).implode()]) if header else \
            relevance.cast(pl.Float64).implode()
    e, h = pl.element(), len(header)
    if ideal is not None:
        size = e.get(h - 1).cast(pl.Int64).fill_null(0)
        judged = e.slice(h, size)
        if zeros is not None:  # the grade-0 judgments ideal= leaves out (n=), after the ideal's grades
            judged = judged.append(pl.repeat(0.0, e.get(len(counts)).cast(pl.Int64)))
        grades = e.slice(pl.lit(h, pl.Int64) + size)
    else:
        grades = e.slice(h) if h else e
        judged = grades
    # a null R, N or ideal would read as none: refused (a query without judgments, which evaluate leaves out)
    absent = e.head(h).null_count() if h else None
    length = grades.len()
    values = {key: e.get(i) for key, i in slot.items()}

    def ordered(source: pl.Expr, order: d.Node) -> pl.Expr:
        """Judgments in ideal order: by ``order`` descending (``irank``'s order is the grade;
        gain maps and G order by a mapped gain).  ``ideal=`` comes sorted by grade (the grade-0
        judgments of ``n=`` after it: no grade above 0 follows them)."""
        if isinstance(order, d.Col) and order.name == "grade" and not isinstance(order, d.IRank):
            return source if ideal is not None and source is judged else source.sort(descending=True, nulls_last=True)
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
                if node.key() in values:
                    return values[node.key()]
                inner = leaf if node.level == "rows" else judgments(node.arg, node.source)
                agg = d.to_polars(node.arg, inner)
                return agg.sum() if node.kind == "sum" else agg.max().fill_null(0.0)
            if isinstance(node, d.IdealCum):
                # the running sum over the ideal ranking (by node.order), read at position ``at``
                # of this scope: the whole sum past the end, 0 before the start (the 0 prepended)
                order = node.order
                ideal_order = ordered(judged, order)
                positive = d.to_polars(order, scope(ideal_order, None, {}, judged.len())) > 0
                terms = d.to_polars(node.arg, scope(ideal_order, "irank", {"order": order.key()}, judged.len()))
                running = pl.lit(0.0).append(pl.when(positive).then(terms).otherwise(0.0).fill_null(0.0).cum_sum())
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

    # the rows below the deepest rank the value reads add nothing: the row scope stops there
    # (nDCG@10 over lists of 100 reads a tenth of each), the list's length still counts them
    depth = measure.depth()
    rows = grades if depth is None else grades.head(depth)
    value = d.to_polars(tree, scope(rows, "rank", {}, rows.len()))
    # the grades checked: the list's, and the ideal's before it in the packed list
    checked = _checked(value, e.slice(h) if h else e, measure, relevance, absent)
    return packed.list.eval(checked).list.first().alias(measure.name)
