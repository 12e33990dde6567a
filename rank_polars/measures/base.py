"""Metric specs: immutable objects with declared parameters, read by every engine.

A spec says *what* a metric is, as one formula in :mod:`rank_polars.formula.tree`:
:meth:`Measure.value` gives the per-query value, :meth:`Measure.contributes` which rows
of a ranking can change it, and ``AGGREGATE`` how the per-query values combine into one
number per group.  The engines (:mod:`rank_polars.engines`) decide *how* to compute it; a spec
imports no engine (the list form lives in :mod:`rank_polars.formula.exprs`).
"""

from __future__ import annotations

import difflib
import numbers
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Sequence

from rank_polars.formula import tree as d
from rank_polars.errors import MetricNameError

Aggregate = Literal["mean", "sum", "gmean", "catalog"]

GM_FLOOR = 1e-5
"""trec_eval's floor under a geometric mean (``MIN_GEO_MEAN``): ``exp(mean(ln(max(x, 1e-5))))``."""


def flag(value: Any) -> bool:
    """A boolean parameter from a name (``true``/``false``, ``1``/``0``, any case) or a bool."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise ValueError(value)


def levels(value: Any) -> tuple[float, ...]:
    """A list of numbers from ``"0.25;0.5;0.75"`` (``;``-separated: ``,`` separates parameters)
    or a sequence of numbers."""
    parts = value.split(";") if isinstance(value, str) else list(value)
    out = tuple(float(v) for v in parts if not (isinstance(v, str) and not v.strip()))
    if not out:
        raise ValueError(value)
    return out


def cutoff(name: str, k: Any) -> int:
    """``k`` as a cutoff: a positive integral number (a NumPy integer from ``np.arange``, or a
    float that is one) as an ``int``, else :class:`MetricNameError` naming the metric (a bool,
    an int to Python, would be ``@True``).

    >>> import numpy as np
    >>> cutoff("ndcg", np.int64(10)), cutoff("ndcg", 5.0)
    (10, 5)
    """
    integral = isinstance(k, numbers.Integral) or (isinstance(k, numbers.Real) and float(k).is_integer())
    if isinstance(k, bool) or not integral or int(k) <= 0:
        raise MetricNameError(f"{name}: cutoff k must be a positive integer, got {k!r}")
    return int(k)


@dataclass(frozen=True)
class Param:
    """A declared parameter: its type, default, allowed values and one line of documentation."""

    dtype: type
    default: Any
    doc: str
    choices: tuple[Any, ...] | None = None

    def coerce(self, measure: str, name: str, value: Any) -> Any:
        if value is None:
            if self.default is None:
                return None
            raise MetricNameError(f"{measure}: parameter {name!r} cannot be None")
        if self.choices is not None:
            text = str(value).lower()
            if text not in self.choices:
                raise MetricNameError(
                    f"{measure}: parameter {name}={value!r} is not one of {', '.join(map(str, self.choices))}"
                )
            return text
        try:
            converted = self.dtype(value)
        except (TypeError, ValueError):
            raise MetricNameError(
                f"{measure}: parameter {name}={value!r} is not a {self.dtype.__name__}"
            ) from None
        if isinstance(converted, float) and not abs(converted) < float("inf"):  # NaN, +-inf
            raise MetricNameError(f"{measure}: parameter {name} must be a finite number, got {value!r}")
        return converted


REL = Param(float, None, "relevant means grade >= rel; default: grade > 0")
GAIN = Param(str, "linear", "gain of a grade g: 'linear' = g, 'exp' = 2^g - 1", ("linear", "exp"))
DISCOUNT = Param(
    str,
    "log2",
    "'log2' = 1/log2(i+1); 'jarvelin' = 1 for i <= 2, then 1/log2(i) (ranks 1 and 2 undiscounted)",
    ("log2", "jarvelin"),
)
TIES = Param(
    str,
    "item",
    "tied scores: broken by item id descending ('item', trec_eval), or 'average': the expected value over "
    "the tie's orders (scikit-learn's ndcg_score/dcg_score); runs ordered by score only",
    ("item", "average"),
)
IDEAL = Param(
    str,
    "judgments",
    "where the ideal ranking comes from: all 'judgments' of the query (trec_eval), or the 'run' list's own items",
    ("judgments", "run"),
)
IDEAL_CUT = Param(
    str,
    "k",
    "ideal cut at 'k' (whole ideal list without @k; trec_eval), or at min(k, length of the ranked 'list')",
    ("k", "list"),
)


class Measure:
    """One metric with its parameters; equal and hashed by its canonical name.

    Subclasses declare ``NAME``, ``PARAMS`` and the formula (:meth:`value`).
    """

    NAME: ClassVar[str]
    ALIASES: ClassVar[tuple[str, ...]] = ()
    PARAMS: ClassVar[dict[str, Param]] = {}
    SUPPORTS_CUTOFF: ClassVar[bool] = True
    DOC: ClassVar[str] = ""
    #: How ``evaluate`` combines the per-query values of a group (trec_eval's 'all' line):
    #: ``"mean"``; ``"sum"`` (the ``num_*`` counts); ``"gmean"``, the geometric mean of the
    #: values floored at :data:`GM_FLOOR` (``gm_map``, ``gm_bpref``); ``"catalog"``, one value
    #: per group computed over all its lists, not from per-query values (a
    #: :class:`FamilyMeasure` only: catalogue coverage, exposure Gini).
    AGGREGATE: ClassVar[Aggregate] = "mean"
    #: The parameter that ``NAME@x`` sets when it is not a rank cutoff (``iprec@0.5``: recall).
    AT_PARAM: ClassVar[str | None] = None
    #: Whether a larger value is better (``compare`` orients its verdicts by it); ``False`` for
    #: a metric to minimise, such as ``abandonment`` (share of rankings without a click).
    HIGHER_IS_BETTER: ClassVar[bool] = True
    #: Whether the measure reads relevance labels.  ``False`` for a measure of what is shown
    #: alone (coverage, popularity, novelty, diversity): a log without a relevance column and
    #: without judgments can be evaluated when every requested measure says so (every shown
    #: row then counts as relevant, as recommenders assumes when a log has no relevance).
    NEEDS_LABELS: ClassVar[bool] = True
    #: Whether the measure can read the run's own labels at all.  ``False`` where the grades
    #: always come from another table (diversity: its subtopic judgments): ``to_sql``, which
    #: cannot see whether the run has a relevance column, then does not read one.
    READS_RUN_LABELS: ClassVar[bool] = True

    def __init__(self, k: int | None = None, **params: Any) -> None:
        if k is not None:
            if not self.SUPPORTS_CUTOFF:
                raise MetricNameError(f"{self.NAME} takes no cutoff (@k)")
            k = cutoff(self.NAME, k)
        unknown = set(params) - set(self.PARAMS)
        if unknown:
            raise MetricNameError(
                f"{self.NAME}: unknown parameter {sorted(unknown)[0]!r}; "
                f"supported: {', '.join(self.PARAMS) or 'none'}"
            )
        values = {
            name: spec.coerce(self.NAME, name, params.get(name, spec.default))
            for name, spec in self.PARAMS.items()
        }
        self._check(values)
        object.__setattr__(self, "k", k)
        object.__setattr__(self, "params", values)

    k: int | None
    params: dict[str, Any]

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("metric specs are immutable")

    def _check(self, params: dict[str, Any]) -> None:
        """Validate parameter combinations; subclasses raise MetricNameError."""

    @property
    def missing_scores_best(self) -> bool:
        """Whether 0, what ``missing="zero"`` gives a judged query a version never ranked, would be
        this measure's best value (lower is better, and a value per query): such a ranking is left
        out of it instead, in every engine and in ``to_sql`` (``validate.leave_out_missing``).

        >>> from rank_polars.measures import parse
        >>> parse("fallout@10").missing_scores_best, parse("ndcg@10").missing_scores_best
        (True, False)
        """
        return not self.HIGHER_IS_BETTER and self.AGGREGATE != "catalog"

    def replace(self, **params: Any) -> Measure:
        """The same metric with some parameters (or its cutoff ``k``) changed, e.g.
        ``spec.replace(rel=2)`` (trec_eval ``-l2``).

        >>> from rank_polars.measures import parse
        >>> parse("P_5").replace(rel=2), parse("ndcg").replace(k=10)
        (p(rel=2)@5, ndcg@10)
        """
        return type(self)(**{"k": self.k, **self.params, **params})

    # -- identity ------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """Canonical name: only non-default parameters, round-trips through :func:`parse`."""
        shown = [
            f"{p}={_fmt(v)}" for p, v in self.params.items() if v != self.PARAMS[p].default
        ]
        text = self.NAME + (f"({', '.join(shown)})" if shown else "")
        return text + (f"@{self.k}" if self.k is not None else "")

    def __repr__(self) -> str:
        return self.name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Measure) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def __getattr__(self, item: str) -> Any:
        params = self.__dict__.get("params", {})
        if item in params:
            return params[item]
        close = difflib.get_close_matches(item, list(params), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise AttributeError(f"{type(self).__name__} has no attribute {item!r}{hint}")

    # -- the formula ---------------------------------------------------------------------
    def value(self) -> d.Node:
        """Per-query value as a formula over aggregates (see :mod:`rank_polars.formula.tree`)."""
        raise NotImplementedError

    def contributes(self) -> d.Node:
        """Rows of a ranking that can change the value (all other rows add exactly 0)."""
        return self.relevant()

    def depth(self) -> int | None:
        """Deepest rank the value can depend on (None: the whole list; with ``ties=average`` a
        row below k whose tie reaches into the top k counts)."""
        return None if self.tie_averaged else self.k

    @property
    def tie_averaged(self) -> bool:
        """Whether tied scores are averaged over the tie's orders (``ties=average``)."""
        return self.params.get("ties") == "average"

    def tie_weight(self, weight: d.Node) -> d.Node:
        """A row's position weight (a formula of ``rank``): as it is, or with ``ties=average``
        its mean over the positions the row's tie occupies, which is its expected value when
        the tie is put in a random order (each of its rows equally likely at each position)."""
        if not self.tie_averaged:
            return weight
        return d.TieSum(weight) / d.TieSum(d.Lit(1.0))

    # -- shared building blocks ----------------------------------------------------------
    def relevant(self) -> d.Node:
        rel = self.params.get("rel")
        return d.GRADE > 0 if rel is None else d.GRADE >= rel

    def in_cutoff(self, rank: d.Node = d.RANK) -> d.Node:
        return rank <= self.k if self.k is not None else d.Lit(True)

    def gain(self) -> d.Node:
        g = d.GRADE
        if self.params.get("gain", "linear") == "exp":
            return d.when(g > 0, d.power(2.0, g) - 1.0, 0.0)
        # trec_eval: grades <= 0 (non-relevant, negative = unjudged) add nothing
        return d.when(g > 0, g, 0.0)

    def discount(self, rank: d.Node) -> d.Node:
        if self.params.get("discount", "log2") == "jarvelin":
            return d.when(rank <= 2, 1.0, d.log2(rank))
        return d.log2(rank + 1)

    def n_relevant(self) -> d.Node:
        """R: the number of relevant judgments of the query (retrieved or not)."""
        return d.judgment_sum(d.ind(self.relevant()))

    def hits_at_k(self) -> d.Node:
        if self.tie_averaged:  # the expected number over the ties' orders
            return d.row_sum(d.when(self.relevant(), self.tie_weight(d.ind(self.in_cutoff())), 0.0))
        return d.row_sum(d.ind(self.relevant() & self.in_cutoff()))


def refuse_ties_by_position(outputs: Sequence[tuple[str, Measure]], order: str) -> None:
    """``ties=average`` reads the scores' ties: a run ordered by position has none to average.

    >>> from rank_polars.measures import parse
    >>> refuse_ties_by_position([("ndcg(ties=average)@10", parse("ndcg(ties=average)@10"))], "position")
    Traceback (most recent call last):
    ...
    rank_polars.errors.MetricNameError: ndcg(ties=average)@10 averages tied scores, but the run is ordered by position, which has no ties: order by score (order='score', or a run without a position column)
    """
    label = next((label for label, spec in outputs if spec.tie_averaged), None)
    if label is not None and order == "position":
        raise MetricNameError(f"{label} averages tied scores, but the run is ordered by position, which has no ties: "
                              "order by score (order='score', or a run without a position column)")


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, tuple):
        return ";".join(_fmt(x) for x in v)
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


#: The roles an auxiliary table carried by a :class:`FamilyMeasure` may play.  Its query and
#: item columns carry the run's names (``evaluate(..., query="user")``); the other columns
#: are the family's own.
ROLES: dict[str, str] = {
    "history": "past interactions (query, item, ...): popularity, co-occurrence, a user's own history",
    "catalog": "the items that could be shown (item, ...)",
    "features": "item -> a vector or categories (item, ...)",
    "subtopics": "subtopic judgments (query, subtopic, item, relevance)",
}


class FamilyMeasure(Measure):
    """A measure that is not a formula of the plan: its family computes it in each engine.

    Some measures need more than the run and its judgments (a history of interactions, a
    catalogue, item features, subtopic judgments), or are one number per group over all its
    lists rather than a mean over queries.  Such a spec declares:

    * ``FAMILY``: the dotted name of the module holding the family's compute functions
      (``polars_values`` and ``sql_values``, see :mod:`rank_polars.engines.base`); a
      string, so that specs import no engine;
    * ``SOURCES``: ``{keyword: role}`` (a role of :data:`ROLES`) for the auxiliary tables the
      spec carries, e.g. ``history=train``: any source ``evaluate`` accepts for the run
      (a DataFrame, a LazyFrame, Parquet paths); ``None`` when not given;
    * ``AGGREGATE``: ``"mean"`` / ``"sum"`` / ``"gmean"`` when the family returns one value
      per (group, query), which then joins the other metrics' per-query table (``missing``,
      ``per_query`` and ``compare`` keep working), or ``"catalog"`` when it returns one
      value per group.

    The tables are not part of the name (a frame has none): two specs that differ only in
    their tables are equal, and one ``evaluate`` call refuses the second as requested twice;
    compare them in separate calls.

    >>> class Shown(FamilyMeasure):
    ...     NAME = "shown_example"
    ...     FAMILY = "tests.family_example"
    ...     SOURCES = {"catalog": "catalog"}
    ...     AGGREGATE = "catalog"
    >>> spec = Shown(k=10, catalog=None)
    >>> spec, spec.sources, spec.AGGREGATE
    (shown_example@10, {'catalog': None}, 'catalog')
    """

    FAMILY: ClassVar[str]
    SOURCES: ClassVar[dict[str, str]] = {}
    #: the value of a shown ranking the family returns no row for (nothing it reads in the top
    #: k): 0.0, as a ranking without a contributing row scores 0, or None for a mean over the
    #: top k's items (ARP, ILS, ...), undefined on an empty top k and left out of the mean. A
    #: ranking absent from the run (``missing="zero"``) scores 0 either way.
    ABSENT: ClassVar[float | None] = 0.0

    sources: dict[str, Any]

    def __init__(self, k: int | None = None, **params: Any) -> None:
        tables = {name: params.pop(name) for name in list(params) if name in self.SOURCES}
        super().__init__(k, **params)
        object.__setattr__(self, "sources", {name: tables.get(name) for name in self.SOURCES})

    def replace(self, **params: Any) -> Measure:
        return type(self)(**{"k": self.k, **self.params, **self.sources, **params})

    def value(self) -> d.Node:
        raise TypeError(f"{self.NAME} is computed by its family ({self.FAMILY}), not by a plan formula")

    def needs_table(self, name: str) -> str:
        """What to say when the table ``name`` is not given: the role, and a call that gives it
        (``rp.novelty(k=10, history=frame)``; a spec without a function of its own in
        ``rank_polars``, a diversity measure, through :func:`rank_polars.measures.parse`).

        >>> from rank_polars.measures import parse
        >>> print(parse("alpha_ndcg@20").needs_table("subtopics"))
        alpha_ndcg@20 needs subtopics= (subtopic judgments (query, subtopic, item, relevance)): e.g. rp.measures.parse('alpha_ndcg@20').replace(subtopics=frame), or qrels= with a 'subtopic' column
        """
        import sys

        # the spec's own module defines its function (rp.novelty is measures.beyond.novelty)
        if callable(getattr(sys.modules.get(type(self).__module__), self.NAME, None)):
            args = [f"k={self.k}"] if self.k is not None else []
            args += [f"{p}={v!r}" for p, v in self.params.items() if v != self.PARAMS[p].default]
            call = f"rp.{self.NAME}({', '.join([*args, f'{name}=frame'])})"
        else:
            call = f"rp.measures.parse({self.name!r}).replace({name}=frame)"
        also = ", or qrels= with a 'subtopic' column" if name == "subtopics" else ""
        return f"{self.name} needs {name}= ({ROLES.get(name, name)}): e.g. {call}{also}"

    def checks_own_repeats(self) -> bool:
        """Whether the family reads only the run rows relevant in the spec's own judgments and
        counts the items repeated among them itself (the diversity family): a call of such
        specs alone then skips the distinct count of items over every row of the run
        (``Plan.own_repeats``), as the plan's measures count repeats among their contributing
        rows.  False (the default): the family reads other rows too (every shown item)."""
        return False

    def contributes(self) -> d.Node:
        return d.Lit(False)
