"""trec_eval's experimental gain measures: binG, G, ndcg_rel and Rndcg (``m_binG.c``,
``m_G.c``, ``m_ndcg_rel.c``, ``m_Rndcg.c``).

Spellings (for the trec_eval name table): ``binG`` -> ``bing`` (``-l N``: ``bing(rel=N)``);
``G`` -> ``g``, ``G.1=3,2=9`` -> ``g(gains=1:3;2:9)``; ``ndcg_rel`` -> ``ndcg_rel``,
``ndcg_rel.1=3`` -> ``ndcg_rel(gains=1:3)``; ``Rndcg`` -> ``rndcg`` (``-l N``: ``rndcg(rel=N)``,
``Rndcg.1=3`` -> ``rndcg(gains=1:3)``).  G and ndcg_rel ignore ``-l`` (trec_eval reads gains,
not the relevance level); binG reads it, and Rndcg only to be 0 when no judgment is relevant.  Names are case-insensitive, and ``g`` /
``bing`` collide with no other name.

G, ndcg_rel and Rndcg compare each retrieved row with the *ideal ranking at the same rank*: the
formula reads it through :class:`rank_polars.formula.tree.IdealCum`, the ideal's running sum joined
onto the contributing rows by rank (set-based in both engines).
"""

from __future__ import annotations

from rank_polars.formula import tree as d
from rank_polars.measures.base import REL, Measure
from rank_polars.measures.gain_map import GAINS, ideal_rank, mapped_gain, nonzero


class BinG(Measure):
    """binG = (1/R) sum over relevant rows of 1 / log2(2 + non-relevant rows above it).

    Unjudged rows count as non-relevant; 0 when no relevant row is retrieved (trec_eval).
    """

    NAME = "bing"
    PARAMS = {"rel": REL}
    SUPPORTS_CUTOFF = False

    def value(self) -> d.Node:
        rel = self.relevant()
        nonrel_above = d.RANK - d.Cum(d.ind(rel))
        total = d.row_sum(d.when(rel, 1.0 / d.log2(2.0 + nonrel_above), 0.0))
        return d.safe_div(total, self.n_relevant())


class _IdealGain(Measure):
    PARAMS = {"gains": GAINS}
    SUPPORTS_CUTOFF = False

    def row_gain(self) -> d.Node:
        return mapped_gain(self.params["gains"])

    def contributes(self) -> d.Node:
        return nonzero(self.row_gain())

    def n_ideal(self) -> d.Node:
        """Judgments with a positive gain (the length of the ideal ranking)."""
        return d.judgment_sum(d.ind(self.row_gain() > 0))

    def at_rank(self, arg: d.Node) -> d.Node:
        """Sum of ``arg`` over the ideal ranking's first ``rank`` positions."""
        return d.IdealCum(arg, self.row_gain(), d.RANK)


class G(_IdealGain):
    """G = (1/sum of the ideal gains) * sum over rows i with a gain of gain_i / log2(2 + C_i - S_i).

    S_i: the gains of the rows up to i; C_i: the "cost" up to i, the sum over positions
    j <= i of max(ideal gain at j, 1) (the ideal holding the judgments with a positive gain,
    by gain descending; past its end a position costs 1).  0 when no judgment has a positive
    gain.  Gains are the grades, or a trec_eval gain map (``gains=``).
    """

    NAME = "g"

    def value(self) -> d.Node:
        gain = self.row_gain()
        ideal_gain = mapped_gain(self.params["gains"], clip=True)
        cost = d.RANK + self.at_rank(d.when(ideal_gain > 1, ideal_gain - 1.0, 0.0))
        got = d.Cum(gain)
        total = d.row_sum(d.when(nonzero(gain), gain / d.log2(2.0 + cost - got), 0.0))
        return d.safe_div(total, d.judgment_sum(ideal_gain))


class NDCGRel(_IdealGain):
    """ndcg_rel = nDCG averaged over the relevant (positive gain) items.

    Each retrieved item with a positive gain at rank i adds DCG@i / IDCG@i; each one not
    retrieved adds DCG / IDCG of the whole ranking; the sum is divided by the number of
    judgments with a positive gain (trec_eval's ``m_ndcg_rel.c``; IDCG@i stops growing past
    the ideal's end).  Gains are the grades, or a trec_eval gain map (``gains=``).
    """

    NAME = "ndcg_rel"

    def value(self) -> d.Node:
        gain = self.row_gain()
        ideal_gain = mapped_gain(self.params["gains"], clip=True)
        irank = ideal_rank(self.params["gains"])
        term = gain / d.log2(d.RANK + 1.0)
        dcg_at = d.Cum(term)
        idcg_at = self.at_rank(d.when(ideal_gain > 0, ideal_gain / d.log2(irank + 1.0), 0.0))
        at_rel = d.row_sum(d.when(gain > 0, d.safe_div(dcg_at, idcg_at), 0.0))
        idcg = d.judgment_sum(d.when(ideal_gain > 0, ideal_gain / d.log2(irank + 1.0), 0.0))
        missed = self.n_ideal() - d.row_sum(d.ind(gain > 0))
        total = at_rel + missed * d.safe_div(d.row_sum(term), idcg)
        return d.safe_div(total, self.n_ideal())


_PAST_THE_END = float(2**31 - 1)  # an ideal position no ranking reaches: IdealCum reads the whole sum


class RNDCG(_IdealGain):
    """Rndcg = nDCG averaged at the "R levels": the cutoffs c where the ideal ranking's gain
    changes (the last position of each gain level among the positive gains).

    At such a c the point is DCG@min(c, n) / IDCG@c; when the ranking is longer than the
    ideal by two or more (n > P + 1, P judgments with a positive gain) one more point,
    DCG@n / IDCG@P, is averaged in (trec_eval's ``m_Rndcg.c`` loop adds it only then).  0 when
    no judgment is relevant (``rel``: trec_eval's ``-l``); gains are the grades, or a trec_eval
    gain map (``gains=``).

    As a formula: the sum over the points is a sum over the rows of each row's DCG term times
    the sum of 1/IDCG@c over the points c at or after its rank, read off the ideal ranking.
    """

    NAME = "rndcg"
    PARAMS = {"gains": GAINS, "rel": REL}

    def value(self) -> d.Node:
        gain = self.row_gain()
        order = gain
        ideal_gain = mapped_gain(self.params["gains"], clip=True)
        irank = ideal_rank(self.params["gains"])

        def ideal_at(arg: d.Node, at: d.Operand) -> d.Node:
            return d.IdealCum(arg, order, d.wrap(at))

        # over the ideal ranking, at its position c: IDCG@c, and whether the gain changes after c
        idcg_here = ideal_at(ideal_gain / d.log2(irank + 1.0), d.IRANK)
        gain_next = ideal_at(ideal_gain, d.IRANK + 1) - ideal_at(ideal_gain, d.IRANK)
        tol = 1e-9 * (1.0 + ideal_gain)
        point = (gain_next - ideal_gain > tol) | (ideal_gain - gain_next > tol)
        weight = d.when(point, 1.0 / idcg_here, 0.0)
        # rows: DCG term times the weights of the points at or after the row's rank
        later = ideal_at(weight, _PAST_THE_END) - ideal_at(weight, d.RANK - 1)
        term = gain / d.log2(d.RANK + 1.0)
        at_points = d.row_sum(d.when(nonzero(gain), term * later, 0.0))
        n_points = d.row_max(ideal_at(d.ind(point), _PAST_THE_END))
        idcg = d.judgment_sum(d.when(ideal_gain > 0, ideal_gain / d.log2(irank + 1.0), 0.0))
        extra = d.ind(d.N_RET > self.n_ideal() + 1.0)
        total = at_points + extra * d.safe_div(d.row_sum(term), idcg)
        return d.when(self.n_relevant() > 0, d.safe_div(total, n_points + extra), 0.0)
