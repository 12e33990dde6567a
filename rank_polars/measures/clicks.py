"""Online (click) metrics: specs of the ``rank_polars.clicks.metrics`` family.

A click log holds what was shown (``query``, ``item``, ``position``, per ``model`` / arm) and
what was clicked: a click count per shown row, in the column the specs' ``click`` parameter
names (``"click"`` by default, or the schema's ``click=``).  **One reading per call**: the
click metrics always read that column of the run, in every engine and in ``to_sql``, whatever
``qrels=`` and ``labels=`` say; every other metric of the call reads the labels (the run's
relevance column) or the judgments, as it would without them.  Clicks are the labels of the
other metrics (``rr``, ``p@k``, ``success@k`` counting clicks) only when the call says so:
``relevance="click"``.  Each value is per ranking (group, query), and averaged over rankings:

* ``ctr@k``: clicks in the top k / rows shown in the top k (``ctr(agg=ratio)@k``: the
  impression-weighted ratio of sums over the group's rankings, see :class:`CTR`);
* ``clicks@k``: clicks in the top k; ``impressions@k``: rows shown in the top k;
* ``abandonment@k``: 1 when the top k has no click, else 0 (lower is better:
  ``HIGHER_IS_BETTER = False``);
* ``click_rr@k``: 1 / rank of the first clicked row in the top k (0 without a click);
* ``last_click_rr@k``: 1 / rank of the last clicked row in the top k (0 without a click).

Without ``@k`` a metric reads the whole ranking.  They are a family rather than formulas of
the plan because they read a column of their own, the ratio form needs each group's sums (a
second aggregation over the rankings) and the click counts are checked as counts (not
negative, whole, not null; at most one per shown row for a CTR), which the plan's grades are
not.  Polars, DuckDB, Spark (the translated SQL) and ``to_sql``; the click values are checked in
every engine and in ``to_sql``'s SQL in every dialect.

>>> import polars as pl, rank_polars as rp
>>> log = pl.DataFrame({"query": ["a", "a", "a", "b", "b"], "item": ["x", "y", "z", "x", "y"],
...                     "position": [1, 2, 3, 1, 2], "click": [0, 1, 1, 0, 0]})
>>> rp.evaluate(log, ["ctr@3", "ctr(agg=ratio)@3", "click_rr", "abandonment"])
shape: (1, 5)
┌─────────┬──────────┬──────────────────┬──────────┬─────────────┐
│ queries ┆ ctr@3    ┆ ctr(agg=ratio)@3 ┆ click_rr ┆ abandonment │
│ ---     ┆ ---      ┆ ---              ┆ ---      ┆ ---         │
│ u32     ┆ f64      ┆ f64              ┆ f64      ┆ f64         │
╞═════════╪══════════╪══════════════════╪══════════╪═════════════╡
│ 2       ┆ 0.333333 ┆ 0.4              ┆ 0.25     ┆ 0.5         │
└─────────┴──────────┴──────────────────┴──────────┴─────────────┘
"""

from __future__ import annotations

from typing import Any, ClassVar, Sequence

from rank_polars.errors import RankPolarsError
from rank_polars.measures.base import FamilyMeasure, Measure, Param

FAMILY = "rank_polars.clicks.metrics"

#: The column of click counts a click spec reads by default.
CLICK_COLUMN = "click"

CLICK = Param(str, CLICK_COLUMN, "the log's column of click counts per shown row (0/1 or a count)")


class _Click(FamilyMeasure):
    FAMILY = FAMILY
    SOURCES: dict[str, str] = {}
    PARAMS = {"click": CLICK}
    # the click metrics read the run's click column, never the labels: a call of them alone reads
    # no relevance column (a click log needs none), and to_sql reads none for them
    NEEDS_LABELS = False
    READS_RUN_LABELS = False
    #: The docs' example run (its metric page) with the clicks it reads: b and c of q1, g of q2.
    EXAMPLE_RUN: ClassVar[dict[str, list[Any]]] = {
        "query": ["q1", "q1", "q1", "q1", "q2", "q2", "q2"], "item": ["a", "b", "c", "d", "e", "f", "g"],
        "position": [1, 2, 3, 4, 1, 2, 3], "click": [0, 1, 1, 0, 0, 0, 1]}


class CTR(_Click):
    """ctr@k: clicks in the top k / rows shown in the top k, per ranking, averaged over rankings.

    ``agg="ratio"``: the impression-weighted CTR of the group, R = ΣX / ΣY over its rankings
    (X: clicks in the top k, Y: rows shown in the top k; A/B platforms' "ratio of means").
    Its per-ranking value (``per_query=True``, and what ``compare`` / ``ci=`` read) is the
    delta method's linearisation ``R + (X - R·Y) / mean(Y)``: its mean over the group's
    rankings is R, and its sample variance / n is the delta-method variance of R, so the
    t interval of ``evaluate(ci=)`` is the delta-method interval. The raw X and Y are
    ``clicks@k`` and ``impressions@k`` (``spec.ratio_parts()``). A click count above 1 on a row
    (more clicks than impressions) is refused: a CTR is a rate of 0/1 clicks.

    >>> from rank_polars.measures import parse
    >>> spec = parse("ctr(agg=ratio)@10")
    >>> spec.is_ratio, spec.ratio_parts()
    (True, (clicks@10, impressions@10))
    """

    NAME = "ctr"
    PARAMS = {"click": CLICK, "agg": Param(
        str, "mean", "'mean': the mean of the rankings' CTRs; 'ratio': Σ clicks / Σ rows shown over the group's rankings",
        ("mean", "ratio"))}

    @property
    def is_ratio(self) -> bool:
        """Whether the group value is a ratio of sums (its per-ranking values linearised)."""
        return bool(self.params["agg"] == "ratio")

    def ratio_parts(self) -> tuple[Measure, Measure]:
        """The numerator and denominator specs per ranking: ``clicks@k``, ``impressions@k``."""
        return Clicks(self.k, click=self.click), Impressions(self.k, click=self.click)


class Clicks(_Click):
    """clicks@k: the number of clicks in the top k, per ranking."""

    NAME = "clicks"


class Impressions(_Click):
    """impressions@k: the number of rows shown in the top k, per ranking (the CTR's denominator)."""

    NAME = "impressions"


class Abandonment(_Click):
    """abandonment@k: 1 when no row of the top k is clicked, else 0 (lower is better)."""

    NAME = "abandonment"
    HIGHER_IS_BETTER = False


class ClickRR(_Click):
    """click_rr@k: 1 / rank of the first click in the top k, 0 without one."""

    NAME = "click_rr"


class LastClickRR(_Click):
    """last_click_rr@k: 1 / rank of the last click in the top k, 0 without one."""

    NAME = "last_click_rr"


MEASURES = {c.NAME: c for c in (CTR, Clicks, Impressions, Abandonment, ClickRR, LastClickRR)}


def clicks_named(outputs: Sequence[tuple[str, Any]], click: str | None) -> list[tuple[str, Any]]:
    """``outputs`` with each click spec that reads the default column reading ``click`` instead
    (the schema's click column, ``rp.Schema(click="clicked")``); unchanged when ``click`` is None.

    >>> clicks_named([("ctr@10", CTR(10)), ("ndcg", None)], "clicked")
    [('ctr@10', ctr(click=clicked)@10), ('ndcg', None)]
    """
    if click is None:
        return list(outputs)
    return [(label, spec.replace(click=click) if isinstance(spec, _Click) and spec.params["click"] == CLICK_COLUMN
             else spec) for label, spec in outputs]


def is_click(spec: object) -> bool:
    """Whether ``spec`` is a click metric (it reads the run's click column, not the labels)."""
    return isinstance(spec, _Click)


def click_column(outputs: Sequence[tuple[str, Any]]) -> str | None:
    """The run's column the call's click specs read (after :func:`clicks_named`); None when the
    call has none.  One call reads one click column.

    >>> click_column([("ctr@10", CTR(10)), ("rr", None)]), click_column([("rr", None)])
    ('click', None)
    """
    columns = sorted({spec.params["click"] for _, spec in outputs if isinstance(spec, _Click)})
    if len(columns) > 1:
        raise RankPolarsError(f"the click metrics read different click columns ({', '.join(map(repr, columns))}): "
                              "one call reads one click column; evaluate them in separate calls")
    return columns[0] if columns else None


def first_click(outputs: Sequence[tuple[str, Any]]) -> str | None:
    """The label of the call's first click metric (named when the run has no click column)."""
    return next((label for label, spec in outputs if isinstance(spec, _Click)), None)


def first_labelled(outputs: Sequence[tuple[str, Any]]) -> str | None:
    """The label of the call's first metric that needs labels (named when the run has none)."""
    return next((label for label, spec in outputs if getattr(spec, "NEEDS_LABELS", True)), None)
