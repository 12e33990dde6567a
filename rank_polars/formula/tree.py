"""A tiny expression language in which every metric is written once.

Each metric spec builds its formula from these nodes; the Polars engine, the list-form
``ranking`` namespace and the SQL generator each compile the same tree.  That is what keeps
the engines from drifting apart: there is no second copy of any formula.

Row columns a formula may read (see :mod:`rank_polars.plan` for where they come from):

``rank``    1-based position of a run row in its ranking
``grade``   relevance grade of the row (qrels grade, or the run's own label)
``judged``  the row has a judgment (grade >= 0; negative grades are "unjudged", as in trec_eval)
``irank``   1-based rank of a judgment in the ideal ordering (grade descending); positively graded
            judgment rows only (a formula reading it must add 0 for grades <= 0, as gains do)
``n_ret``   number of rows the query's ranking has (per query)

Aggregates (:class:`Agg`) say *where* they are computed: over the contributing run rows of a
query (``"rows"``), over the judgments of a query (``"judgments"``), or over all judgments
(``"global"``).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Literal, Union

AggLevel = Literal["rows", "judgments", "global"]
AggKind = Literal["sum", "max"]

Operand = Union["Node", float, int, bool]


def wrap(value: Operand) -> Node:
    if isinstance(value, Node):
        return value
    if isinstance(value, bool) or isinstance(value, (int, float)):
        return Lit(value)
    raise TypeError(f"cannot use {value!r} in a metric formula")


class Node:
    """Base of the expression tree; operators build new nodes."""

    def key(self) -> str:  # canonical text: equal formulas share one computed column
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def _bin(self, op: str, other: Operand, *, swap: bool = False) -> Node:
        a, b = (wrap(other), self) if swap else (self, wrap(other))
        return BinOp(op, a, b)

    def __add__(self, o: Operand) -> Node:
        return self._bin("+", o)

    def __radd__(self, o: Operand) -> Node:
        return self._bin("+", o, swap=True)

    def __sub__(self, o: Operand) -> Node:
        return self._bin("-", o)

    def __rsub__(self, o: Operand) -> Node:
        return self._bin("-", o, swap=True)

    def __mul__(self, o: Operand) -> Node:
        return self._bin("*", o)

    def __rmul__(self, o: Operand) -> Node:
        return self._bin("*", o, swap=True)

    def __truediv__(self, o: Operand) -> Node:
        return self._bin("/", o)

    def __rtruediv__(self, o: Operand) -> Node:
        return self._bin("/", o, swap=True)

    def __lt__(self, o: Operand) -> Node:
        return self._bin("<", o)

    def __le__(self, o: Operand) -> Node:
        return self._bin("<=", o)

    def __gt__(self, o: Operand) -> Node:
        return self._bin(">", o)

    def __ge__(self, o: Operand) -> Node:
        return self._bin(">=", o)

    def __and__(self, o: Operand) -> Node:
        return self._bin("AND", o)

    def __or__(self, o: Operand) -> Node:
        return self._bin("OR", o)

    def __invert__(self) -> Node:
        return Func("not", (self,))


@dataclass(frozen=True, eq=False, repr=False)
class Col(Node):
    name: str

    def key(self) -> str:
        return self.name


@dataclass(frozen=True, eq=False, repr=False)
class Lit(Node):
    value: float | int | bool

    def key(self) -> str:
        return repr(self.value)


@dataclass(frozen=True, eq=False, repr=False)
class BinOp(Node):
    op: str
    left: Node
    right: Node

    def key(self) -> str:
        return f"({self.left.key()} {self.op} {self.right.key()})"


@dataclass(frozen=True, eq=False, repr=False)
class Func(Node):
    name: str  # log2, ln, exp, pow, least, floor, not
    args: tuple[Node, ...]

    def key(self) -> str:
        return f"{self.name}({', '.join(a.key() for a in self.args)})"


@dataclass(frozen=True, eq=False, repr=False)
class When(Node):
    cond: Node
    then: Node
    otherwise: Node

    def key(self) -> str:
        return f"when({self.cond.key()}, {self.then.key()}, {self.otherwise.key()})"


@dataclass(frozen=True, eq=False, repr=False)
class Cum(Node):
    """Running sum of ``arg`` over the query's contributing rows in rank order (inclusive)."""

    arg: Node

    def key(self) -> str:
        return f"cum({self.arg.key()})"


@dataclass(frozen=True, eq=False, repr=False)
class Agg(Node):
    kind: AggKind
    arg: Node
    level: AggLevel
    # Which judgments a "judgments"/"global" aggregate reads: the qrels ("judgments") or the
    # labelled rows of the run itself ("run"); identical when the run carries its own labels.
    source: Literal["judgments", "run"] = "judgments"

    def key(self) -> str:
        src = "" if self.source == "judgments" else ":run"
        return f"{self.kind}[{self.level}{src}]({self.arg.key()})"


# Part B (trec_eval's gain maps, G, ndcg_rel): two nodes over the *ideal ranking* ordered by a
# formula instead of the grade.  The engines number one ideal window per order
# (:func:`ideal_orders`) and join :class:`IdealCum` onto the rows (:func:`ideal_cums`).


@dataclass(frozen=True, eq=False, repr=False)
class IRank(Col):
    """The ideal rank under another order: the 1-based position of a judgment when the
    query's judgments with ``order > 0`` are sorted by ``order`` descending (``irank`` is the
    order by ``grade``).  Read in judgment aggregates, as ``irank``."""

    order: Node = Col("grade")

    def key(self) -> str:
        return f"irank[{self.order.key()}]"


@dataclass(frozen=True, eq=False, repr=False)
class IdealCum(Node):
    """A row-level value read off the ideal ranking: the sum of ``arg`` (a formula over a
    judgment's ``grade`` and ``irank``, 0 where ``order <= 0``) over the ideal positions
    ``1..at``; the whole sum when ``at`` is past the ideal's end, 0 when ``at < 1``."""

    arg: Node
    order: Node
    at: Node

    def key(self) -> str:
        return f"icum[{self.order.key()}]({self.arg.key()} @ {self.at.key()})"

    @property
    def column(self) -> str:
        """A stable column name for the engines (the same text on every run)."""
        import hashlib

        return "__rp_icum_" + hashlib.md5(self.key().encode()).hexdigest()[:10]


@dataclass(frozen=True, eq=False, repr=False)
class TieSum(Node):
    """The sum of ``arg`` over the rows of the ranking whose score equals this row's (itself
    included): every row of the run, not only the contributing ones, so the engines compute
    it where they rank by score, before the contributing rows are picked.  ``arg`` reads
    ``rank`` (the ordinal rank) alone.  ``TieSum(w(rank)) / TieSum(1)`` is the mean of a
    position weight over the positions the tie occupies: a row's expected weight over the
    tie's orders (``ties=average``)."""

    arg: Node

    def key(self) -> str:
        return f"tiesum({self.arg.key()})"

    @property
    def column(self) -> str:
        """A stable column name for the engines (the same text on every run)."""
        import hashlib

        return "__rp_tie_" + hashlib.md5(self.key().encode()).hexdigest()[:10]


#: A row's tie, as a number: the mean ordinal rank of the rows tied with it (disjoint runs of
#: ranks have distinct means); by position every row is a tie of its own.
TIE = TieSum(Col("rank")) / TieSum(Lit(1.0))


@dataclass(frozen=True, eq=False, repr=False)
class TieMax(Node):
    """The largest ``arg`` over the contributing rows of this row's tie (:data:`TIE`), computed
    after the running sums, which ``arg`` may read: ``TieMax(Cum(x))`` is the running sum of
    ``x`` through the end of the row's tie (the relevant items scored at least as high)."""

    arg: Node

    def key(self) -> str:
        return f"tiemax({self.arg.key()})"


def tie_sums(nodes: Iterable[Node]) -> dict[str, TieSum]:
    """The :class:`TieSum` nodes of the trees, by column name (the engines add them to the
    ranked run).

    >>> list(tie_sums([row_sum(GRADE * TieSum(ind(RANK <= 3)) / TieSum(Lit(1.0)))]).values())
    [tiesum(when((rank <= 3), 1.0, 0.0)), tiesum(1.0)]
    """
    return {n.column: n for node in nodes for n in walk(node) if isinstance(n, TieSum)}


# ----------------------------------------------------------------------------- builders

RANK, GRADE, JUDGED, IRANK, N_RET = Col("rank"), Col("grade"), Col("judged"), Col("irank"), Col("n_ret")


def when(cond: Node, then: Operand, otherwise: Operand = 0.0) -> Node:
    return When(cond, wrap(then), wrap(otherwise))


def ind(cond: Node) -> Node:
    """1.0 where ``cond`` holds, else 0.0 (SQL has no arithmetic on booleans)."""
    return When(cond, Lit(1.0), Lit(0.0))


def integral(node: Node) -> bool:
    """Whether ``node`` takes only small whole values (indicators and their sums, products and
    differences): a sum of them is exact in any order, so it needs no fixed order to give the
    same bits every run (see ``polars_engine.ordered_sum``).

    >>> integral(ind(GRADE > 0)), integral(when(GRADE > 0, GRADE, 0.0))
    (True, False)
    """
    if isinstance(node, Lit):
        return not isinstance(node.value, bool) and float(node.value).is_integer() and abs(node.value) < 2**20
    if isinstance(node, When):
        return integral(node.then) and integral(node.otherwise)
    if isinstance(node, BinOp) and node.op in ("+", "-", "*"):
        return integral(node.left) and integral(node.right)
    return False


def log2(x: Operand) -> Node:
    return Func("log2", (wrap(x),))


def ln(x: Operand) -> Node:
    return Func("ln", (wrap(x),))


def exp(x: Operand) -> Node:
    return Func("exp", (wrap(x),))


def power(base: Operand, exponent: Operand) -> Node:
    return Func("pow", (wrap(base), wrap(exponent)))


def least(a: Operand, b: Operand) -> Node:
    return Func("least", (wrap(a), wrap(b)))


def floor(x: Operand) -> Node:
    """The largest integer <= x, as a float (C's ``(long)x`` for x >= 0)."""
    return Func("floor", (wrap(x),))


_SHIFT = 10  # the recurrences move the argument past 10, where the series below hold to ~1e-15


def digamma(x: Operand) -> Node:
    """ψ(x) for x > 0, as a formula (the C/W/L measures' sums of 1/i: H(n) = ψ(n + 1) + γ):
    ψ(x) = ψ(x + 10) − Σ_{j<10} 1/(x + j), and ψ(y) by its asymptotic series for y ≥ 10
    (error below 1e-14).

    >>> import math, polars as pl
    >>> value = pl.select(to_polars(digamma(Lit(1.0)), lambda n: None)).item()
    >>> abs(value + 0.5772156649015329) < 1e-14
    True
    """
    x = wrap(x)
    y = x + float(_SHIFT)
    series = ln(y) - 0.5 / y - 1.0 / (12.0 * power(y, 2.0)) + 1.0 / (120.0 * power(y, 4.0)) \
        - 1.0 / (252.0 * power(y, 6.0)) + 1.0 / (240.0 * power(y, 8.0)) - 1.0 / (132.0 * power(y, 10.0))
    for j in range(_SHIFT):
        series = series - 1.0 / (x + float(j))
    return series


def trigamma(x: Operand) -> Node:
    """ψ₁(x) = Σ_{i≥0} 1/(x + i)² for x > 0, as a formula (the C/W/L measures' sums of
    1/(i + a)² over a range of ranks are differences of it): the first 10 terms, then the
    asymptotic series at x + 10 (error below 1e-15).

    >>> import math, polars as pl
    >>> value = pl.select(to_polars(trigamma(Lit(1.0)), lambda n: None)).item()
    >>> abs(value - math.pi ** 2 / 6) < 1e-14
    True
    """
    x = wrap(x)
    y = x + float(_SHIFT)
    series = 1.0 / y + 1.0 / (2.0 * power(y, 2.0)) + 1.0 / (6.0 * power(y, 3.0)) - 1.0 / (30.0 * power(y, 5.0)) \
        + 1.0 / (42.0 * power(y, 7.0)) - 1.0 / (30.0 * power(y, 9.0)) + 5.0 / (66.0 * power(y, 11.0)) \
        - 691.0 / (2730.0 * power(y, 13.0))
    for j in range(_SHIFT):
        series = series + 1.0 / power(x + float(j), 2.0)
    return series


def safe_div(num: Node, den: Operand) -> Node:
    """``num / den``, and 0 where ``den`` is 0 (the documented 0/0 convention of every metric)."""
    den = wrap(den)
    return when(den > 0, num / den, 0.0)


def row_sum(x: Node) -> Agg:
    return Agg("sum", x, "rows")


def row_max(x: Node) -> Agg:
    return Agg("max", x, "rows")


def judgment_sum(x: Node, source: Literal["judgments", "run"] = "judgments") -> Agg:
    return Agg("sum", x, "judgments", source)


def global_max(x: Node) -> Agg:
    return Agg("max", x, "global")


def walk(node: Node) -> list[Node]:
    """All nodes of a tree, children before parents."""
    out: list[Node] = []

    def visit(n: Node) -> None:
        for child in children(n):
            visit(child)
        out.append(n)

    visit(node)
    return out


def reads(nodes: Iterable[Node], name: str) -> bool:
    """Whether any of the trees reads the column ``name``."""
    return any(isinstance(n, Col) and n.name == name for node in nodes for n in walk(node))


def children(n: Node) -> tuple[Node, ...]:
    if isinstance(n, BinOp):
        return (n.left, n.right)
    if isinstance(n, Func):
        return n.args
    if isinstance(n, When):
        return (n.cond, n.then, n.otherwise)
    if isinstance(n, (Cum, Agg, TieSum, TieMax)):
        return (n.arg,)
    if isinstance(n, IRank):
        return (n.order,)
    if isinstance(n, IdealCum):
        return (n.arg, n.order, n.at)
    return ()


def ideal_orders(aggs: dict[str, Agg]) -> list[tuple[Node, dict[str, Agg]]]:
    """Judgment aggregates that read the ideal rank, grouped by the order that ranks the
    judgments (``grade`` for plain ``irank``, else the :class:`IRank`'s order)."""
    groups: dict[str, tuple[Node, dict[str, Agg]]] = {}
    for name, agg in aggs.items():
        orders = {n.order.key(): n.order for n in walk(agg) if isinstance(n, IRank)}
        if any(isinstance(n, Col) and not isinstance(n, IRank) and n.name == "irank" for n in walk(agg)):
            orders.setdefault(GRADE.key(), GRADE)
        if len(orders) != 1:
            raise TypeError(f"an aggregate reads one ideal order, got {sorted(orders)}")
        ((key, order),) = orders.items()
        groups.setdefault(key, (order, {}))[1][name] = agg
    return list(groups.values())


def ideal_cums(nodes: Iterable[Node]) -> dict[str, IdealCum]:
    """The outermost :class:`IdealCum` nodes of the trees, by column name (the engines join
    them onto the rows; one nested in another's ``arg`` is joined onto the ideal ranking, its
    ``at`` reading ``irank``)."""
    out: dict[str, IdealCum] = {}

    def visit(n: Node) -> None:
        if isinstance(n, IdealCum):
            out[n.column] = n
            return
        for child in children(n):
            visit(child)

    for node in nodes:
        visit(node)
    return out


# ----------------------------------------------------------------------------- Polars

@functools.lru_cache(maxsize=1024, typed=True)  # typed: True, 1 and 1.0 are equal keys otherwise
def _polars_lit(value: float | int | bool) -> Any:
    """A typed literal, made once: ``pl.lit`` with a dtype builds a one-value Series (24 us, the
    largest share of compiling a plan), and an expression is immutable, so one serves every tree."""
    import polars as pl

    return pl.lit(value, dtype=pl.Boolean if isinstance(value, bool) else pl.Float64)


def polars_quotient(a: Any, b: Any) -> Any:
    """``a / b`` for a Polars expression ``a`` and a constant ``b``, divided as SQL and trec_eval
    divide.  Polars divides a column by a scalar as a product with its reciprocal, 1 ulp off the
    quotient for about half the values (p@5 = 3/5 gave 0.6000000000000001; EPC's ``pop / users``
    was 1 ulp off DuckDB's in 1% of the lists); a divisor of the column's shape divides exactly.
    ``a`` finite: ``a * 0.0`` is NaN for an infinite ``a``.

    >>> import polars as pl
    >>> frame = pl.DataFrame({"hits": [3.0, 3.0]})
    >>> frame.select(pl.col("hits") / 5.0).row(0)[0], frame.select(polars_quotient(pl.col("hits"), 5.0)).row(0)[0]
    (0.6000000000000001, 0.6)
    """
    return a / (b + a * 0.0)


# The exponents for which Polars' pow, given an exponent column of one value (a frame, or a
# chunk, of one row), takes a shortcut instead of the C library's ``pow``: repeated
# multiplication for the integers 2..9, ``sqrt`` for 0.5.  Over more rows it calls ``pow``, as
# SQL's POWER does, and as Python's ``math.pow`` does: every power below is that function's.
_POW_SHORTCUTS = (2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 0.5)


def polars_power(base: float, exponent: Any) -> Any:
    """``base ^ exponent`` for a constant ``base`` and a Polars expression, with the C library's
    bits whatever the frame's length.

    The shortcuts above can differ from ``pow`` in the last bit (0.8^4: ``0x1.a36e2eb1c432fp-2``
    against ``pow``'s ``...432ep-2``), so RBP's ``p^(rank-1)`` on a log of one row, or on a
    streaming chunk of one row, was 1 ulp off DuckDB and off the same ranking in a larger log
    (and exposure_gini's ``patience^rank``, 0.9 where DuckDB gives 0.8999999999999999 at rank
    6); those exponents take ``math.pow``'s value.

    >>> import polars as pl
    >>> one_row = pl.DataFrame({"e": [4]})
    >>> one_row.select(pl.lit(0.8).pow(pl.col("e"))).item() == math.pow(0.8, 4)
    False
    >>> one_row.select(polars_power(0.8, pl.col("e"))).item() == math.pow(0.8, 4)
    True
    """
    import polars as pl

    out = _polars_lit(float(base)).pow(exponent)
    for shortcut in _POW_SHORTCUTS:
        out = pl.when(exponent == shortcut).then(_polars_lit(math.pow(base, shortcut))).otherwise(out)
    return out


def powers_of(base: float, n: int) -> Any:
    """``base^0 .. base^(n-1)`` (a NumPy array) by the C library's ``pow``, the bits of
    :func:`polars_power` and of SQL's ``POWER``, for tables the NumPy steps look up (NRBP's
    ``beta^(rank-1)``, alpha's ``(1-alpha)^c``).

    >>> powers_of(0.8, 5).tolist() == [0.8 ** e for e in range(5)]
    True
    """
    import numpy as np

    return np.array([math.pow(base, e) for e in range(n)], dtype=np.float64)


def to_polars(node: Node, leaf: Callable[[Node], Any]) -> Any:
    """Compile to a ``pl.Expr``.

    ``leaf`` maps :class:`Col`, :class:`Cum` and :class:`Agg` nodes to expressions: each
    engine decides where those come from (a column, a window, a list reduction).
    """
    import polars as pl

    def go(n: Node) -> Any:
        if isinstance(n, (Col, Cum, Agg, IdealCum, TieSum)):
            return leaf(n)
        if isinstance(n, Lit):
            return _polars_lit(n.value)
        if isinstance(n, BinOp):
            a, b = go(n.left), go(n.right)
            if n.op == "/" and isinstance(n.right, Lit):
                return polars_quotient(a, b)
            return {
                "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: a / b,
                "<": lambda: a < b, "<=": lambda: a <= b, ">": lambda: a > b, ">=": lambda: a >= b,
                "AND": lambda: a & b, "OR": lambda: a | b,
            }[n.op]()
        if isinstance(n, Func):
            args = [go(a) for a in n.args]
            if n.name == "log2":
                return args[0].cast(pl.Float64).log(2)
            if n.name == "ln":
                return args[0].cast(pl.Float64).log(math.e)
            if n.name == "exp":
                return args[0].exp()
            if n.name == "pow":
                base = n.args[0]
                if isinstance(base, Lit):  # every metric's power: RBP's p, the gains' 2
                    return polars_power(float(base.value), args[1])
                return args[0].cast(pl.Float64).pow(args[1])
            if n.name == "least":
                return pl.min_horizontal(args[0], args[1])
            if n.name == "floor":
                return args[0].cast(pl.Float64).floor()
            if n.name == "not":
                return ~args[0]
        if isinstance(n, When):
            return pl.when(go(n.cond)).then(go(n.then)).otherwise(go(n.otherwise))
        raise TypeError(f"cannot compile {n!r}")

    return go(node)


# ----------------------------------------------------------------------------- SQL (DuckDB)

def sql_log2(x: str) -> str:
    """log2 in SQL as Polars computes ``log(2)``: ``ln(x) / ln(2)``, so the engines give the same
    bits (the C library's ``log2``, DuckDB's ``LOG2``, differs from it in the last bit for some
    ranks: nDCG's discounts were 1 ulp apart).  Every SQL logarithm base 2 is written by this.

    >>> sql_log2("r + 1")
    '(LN(r + 1) / LN(2.0))'
    """
    return f"(LN({x}) / LN(2.0))"


def to_sql(node: Node, leaf: Callable[[Node], str]) -> str:
    """Compile to a DuckDB SQL expression; sqlglot translates it to other dialects."""

    def go(n: Node) -> str:
        if isinstance(n, (Col, Cum, Agg, IdealCum, TieSum)):
            return leaf(n)
        if isinstance(n, Lit):
            if isinstance(n.value, bool):
                return "TRUE" if n.value else "FALSE"
            return f"CAST({float(n.value)!r} AS DOUBLE)"
        if isinstance(n, BinOp):
            a, b = go(n.left), go(n.right)
            if n.op == "/":  # integer division in some dialects: divide as doubles
                return f"(CAST({a} AS DOUBLE) / {b})"
            return f"({a} {n.op} {b})"
        if isinstance(n, Func):
            args = [go(a) for a in n.args]
            if n.name == "log2":
                return sql_log2(args[0])
            if n.name == "ln":
                return f"LN({args[0]})"
            if n.name == "exp":
                return f"EXP({args[0]})"
            if n.name == "pow":
                return f"POWER({args[0]}, {args[1]})"
            if n.name == "least":
                return f"LEAST({args[0]}, {args[1]})"
            if n.name == "floor":
                return f"CAST(FLOOR({args[0]}) AS DOUBLE)"
            if n.name == "not":
                return f"(NOT {args[0]})"
        if isinstance(n, When):
            return f"CASE WHEN {go(n.cond)} THEN {go(n.then)} ELSE {go(n.otherwise)} END"
        raise TypeError(f"cannot compile {n!r}")

    return go(node)
