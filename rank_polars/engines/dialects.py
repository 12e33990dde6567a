"""Translating the generated DuckDB SQL to other dialects with sqlglot, checked.

A translation is returned only if sqlglot can express every construct in the target
(``unsupported_level=RAISE``) and the result parses back in that dialect with the same
numeric structure: as many logarithms, powers, exponentials, windows with an ORDER BY,
CASEs, joins and aggregates.  Anything else is a :class:`RankPolarsError`, never SQL that
would compute different numbers.
"""

from __future__ import annotations

from collections import Counter

import sqlglot
from sqlglot import ErrorLevel, exp
from sqlglot.errors import SqlglotError

from ..errors import RankPolarsError

# Node kinds whose count must survive a translation: the arithmetic of the formulas, the
# windows (running sums, ranks), the joins and the aggregates.
_SHAPE = (
    exp.Log, exp.Ln, exp.Pow, exp.Exp, exp.Least, exp.Case, exp.Div, exp.Window, exp.Ordered,
    exp.Join, exp.Sum, exp.Max, exp.Avg, exp.Count, exp.Coalesce, exp.RowNumber, exp.Cast,
)


def _shape(tree: exp.Expression) -> Counter[str]:
    counts: Counter[str] = Counter()
    for node in tree.walk():
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

    return tree.transform(swap)


# Rewrites a dialect needs before generation (on the DuckDB tree).
_REWRITES = {"postgres": _log2_as_ln}


def transpile(sql: str, dialect: str) -> str:
    """``sql`` (DuckDB) in ``dialect``, or :class:`RankPolarsError` if it cannot be said there."""
    try:
        target = sqlglot.Dialect.get_or_raise(dialect)
    except (ValueError, SqlglotError) as e:
        raise RankPolarsError(f"unknown SQL dialect {dialect!r}: {e}") from None
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
        rewrite = _REWRITES.get(dialect)
        if rewrite is not None:
            tree = rewrite(tree)
        out = target.generate(tree, unsupported_level=ErrorLevel.RAISE, pretty=False)
        back = sqlglot.parse_one(out, read=dialect)
    except SqlglotError as e:
        raise RankPolarsError(f"the metrics' SQL cannot be expressed in {dialect}: {e}") from None
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
