"""Generate the DuckDB macro files in ``sql/`` from the metric specs.

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
judgment aggregates -> the same over ``list_sort(COALESCE(ideal, grades of s), 'DESC', 'NULLS LAST')``.

The specs bake their options into the tree, a macro takes them as arguments.  So the tree is
built once per option value and the variants are merged: where two trees differ, a
``CASE WHEN <option test> THEN ... ELSE ... END`` picks the branch (e.g. only the gain
sub-expression depends on ``gain``).  Numeric options (``k``, ``rel``, ``max``, ``p``) are
built with a sentinel value that is then replaced by the macro argument; a guard makes sure
no sentinel survives into the SQL text.

``tables.sql`` holds the table macros ``rank_eval`` / ``rank_eval_per_query``, the whole
evaluation of a log and its judgments: the metric names parsed in SQL (``__rp_metrics``, from
the registry's names and the parser's tables), each computed by its measure's macro
(``__rp_value``) over one list per ranking.

Regenerate the files with ``python -m rank_polars.formula.macros [OUTPUT_DIR]``.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from rank_polars.formula import tree as d
from rank_polars.formula import exprs
from rank_polars.measures import _CUT, _PARAM_SYNONYMS, MEASURES, REGISTRY
from rank_polars.errors import MetricNameError
from rank_polars.measures.base import GM_FLOOR, Measure, flag

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
    "n": "N, the number of judged non-relevant judgments of the query; default: counted in ideal",
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
            base = _ideal(source)
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
        f"CREATE OR REPLACE MACRO {name}({args}) AS {internal(name)}({passed});",
    ]
    for alias in aliases:
        lines.append(f"CREATE OR REPLACE MACRO {alias}({args}) AS {internal(name)}({passed});")
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- rank_eval

def supported() -> dict[str, tuple[str, type[Measure]]]:
    """The measures ``rank_eval`` reads: canonical name -> (the SCALAR macro computing it, the
    spec class).  A measure that is another per query (``gm_map`` is ``ap``, combined by a
    geometric mean: its spec's ``AGGREGATE``) is computed by that one's macro.

    >>> table = supported()
    >>> table["ndcg"][0], table["gm_map"][0], table["r"][0], "infap" in table
    ('ndcg', 'ap', 'recall', False)
    """
    own = {REGISTRY[name]: name for name, _ in SCALAR}
    out: dict[str, tuple[str, type[Measure]]] = {}
    for cls in MEASURES:
        base = next((b for b in cls.__mro__ if b in own), None)
        if base is not None and cls.value is base.value and cls.PARAMS == base.PARAMS:
            out[cls.NAME] = (own[base], cls)
    return out


def _text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _list(values: Sequence[str]) -> str:
    return "[" + ", ".join(_text(v) for v in values) + "]"


def _map(entries: dict[str, str]) -> str:
    return "MAP {" + ", ".join(f"{_text(k)}: {v}" for k, v in entries.items()) + "}"


def _param_kind(measure: type[Measure], name: str, opts: Sequence[Option]) -> str:
    """How the parser reads a parameter: '#' a number, '?' true/false, 'a|b' one of the
    choices, '!' a parameter SQL cannot express (a gain map, ``ties=average``)."""
    if name == _IDEAL_SOURCE:
        return "|".join(measure.PARAMS[name].choices or ())
    opt = next((o for o in opts if o.name == name), None)
    if opt is None:
        return "!"
    if opt.switch:
        return "?"
    return "|".join(opt.choices) if opt.choices is not None else "#"


# trec_eval's spellings that carry a cutoff or a parameter in the name (measures/__init__.py's
# _CUT and _SPELLINGS, for the measures SQL has): pattern, measure, parameters, cutoff.
_NUMBER = r"(\d+(?:\.\d*)?|\.\d+)"
_CUTS = "(" + "|".join(_CUT) + r")_(\d+)"
_SPELLED_SQL = (
    (_CUTS, "{cuts}[regexp_extract(base, '^" + _CUTS + "$', 1)]", "''", "regexp_extract(base, '^" + _CUTS + "$', 2)"),
    (r"relative_p_(\d+)", "'p'", "'relative=true'", r"regexp_extract(base, '^relative_p_(\d+)$', 1)"),
    ("rprec_mult_" + _NUMBER, "'rprec'", "'mult=' || regexp_extract(base, '^rprec_mult_" + _NUMBER + "$', 1)", "''"),
)
_NAME_SQL = r"^\s*([a-z0-9][a-z0-9_.\-]*)\s*(?:\((.*)\))?\s*(?:@\s*([^\s]+))?\s*$"
_STRIP = "'''\"'"  # the quotes around a parameter's value: ' and "


def _quoted(expr: str) -> str:
    return f"'''' || {expr} || ''''"


def parser_sql() -> str:
    """``__rp_metrics(metrics)``: metric names as ``rank_polars.measures.parse`` reads it, for the
    measures SQL computes: ``{name, measure, k, params, agg, best}``, or an error naming it."""
    table = supported()
    aliases = {alias: name for name, (_, cls) in table.items()
               for alias in (cls.NAME, *cls.ALIASES) if REGISTRY.get(alias) is cls}
    kinds = {name: _map({p: _text(kind) for p in cls.PARAMS
                         if (kind := _param_kind(cls, p, measure_options(cls))) != "!"})
             for name, (_, cls) in table.items()}
    cutoff = [name for name, (_, cls) in table.items() if cls.SUPPORTS_CUTOFF]
    synonyms = {f"{cls.NAME}:{key}": (new, words) for (cls, key), (new, words) in _PARAM_SYNONYMS.items()
                if cls.NAME in table}
    cuts = _map({k: _text(v) for k, v in _CUT.items()})
    spelled = "|".join(f"(?:{pattern})" for pattern, *_ in _SPELLED_SQL)
    whens = " ".join(f"WHEN regexp_full_match(base, '{pattern}') THEN {{'base': {measure.format(cuts=cuts)}, "
                     f"'args': {args}, 'cutoff': {at}}}" for pattern, measure, args, at in _SPELLED_SQL)
    renamed = " ".join(f"WHEN m || ':' || e.key = {_text(k)} THEN {_text(new)}" for k, (new, _) in synonyms.items())
    reworded = " ".join(f"WHEN m || ':' || e.key = {_text(k)} THEN coalesce({_map({a: _text(b) for a, b in words.items()})}"
                        "[lower(e.value)], e.value)" for k, (_, words) in synonyms.items())
    agg = _map({n: _text(cls.AGGREGATE) for n, (_, cls) in table.items()})
    best = _map({n: str(cls(1 if cls.SUPPORTS_CUTOFF else None).missing_scores_best).lower() for n, (_, cls) in table.items()})
    names = _map({k: _text(v) for k, v in aliases.items()})
    named = f"'rank_eval: ' || {_quoted('name')}"
    first = "list_filter(cuts, lambda c: c IS NOT NULL)[1]"
    words = ", ".join(_text(w) for w in (*_TRUE, *_FALSE))
    checks = [
        ("coalesce(base, '') = ''", f"'rank_eval: cannot parse metric name ' || {_quoted('name')} || '; expected NAME[(PARAM=VALUE, ...)][@K]'"),
        ("m IS NULL", f"'rank_eval: ' || {_quoted('name')} || ' is not a measure the SQL macros compute (they compute "
                      f"{', '.join(sorted(table))}); rp.to_sql or evaluate(engine=''duckdb'') compute in SQL every measure "
                      "rank_polars knows, those reading more than one ranked list (a table beside the run) too'"),
        ("list_bool_or(list_transform(pairs, lambda e: NOT e.sep))", f"{named} || ': a parameter should be written NAME=VALUE'"),
        ("len(list_distinct(list_transform(params, lambda e: e.key))) < len(params)", f"{named} || ': a parameter is given twice'"),
        ("len(list_filter(cuts, lambda c: c IS NOT NULL)) > 1", f"{named} || ': the cutoff is given twice'"),
        ("list_bool_or(list_transform(params, lambda e: kinds[e.key] IS NULL))",
         f"{named} || ': unknown parameter, or one the SQL macros cannot express (a gain map, ties=average: rp.to_sql "
         "computes those); ' || m || ' takes ' || coalesce(NULLIF(array_to_string(map_keys(kinds), ', '), ''), 'none') || ' here'"),
        ("list_bool_or(list_transform(params, lambda e: kinds[e.key] = '#' AND NOT coalesce(isfinite(TRY_CAST(e.value AS DOUBLE)), false)))",
         f"{named} || ': a numeric parameter is not a finite number'"),
        (f"list_bool_or(list_transform(params, lambda e: kinds[e.key] = '?' AND lower(e.value) NOT IN ({words})))",
         f"{named} || ': a true/false parameter is neither'"),
        ("list_bool_or(list_transform(params, lambda e: kinds[e.key] NOT IN ('#', '?') "
         "AND NOT list_contains(string_split(kinds[e.key], '|'), lower(e.value))))",
         f"{named} || ': a parameter is not one of its choices'"),
        (f"{first} IS NOT NULL AND NOT list_contains({_list(cutoff)}, m)", f"{named} || ': ' || m || ' takes no cutoff (@k)'"),
        (f"{first} IS NOT NULL AND NOT coalesce(regexp_full_match({first}, '[+-]?[0-9]+') "
         f"AND TRY_CAST({first} AS HUGEINT) > 0, false)", f"{named} || ': cutoff k must be a positive integer'"),
    ]
    whens_checks = "\n".join(f"  WHEN {cond} THEN error({message})" for cond, message in checks)
    result = (f"{{'name': name, 'measure': m, 'k': CAST({first} AS BIGINT), 'params': "
              "map_from_entries(list_transform(params, lambda e: {'key': e.key, 'value': lower(e.value)})), "
              f"'agg': {agg}[m], 'best': {best}[m]}}")
    return f"""\
-- __rp_metrics(metrics): the metric names read as rank_polars.measures.parse reads them, for the
-- measures the macros compute: specs, a list of {{name, measure, k, params, agg, best}}; an error
-- names a name it cannot read.
-- Spellings: ours (ndcg(gain=exp)@10, p(rel=2)@5, rbp(p=0.9)), trec_eval's printed and -m names
-- (P_5, P.5, ndcg_cut_10, map, recip_rank, Rprec_mult_0.20), ir_measures' (nDCG(dcg='exp-log2')@10,
-- RR(cutoff=10)).  Generated from rank_polars/measures (REGISTRY, _CUT, _PARAM_SYNONYMS).
CREATE OR REPLACE MACRO __rp_metric_text(name) AS CASE WHEN regexp_full_match(lower(trim(name)), '[a-z0-9_]+\\.[^\\s()@]+') AND NOT regexp_full_match(lower(trim(name)), '{spelled}') AND regexp_full_match(regexp_replace(lower(trim(name)), '\\.', '_'), '{spelled}') THEN regexp_replace(lower(trim(name)), '\\.', '_') ELSE trim(name) END;
CREATE OR REPLACE MACRO __rp_metric_spelled(base) AS CASE {whens} ELSE {{'base': base, 'args': '', 'cutoff': ''}} END;
CREATE OR REPLACE MACRO __rp_metric_pairs(args) AS list_transform(list_filter(string_split(args, ','), lambda x: trim(x) <> ''), lambda x: {{'key': lower(trim(split_part(x, '=', 1))), 'value': trim(trim(substr(x, strpos(x, '=') + 1)), {_STRIP}), 'sep': strpos(x, '=') > 0}});
CREATE OR REPLACE MACRO __rp_metric_synonyms(m, pairs) AS list_transform(pairs, lambda e: {{'key': CASE {renamed or "WHEN FALSE THEN NULL"} ELSE e.key END, 'value': CASE {reworded or "WHEN FALSE THEN NULL"} ELSE e.value END, 'sep': e.sep}});
CREATE OR REPLACE MACRO __rp_metric_final(name, base, m, pairs, params, cuts, kinds) AS CASE
{whens_checks}
  ELSE {result}
END;
CREATE OR REPLACE MACRO __rp_metrics(metrics) AS TABLE
WITH
__rp_names AS (SELECT unnest(metrics) AS name, unnest(range(1, len(metrics) + 1)) AS idx),
__rp_parts AS (SELECT name, idx, regexp_extract(__rp_metric_text(name), '{_NAME_SQL}', ['base', 'args', 'cutoff'], 'i') AS parts FROM __rp_names),
__rp_spelled AS (SELECT *, __rp_metric_spelled(lower(parts.base)) AS sp FROM __rp_parts),
__rp_named AS (SELECT *, {names}[sp.base] AS m FROM __rp_spelled),
__rp_pairs AS (SELECT *, __rp_metric_synonyms(m, __rp_metric_pairs(concat_ws(',', NULLIF(sp.args, ''), NULLIF(parts.args, '')))) AS pairs FROM __rp_named),
__rp_read AS (
  SELECT *, list_filter(pairs, lambda e: e.key NOT IN ('cutoff', 'k')) AS params,
         [x.value FOR x IN pairs IF x.key IN ('cutoff', 'k')] || [NULLIF(parts.cutoff, ''), NULLIF(sp.cutoff, '')] AS cuts,
         {_map(kinds)}[m] AS kinds
  FROM __rp_pairs)
SELECT list(__rp_metric_final(name, sp.base, m, pairs, params, cuts, kinds) ORDER BY idx) AS specs FROM __rp_read;
"""


def _cut_at_k(measure: type[Measure]) -> bool:
    """Whether the measure reads no row below its cutoff (``Measure.depth``): ``rank_eval`` then
    hands it the rows down to k only."""
    return measure.SUPPORTS_CUTOFF and measure(7).depth() == 7


def dispatch_sql() -> str:
    """``__rp_value(m, s, ideal, n_ret, top)``: the value of the parsed metric ``m`` over one ranking."""
    whens: dict[str, list[str]] = {}  # one branch per call: gm_map's is ap's
    for name, (macro, cls) in supported().items():
        own = measure_options(cls)
        rows = f"CASE WHEN m.k IS NULL THEN {ROWS} ELSE list_filter({ROWS}, lambda y: y.rank <= m.k) END"
        args = [rows if _cut_at_k(cls) else ROWS, N_RET]
        for o in own:
            given = f"m.params[{_text(o.name)}]"
            if o.name == "k":
                value = "m.k"
            elif o.switch or o.choices is not None:
                value = f"coalesce({given}, {o.sql_default})"
            elif o.name == "max":  # ERR's scale: the top grade of every judgment (1.0 when none is positive)
                value = f"coalesce(CAST({given} AS DOUBLE), top, 1.0)"
            else:
                value = f"CAST({given} AS DOUBLE)" if o.default is None else f"coalesce(CAST({given} AS DOUBLE), {o.default!r})"
            args.append(f"{o.name} := {value}")
        if "ideal" in list_args(formula(cls, own)):
            # ideal=run (ndcg, idcg): the ranking's own items, which ideal := NULL reads
            choice = (f"coalesce(m.params[{_text(_IDEAL_SOURCE)}], 'judgments') = 'judgments'"
                      if _IDEAL_SOURCE in cls.PARAMS else "TRUE")
            args.append(f"ideal := CASE WHEN {choice} THEN ideal ELSE list_transform({ROWS}, lambda y: y.grade) END")
        whens.setdefault(f"{internal(macro)}({', '.join(args)})", []).append(name)
    cases = "\n".join(f"  WHEN m.measure IN ({', '.join(map(_text, names))}) THEN {call}" for call, names in whens.items())
    return ("-- __rp_value(m, s, ideal, n_ret, top): the parsed metric m (of __rp_metrics) over one ranking's rows\n"
            "-- s (its {rank, grade} structs, every row with a grade), with the query's judged grades ideal (the\n"
            "-- ranking's own without judgments), the number retrieved and the top grade of every judgment (ERR's\n"
            "-- scale).  A measure reading no row below its cutoff gets the rows down to it only.\n"
            f"CREATE OR REPLACE MACRO __rp_value(m, s, ideal, n_ret, top) AS CASE\n{cases}\nEND;\n")


TABLES_DOC = """\
-- rank_eval / rank_eval_per_query: the whole evaluation of a ranking log, as rank_polars.evaluate.
--
-- FROM rank_eval('logs/*.parquet', judgments := 'qrels.parquet',
--                metrics := ['ndcg@10', 'map', 'mrr', 'p@5', 'recall@100'], by := ['model'],
--                query := 'search_id', item := 'sku', position := 'slot', relevance := 'grade',
--                missing := 'zero');
--   one row per group: the by columns, queries, one column per metric (named as given)
-- FROM rank_eval_per_query(...the same arguments...);
--   one row per (group, query): the by columns, the query column, one column per metric
--
--   t: a table or view name, or a file path / glob DuckDB can scan ('logs/*.parquet').
--   judgments: the judgments, a table name or path as text ('qrels', 'qrels.parquet'), with the
--      query, item and relevance columns named as the log's; only judged queries are evaluated,
--      R and the ideal ranking come from every judgment of the query, the log's relevance
--      column is not read.  NULL (default): the log's relevance column is the judgments, each
--      ranking's own (the ideal ranking and R from its labels).
--   metrics: metric names as rank_polars.evaluate reads them (ndcg@10, ndcg(gain=exp)@10,
--      p(rel=2)@5, rbp(p=0.9), map, mrr, P_5, ndcg_cut_10, recip_rank, gm_map, ...), each
--      with its own cutoff; default NULL: ['ndcg@k', 'map', 'mrr', 'p@k', 'recall@k'].
--   by: grouping columns; [] one row; default NULL: by model when the log has a model column.
--   query, item, position, relevance: the column names (defaults: their own names).
--   score: a score column: rank by score descending, ties by item id (as text) descending
--      (trec_eval); default NULL: rank by position (1 = first).
--   missing: 'zero' (default) scores a judged query a group did not rank 0 (left out of the
--      lower-is-better measures, such as fallout); 'skip' leaves it out.
--   k: the cutoff of the default metrics (10).
-- Bad data (null ids or positions, repeated positions, repeated judged items or judgments,
-- NaN labels, an unknown metric) stops the query with an error naming the column and queries.
--
-- Generated by rank_polars/formula/macros.py; do not edit by hand.
"""

# metrics := NULL: these, at cutoff k (k := 10)
_DEFAULT_METRICS = ("ndcg@{k}", "map", "mrr", "p@{k}", "recall@{k}")
_METRICS = "coalesce(metrics, [" + ", ".join(
    "'" + m.replace("{k}", "' || CAST(k AS VARCHAR)") if "{k}" in m else _text(m) for m in _DEFAULT_METRICS) + "])"
_SIGNATURE = ("t, judgments := NULL, metrics := NULL, \"by\" := NULL, query := 'query', item := 'item', "
              "\"position\" := 'position', score := NULL, relevance := 'relevance', missing := 'zero', k := 10")
_PASS = 't, judgments, metrics, "by", query, item, "position", score, relevance, missing'
_PASS_OUTER = _PASS.replace("metrics", _METRICS)

EXAMPLES = ("CREATE OR REPLACE MACRO __rp_examples(ids) AS array_to_string(list_transform(list_slice(list_sort("
            "list_distinct(ids)), 1, 5), lambda v: '''' || CAST(v AS VARCHAR) || ''''), ', ');\n")


def _check(condition: str, message: str) -> str:
    return f"    WHEN {condition} THEN error('rank_eval: ' || {message})"


def _examples(table: str, where: str | None = None) -> str:
    """The first five query ids of ``table`` (where ``where`` holds), quoted, for a message."""
    ids = f"list(q) FILTER (WHERE {where})" if where else "list(q)"
    return f"(SELECT __rp_examples({ids}) FROM {table})"


# Positions 1..127 as the bits of one 128-bit integer per ranking (as the DuckDB engine's
# positions_distinct_sql): as many bits as rows there means no repeat; the few positions
# beyond are compared as a list.
_REPEATED_POSITION = "low_bits < low_n OR len(list_distinct(high)) < len(high)"

# The checks, the judgments' first (a repeated judgment repeats the rows it joins): (condition,
# message), SQL over the CTEs below.
_CHECKS = (
    ("missing IS NULL OR missing NOT IN ('zero', 'skip')", "'missing := must be ''zero'' or ''skip'''"),
    ("list_contains(CAST(\"by\" AS VARCHAR[]), query) OR list_contains(CAST(\"by\" AS VARCHAR[]), item)",
     "'by := names the query or item column; group by other columns'"),
    ("\"by\" IS NOT NULL AND (SELECT len(json_keys(to_json(any_value(g)))) FROM __rp_lists) <> len(list_distinct(\"by\")) + 1",
     "'a column of by := ' || CAST(\"by\" AS VARCHAR) || ' is not in the log, or is named twice'"),
    ("(SELECT count_if(q IS NULL) FROM __rp_judged) > 0",
     "'judgments: column ''' || query || ''' (query) has null query ids'"),
    ("(SELECT sum(bad_item) FROM __rp_judged) > 0",
     f"'judgments: column ''' || item || ''' (item) has null item ids, queries ' || {_examples('__rp_judged', 'bad_item > 0')}"),
    ("(SELECT sum(bad_grade) FROM __rp_judged) > 0",
     "'judgments: column ''' || relevance || ''' has null or NaN grades or infinite ones, queries ' || "
     f"{_examples('__rp_judged', 'bad_grade > 0')}"),
    ("(SELECT count_if(list_unique(items) < len(items)) FROM __rp_judged) > 0",
     "'judgments: duplicate judgments (a query and item twice), queries ' || "
     f"{_examples('__rp_judged', 'list_unique(items) < len(items)')}"),
    ("(SELECT count_if(q IS NULL) FROM __rp_lists) > 0", "'column ''' || query || ''' (query) has null query ids in the log'"),
    ("(SELECT sum(bad_order) FROM __rp_lists) > 0",
     "'column ''' || coalesce(score, \"position\") || ''' has null' || CASE WHEN score IS NULL THEN '' ELSE ' or NaN' END "
     f"|| ' values, queries ' || {_examples('__rp_lists', 'bad_order > 0')}"),
    ("score IS NULL AND (SELECT count_if(lo < 1) FROM __rp_lists) > 0",
     f"'column ''' || \"position\" || ''' has positions below 1 (1 = first), queries ' || {_examples('__rp_lists', 'lo < 1')}"),
    (f"score IS NULL AND (SELECT count_if({_REPEATED_POSITION}) FROM __rp_lists) > 0",
     "'duplicate positions within a ranking (column ''' || \"position\" || '''), queries ' || "
     f"{_examples('__rp_lists', _REPEATED_POSITION)} || '; keep one row per position, or rank by score := '"),
    ("(SELECT sum(bad_label) FROM __rp_lists) > 0",
     "'column ''' || relevance || ''' (relevance) has null or NaN relevance labels or infinite ones, queries ' || "
     f"{_examples('__rp_lists', 'bad_label > 0')}"),
    ("(SELECT sum(bad_item) FROM __rp_lists) > 0",
     f"'column ''' || item || ''' (item) has null item ids on labelled rows, queries ' || {_examples('__rp_lists', 'bad_item > 0')}"),
    ("(SELECT count_if(list_unique(judged_items) < len(judged_items)) FROM __rp_lists) > 0",
     "'duplicate items within a ranking (column ''' || item || '''), queries ' || "
     f"{_examples('__rp_lists', 'list_unique(judged_items) < len(judged_items)')} "
     "|| '; keep one row per query and item'"),
)

# One list of grades per (group, query) in rank order, the query's judged grades, and each
# metric's value over them.  The checks stop the query first where the input is bad.
RANKINGS = f"""\
CREATE OR REPLACE MACRO __rp_rankings({_PASS}) AS TABLE
WITH
__rp_src AS (SELECT *, NULL AS __rp_all FROM query_table(t)),
__rp_run AS (
  SELECT struct_pack(*COLUMNS(lambda c: list_contains(CAST(coalesce("by", ['model']) AS VARCHAR[]), c) OR c = '__rp_all')) AS g,
         struct_pack(*COLUMNS(lambda c: c = query)) AS qs,
         COLUMNS(lambda c: c = query) AS q,
         COLUMNS(lambda c: c = item) AS i,
         COLUMNS(lambda c: c = coalesce(score, "position")) AS o,
         COLUMNS(lambda c: c = CASE WHEN judgments IS NULL THEN relevance ELSE query END) AS lab
  FROM __rp_src),
__rp_qrels AS (
  SELECT struct_pack(*COLUMNS(lambda c: c = query)) AS qs,
         COLUMNS(lambda c: c = query) AS q,
         COLUMNS(lambda c: c = item) AS i,
         CAST(COLUMNS(lambda c: c = relevance) AS DOUBLE) AS grade
  FROM query_table(coalesce(judgments, t)) WHERE judgments IS NOT NULL),
__rp_rows AS (
  SELECT r.g, r.qs, r.q, r.i,
         CASE WHEN score IS NULL THEN CAST(CAST(r.o AS BIGINT) AS DOUBLE) ELSE CAST(r.o AS DOUBLE) END AS o,
         CASE WHEN judgments IS NULL THEN CAST(r.lab AS DOUBLE) ELSE j.grade END AS grade
  FROM __rp_run AS r LEFT JOIN __rp_qrels AS j ON r.q = j.q AND r.i = j.i),
__rp_lists AS MATERIALIZED (
  SELECT g, q, any_value(qs) AS qs,
         list({{'rank': o, 'grade': grade}} ORDER BY o) FILTER (WHERE score IS NULL AND grade IS NOT NULL) AS by_position,
         list(grade ORDER BY o DESC, CAST(i AS VARCHAR) DESC) FILTER (WHERE score IS NOT NULL) AS by_score,
         list(hash(i)) FILTER (WHERE grade >= 0) AS judged_items,
         count(*) AS n_ret, min(o) AS lo, count_if(o BETWEEN 1 AND 127) AS low_n,
         bit_count(bit_or(CASE WHEN o BETWEEN 1 AND 127 THEN CAST(1 AS HUGEINT) << CAST(o - 1 AS INTEGER) END)) AS low_bits,
         list(o) FILTER (WHERE o > 127) AS high,
         count_if(o IS NULL OR isnan(o)) AS bad_order,
         count_if(judgments IS NULL AND (grade IS NULL OR isnan(grade) OR isinf(grade))) AS bad_label,
         count_if(judgments IS NULL AND i IS NULL AND grade >= 0) AS bad_item,
         max(grade) FILTER (WHERE grade > 0) AS top
  FROM __rp_rows GROUP BY g, q),
__rp_judged AS MATERIALIZED (
  SELECT q, any_value(qs) AS qs, list(grade) AS ideal, list(hash(i)) AS items, max(grade) FILTER (WHERE grade > 0) AS top,
         count_if(i IS NULL) AS bad_item, count_if(grade IS NULL OR isnan(grade) OR isinf(grade)) AS bad_grade
  FROM __rp_qrels GROUP BY q),
__rp_checks AS (
  SELECT CASE
{chr(10).join(_check(c, m) for c, m in _CHECKS)}
    ELSE TRUE END AS ok),
__rp_groups AS (SELECT DISTINCT g FROM __rp_lists),
__rp_expected AS (
  SELECT gr.g, j.q, j.qs FROM __rp_groups AS gr CROSS JOIN __rp_judged AS j WHERE missing = 'zero'),
__rp_top AS (
  SELECT CASE WHEN judgments IS NULL THEN (SELECT max(top) FROM __rp_lists)
              ELSE (SELECT max(top) FROM __rp_judged) END AS top),
__rp_universe AS (
  SELECT coalesce(x.g, e.g) AS g, coalesce(x.q, e.q) AS q, coalesce(x.qs, e.qs) AS qs,
         CASE WHEN score IS NULL THEN coalesce(x.by_position, [])
              ELSE list_filter(list_transform(coalesce(x.by_score, []), lambda g_, k_: {{'rank': CAST(k_ AS DOUBLE), 'grade': g_}}),
                               lambda y: y.grade IS NOT NULL) END AS s,
         coalesce(x.n_ret, 0) AS n_ret, x.n_ret IS NOT NULL AS shown, j.ideal
  FROM __rp_lists AS x FULL JOIN __rp_expected AS e ON x.g IS NOT DISTINCT FROM e.g AND x.q = e.q
  LEFT JOIN __rp_judged AS j ON j.q = coalesce(x.q, e.q)
  WHERE judgments IS NULL OR j.q IS NOT NULL),
-- the judged grades sorted once per ranking (each measure sorts them again: then in linear time);
-- without judgments the ranking's own
__rp_sorted AS (
  SELECT * REPLACE (list_sort(coalesce(ideal, list_transform(s, lambda y: y.grade)), 'DESC', 'NULLS LAST') AS ideal)
  FROM __rp_universe)
SELECT u.g, u.q, u.qs, s.specs,
       list_transform(s.specs, lambda m: CASE WHEN NOT u.shown AND m.best THEN NULL
                                             ELSE __rp_value(m, u.s, u.ideal, u.n_ret, p.top) END) AS vals
FROM __rp_sorted AS u
CROSS JOIN __rp_metrics(metrics) AS s
CROSS JOIN __rp_top AS p CROSS JOIN __rp_checks AS c
WHERE c.ok;
"""

# Each metric's column by name: a MAP of the values as JSON, read back as a STRUCT whose fields
# are the metric names (PIVOT cannot take its columns from a macro's argument).
_WIDE = (f"unnest(from_json(to_json(map({_METRICS}, vals)), "
         f"'{{' || array_to_string(list_transform({_METRICS}, lambda m: to_json(m) || ': \"DOUBLE\"'), ', ') || '}}'))")

PER_QUERY = f"""\
CREATE OR REPLACE MACRO rank_eval_per_query({_SIGNATURE}) AS TABLE
SELECT * EXCLUDE (__rp_all) FROM (
  SELECT unnest(g), unnest(qs), {_WIDE}
  FROM __rp_rankings({_PASS_OUTER}))
ORDER BY ALL;
"""

MEANS = f"""\
CREATE OR REPLACE MACRO rank_eval({_SIGNATURE}) AS TABLE
WITH
__rp_pq AS (FROM __rp_rankings({_PASS_OUTER})),
__rp_long AS (SELECT g, unnest(range(1, len(vals) + 1)) AS idx, unnest(vals) AS v, unnest(specs) AS m FROM __rp_pq),
__rp_means AS (
  SELECT g, idx, CASE any_value(m.agg) WHEN 'sum' THEN coalesce(sum(v), 0.0)
                                       WHEN 'gmean' THEN exp(avg(ln(greatest(v, {GM_FLOOR!r}))))
                                       ELSE avg(v) END AS v
  FROM __rp_long GROUP BY g, idx),
__rp_counts AS (SELECT g, count(*) AS queries FROM __rp_pq GROUP BY g),
__rp_wide AS (
  SELECT c.g, c.queries, list(a.v ORDER BY a.idx) AS vals
  FROM __rp_counts AS c JOIN __rp_means AS a ON c.g IS NOT DISTINCT FROM a.g GROUP BY c.g, c.queries)
SELECT * EXCLUDE (__rp_all) FROM (SELECT unnest(g), queries, {_WIDE} FROM __rp_wide)
ORDER BY ALL;
"""


def tables_sql() -> str:
    """``tables.sql``: the metric-name parser, the dispatch to the measure macros, and the table macros."""
    return TABLES_DOC + parser_sql() + dispatch_sql() + EXAMPLES + RANKINGS + PER_QUERY + MEANS


def files() -> dict[str, str]:
    """File name -> text of every file in ``sql/``; ``all.sql`` concatenates the others."""
    out = {f"{name}.sql": scalar_file(name, aliases) for name, aliases in SCALAR}
    out["tables.sql"] = tables_sql()
    header = (
        "-- All rank_polars DuckDB macros in one file (the concatenation of the other files here).\n"
        "-- Load in the DuckDB CLI with:  .read sql/all.sql   (or: duckdb -init sql/all.sql)\n"
        "-- Generated by rank_polars/engines/macros.py; do not edit by hand.\n"
    )
    out["all.sql"] = header + "".join(f"\n-- ===== {n} =====\n{t}" for n, t in out.items())
    return out


def write(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in files().items():
        path = directory / name
        path.write_text(text)
        written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    target = Path(args[0]) if args else Path(__file__).resolve().parents[2] / "sql"
    for path in write(target):
        print(path)


if __name__ == "__main__":
    main()


__all__ = ["SCALAR", "files", "formula", "measure_options", "merge", "scalar_body", "supported", "tables_sql", "write"]
