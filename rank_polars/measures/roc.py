"""scikit-learn's ranking metrics per query: ROC AUC, coverage error and label ranking loss.

scikit-learn scores each row of a matrix (``roc_auc_score``, ``coverage_error``); here each
ranking is one row: its items, their scores (higher first) and relevant or not (``grade > 0``,
or ``grade >= rel``; an unjudged or non-relevant item is a negative).  Tied scores are read
through :class:`rank_polars.formula.tree.TieSum` (by position no two rows tie): the mean
ordinal rank of a tie, ``TieSum(rank) / TieSum(1)``, is its mid-rank, and its last rank is the
mid-rank plus half the tie's width.
"""

from __future__ import annotations

from rank_polars.formula import tree as d
from rank_polars.measures.base import REL, Measure


def _tie_count() -> d.Node:
    return d.TieSum(d.Lit(1.0))


def _mid_rank() -> d.Node:
    """The mean of the ordinal ranks of the row's tie (the row's rank when no other row ties it)."""
    return d.TIE


def _last_of_tie() -> d.Node:
    """The last ordinal rank of the row's tie: the items scored at least as high as the row."""
    return _mid_rank() + (_tie_count() - 1.0) / 2.0


class AUC(Measure):
    """auc = (relevant-above-non-relevant pairs + half the tied pairs) / (relevant x non-relevant items of the list).

    The area under the ROC curve of one ranking, scikit-learn's ``roc_auc_score`` on its items
    (Mann-Whitney's U with mid-ranks): the share of (relevant, non-relevant) pairs of the list
    that the scores order correctly, a tie counting half.  The list's own items only (a relevant
    judgment never retrieved is not a pair); 0 when the list has no relevant or no non-relevant
    item, where scikit-learn raises an error.

    >>> import polars as pl, rank_polars as rp
    >>> run = pl.DataFrame({"query": ["q"] * 4, "item": list("abcd"), "score": [0.1, 0.4, 0.35, 0.8],
    ...                     "relevance": [0, 0, 1, 1]})
    >>> rp.evaluate(run, ["auc"])  # roc_auc_score([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    shape: (1, 2)
    ┌─────────┬──────┐
    │ queries ┆ auc  │
    │ ---     ┆ ---  │
    │ u32     ┆ f64  │
    ╞═════════╪══════╡
    │ 1       ┆ 0.75 │
    └─────────┴──────┘
    """

    NAME = "auc"
    ALIASES = ("roc_auc",)
    PARAMS = {"rel": REL}
    SUPPORTS_CUTOFF = False

    def value(self) -> d.Node:
        rel = self.relevant()
        n_rel = d.row_sum(d.ind(rel))
        # the relevant items' mid-ranks counted from the bottom, N + 1 - mid-rank
        ranks_from_below = n_rel * (d.N_RET + 1.0) - d.row_sum(d.when(rel, _mid_rank(), 0.0))
        pairs_won = ranks_from_below - n_rel * (n_rel + 1.0) / 2.0
        return d.safe_div(pairs_won, n_rel * (d.N_RET - n_rel))


class CoverageError(Measure):
    """coverage_error = the items scored at least as high as the lowest-scored relevant item.

    scikit-learn's ``coverage_error`` per ranking: how far down the list one must read to see
    every relevant item it holds, a tie with the last of them read whole; 0 without a relevant
    item (as scikit-learn).  Lower is better.

    >>> import polars as pl, rank_polars as rp
    >>> run = pl.DataFrame({"query": ["q1"] * 3 + ["q2"] * 3, "item": list("abcabc"),
    ...                     "score": [0.75, 0.5, 1.0, 1.0, 0.2, 0.1], "relevance": [1, 0, 0, 0, 0, 1]})
    >>> rp.evaluate(run, ["coverage_error"])  # scikit-learn's docstring: 2.5
    shape: (1, 2)
    ┌─────────┬────────────────┐
    │ queries ┆ coverage_error │
    │ ---     ┆ ---            │
    │ u32     ┆ f64            │
    ╞═════════╪════════════════╡
    │ 2       ┆ 2.5            │
    └─────────┴────────────────┘
    """

    NAME = "coverage_error"
    PARAMS = {"rel": REL}
    SUPPORTS_CUTOFF = False
    HIGHER_IS_BETTER = False

    def value(self) -> d.Node:
        return d.row_max(d.when(self.relevant(), _last_of_tie(), 0.0))


class LabelRankingLoss(Measure):
    """label_ranking_loss = (relevant, non-relevant) pairs with the relevant item scored no higher / (relevant x non-relevant items of the list).

    scikit-learn's ``label_ranking_loss`` per ranking: the share of pairs the scores order
    wrongly, a tie counting as wrong (where ``auc`` counts it half); 0 when the list has no
    relevant or no non-relevant item, as scikit-learn.  Lower is better.  For a relevant item,
    the non-relevant ones scored at least as high are the items through the end of its tie less
    the relevant ones there (a running count through the tie,
    :class:`~rank_polars.formula.tree.TieMax`).

    >>> import polars as pl, rank_polars as rp
    >>> run = pl.DataFrame({"query": ["q"] * 3, "item": list("abc"), "score": [0.25, 0.5, 0.5],
    ...                     "relevance": [1, 0, 1]})
    >>> rp.evaluate(run, ["label_ranking_loss", "auc"])  # label_ranking_loss([[1, 0, 1]], [[0.25, 0.5, 0.5]])
    shape: (1, 3)
    ┌─────────┬────────────────────┬──────┐
    │ queries ┆ label_ranking_loss ┆ auc  │
    │ ---     ┆ ---                ┆ ---  │
    │ u32     ┆ f64                ┆ f64  │
    ╞═════════╪════════════════════╪══════╡
    │ 1       ┆ 1.0                ┆ 0.25 │
    └─────────┴────────────────────┴──────┘
    """

    NAME = "label_ranking_loss"
    PARAMS = {"rel": REL}
    SUPPORTS_CUTOFF = False
    HIGHER_IS_BETTER = False

    def value(self) -> d.Node:
        rel = self.relevant()
        n_rel = d.row_sum(d.ind(rel))
        relevant_through_tie = d.TieMax(d.Cum(d.ind(rel)))
        wrong = d.row_sum(d.when(rel, _last_of_tie() - relevant_through_tie, 0.0))
        return d.safe_div(wrong, n_rel * (d.N_RET - n_rel))
