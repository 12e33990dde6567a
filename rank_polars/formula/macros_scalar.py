"""The scalar DuckDB macros of ``sql/``: each measure's formula compiled over one ranked list.

Each measure is one macro over a ranking, ``__rp_<name>(s, n_ret, k, <every parameter a list
can express>, ideal, r, n)``: ``s`` holds the ranking's rows as ``{rank, grade}`` structs in
rank order (at least every row whose grade is not NULL: an unjudged row adds 0 to every
aggregate, the plan's contributing rows), ``n_ret`` is the number retrieved.  The judgment
aggregates (the ideal ranking, R, bpref's N, the top judged grade) read ``ideal`` (the query's
judged grades) or, without it, the ranking's own grades; ``r`` and ``n`` stand for R and N.
The public macro (``ndcg(l, k := NULL, ...)``) takes a list of grades in rank order and the
arguments of the :mod:`rank_polars.formula.exprs` function of the same name, and calls it
with rank = list index: the semantics of the list-form engine (:mod:`rank_polars.formula.listform`).

The formula is the spec's :meth:`~rank_polars.measures.base.Measure.value` tree compiled by
:func:`rank_polars.formula.tree.to_sql`, the compiler the SQL engine and ``rp.to_sql`` use;
only the leaves are new:

``rank`` -> the row's ``rank`` field, ``irank`` -> the index in the sorted judgments,
``grade`` -> the element's grade, ``Cum(x)`` -> ``list_sum`` of ``x`` over ``list_slice(s, 1, i)``,
row aggregates -> ``list_sum``/``list_max`` of ``list_transform`` over ``s``,
judgment aggregates -> the same over ``COALESCE(ideal, grades of s)``, sorted (``list_sort(..., 'DESC',
'NULLS LAST')``) where the term reads ``irank``.

The specs bake their options into the tree, a macro takes them as arguments.  So the tree is
built once per option value and the variants are merged: where two trees differ, a
``CASE WHEN <option test> THEN ... ELSE ... END`` picks the branch (e.g. only the gain
sub-expression depends on ``gain``).  Numeric options (``k``, ``rel``, ``max``, ``p``) are
built with a sentinel value that is then replaced by the macro argument; a guard makes sure
no sentinel survives into the SQL text.

:mod:`rank_polars.formula.macros` writes the files.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from typing import Any, Callable, Sequence

from rank_polars.formula import tree as d
from rank_polars.formula import exprs
from rank_polars.measures import REGISTRY
from rank_polars.errors import MetricNameError, RankPolarsError
from rank_polars.measures.base import Measure, flag

import polars as pl

LIST = "l"  # the public macros' list of grades in rank order
# The measure macros read the ranking as ROWS, a list of {rank, grade} in rank order
# holding at least every row whose grade is not NULL (a row with a NULL grade, unjudged, adds 0
# to every aggregate: the plan's contributing rows), and N_RET, the number retrieved.
ROWS, N_RET = "s", "n_ret"
OWN_GRADES = f"list_transform({ROWS}, lambda x0: x0.grade)"
# the judgments the judgment aggregates read: the query's judged grades, or the list's own
JUDGMENTS = f"CAST(COALESCE(ideal, {OWN_GRADES}) AS DOUBLE[])"


def _ideal(grades: str) -> str:
    return f"list_sort({grades}, 'DESC', 'NULLS LAST')"


# Sentinels stand for numeric macro arguments while the spec builds its tree.
_SENTINELS: dict[str, float] = {
    "k": 987654321, "rel": 98765.4321, "max": 87654.3219, "p": 0.1234567891, "mult": 76543.2198,
}

# Scalar macros, in file order: the macro name, and aliases.  The public arguments come from
# the function of the same name in rank_polars.formula.exprs ("p" is exprs.precision:
# PRECISION is a reserved word in DuckDB, so the macro takes the metric's canonical name).
_EXPRS = {"p": "precision"}
SCALAR: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("cg", ()), ("dcg", ()), ("idcg", ()), ("ndcg", ()), ("ap", ()), ("rr", ()),
    ("p", ()), ("recall", ()), ("f1", ()), ("success", ("hit",)), ("hits", ()), ("fallout", ()), ("rprec", ()),
    ("bpref", ()), ("err", ()), ("rbp", ()), ("judged", ()), ("unj", ()),
)

# The list arguments a macro takes beside the spec's parameters, when its formula reads what
# they stand for: the query's judged grades, R, N (the judged non-relevant judgments), the
# number retrieved.  The exprs functions name the first three alike.
LIST_ARGS: dict[str, str] = {
    "ideal": "the query's judged grades (a list, any order), e.g. the judgments' grades of the query; "
             "default: the list's own grades (the ideal ranking is then the list sorted)",
    "r": "R, the number of relevant judgments of the query; default: counted in ideal",
    "n": "N, the number of judged non-relevant judgments of the query; default: counted in the list "
         "(with ideal := it must be given: ideal := may hold the grades above 0 alone)",
    "n_ret": "the number of items retrieved; default: the length of the list (more than that when "
             "the list holds NULLs for positions the ranking skips)",
}
# A measure parameter that is not a macro argument: where the ideal comes from (``ideal=run``:
# the ranked list's own items) is the caller's choice of ``ideal :=`` (NULL: the list).
_IDEAL_SOURCE = "ideal"

class _Sym(float):
    """A float option that turns arithmetic on it into formula nodes (e.g. RBP's ``1 - p``)."""

    node: d.Node

    def __new__(cls, value: float, name: str) -> _Sym:
        obj = float.__new__(cls, value)
        obj.node = d.Col("$" + name)
        return obj


def _delegate(op: str) -> Callable[[_Sym, Any], d.Node]:
    return lambda self, other: getattr(self.node, op)(other)


for _op in ("add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv", "lt", "le", "gt", "ge"):
    setattr(_Sym, f"__{_op}__", _delegate(f"__{_op}__"))


# ----------------------------------------------------------------------------- options

_TRUE, _FALSE = ("true", "1", "yes"), ("false", "0", "no")  # measures.base.flag's words


@dataclasses.dataclass(frozen=True)
class Option:
    """One macro argument: its SQL default and the values the spec is built with."""

    name: str
    default: Any
    values: tuple[Any, ...]  # spec values; a _SENTINELS entry means "the argument itself"
    choices: tuple[str, ...] | None = None
    switch: bool = False  # a boolean parameter (p's relative=), given as text or a boolean

    @property
    def sql_default(self) -> str:
        if self.default is None:
            return "NULL"
        if isinstance(self.default, bool):
            return f"'{str(self.default).lower()}'"
        if isinstance(self.default, str):
            return f"'{self.default}'"
        return repr(self.default)

    def test(self, value: Any) -> str:
        """SQL condition under which the spec value ``value`` applies."""
        if self.switch:
            words = ", ".join(f"'{w}'" for w in (_TRUE if value else _FALSE))
            return f"lower(CAST({self.name} AS VARCHAR)) IN ({words})"
        if value is None:
            return f"{self.name} IS NULL"
        if self.choices is not None:
            return f"lower({self.name}) = '{value}'"
        return f"{self.name} IS NOT NULL"

    def check(self, macro: str) -> tuple[str, str] | None:
        """(condition of an invalid argument, error message), mirroring the spec's checks."""
        n = self.name
        if n == "k":
            return ("k IS NOT NULL AND (k < 1 OR k <> floor(k))", f"{macro}: k must be NULL or a positive integer")
        if self.switch:
            words = ", ".join(f"'{w}'" for w in (*_TRUE, *_FALSE))
            return (f"{n} IS NULL OR lower(CAST({n} AS VARCHAR)) NOT IN ({words})", f"{macro}: {n} must be true or false")
        if self.choices is not None:
            allowed = ", ".join(f"'{c}'" for c in self.choices)
            return (f"{n} IS NULL OR lower({n}) NOT IN ({allowed})", f"{macro}: {n} must be one of {', '.join(self.choices)}")
        if n == "p":
            return ("p IS NULL OR p <= 0 OR p >= 1", f"{macro}: p must be in (0, 1)")
        if n == "max":
            return ("max IS NOT NULL AND max <= 0", f"{macro}: max must be NULL or > 0")
        if n == "mult":
            return ("mult IS NULL OR mult < 0", f"{macro}: mult must be >= 0")
        return None


def _option(measure: type[Measure], name: str, default: Any) -> Option | None:
    """The macro argument of the spec's parameter ``name``, None where SQL cannot take it."""
    spec = measure.PARAMS[name]
    if spec.dtype is flag:
        return Option(name, bool(default), (False, True), switch=True)
    if spec.choices is not None:
        return Option(name, default, tuple(spec.choices), spec.choices)
    if name in _SENTINELS:
        return Option(name, default, ((None,) if default is None else ()) + (_SENTINELS[name],))
    return None  # e.g. a gain map: the macro keeps the default


def options(func: Callable[..., Any], measure: type[Measure]) -> list[Option]:
    """The public macro's arguments: those of the ``rank_polars.formula.exprs`` function, same
    names and defaults (the list arguments, :data:`LIST_ARGS`, come from the formula)."""
    out = []
    for name, param in list(inspect.signature(func).parameters.items())[1:]:
        if name in LIST_ARGS:
            continue
        if name == "k":
            out.append(Option("k", None, (None, _SENTINELS["k"])))
            continue
        if measure.PARAMS[name].dtype is flag:
            # a boolean switch between two metrics (p's relative=): the public macro is the
            # default one, keeping its defaults to numbers, strings and NULL
            continue
        opt = _option(measure, name, param.default)
        if opt is None:
            raise TypeError(f"{func.__name__}: no SQL form for parameter {name!r}")
        out.append(opt)
    return out


def measure_options(measure: type[Measure]) -> list[Option]:
    """Every argument of the measure's own macro: the cutoff and each parameter a list can
    express (not a gain map, nor ``ties=average``, which reads the scores a list does not hold)."""
    out = [Option("k", None, (None, _SENTINELS["k"]))] if measure.SUPPORTS_CUTOFF else []
    for name, spec in measure.PARAMS.items():
        opt = None if name == _IDEAL_SOURCE else _option(measure, name, spec.default)
        if opt is not None and all(_compiles(measure, {name: v}) for v in opt.values if v is not None):
            out.append(opt)
    return out


def _compiles(measure: type[Measure], values: dict[str, Any]) -> bool:
    """Whether the spec with these parameter values compiles to a list form."""
    try:
        d.to_sql(_build(measure, {"k": 5 if measure.SUPPORTS_CUTOFF else None, **values}),
                 _leaf(None, 0))
    except TypeError:
        return False
    except MetricNameError:
        return True  # a combination the spec refuses: the macro's checks say so
    return True


# ----------------------------------------------------------------------------- trees

def _build(measure: type[Measure], values: dict[str, Any]) -> d.Node:
    k = values.pop("k", None)
    spec = measure(k, **values)
    for name, value in values.items():  # numeric options: the formula reads the argument
        if name in _SENTINELS and value is not None and name != "k":
            spec.params[name] = _Sym(value, name)
    return _substitute(_counted(spec, spec.value()))


def _nonrelevant_judged(spec: Measure) -> d.Node:
    """N, the judged non-relevant judgments of the query, as bpref and fall-out write it."""
    return d.judgment_sum(d.ind(d.JUDGED & ~spec.relevant()))


def _counted(spec: Measure, node: d.Node) -> d.Node:
    """R and N where the formula reads them, replaced by the ``r`` / ``n`` arguments when given."""
    marks = {spec.n_relevant().key(): "r", _nonrelevant_judged(spec).key(): "n"}

    def go(n: d.Node) -> d.Node:
        if isinstance(n, d.Agg) and n.key() in marks:
            arg = marks[n.key()]
            return d.When(d.Col(f"?{arg} IS NULL"), n, d.Col("$" + arg))
        return _rebuild(n, [go(c) for c in d.children(n)])

    return go(node)


def _substitute(node: d.Node) -> d.Node:
    """Replace sentinel literals by the macro argument they stand for."""
    if isinstance(node, d.Lit) and not isinstance(node.value, bool):
        for name, sentinel in _SENTINELS.items():
            if float(node.value) == float(sentinel):
                return d.Col("$" + name)
        return node
    return _rebuild(node, [_substitute(c) for c in d.children(node)])


def _rebuild(node: d.Node, kids: Sequence[d.Node]) -> d.Node:
    if isinstance(node, d.BinOp):
        return d.BinOp(node.op, kids[0], kids[1])
    if isinstance(node, d.Func):
        return d.Func(node.name, tuple(kids))
    if isinstance(node, d.When):
        return d.When(kids[0], kids[1], kids[2])
    if isinstance(node, d.Cum):
        return d.Cum(kids[0])
    if isinstance(node, d.Agg):
        return dataclasses.replace(node, arg=kids[0])
    return node


def _shape(node: d.Node) -> tuple[Any, ...]:
    fields = tuple(
        getattr(node, f.name) for f in dataclasses.fields(node) if not isinstance(getattr(node, f.name), (d.Node, tuple))
    ) if dataclasses.is_dataclass(node) else ()
    return (type(node), fields, len(d.children(node)))


def merge(test: str, a: d.Node, b: d.Node) -> d.Node:
    """One tree that is ``a`` where SQL condition ``test`` holds and ``b`` elsewhere.

    The trees are shared where they agree; a CASE is placed only where they differ.
    """
    if a.key() == b.key():
        return a
    if _shape(a) == _shape(b) and d.children(a):
        return _rebuild(a, [merge(test, x, y) for x, y in zip(d.children(a), d.children(b))])
    return d.When(d.Col("?" + test), a, b)


def formula(measure: type[Measure], opts: Sequence[Option], refused: list[tuple[str, str]] | None = None) -> d.Node:
    """The spec's formula over every combination of option values, merged into one tree.

    A combination the spec refuses (rbp's ``gain=graded`` with ``rel``) is left out of the
    tree; ``refused`` collects (its SQL condition, the spec's message) for the macro's checks.
    """

    def build(i: int, chosen: dict[str, Any]) -> d.Node | None:
        if i == len(opts):
            try:
                return _build(measure, dict(chosen))
            except MetricNameError as e:
                if refused is not None:
                    refused.append((" AND ".join(o.test(chosen[o.name]) for o in opts), str(e)))
                return None
        opt = opts[i]
        trees = [build(i + 1, {**chosen, opt.name: v}) for v in opt.values]
        out = trees[-1]
        for value, tree in zip(reversed(opt.values[:-1]), reversed(trees[:-1])):
            out = tree if out is None else out if tree is None else merge(opt.test(value), tree, out)
        return out

    tree = build(0, {})
    if tree is None:
        raise TypeError(f"{measure.NAME}: no combination of its parameters builds")
    return tree


# ----------------------------------------------------------------------------- SQL

@dataclasses.dataclass(frozen=True)
class _Scope:
    """Where a lambda over a list reads a row: its grade, its rank (``rank`` over the ranking's
    rows, ``irank`` over the ideal ranking), its index in the list and the list itself."""

    grade: str
    rank: str
    index: str
    rank_col: str
    base: str


def _leaf(scope: _Scope | None, depth: int) -> Callable[[d.Node], str]:
    def leaf(n: d.Node) -> str:
        if isinstance(n, d.Col):
            if n.name.startswith("$"):
                return n.name[1:]
            if n.name.startswith("?"):
                return f"({n.name[1:]})"
            if n.name == "n_ret":
                return N_RET
            if scope is None:
                raise TypeError(f"column {n.name!r} used outside a list scan")
            if n.name == scope.rank_col:
                return scope.rank
            if n.name == "grade":
                return scope.grade
            if n.name == "judged":
                return f"({scope.grade} IS NOT NULL AND {scope.grade} >= 0)"
            raise TypeError(f"column {n.name!r} is not available in a ranked list")
        if isinstance(n, d.Cum):
            if scope is None or scope.rank_col != "rank":
                raise TypeError("a running sum used outside a scan of the ranking")
            return _rows("sum", n.arg, f"list_slice({scope.base}, 1, {scope.index})", depth + 1)
        if isinstance(n, d.Agg):
            if n.level == "rows":
                return _rows(n.kind, n.arg, ROWS, depth + 1)
            # the ideal ranking: of the query's judgments, or of the ranking's own items (ideal=run)
            source = f"CAST({OWN_GRADES} AS DOUBLE[])" if n.source == "run" else JUDGMENTS
            g, i = f"g{depth + 1}", f"i{depth + 1}"
            # sorted where the term reads the ideal rank; R, N and the top grade need no order
            base = _ideal(source) if d.reads([n.arg], "irank") else source
            return _reduce(n.kind, base, f"{g}, {i}", n.arg, _Scope(g, i, i, "irank", base), depth + 1)
        raise TypeError(f"cannot compile {n!r}")

    return leaf


def _rows(kind: str, arg: d.Node, base: str, depth: int) -> str:
    """``arg`` summed (or maxed) over the ranking's rows ``base``: a lambda over its structs."""
    x, i = f"x{depth}", f"i{depth}"
    return _reduce(kind, base, f"{x}, {i}", arg, _Scope(f"{x}.grade", f"{x}.rank", i, "rank", base), depth)


def _reduce(kind: str, base: str, params: str, arg: d.Node, scope: _Scope, depth: int) -> str:
    body = d.to_sql(arg, _leaf(scope, depth))
    return f"COALESCE(list_{kind}(list_transform({base}, lambda {params}: {body})), 0.0)"


def list_args(tree: d.Node) -> list[str]:
    """The :data:`LIST_ARGS` the merged formula reads, in that order."""
    nodes = d.walk(tree)
    reads = {
        "ideal": any(isinstance(n, d.Agg) and n.level != "rows" and n.source == "judgments" for n in nodes),
        "r": d.reads([tree], "$r"),
        "n": d.reads([tree], "$n"),
        "n_ret": d.reads([tree], "n_ret"),
    }
    return [name for name in LIST_ARGS if reads[name]]


def _global(tree: d.Node) -> bool:
    return any(isinstance(n, d.Agg) and n.level == "global" for n in d.walk(tree))


def scalar_body(measure: type[Measure], opts: Sequence[Option], macro: str) -> str:
    refused: list[tuple[str, str]] = []
    tree = formula(measure, opts, refused)
    sql = d.to_sql(tree, _leaf(None, 0))
    checks = [c for c in (opt.check(macro) for opt in opts) if c is not None]
    checks += [(cond, message.replace("'", "''")) for cond, message in refused]
    if _global(tree) and any(o.name == "max" for o in opts):
        # the top grade of every judgment, which one query's judgments do not hold (as exprs)
        checks.append(("ideal IS NOT NULL AND max IS NULL", f"{macro}: with ideal := give max := (the top grade "
                                                           "of the scale, e.g. the largest grade of all judgments)"))
    if checks:
        whens = " ".join(f"WHEN {cond} THEN error('{message}')" for cond, message in checks)
        sql = f"CASE {whens} ELSE {sql} END"
    for name, sentinel in _SENTINELS.items():
        for text in {repr(sentinel), repr(float(sentinel)), str(sentinel)}:
            if text in sql:
                raise AssertionError(f"{macro}: option {name} was baked into the SQL")
    return sql


def _first_paragraph(doc: str | None) -> str:
    return (doc or "").strip().split("\n\n")[0].replace("\n", " ")


def internal(name: str) -> str:
    """The name of the measure's own macro, which the public one and ``rank_eval`` call."""
    return f"__rp_{name}"


def _signature(first: Sequence[str], opts: Sequence[Option], extra: Sequence[str]) -> str:
    return ", ".join([*first, *(f"{o.name} := {o.sql_default}" for o in opts), *(f"{a} := NULL" for a in extra)])


def ideal_without_n(func: Callable[..., Any], extra: Sequence[str]) -> str | None:
    """The public macro's error when ``ideal :=`` is given without ``n :=``: the words of the
    Polars function of the same name, which refuses it because an ideal ranking need not hold the
    grade-0 judgments (``rp.with_judgments`` attaches the grades above 0 alone) and N read from
    it would then be 0.  None where the function takes ``ideal=`` alone.

    >>> print(ideal_without_n(exprs.fallout, ["ideal", "n"]))
    fallout reads N, the judged non-relevant judgments, and ideal := (the ideal ranking) need not hold the grade-0 judgments: pass n :=, their number (rp.with_judgments' num_nonrel)
    >>> ideal_without_n(exprs.ndcg, ["ideal"]) is None
    True
    """
    if "ideal" not in extra or "n" not in extra:
        return None
    try:
        func(pl.col(LIST), ideal=pl.col("ideal"))
    except RankPolarsError as e:
        # the macro's n := is N itself (the Polars n= is the grade-0 judgments added to ideal=):
        # its advice for an ideal holding every judgment does not apply here
        words, found = re.subn(r"; n=0 when ideal= holds every judgment\)", ")", str(e))
        if not found:
            raise AssertionError(f"{func.__name__}: the Polars message changed, review the SQL one: {e}") from e
        return re.sub(r"\b(ideal|n|r)=", r"\1 :=", words)
    return None


# The public macro's list as the measure macro's rows: rank = index, every grade kept
AS_ROWS = f"list_transform({LIST}, lambda g_, i_: {{'rank': i_, 'grade': CAST(g_ AS DOUBLE)}})"


def scalar_file(name: str, aliases: Sequence[str] = ()) -> str:
    func = getattr(exprs, _EXPRS.get(name, name))
    measure = REGISTRY[name]
    own = measure_options(measure)
    own_extra = [a for a in list_args(formula(measure, own)) if a != N_RET]
    opts = options(func, measure)
    extra = list_args(formula(measure, opts))
    args = _signature([LIST], opts, extra)
    lines = [
        f"-- {name}: {_first_paragraph(func.__doc__)}",
        f"-- Formula: {_first_paragraph(measure.__doc__)}",
        "--",
        f"-- {name}({args})",
        f"--   {LIST}: the grades of one ranking in rank order, e.g. list(relevance ORDER BY position);",
        "--      NULL or negative grades are unjudged.",
    ]
    for o in opts:
        if o.name == "k":
            lines.append("--   k: cutoff (a positive integer); NULL = the whole list.")
        else:
            lines.append(f"--   {o.name}: {measure.PARAMS[o.name].doc}.")
    lines += [f"--   {a}: {LIST_ARGS[a]}." for a in extra]
    for alias in aliases:
        lines.append(f"-- Alias: {alias}(...) is the same macro.")
    call_args = f"list(relevance ORDER BY position){', 10' if any(o.name == 'k' for o in opts) else ''}"
    n_ret = f"COALESCE({N_RET}, len({LIST}))" if N_RET in extra else f"len({LIST})"
    passed = ", ".join([AS_ROWS, n_ret, *(f"{a} := {a}" for a in [*(o.name for o in opts), *extra] if a != N_RET)])
    body = f"{internal(name)}({passed})"
    refused = ideal_without_n(func, extra)
    if refused is not None:
        body = f"CASE WHEN ideal IS NOT NULL AND n IS NULL THEN error('{refused.replace(chr(39), chr(39) * 2)}') ELSE {body} END"
    lines += [
        "--",
        f"-- Example: SELECT model, query, {name}({call_args}) AS {name}",
        "--          FROM logs GROUP BY ALL;",
    ]
    if "ideal" in extra:
        lines.append(f"--          {name}(l, ideal := grades) with grades the query's judged grades (see tables.sql).")
    lines += [
        f"-- {internal(name)}({ROWS}, {N_RET}, ...): the formula over the ranking's rows {ROWS}, a list of {{rank, grade}} structs",
        "--   in rank order holding at least every row whose grade is not NULL, and n_ret, the number",
        f"--   retrieved; with every argument rank_eval passes ({', '.join(o.name for o in own)}).",
        "--",
        "-- Generated from rank_polars/measures by rank_polars/formula/macros.py; do not edit by hand.",
        f"CREATE OR REPLACE MACRO {internal(name)}({_signature([ROWS, N_RET], own, own_extra)}) AS",
        f"{scalar_body(measure, own, name)};",
        f"CREATE OR REPLACE MACRO {name}({args}) AS {body};",
    ]
    for alias in aliases:
        lines.append(f"CREATE OR REPLACE MACRO {alias}({args}) AS {body};")
    return "\n".join(lines) + "\n"


__all__ = ["LIST_ARGS", "SCALAR", "Option", "formula", "internal", "list_args", "measure_options", "merge", "options",
           "scalar_body", "scalar_file"]
