"""Translating the generated DuckDB SQL to other dialects with sqlglot, checked.

A translation is returned only if sqlglot can express every construct in the target
(``unsupported_level=RAISE``) and the result parses back in that dialect with the same
numeric structure: as many logarithms, powers, exponentials, windows with an ORDER BY,
CASEs, joins and aggregates.  Anything else is a :class:`RankPolarsError`, never SQL that
would compute different numbers.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

import sqlglot
from sqlglot import ErrorLevel, exp
from sqlglot.errors import SqlglotError

from rank_polars.errors import RankPolarsError

# Node kinds whose count must survive a translation: the arithmetic of the formulas, the
# windows (running sums, ranks), the joins and the aggregates.
_SHAPE = (
    exp.Log, exp.Ln, exp.Pow, exp.Exp, exp.Least, exp.Case, exp.Div, exp.Window, exp.Ordered,
    exp.Join, exp.Sum, exp.Max, exp.Avg, exp.Count, exp.Coalesce, exp.RowNumber, exp.Cast,
)


def _shape(tree: exp.Expression) -> Counter[str]:
    counts: Counter[str] = Counter()
    for node in tree.walk():
        if isinstance(node, _SHAPE):  # most nodes are none of them: one test before the loop
            for kind in _SHAPE:
                if isinstance(node, kind):
                    counts[kind.__name__] += 1
    return counts


def _log2_as_ln(tree: exp.Expression) -> exp.Expression:
    """``LOG(2, x)`` as ``LN(x) / LN(2)``: PostgreSQL's two-argument LOG takes NUMERIC only."""

    def swap(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Log) and node.expression is not None:
            base, arg = node.this, node.expression
            return exp.Div(this=exp.Ln(this=arg.copy()), expression=exp.Ln(this=base.copy()))
        return node

    return tree.transform(swap, copy=False)  # the tree is transpile's own parse


def _by_name_leaves(node: exp.Expression) -> list[exp.Expression]:
    """The operands of a chain of ``UNION ALL BY NAME`` (left-nested), in order."""
    if isinstance(node, exp.Union) and node.args.get("by_name") and not node.args.get("distinct"):
        return [*_by_name_leaves(node.this), *_by_name_leaves(node.expression)]
    return [node]


def _union_by_name(tree: exp.Expression) -> exp.Expression:
    """DuckDB's ``UNION ALL BY NAME`` as a positional ``UNION ALL``: each operand selects every
    column of the union in one order, NULL for the ones it lacks (what BY NAME means), for the
    dialects that have no BY NAME (Spark SQL, Trino, PostgreSQL).  An operand whose columns
    cannot be named from the statement (``SELECT *``) is refused rather than guessed."""

    def swap(node: exp.Expression) -> exp.Expression:
        if not (isinstance(node, exp.Union) and node.args.get("by_name")):
            return node
        if node.args.get("distinct"):
            raise RankPolarsError("UNION BY NAME (distinct) has no translation here; only UNION ALL BY NAME")
        leaves = _by_name_leaves(node)
        names: list[list[str]] = []
        for leaf in leaves:
            select = leaf.unnest() if isinstance(leaf, exp.Subquery) else leaf
            if not isinstance(select, exp.Select) or select.is_star or not all(select.named_selects):
                raise RankPolarsError(f"UNION ALL BY NAME over {leaf.sql('duckdb')[:80]!r}: its columns are not named")
            names.append(select.named_selects)
        every = list(dict.fromkeys(n for leaf_names in names for n in leaf_names))
        out: exp.Expression | None = None
        for i, (leaf, leaf_names) in enumerate(zip(leaves, names)):
            columns = [exp.column(n, quoted=True) if n in leaf_names else exp.alias_(exp.null(), n, quoted=True)
                       for n in every]
            inner = leaf if isinstance(leaf, exp.Subquery) else exp.paren(leaf)
            select = exp.select(*columns).from_(exp.alias_(inner.copy(), f"__rp_by_name{i}", table=True))
            out = select if out is None else exp.union(out, select, distinct=False)
        assert out is not None
        return out

    return tree.transform(swap, copy=False)  # the tree is transpile's own parse


def _name(node: exp.Expression) -> str:
    return str(node.this).lower() if isinstance(node, exp.Anonymous) else ""


def _ordered_sum(value: exp.Expression, order: list[exp.Expression]) -> exp.Expression:
    """DuckDB's ``SUM(x ORDER BY k)`` (the engines' sums added in a fixed order, the same bits
    every run) in Spark SQL, which has no ordered aggregate: the non-null (k, x) pairs collected,
    sorted, and added left to right from 0.0; NULL when there are none, as SUM.

    Sorted by k, then by x: the orders the engines give (a ranking's positions, an ideal rank)
    are distinct within a group, and where they are not the values decide, so the sum never
    depends on the order the rows arrived in."""
    keys = [o.this if isinstance(o, exp.Ordered) else o for o in order]
    fields = [exp.PropertyEQ(this=exp.to_identifier(f"k{i}"), expression=k.copy()) for i, k in enumerate(keys)]
    fields.append(exp.PropertyEQ(this=exp.to_identifier("v"), expression=value.copy()))
    pair = exp.Struct(expressions=fields)
    present = exp.Not(this=exp.Is(this=value.copy(), expression=exp.null()))
    collected = exp.Anonymous(this="COLLECT_LIST", expressions=[exp.Case(ifs=[exp.If(this=present, true=pair)])])
    a, e = exp.to_identifier("__rp_a"), exp.to_identifier("__rp_e")
    add = exp.Lambda(this=exp.Add(this=exp.column(a), expression=exp.Dot(this=exp.column(e), expression=exp.to_identifier("v"))),
                     expressions=[a, e])
    zero = exp.cast(exp.Literal.number(0), exp.DataType.build("DOUBLE"))
    folded = exp.Anonymous(this="AGGREGATE", expressions=[exp.Anonymous(this="ARRAY_SORT", expressions=[collected]), zero, add])
    any_value = exp.GT(this=exp.Count(this=value.copy()), expression=exp.Literal.number(0))
    return exp.Case(ifs=[exp.If(this=any_value, true=folded)])


def _spark_functions(tree: exp.Expression) -> exp.Expression:
    """DuckDB functions Spark lacks, said with Spark's.

    ``isinf(x)`` as ``abs(x) = inf``; the 64-bit ``hash`` as ``xxhash64`` (Spark's ``hash``
    has 32 bits: collisions among a ranking's items would read as duplicates); ``list_slice(l, b, e)`` (1-based,
    inclusive) as ``slice(l, b, e - b + 1)``; ``list_sum(l)`` as a left fold from 0.0 (the
    sums added in list order, as DuckDB's); ``SUM(x ORDER BY k)`` as :func:`_ordered_sum`."""

    def swap(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Sum) and isinstance(node.this, exp.Order):
            return _ordered_sum(node.this.this.transform(swap, copy=False), node.this.expressions)
        name = _name(node)
        # a replaced node is not walked again: its arguments are rewritten here
        args = [e.transform(swap, copy=False) for e in node.expressions] if isinstance(node, exp.Anonymous) else []
        if isinstance(node, exp.IsInf):
            inf = exp.cast(exp.Literal.string("Infinity"), exp.DataType.build("DOUBLE"))
            return exp.EQ(this=exp.Abs(this=node.this.transform(swap, copy=False)), expression=inf)
        if name == "hash":
            return exp.Anonymous(this="XXHASH64", expressions=args)
        if name == "list_slice" and len(args) == 3:
            begin, end = args[1], args[2]
            length = exp.Add(this=exp.Sub(this=end, expression=begin.copy()), expression=exp.Literal.number(1))
            return exp.Anonymous(this="SLICE", expressions=[args[0], begin, exp.paren(length)])
        if name == "list_sum" and len(args) == 1:
            a, x = exp.to_identifier("__rp_a"), exp.to_identifier("__rp_x")
            fold = exp.Lambda(this=exp.Add(this=exp.column(a), expression=exp.column(x)), expressions=[a, x])
            zero = exp.cast(exp.Literal.number(0), exp.DataType.build("DOUBLE"))
            return exp.Anonymous(this="AGGREGATE", expressions=[args[0], zero, fold])
        return node

    return tree.transform(swap, copy=False)  # the tree is transpile's own parse


def _unique_cte_names(tree: exp.Expression) -> exp.Expression:
    """A nested ``WITH`` whose CTE names repeat names defined elsewhere, renamed in its own
    scope: sqlglot writes Spark's CTEs all at the top level (Spark reads them there), where
    the family's ``__rp_rows`` inside a subquery would collide with the metric pass's."""
    taken = {cte.alias for cte in tree.find_all(exp.CTE)}
    top = tree.args.get("with_") or tree.args.get("with")
    for with_ in list(tree.find_all(exp.With)):
        if with_ is top or with_.parent is None:
            continue
        scope = with_.parent
        for cte in with_.expressions:
            name = cte.alias
            if sum(c.alias == name for c in tree.find_all(exp.CTE)) < 2:
                continue
            new = next(f"{name}_{i}" for i in range(1, 10**6) if f"{name}_{i}" not in taken)
            taken.add(new)
            for table in scope.find_all(exp.Table):
                if table.name == name and not table.db:
                    table.set("this", exp.to_identifier(new))
            cte.args["alias"].set("this", exp.to_identifier(new))
    return tree


def _spark(tree: exp.Expression) -> exp.Expression:
    return _unique_cte_names(_spark_functions(tree))


# How a dialect stops a statement with a message (DuckDB's ``error(m)``, the checks that the
# families' SQL carries): Trino's ``fail``, Spark's ``raise_error``, BigQuery's own ``ERROR``.  A
# dialect with no such function (PostgreSQL, Snowflake, ...) casts the message to a number, which
# fails there with the message quoted in the error (``invalid input syntax for type double
# precision: "rank_polars: ..."``), and only when a check's branch is taken: good data is never
# stopped.  sqlglot writes an unknown ``error`` as is, which those dialects would refuse on any data.
_STOP = {"trino": "FAIL", "presto": "FAIL", "athena": "FAIL", "bigquery": "ERROR",
         "spark": "RAISE_ERROR", "databricks": "RAISE_ERROR"}
# the dialects that build DuckDB's message as it is (printf, and list functions after Spark's rewrites)
_FULL_MESSAGE = ("spark", "databricks")


def _portable_message(message: exp.Expression) -> exp.Expression:
    """The message of a check in plain string concatenation: DuckDB builds it with ``printf``
    and list functions that few dialects share, so elsewhere it keeps its text and its count,
    with ``...`` where the examples go (the DuckDB, Spark and Polars engines give them in
    full).  Never a constant: PostgreSQL folds a constant cast while planning, which would stop
    the statement on good data.  A message not built by ``printf`` is kept as it is."""
    args = message.expressions
    if _name(message) == "printf" and len(args) >= 2 and args[0].is_string:
        before, _, after = re.split(r"(%[,0-9.]*[ds])", args[0].this, maxsplit=1)
        after = re.sub(r"%[,0-9.]*[ds]", "...", after)
        count = exp.cast(args[1].copy(), exp.DataType.build("VARCHAR"))
        return exp.DPipe(this=exp.DPipe(this=exp.Literal.string(before), expression=count),
                         expression=exp.Literal.string(after))
    return message


def _stop_statement(tree: exp.Expression, dialect: str) -> exp.Expression:
    """Each ``error(m)`` as ``dialect`` stops a statement (see :data:`_STOP`)."""

    def swap(node: exp.Expression) -> exp.Expression:
        if _name(node) != "error" or len(node.expressions) != 1:
            return node
        message = node.expressions[0] if dialect in _FULL_MESSAGE else _portable_message(node.expressions[0])
        if dialect in _STOP:
            return exp.Anonymous(this=_STOP[dialect], expressions=[message])
        return exp.cast(message, exp.DataType.build("DOUBLE"))

    return tree.transform(swap, copy=False)  # the tree is transpile's own parse


# Rewrites a dialect needs before generation (on the DuckDB tree).  Databricks runs Spark SQL:
# the same functions (a 64-bit hash, raise_error, ...) and the same CTE scoping.
_REWRITES = {"postgres": _log2_as_ln, "spark": _spark, "databricks": _spark}
# DuckDB constructs most dialects lack, rewritten for every target but DuckDB itself
_EVERYWHERE = (_union_by_name,)


def transpile(
    sql: str,
    dialect: str,
    statement: type[exp.Expression] = exp.Query,
    engine_rewrite: Callable[[exp.Expression], exp.Expression] | None = None,
) -> str:
    """``sql`` (DuckDB) in ``dialect``, or :class:`RankPolarsError` if it cannot be said there.

    ``statement``: what the text must be on both sides, one statement of that kind (``to_sql``
    asks for one SELECT).  ``engine_rewrite``: an engine's own change to the translated tree
    (the Spark engine's join hints), made before the text is written and checked, so the
    statement is not parsed once more for it."""
    try:
        target = sqlglot.Dialect.get_or_raise(dialect)
    except (ValueError, SqlglotError) as e:
        raise RankPolarsError(f"unknown SQL dialect {dialect!r}: {e}") from None
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
        if dialect != "duckdb":
            for common in _EVERYWHERE:
                tree = common(tree)
        rewrite = _REWRITES.get(dialect)
        if rewrite is not None:
            tree = rewrite(tree)
        if dialect != "duckdb":
            tree = _stop_statement(tree, dialect)
        if engine_rewrite is not None:
            tree = engine_rewrite(tree)
        out = target.generate(tree, unsupported_level=ErrorLevel.RAISE, pretty=False)
        back = sqlglot.parse_one(out, read=dialect)
    except SqlglotError as e:
        raise RankPolarsError(f"the metrics' SQL cannot be expressed in {dialect}: {e}") from None
    # one SELECT statement on both sides (the trees are at hand here, and a 100 KB statement
    # takes seconds to parse again)
    for side, parsed in (("generated", tree), (dialect, back)):
        if not isinstance(parsed, statement):
            raise RankPolarsError(f"the {side} SQL must be one {statement.__name__.upper()} statement, "
                                  f"got {type(parsed).__name__}")
    # a quoted name must come back as one name: BigQuery reads `a.b_q` as the path a.b_q
    names = Counter(i.name for i in tree.find_all(exp.Identifier) if "." in i.name)
    names_back = Counter(i.name for i in back.find_all(exp.Identifier) if "." in i.name)
    split = sorted(n for n in names if names_back[n] < names[n])
    if split:
        raise RankPolarsError(
            f"column name {split[0]!r} cannot be said in {dialect}: it reads a quoted name with a dot as a path; "
            "rename the column"
        )
    before, after = _shape(tree), _shape(back)
    # an added cast (PostgreSQL types LN of an integer) changes no number; a lost one could
    after["Cast"] = min(after["Cast"], before["Cast"])
    if before != after:
        diff = {k: (before[k], after[k]) for k in before.keys() | after.keys() if before[k] != after[k]}
        raise RankPolarsError(f"the metrics' SQL does not survive translation to {dialect} (changed: {diff})")
    return out


__all__ = ["transpile"]
