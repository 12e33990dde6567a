"""Compatibility (:mod:`rank_polars.measures.compat`) in Polars: set-based, lazy, no loop per query.

An item in both the ranking and the ideal enters their overlap at the depth ``m = max(rank, ideal
rank)`` and stays in it to ``D``, so ``rbo * sum_{i<=D} p^(i-1)`` is the sum over such items of
``S(D) - S(m - 1)``, ``S(n) = sum_{i<=n} p^(i-1) / i``; the ideal's overlap with itself is the
same sum over its ``R`` ranks, ``R S(D) - C(R)`` with ``C(r) = sum_{j<r} S(j)``.  ``S``, ``C``
and the normaliser ``W(n) = sum_{i<=n} p^(i-1)`` are one small table (n = 0 .. the deepest D),
built once per call as running sums over an integer range and joined; the ideal rank of a
retrieved relevant item of grade g is (the judgments of grade > g) + (the retrieved items of
grade g ranked above it) + 1.
"""

from __future__ import annotations

import polars as pl

from rank_polars.engines.base import FamilyFrames, Outputs
from rank_polars.engines.polars_engine import ordered_sum
from rank_polars.plan import GRADE, ITEM, Q, RANK

N, M, D = "__rp_n", "__rp_m", "__rp_depth"  # a depth of the table; an item's entry depth; a ranking's D
LEN, R, ABOVE, HITS = "__rp_len", "__rp_r", "__rp_above", "__rp_hits"


def persistences(outputs: Outputs) -> list[float]:
    """The distinct ``p`` of the requested specs, in the order first requested: one column of
    the table each."""
    return list(dict.fromkeys(float(spec.params["p"]) for _, spec in outputs))


def depth_table(depths: pl.LazyFrame, ps: list[float]) -> pl.LazyFrame:
    """``N`` = 0 .. the largest ``D`` of ``depths``, with ``S{i}``, ``C{i}`` and ``W{i}`` for each
    persistence ``ps[i]`` (the module docstring), each a running sum from 0 in order of ``N``.

    >>> table = depth_table(pl.LazyFrame({D: [3]}), [0.5]).collect()
    >>> table.get_column("__rp_s0").to_list(), table.get_column("__rp_c0").to_list()
    ([0.0, 1.0, 1.25, 1.3333333333333333], [0.0, 0.0, 1.0, 2.25])
    """
    deepest = pl.col(D).max().fill_null(0)
    table = depths.select(pl.int_range(0, deepest + 1, dtype=pl.Int64).alias(N))
    i = pl.col(N)
    columns = []
    for j, p in enumerate(ps):
        weight = pl.when(i > 0).then(pl.lit(p, pl.Float64).pow(i - 1)).otherwise(0.0)
        s = (weight / pl.when(i > 0).then(i).otherwise(1).cast(pl.Float64)).cum_sum()
        columns += [s.alias(f"__rp_s{j}"), (s.cum_sum() - s).alias(f"__rp_c{j}"), weight.cum_sum().alias(f"__rp_w{j}")]
    return table.with_columns(columns)


def judgments(frames: FamilyFrames, run: pl.LazyFrame) -> tuple[pl.LazyFrame, list[str]]:
    """The relevant judgments (grade > 0) and the columns that key them: the query's (``Q``)
    from the call's qrels, else each ranking's own relevant rows (the run's labels)."""
    if frames.qrels is not None:
        judged = frames.qrels.filter(pl.col(GRADE) > 0).group_by(Q, ITEM).agg(pl.col(GRADE).max())
        return judged, [Q]
    return run.filter(pl.col(GRADE) > 0).select(*frames.keys, ITEM, GRADE), list(frames.keys)


def polars_values(outputs: Outputs, frames: FamilyFrames) -> pl.LazyFrame:
    """One row per ranking with a relevant item retrieved (the others score 0, the family's
    ``ABSENT``): the keys and one column per label."""
    keys = frames.keys
    evaluated = frames.universe.lazy().select(keys)
    run = frames.run.join(evaluated, on=keys, how="semi", nulls_equal=True)
    judged, by = judgments(frames, run)
    # R, and per grade the judgments above it (of a higher grade)
    grades = judged.group_by(*by, GRADE).agg(pl.len().alias(LEN))
    grades = grades.with_columns(
        (pl.col(LEN).cum_sum().over(by, order_by=GRADE, descending=True) - pl.col(LEN)).alias(ABOVE),
        pl.col(LEN).sum().over(by).alias(R))
    per_query = grades.group_by(by).agg(pl.col(R).first())
    # the run's retrieved relevant items with their grade and ideal rank
    hits = run.select(*keys, ITEM, RANK).join(judged, on=[*by, ITEM]) if by == [Q] else \
        run.filter(pl.col(GRADE) > 0).select(*keys, ITEM, RANK, GRADE)
    hits = hits.join(grades.select(*by, GRADE, ABOVE), on=[*by, GRADE])
    ideal = pl.col(ABOVE) + pl.col(RANK).rank("ordinal").over(*keys, GRADE).cast(pl.Int64)
    hits = hits.with_columns(pl.max_horizontal(pl.col(RANK), ideal).alias(M))
    # per ranking with a hit: its length n (its deepest rank: a gap in positions is an unlogged
    # item), R, and D = max(n, R)
    lengths = run.group_by(keys).agg(pl.col(RANK).max().alias(LEN))
    rankings = (hits.group_by(keys).agg(pl.len().alias(HITS))
                .join(lengths, on=keys, nulls_equal=True)
                .join(per_query, on=by, nulls_equal=True)
                .with_columns(pl.max_horizontal(LEN, R).alias(D)))
    ps = persistences(outputs)
    table = depth_table(rankings, ps)
    # each hit's S(m - 1), summed per ranking in rank order (the same bits every run)
    entered = hits.with_columns((pl.col(M) - 1).alias(N)).join(table, on=N)
    sums = entered.group_by(keys).agg(ordered_sum(pl.col(f"__rp_s{j}"), RANK).alias(f"__rp_e{j}")
                                      for j in range(len(ps)))
    at_d = table.rename({N: D})
    at_r = table.select(pl.col(N).alias(R), *(pl.col(f"__rp_c{j}").alias(f"__rp_cr{j}") for j in range(len(ps))))
    out = (rankings.join(sums, on=keys, nulls_equal=True).join(at_d, on=D).join(at_r, on=R))
    values = []
    for label, spec in outputs:
        j = ps.index(float(spec.params["p"]))
        s_d = pl.col(f"__rp_s{j}")
        overlap = pl.col(HITS) * s_d - pl.col(f"__rp_e{j}")  # rbo(ranking, ideal) * W(D)
        best = pl.col(R) * s_d - pl.col(f"__rp_cr{j}")  # rbo(ideal, ideal) * W(D)
        value = overlap / (best if spec.params["normalize"] else pl.col(f"__rp_w{j}"))
        values.append(value.alias(label))
    return out.select(*keys, *values)


__all__ = ["depth_table", "judgments", "persistences", "polars_values"]
