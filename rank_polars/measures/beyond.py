"""Beyond-accuracy measures: coverage, popularity bias, novelty, diversity and serendipity.

They judge *what* a version shows rather than whether it is relevant, so most need a table
beside the log, carried by the spec (roles documented in ``docs/data-model.md``):

* ``history=``: past interactions, with the run's query and item column names (item
  popularity, co-occurrence, a user's own past items);
* ``catalog=``: the items that could be shown (an item column);
* ``features=``: item -> a numeric vector (a list/array column) or categories (a string
  column, one row per category, or a list of strings).

Each spec is either a mean over lists (``AGGREGATE = "mean"``, so ``per_query`` and
``compare`` work) or one number per group over all of its lists (``AGGREGATE = "catalog"``).
They are computed by :mod:`rank_polars.families.beyond` in both engines (not by a plan
formula: they join tables the plan does not know).  Which peer each one matches, and where
the peers disagree, is in ``docs/beyond-accuracy.md`` and ``docs/conventions.md``.

>>> import rank_polars as rp
>>> rp.novelty(k=10), rp.aplt(k=5, head=0.3), rp.ils(k=10, sim="cooccurrence")
(novelty@10, aplt(head=0.3)@5, ils(sim=cooccurrence)@10)
"""

from __future__ import annotations

from typing import Any, ClassVar

from rank_polars.errors import MetricNameError
from rank_polars.measures.base import FamilyMeasure, Param

FAMILY = "rank_polars.families.beyond"

HEAD = Param(float, 0.2, "the short head: the most popular items that make up this share of the history's rows")
SIM = Param(
    str,
    "features",
    "item similarity: 'features' (cosine of the feature vectors, or of the category sets) "
    "or 'cooccurrence' (cosine of the items' history columns, as recommenders)",
    ("features", "cooccurrence"),
)
UNSEEN = Param(
    str,
    "error",
    "a shown item absent from the history: 'error', or 'zero' (it adds 0 and counts in the denominator, as recommenders)",
    ("error", "zero"),
)
PATIENCE = Param(float, 0.85, "the geometric rank weight patience^rank (LensKit's GeometricRankWeight)")


class Beyond(FamilyMeasure):
    """A beyond-accuracy measure (see the module docstring), evaluated beside the others.

    Examples
    --------
    >>> import polars as pl, rank_polars as rp
    >>> log = pl.DataFrame({"model": ["a", "a", "a", "b", "b", "b"], "user": [1, 1, 2, 1, 1, 2],
    ...                     "item": ["x", "y", "x", "x", "z", "w"], "position": [1, 2, 1, 1, 2, 1],
    ...                     "relevance": [1, 0, 1, 0, 1, 1]})
    >>> train = pl.DataFrame({"user": [1, 2, 3, 3], "item": ["x", "y", "x", "z"]})
    >>> rp.evaluate(log, [rp.arp(k=2, history=train), rp.diversity(k=2, history=train, sim="cooccurrence"),
    ...                   rp.entropy(k=2)], by="model", query="user")
    shape: (2, 5)
    ┌───────┬─────────┬───────┬───────────────────────────────┬───────────┐
    │ model ┆ queries ┆ arp@2 ┆ diversity(sim=cooccurrence)@2 ┆ entropy@2 │
    │ ---   ┆ ---     ┆ ---   ┆ ---                           ┆ ---       │
    │ str   ┆ u32     ┆ f64   ┆ f64                           ┆ f64       │
    ╞═══════╪═════════╪═══════╪═══════════════════════════════╪═══════════╡
    │ a     ┆ 2       ┆ 1.75  ┆ 1.0                           ┆ 0.918296  │
    │ b     ┆ 2       ┆ 0.75  ┆ 0.292893                      ┆ 1.584963  │
    └───────┴─────────┴───────┴───────────────────────────────┴───────────┘

    Model a's second list has one item: no pair, no diversity, left out of its mean.
    """

    FAMILY = FAMILY
    #: ``"list"``: one value per list, ``"catalog"``: one per group (mirrors ``AGGREGATE``).
    KIND: ClassVar[str] = "list"

    def _check(self, params: dict[str, Any]) -> None:
        head = params.get("head")
        if head is not None and not 0.0 < head < 1.0:
            raise MetricNameError(f"{self.NAME}: head must be a share strictly between 0 and 1, got {head!r}")
        patience = params.get("patience")
        if patience is not None and not 0.0 < patience < 1.0:
            raise MetricNameError(f"{self.NAME}: patience must be strictly between 0 and 1, got {patience!r}")


class CatalogCoverage(Beyond):
    """catalog_coverage@k = |distinct items shown in the top k of any list| / |catalogue|.

    The catalogue is ``catalog=`` when given, else the distinct items of ``history=``
    (recommenders' ``catalog_coverage`` divides by the training items), else, by name
    (``"catalog_coverage@10"``), the distinct items of the whole log: every version, every
    rank.  Catalogue-level.  With ``history=`` (recommenders' convention) the shown items are not
    checked against it: items shown but never in the history count, and the value can exceed 1;
    ``catalog=`` refuses a shown item outside the catalogue.
    """

    NAME = "catalog_coverage"
    NEEDS_LABELS = False
    SOURCES = {"catalog": "catalog", "history": "history"}
    AGGREGATE = "catalog"
    KIND = "catalog"


class Entropy(Beyond):
    """entropy@k = -sum_i p_i log2 p_i, p_i = share of the top-k rows that show item i.

    recommenders' ``distributional_coverage`` (base 2, not normalised).  Catalogue-level.
    """

    NAME = "entropy"
    NEEDS_LABELS = False
    ALIASES = ("distributional_coverage",)
    AGGREGATE = "catalog"
    KIND = "catalog"


class Gini(Beyond):
    """gini@k = sum_j (2j - n - 1) c_(j) / (n sum c), c = times each catalogue item is shown, ascending.

    RecBole's ``GiniIndex`` and LensKit's ``ListGini``; n = |catalogue| (``catalog=``, else the
    history's distinct items, else the log's distinct items at every rank of every version),
    items never shown count 0.  Catalogue-level.
    """

    NAME = "gini"
    HIGHER_IS_BETTER = False
    NEEDS_LABELS = False
    SOURCES = {"catalog": "catalog", "history": "history"}
    AGGREGATE = "catalog"
    KIND = "catalog"


class ExposureGini(Beyond):
    """exposure_gini@k = the Gini index of each catalogue item's exposure sum patience^rank.

    LensKit's ``ExposureGini`` with its default ``GeometricRankWeight(0.85)``; the catalogue as
    ``gini``.  Catalogue-level.
    """

    NAME = "exposure_gini"
    HIGHER_IS_BETTER = False
    NEEDS_LABELS = False
    SOURCES = {"catalog": "catalog", "history": "history"}
    PARAMS = {"patience": PATIENCE}
    AGGREGATE = "catalog"
    KIND = "catalog"


class ARP(Beyond):
    """arp@k = mean over the top k of pop(i), the item's number of history rows (0 if absent).

    Elliot's ``ARP`` and RecBole's ``AveragePopularity``; mean over lists.
    """

    NAME = "arp"
    HIGHER_IS_BETTER = False
    NEEDS_LABELS = False
    SOURCES = {"history": "history"}
    ABSENT = None  # a mean over the top k: none on an empty one


class APLT(Beyond):
    """aplt@k = |top k outside the short head| / |top k|; the head: the most popular items making up ``head`` of the history.

    Elliot's ``APLT`` (its ``pop_ratio`` is our ``head``; its default 0.8, ours 0.2); mean over lists.
    """

    NAME = "aplt"
    NEEDS_LABELS = False
    SOURCES = {"history": "history"}
    PARAMS = {"head": HEAD}
    ABSENT = None  # a mean over the top k: none on an empty one


class ACLT(APLT):
    """aclt@k = |top k outside the short head| (Elliot's ``ACLT``); mean over lists."""

    NAME = "aclt"
    ABSENT = 0.0  # a count: 0 on an empty top k


class PopREO(Beyond):
    """pop_reo@k = std/mean over {head, tail} of P(shown in top k | relevant, group) (Elliot's ``PopREO``).

    Per group: the relevant items shown in the top k in each popularity group over the
    relevant items of that group not already in the user's history; population std over
    the two shares divided by their mean.  The tail is the catalogue (``catalog=``, else the
    history's items) minus the head.  Lists whose query has no relevant item are left out,
    as Elliot does.  Catalogue-level.
    """

    NAME = "pop_reo"
    HIGHER_IS_BETTER = False
    SOURCES = {"history": "history", "catalog": "catalog"}
    PARAMS = {"head": HEAD}
    AGGREGATE = "catalog"
    KIND = "catalog"


class PopRSP(PopREO):
    """pop_rsp@k = std/mean over {head, tail} of P(shown in top k | group) (Elliot's ``PopRSP``).

    The denominators count each group's items not in the user's history.  Catalogue-level.
    It reads no relevance label (PopREO's conditioning on relevance is what it drops).
    """

    NAME = "pop_rsp"
    NEEDS_LABELS = False


class Novelty(Beyond):
    """novelty@k = sum over the top-k rows of -log2(pop(i) / |history|) / number of top-k rows.

    recommenders' ``novelty`` (a mean over every shown row of the group, not over lists).
    Catalogue-level.  An item absent from the history has no finite novelty: ``unseen``.
    """

    NAME = "novelty"
    NEEDS_LABELS = False
    SOURCES = {"history": "history"}
    PARAMS = {"unseen": UNSEEN}
    AGGREGATE = "catalog"
    KIND = "catalog"


class EPC(Beyond):
    """epc@k = sum_r rel_r disc(r) (1 - users(i_r)/|users|) / sum_r disc(r), disc(r) = 1/log2(r + 1).

    Elliot's ``EPC`` (expected popularity complement): users(i) = distinct history queries
    of the item, |users| = distinct history queries (a repeated history row counts once: the
    share stays within [0, 1]), rel binary (grade > 0).  Lists whose query has no
    relevant item have no value (left out of the mean, as Elliot does).
    """

    NAME = "epc"
    SOURCES = {"history": "history"}
    ABSENT = None  # a mean over the top k: none on an empty one


class EFD(Beyond):
    """efd@k = sum_r rel_r disc(r) (-log2(pop(i_r)/|history|)) / sum_r disc(r).

    Elliot's ``EFD`` (expected free discovery); an item absent from the history gets the
    largest novelty of the history, as Elliot does.  Lists without a relevant item have no value.
    """

    NAME = "efd"
    SOURCES = {"history": "history"}
    ABSENT = None  # a mean over the top k: none on an empty one


class ILS(Beyond):
    """ils@k = mean similarity over the pairs i < j of the top k: (|sum_i u_i|^2 - sum_i |u_i|^2) / (n(n - 1)).

    u_i the normalised feature vector (cosine: recommenders' ``item_feature_vector``,
    LensKit's ``ILS``), the normalised category indicator (category overlap), or the item's
    history column over sqrt(pop) (co-occurrence cosine: recommenders' default).  Computed as
    sums over the list (k rows times the vector length per list, or the items' history rows
    for co-occurrence), never over pairs of items.  Lists of one item have no value (left out
    of the mean, as recommenders does).
    """

    NAME = "ils"
    HIGHER_IS_BETTER = False
    NEEDS_LABELS = False
    SOURCES = {"features": "features", "history": "history"}
    PARAMS = {"sim": SIM}
    ABSENT = None  # a mean over the top k: none on an empty one


class Diversity(ILS):
    """diversity@k = 1 - ils@k (recommenders' ``user_diversity`` / ``diversity``)."""

    NAME = "diversity"
    HIGHER_IS_BETTER = True


class Serendipity(Beyond):
    """serendipity@k = mean over the top k of (1 - mean_h sim(i, h)) rel_i, h over the user's history rows.

    recommenders' ``user_serendipity`` / ``serendipity`` (rel binary: grade > 0; 1 for every
    shown item of a log without a relevance column and without judgments, as recommenders).  Lists
    whose query has no history have no value (left out of the mean, as recommenders does).
    """

    NAME = "serendipity"
    NEEDS_LABELS = False
    SOURCES = {"features": "features", "history": "history"}
    PARAMS = {"sim": SIM}
    ABSENT = None  # a mean over the top k: none on an empty one


BEYOND: tuple[type[Beyond], ...] = (
    CatalogCoverage, Entropy, Gini, ExposureGini, ARP, APLT, ACLT, PopREO, PopRSP, Novelty, EPC, EFD, ILS,
    Diversity, Serendipity,
)

#: The measures a metric name alone can give (``"gini@10"``): they need no table, or the
#: catalogue defaults to the log's own items.  Registered in :data:`rank_polars.measures.MEASURES`.
BY_NAME: tuple[type[Beyond], ...] = (CatalogCoverage, Entropy, Gini, ExposureGini)

#: The others, by name: a string cannot carry the history or the features they need.
NEED_TABLES: dict[str, type[Beyond]] = {
    name: cls for cls in BEYOND if cls not in BY_NAME for name in (cls.NAME, *cls.ALIASES)
}


def needed_tables(spec: Beyond) -> list[str]:
    """The tables ``spec`` cannot do without (the others it reads are optional: a catalogue)."""
    if spec.NAME in ("ils", "diversity", "serendipity") and spec.params.get("sim") == "features":
        return ["features"] + (["history"] if spec.NAME == "serendipity" else [])
    return ["history"]


def needs_tables(spec: Beyond) -> str:
    """Why ``spec`` cannot come from a name alone, and the call that works.

    >>> from rank_polars.measures.beyond import ILS, needs_tables
    >>> print(needs_tables(ILS(k=10, sim="cooccurrence")))
    ils(sim=cooccurrence)@10 needs history=: use rp.ils(k=10, sim='cooccurrence', history=...) (a metric name cannot carry a table)
    """
    needed = needed_tables(spec)
    args = [f"k={spec.k}"] if spec.k is not None else []
    args += [f"{p}={v!r}" for p, v in spec.params.items() if v != spec.PARAMS[p].default]
    args += [f"{n}=..." for n in needed]
    return (f"{spec.name} needs {' and '.join(n + '=' for n in needed)}: use rp.{spec.NAME}({', '.join(args)}) "
            "(a metric name cannot carry a table)")


# the public constructors: rp.novelty(k=10, history=train)
catalog_coverage, entropy, gini, exposure_gini = CatalogCoverage, Entropy, Gini, ExposureGini
arp, aplt, aclt, pop_reo, pop_rsp = ARP, APLT, ACLT, PopREO, PopRSP
novelty, epc, efd, ils, diversity, serendipity = Novelty, EPC, EFD, ILS, Diversity, Serendipity
distributional_coverage = Entropy

__all__ = [
    "BEYOND", "BY_NAME", "NEED_TABLES", "aclt", "aplt", "arp", "catalog_coverage", "distributional_coverage", "diversity", "efd", "entropy",
    "epc", "exposure_gini", "gini", "ils", "needed_tables", "needs_tables", "novelty", "pop_reo", "pop_rsp", "serendipity",
]
