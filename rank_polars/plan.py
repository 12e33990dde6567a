"""The logical plan shared by every engine.

Every metric reduces to aggregates at three levels (see :mod:`rank_polars.formula.tree`):

* ``judgments`` — per query, over its judgments (R, N, IDCG@k, ...); the ideal rank
  ``irank`` is a window over the judgments only, which are small;
* ``global``    — over all judgments (the top grade of the scale, for ERR);
* ``rows``      — per query, over the *contributing* rows of the run only: the rows that can
  change a value (relevant or positively graded hits, or judged rows for bpref/judged@k).
  On a typical log that is ~5% of the rows; every other row adds exactly 0, so the plan
  never windows, sorts or joins the whole log.

Then each metric's value is a formula over those aggregates, filled with 0 for queries
whose ranking has no contributing row.  Equal aggregates are computed once, whichever
metrics ask for them (``ap@10`` and ``r@10`` share R).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from rank_polars.formula import tree as d
from rank_polars.measures.base import Measure

# Internal column names: long enough not to collide with users' columns.
Q, ITEM, RANK, SCORE, GRADE, JUDGED, IRANK, N_RET = (
    "__rp_query", "__rp_item", "rank", "__rp_score", "grade", "judged", "irank", "n_ret",
)
QGRADE = "__rp_qrels_grade"  # labels="run": the qrels' grade of a run row, only to check it


def by_name(i: int) -> str:
    return f"__rp_by{i}"


def key_names(n_by: int) -> list[str]:
    """The internal key of a ranking: the ``by`` columns, then the query."""
    return [*(by_name(i) for i in range(n_by)), Q]


@dataclass
class Plan:
    outputs: list[tuple[str, Measure]]
    values: dict[str, d.Node] = field(default_factory=dict)
    row_aggs: dict[str, d.Agg] = field(default_factory=dict)
    cums: dict[str, d.Node] = field(default_factory=dict)
    #: tree.TieMax: the largest value over the contributing rows of a row's tie, after the cums
    tie_maxes: dict[str, d.Node] = field(default_factory=dict)
    judgment_aggs: dict[str, d.Agg] = field(default_factory=dict)
    global_aggs: dict[str, d.Agg] = field(default_factory=dict)
    contributes: d.Node = field(default_factory=lambda: d.Lit(False))
    depth: int | None = None
    #: a measure family is evaluated beside the plan (clicks, diversity, beyond accuracy): it
    #: reads rows that ``contributes`` does not cover (a CTR counts every shown row, a
    #: diversity measure rows relevant to a subtopic), so the ranking checks cover every row
    families: bool = False
    #: with ``families``: the deepest rank any metric of the call reads (the plan's and the
    #: families' cutoffs), None for the whole list (see ``validate.repeat_depth``)
    check_depth: int | None = None
    #: the call is of family measures alone, each counting the items repeated among the rows it
    #: reads (``FamilyMeasure.checks_own_repeats``): the pass over every row counts no items
    own_repeats: bool = False

    @property
    def row_refs(self) -> set[str]:
        """Judgment/global aggregates that the row level reads (joined onto the rows)."""
        names: set[str] = set()
        for node in [*self.row_aggs.values(), *self.cums.values(), *self.tie_maxes.values()]:
            for n in d.walk(node):
                if isinstance(n, d.Col) and (n.name in self.judgment_aggs or n.name in self.global_aggs):
                    names.add(n.name)
        return names

    @staticmethod
    def ideal_split(aggs: dict[str, d.Agg]) -> list[tuple[bool, dict[str, d.Agg]]]:
        """Judgment aggregates split by whether they read the ideal rank ``irank``.

        ``irank`` exists only for positively graded judgments (see :mod:`rank_polars.formula.tree`):
        those sort first, so their rank is the same as among all judgments, and the window
        that numbers them runs over ~5% of the judgments instead of all of them.
        """
        ideal = {n: a for n, a in aggs.items() if d.reads([a], IRANK)}
        plain = {n: a for n, a in aggs.items() if n not in ideal}
        return [(flag, part) for flag, part in ((False, plain), (True, ideal)) if part]

    def sources(self) -> set[str]:
        return {agg.source for agg in self.judgment_aggs.values()}

    def reads_n_ret(self) -> bool:
        """Some value reads the length of the ranking (so every row of it counts)."""
        nodes = [*self.values.values(), *self.row_aggs.values(), *self.cums.values(), *self.judgment_aggs.values()]
        return d.reads(nodes, N_RET)

    def reads_rows(self) -> bool:
        """Some value reads a row of the run: a row contributes to a metric, or a metric reads
        the ranking's length (not so for ``evaluate``'s stand-in ``num_q`` when only measure
        families are asked: the metric pass then holds no row)."""
        return self.contributes.key() != d.Lit(False).key() or self.reads_n_ret()

    def tie_columns(self) -> dict[str, d.TieSum]:
        """The :class:`~rank_polars.formula.tree.TieSum` columns the rows carry: those the row
        aggregates read, and the tie a :class:`~rank_polars.formula.tree.TieMax` groups by."""
        return d.tie_sums([*self.row_aggs.values(), *self.cums.values(), *self.tie_maxes.values(),
                           *([d.TIE] if self.tie_maxes else [])])

    def cum_levels(self) -> list[dict[str, d.Node]]:
        """The running sums in the order the engines compute them: a level's arguments read
        only the running sums of earlier levels (a C/W/L weight is a running sum of a function
        of the running gain).

        >>> from rank_polars.measures import parse
        >>> [sorted(level) for level in build_plan([("inst", parse("inst"))]).cum_levels()]
        [['_c0'], ['_c1', '_c2']]
        """
        levels: list[dict[str, d.Node]] = []
        done: set[str] = set()
        left = dict(self.cums)
        while left:
            level = {n: a for n, a in left.items()
                     if not any(isinstance(c, d.Col) and c.name in left for c in d.walk(a))}
            levels.append(level)
            done |= set(level)
            left = {n: a for n, a in left.items() if n not in done}
        return levels

    def judgments_need_n_ret(self) -> bool:
        return d.reads(self.judgment_aggs.values(), N_RET)


def build_plan(outputs: Sequence[tuple[str, Measure]], families: Sequence[tuple[str, Measure]] = ()) -> Plan:
    """The plan of ``outputs``; ``families``: the measure families evaluated beside it (they only
    set ``Plan.families`` and ``Plan.check_depth``)."""
    plan = Plan(list(outputs))
    seen: dict[str, str] = {}

    def register(table: dict, prefix: str, key: str, node: d.Node) -> d.Col:
        if key not in seen:
            seen[key] = f"_{prefix}{len(table)}"
            table[seen[key]] = node
        return d.Col(seen[key])

    def rewrite(n: d.Node) -> d.Node:
        if isinstance(n, d.Agg):
            agg = d.Agg(n.kind, rewrite(n.arg), n.level, n.source)
            table, prefix = {
                "rows": (plan.row_aggs, "r"),
                "judgments": (plan.judgment_aggs, "j"),
                "global": (plan.global_aggs, "g"),
            }[n.level]
            return register(table, prefix, agg.key(), agg)
        if isinstance(n, d.Cum):
            arg = rewrite(n.arg)
            return register(plan.cums, "c", d.Cum(arg).key(), arg)
        if isinstance(n, d.TieMax):
            arg = rewrite(n.arg)
            return register(plan.tie_maxes, "t", d.TieMax(arg).key(), arg)
        if isinstance(n, d.BinOp):
            return d.BinOp(n.op, rewrite(n.left), rewrite(n.right))
        if isinstance(n, d.Func):
            return d.Func(n.name, tuple(rewrite(a) for a in n.args))
        if isinstance(n, d.When):
            return d.When(rewrite(n.cond), rewrite(n.then), rewrite(n.otherwise))
        return n

    contributes: list[d.Node] = []
    depths: list[int | None] = []
    for label, measure in outputs:
        plan.values[label] = rewrite(measure.value())
        pred = measure.contributes()
        if pred.key() not in {p.key() for p in contributes}:
            contributes.append(pred)
        depths.append(measure.depth())
    pred = contributes[0]
    for other in contributes[1:]:
        pred = pred | other
    plan.contributes = pred
    plan.depth = None if any(x is None for x in depths) else max(x or 0 for x in depths)
    plan.families = bool(families)
    plan.own_repeats = (bool(families) and not plan.reads_rows()
                        and all(spec.checks_own_repeats() for _, spec in families))
    cutoffs = [plan.depth, *(spec.depth() for _, spec in families)]
    plan.check_depth = None if any(k is None for k in cutoffs) else max(k or 0 for k in cutoffs)
    return plan
