"""Generate the DuckDB macro files in ``sql/`` from the metric specs.

Each scalar macro reduces a ranked list of grades to one value, with exactly the semantics
of the list-form engine (:mod:`rank_polars.formula.listform`): rank = list index, the ideal
ranking is the list sorted by grade (descending, NULLs last), R counts the relevant grades of
the list, NULL or negative grades are unjudged.  The formula is the spec's
:meth:`~rank_polars.measures.base.Measure.value` tree compiled by :func:`rank_polars.formula.tree.to_sql`;
only the leaves are new:

``rank``/``irank`` -> the lambda's index, ``grade`` -> the lambda's element,
``Cum(x)`` -> ``list_sum`` of ``x`` over ``list_slice(list, 1, i)``,
row aggregates -> ``list_sum``/``list_max`` of ``list_transform`` over the list,
judgment aggregates -> the same over ``list_sort(list, 'DESC', 'NULLS LAST')``.

The specs bake their options into the tree, a macro takes them as arguments.  So the tree is
built once per option value and the variants are merged: where two trees differ, a
``CASE WHEN <option test> THEN ... ELSE ... END`` picks the branch (e.g. only the gain
sub-expression depends on ``gain``).  Numeric options (``k``, ``rel``, ``max``, ``p``) are
built with a sentinel value that is then replaced by the macro argument; a guard makes sure
no sentinel survives into the SQL text.

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
from rank_polars.measures import REGISTRY
from rank_polars.measures.base import Measure, flag

LIST = "l"
GRADES = f"CAST({LIST} AS DOUBLE[])"
IDEAL = f"list_sort({GRADES}, 'DESC', 'NULLS LAST')"

# Sentinels stand for numeric macro arguments while the spec builds its tree.
_SENTINELS: dict[str, float] = {
    "k": 987654321, "rel": 98765.4321, "max": 87654.3219, "p": 0.1234567891, "mult": 76543.2198,
}

# Scalar macros, in file order: the macro name, and aliases.  The formula and the arguments
# come from the function of the same name in rank_polars.formula.exprs ("p" is exprs.precision:
# PRECISION is a reserved word in DuckDB, so the macro takes the metric's canonical name).
_EXPRS = {"p": "precision"}
SCALAR: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("cg", ()), ("dcg", ()), ("idcg", ()), ("ndcg", ()), ("ap", ()), ("rr", ()),
    ("p", ()), ("recall", ()), ("f1", ()), ("success", ("hit",)), ("hits", ()), ("fallout", ()), ("rprec", ()),
    ("bpref", ()), ("err", ()), ("rbp", ()), ("judged", ()), ("unj", ()),
)


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

@dataclasses.dataclass(frozen=True)
class Option:
    """One macro argument: its SQL default and the values the spec is built with."""

    name: str
    default: Any
    values: tuple[Any, ...]  # spec values; a _SENTINELS entry means "the argument itself"
    choices: tuple[str, ...] | None = None

    @property
    def sql_default(self) -> str:
        if self.default is None:
            return "NULL"
        if isinstance(self.default, str):
            return f"'{self.default}'"
        return repr(self.default)

    def test(self, value: Any) -> str:
        """SQL condition under which the spec value ``value`` applies."""
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


def options(func: Callable[..., Any], measure: type[Measure]) -> list[Option]:
    """The macro's arguments: those of the ``rank_polars.formula.exprs`` function, same names and defaults."""
    out = []
    for name, param in list(inspect.signature(func).parameters.items())[1:]:
        default = param.default
        if name == "k":
            out.append(Option("k", None, (None, _SENTINELS["k"])))
            continue
        spec = measure.PARAMS[name]
        if spec.dtype is flag:
            # a boolean switch between two metrics (p's relative=): the macro is the default one,
            # keeping macro defaults to numbers, strings and NULL
            continue
        elif spec.choices is not None:
            out.append(Option(name, default, tuple(spec.choices), spec.choices))
        elif name in _SENTINELS:
            values = ((None,) if default is None else ()) + (_SENTINELS[name],)
            out.append(Option(name, default, values))
        else:
            raise TypeError(f"{func.__name__}: no SQL form for parameter {name!r}")
    return out


# ----------------------------------------------------------------------------- trees

def _build(measure: type[Measure], values: dict[str, Any]) -> d.Node:
    k = values.pop("k", None)
    spec = measure(k, **values)
    for name, value in values.items():  # numeric options: the formula reads the argument
        if name in _SENTINELS and value is not None and name != "k":
            spec.params[name] = _Sym(value, name)
    return _substitute(spec.value())


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


def formula(measure: type[Measure], opts: Sequence[Option]) -> d.Node:
    """The spec's formula over every combination of option values, merged into one tree."""

    def build(i: int, chosen: dict[str, Any]) -> d.Node:
        if i == len(opts):
            return _build(measure, dict(chosen))
        opt = opts[i]
        trees = [build(i + 1, {**chosen, opt.name: v}) for v in opt.values]
        out = trees[-1]
        for value, tree in zip(reversed(opt.values[:-1]), reversed(trees[:-1])):
            out = merge(opt.test(value), tree, out)
        return out

    return build(0, {})


# ----------------------------------------------------------------------------- SQL

def _leaf(grade: str | None, rank: str | None, rank_col: str, base: str, depth: int) -> Callable[[d.Node], str]:
    def leaf(n: d.Node) -> str:
        if isinstance(n, d.Col):
            if n.name.startswith("$"):
                return n.name[1:]
            if n.name.startswith("?"):
                return f"({n.name[1:]})"
            if n.name == "n_ret":
                return f"len({LIST})"
            if grade is None or rank is None:
                raise TypeError(f"column {n.name!r} used outside a list scan")
            if n.name == rank_col:
                return rank
            if n.name == "grade":
                return grade
            if n.name == "judged":
                return f"({grade} IS NOT NULL AND {grade} >= 0)"
            raise TypeError(f"column {n.name!r} is not available in a ranked list")
        if isinstance(n, d.Cum):
            if grade is None or rank is None:
                raise TypeError("a running sum used outside a list scan")
            return _scan("sum", n.arg, f"list_slice({base}, 1, {rank})", rank_col, depth + 1)
        if isinstance(n, d.Agg):
            if n.level == "rows":
                return _scan(n.kind, n.arg, GRADES, "rank", depth + 1)
            return _scan(n.kind, n.arg, IDEAL, "irank", depth + 1)
        raise TypeError(f"cannot compile {n!r}")

    return leaf


def _scan(kind: str, arg: d.Node, base: str, rank_col: str, depth: int) -> str:
    g, i = f"g{depth}", f"i{depth}"
    body = d.to_sql(arg, _leaf(g, i, rank_col, base, depth))
    return f"COALESCE(list_{kind}(list_transform({base}, lambda {g}, {i}: {body})), 0.0)"


def scalar_body(measure: type[Measure], opts: Sequence[Option], macro: str) -> str:
    sql = d.to_sql(formula(measure, opts), _leaf(None, None, "rank", GRADES, 0))
    checks = [c for c in (opt.check(macro) for opt in opts) if c is not None]
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


def scalar_file(name: str, aliases: Sequence[str] = ()) -> str:
    func = getattr(exprs, _EXPRS.get(name, name))
    measure = REGISTRY[name]
    opts = options(func, measure)
    args = ", ".join([LIST, *(f"{o.name} := {o.sql_default}" for o in opts)])
    lines = [
        f"-- {name}: {_first_paragraph(func.__doc__)}",
        f"-- Formula: {_first_paragraph(measure.__doc__)}",
        "--",
        f"-- {name}({args})",
        f"--   {LIST}: the grades of one ranking in rank order, e.g. list(relevance ORDER BY position);",
        "--      NULL or negative grades are unjudged; the ideal ranking and R come from this list.",
    ]
    for o in opts:
        if o.name == "k":
            lines.append("--   k: cutoff (a positive integer); NULL = the whole list.")
        else:
            lines.append(f"--   {o.name}: {measure.PARAMS[o.name].doc}.")
    for alias in aliases:
        lines.append(f"-- Alias: {alias}(...) is the same macro.")
    call_args = f"list(relevance ORDER BY position){', 10' if any(o.name == 'k' for o in opts) else ''}"
    lines += [
        "--",
        f"-- Example: SELECT model, query, {name}({call_args}) AS {name}",
        "--          FROM logs GROUP BY ALL;",
        "--",
        "-- Generated from rank_polars/measures by rank_polars/engines/macros.py; do not edit by hand.",
        f"CREATE OR REPLACE MACRO {name}({args}) AS",
        f"{scalar_body(measure, opts, name)};",
    ]
    for alias in aliases:
        passed = ", ".join([LIST, *(f"{o.name} := {o.name}" for o in opts)])
        lines.append(f"CREATE OR REPLACE MACRO {alias}({args}) AS {name}({passed});")
    return "\n".join(lines) + "\n"


TABLES = """\
-- rank_eval / rank_eval_per_query: evaluate a whole ranking log with the scalar macros.
--
-- rank_eval(t, k := 10)            one row per model: model, queries, ndcg, map, mrr, p, r
-- rank_eval_per_query(t, k := 10)  one row per (model, query): model, query, ndcg, ap, rr, p, r
--   t: a table or view name, or a file path / glob DuckDB can scan (e.g. 'logs/*.parquet'),
--      with columns model, query, position (1 = first), relevance (the grade; NULL or
--      negative = unjudged).  Subqueries are not accepted by DuckDB table macros: make a
--      view first, e.g. CREATE VIEW v AS SELECT region || '/' || model AS model, ... FROM t;
--      to group by other columns, alias them (or their combination) as model.
--   k: cutoff of ndcg, p and r (ndcg@k, P@k, R@k); map and mrr use the whole list.
-- Each (model, query) is one ranked list of its own grades: the ideal ranking and R come
-- from that list (as rank_polars.evaluate without qrels).  Queries are counted per model.
--
-- Example: FROM rank_eval('logs/*.parquet', k := 10);
--          FROM rank_eval_per_query(logs, 5) WHERE ndcg < 0.5;
--
-- Generated by rank_polars/engines/macros.py (written by hand there: no formula, only the
-- composition of the scalar macros); do not edit by hand.
CREATE OR REPLACE MACRO rank_eval_per_query(t, k := 10) AS TABLE
SELECT model, query,
       ndcg(list(relevance ORDER BY position), k) AS ndcg,
       ap(list(relevance ORDER BY position)) AS ap,
       rr(list(relevance ORDER BY position)) AS rr,
       p(list(relevance ORDER BY position), k) AS p,
       recall(list(relevance ORDER BY position), k) AS r
FROM query_table(t)
GROUP BY model, query
ORDER BY model, query;
CREATE OR REPLACE MACRO rank_eval(t, k := 10) AS TABLE
SELECT model, count(*) AS queries, avg(ndcg) AS ndcg, avg(ap) AS map, avg(rr) AS mrr,
       avg(p) AS p, avg(r) AS r
FROM rank_eval_per_query(t, k)
GROUP BY model
ORDER BY model;
"""


def files() -> dict[str, str]:
    """File name -> text of every file in ``sql/``; ``all.sql`` concatenates the others."""
    out = {f"{name}.sql": scalar_file(name, aliases) for name, aliases in SCALAR}
    out["tables.sql"] = TABLES
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


__all__ = ["SCALAR", "files", "formula", "merge", "scalar_body", "write"]
