"""ndeval's greedy ideal ranking, from the judgments alone, in both engines' forms:
:func:`ideal_gains` (NumPy steps over all queries at once: the Polars engine's, and the driver's
in the DuckDB and Spark engines) and :func:`ideal_sql` (the same steps as a recursive CTE,
``to_sql``'s form); :func:`nrbp_depth`, how deep nNRBP's ideal must go.
"""

from __future__ import annotations

import math
from typing import Callable

import polars as pl

from rank_polars.families.diversity.names import G, POS, SUB
from rank_polars.plan import ITEM, Q


#: ndeval's default depth for the ideal of nNRBP: the whole list; a tail whose weights
#: sum below this fraction of the first rank's cannot change a double
_TAIL = 1e-17


def subtopic_code(frame: pl.DataFrame) -> pl.Expr:
    """Each row's subtopic (``SUB``) as an integer from 0, in the subtopics' order: an integer
    subtopic less the smallest when they span fewer codes than ``frame`` has rows (a dense
    rank sorted 3.1M rows for 0.08-0.1 s), else the dense rank.

    >>> frame = pl.DataFrame({SUB: [7, 5, 7]})
    >>> frame.select(subtopic_code(frame)).to_series().to_list()
    [2, 0, 2]
    """
    dtype = frame.schema[SUB]
    if dtype.is_integer() and dtype != pl.UInt64:
        lo, hi = frame.select(pl.col(SUB).min().alias("lo"), pl.col(SUB).max().alias("hi")).row(0)
        if lo is not None and hi - lo < frame.height:
            return pl.col(SUB).cast(pl.Int64) - lo
    return pl.col(SUB).rank("dense").cast(pl.Int64) - 1


def ideal_gains(pairs: pl.DataFrame, alpha: float, depth: int | None, query: str = Q,
                repeated: Callable[[], None] | None = None) -> pl.DataFrame:
    """``query, POS, G``: ndeval's greedy ideal ranking of each query's relevant items, to
    ``depth`` (``pairs``: ``query, SUB, ITEM``).  ``repeated`` is called (to raise) when a row
    of ``pairs`` is there twice: neighbours in the rows sorted below, a check for free.

    At each rank, every unplaced item scores the sum of the gains its subtopics still carry
    (1, times 1 - alpha per placed item relevant to it, multiplied rank by rank and summed in
    subtopic order, as ndeval); the best item of each query is placed (ties: the larger item
    id as text, ndeval's strcmp), then its subtopics' gains decay.  Items relevant to nothing
    add 0 and are left out.

    It depends on the judgments alone, so it is computed once per query (not per ranking),
    and only ``depth`` steps run (the cutoff, not the judgment depth).  Each step is a few
    array passes over all queries at once (segment sums and maxima over the (query, item,
    subtopic) rows sorted once); the placed items' rows leave the arrays after each step, so a
    step costs the rows still unplaced, and a query whose relevant items are all placed costs
    nothing more.

    >>> pairs = pl.DataFrame({Q: ["t"] * 4, SUB: [1, 2, 1, 3], ITEM: ["a", "a", "b", "c"]})
    >>> ideal_gains(pairs, 0.5, None).rows()
    [('t', 1, 2.0), ('t', 2, 1.0), ('t', 3, 0.5)]
    """
    import numpy as np

    empty = pl.DataFrame(schema={query: pairs.schema[query], POS: pl.Int64, G: pl.Float64})
    if not pairs.height or depth == 0:
        return empty
    # items in the order of their text: a query's last candidate is then the larger docno as
    # ndeval's strcmp has it ("9" above "10"; an integer sort put 10 first and built another ideal)
    text = pl.col(ITEM) if pairs.schema[ITEM] == pl.String else pl.col(ITEM).cast(pl.String)
    rows = pairs.select(query, SUB, ITEM).sort(query, text, SUB)
    new_query = pl.col(query).ne_missing(pl.col(query).shift())
    codes = rows.select(
        new_query.cum_sum().cast(pl.Int64).sub(1).alias("q"),
        (new_query | pl.col(ITEM).ne_missing(pl.col(ITEM).shift())).cum_sum().cast(pl.Int64).sub(1).alias("p"),
        # a (query, subtopic) id: the query's code and the subtopic's code over all rows
        subtopic_code(pairs).alias("s"),
    )
    query_ids = rows[query].filter(rows.select(new_query).to_series())
    q, pair, sub = (codes[c].to_numpy() for c in ("q", "p", "s"))
    if repeated is not None and bool(((pair[1:] == pair[:-1]) & (sub[1:] == sub[:-1])).any()):
        repeated()
    subs = int(sub.max()) + 1
    group = q * subs + sub
    if len(query_ids) * subs > 4 * len(group) + 1024:  # sparse subtopic codes: compact the ids
        group = np.unique(group, return_inverse=True)[1].astype(np.int64)
    seen = np.zeros(int(group.max()) + 1, dtype=np.int64)
    most = int(np.bincount(pair).size) if depth is None else depth
    # (1 - alpha)^c by repeated multiplication, as ndeval's gains decay
    powers = np.empty(min(most, len(pair)) + 1)
    powers[0] = 1.0
    for i in range(1, len(powers)):
        powers[i] = powers[i - 1] * (1.0 - alpha)
    out_q, out_pos, out_g = [], [], []
    placed = np.zeros(int(pair[-1]) + 1, dtype=bool)
    rank = 0
    while len(pair) and rank < most:
        rank += 1
        new_pair = np.r_[True, pair[1:] != pair[:-1]]
        pair_start = np.flatnonzero(new_pair)
        score = np.add.reduceat(powers[seen[group]], pair_start)
        pair_q = q[pair_start]
        query_start = np.flatnonzero(np.r_[True, pair_q[1:] != pair_q[:-1]])
        best = np.maximum.reduceat(score, query_start)
        sizes = np.diff(np.r_[query_start, len(pair_start)])
        # the last candidate of a query is its largest item (its pairs are sorted by the items' text)
        candidate = np.where(score == np.repeat(best, sizes), np.arange(len(pair_start)), -1)
        picked = np.maximum.reduceat(candidate, query_start)
        out_q.append(pair_q[picked])
        out_pos.append(np.full(len(picked), rank, dtype=np.int64))
        out_g.append(score[picked])
        # a row is placed when its pair (a global code) is: a lookup, not a cumsum over the rows
        placed[pair[pair_start[picked]]] = True
        placed_row = placed[pair]
        # one placed item per query, and a (query, subtopic) belongs to one query: no index repeats
        seen[group[placed_row]] += 1
        keep = ~placed_row
        q, pair, group = q[keep], pair[keep], group[keep]
    if not out_q:
        return empty
    out_q_all, out_pos_all = np.concatenate(out_q), np.concatenate(out_pos)
    order = np.lexsort((out_pos_all, out_q_all))
    return pl.DataFrame({query: query_ids.gather(out_q_all[order]), POS: out_pos_all[order],
                         G: np.concatenate(out_g)[order]})


def ideal_table(pairs: pl.DataFrame, alpha: float, depth: int | None) -> pl.DataFrame:
    """:func:`ideal_gains` as the SQL statements join it: ``q, pos, g`` (an engine computes it on
    its driver from the relevant pairs its database selected, ``FamilySql.on_driver``)."""
    ideal = ideal_gains(pairs, alpha, depth)
    return ideal.select(pl.col(Q).alias("q"), pl.col(POS).alias("pos"), pl.col(G).alias("g"))


def nrbp_depth(beta: float, most: int) -> int | None:
    """How deep nNRBP's ideal must go: past it, ``beta^(i-1) * most`` summed is below 1e-17
    of the first rank's weight, so the double sum cannot change (None: the whole list)."""
    if beta >= 1.0:
        return None
    if beta <= 0.0:
        return 1
    return int(math.ceil(math.log(_TAIL * (1.0 - beta) / max(most, 1)) / math.log(beta))) + 2


def ideal_sql(pairs: str, alpha: float, depth: int | None) -> str:
    """The greedy ideal as a recursive CTE body over ``pairs`` (``Q, SUB, ITEM``), the state
    ``__rp_state(q, item, subs, ws, step, picked, g)``: one row per relevant (query, item),
    its subtopics in order (``subs``) and the gains they still carry (``ws``).  Each recursion
    step is two set operations over all queries at once, as :func:`ideal_gains`: a group-by
    gives each query's best unplaced item (its gains summed in subtopic order, a left fold as
    ndeval adds them; the largest (gain, item's text) pair, so ties go to the larger item id
    as text, ndeval's strcmp), and a
    join hands it to the query's other unplaced items, whose gains in its subtopics are
    multiplied by ``1 - alpha`` (repeated multiplication, as ndeval).  A step reads only the
    items still unplaced, and the recursion stops after ``depth`` steps or when none is left.
    A placed item's row carries ``picked``, its rank (``step``) and its gain (``g``).

    Measured at 2M run rows (CPU time): a third of one window per step over the unplaced
    items, a fifth of three windows per step over (query, item, subtopic) rows."""
    from rank_polars.engines.sql_engine import quote

    q, sub, item = quote(Q), quote(SUB), quote(ITEM)
    stop = f" AND step < {depth}" if depth is not None else ""
    return (
        f"SELECT {q} AS q, {item} AS item, LIST({sub} ORDER BY {sub}) AS subs, LIST(1.0::DOUBLE) AS ws, 0 AS step,"
        f" FALSE AS picked, 0.0::DOUBLE AS g FROM {pairs} GROUP BY {q}, {item}"
        " UNION ALL"
        " SELECT s.q, s.item, s.subs, list_transform(s.ws, lambda x, i: CASE WHEN list_contains(b.best.subs, s.subs[i])"
        f" THEN x * {1.0 - alpha!r} ELSE x END), s.step + 1, s.item = b.best.item, b.best.score"
        " FROM __rp_state AS s JOIN (SELECT q, MAX({'score': list_reduce(ws, lambda a, b: a + b),"
        f" 'text': CAST(item AS VARCHAR), 'item': item, 'subs': subs}}) AS best FROM __rp_state"
        f" WHERE NOT picked{stop} GROUP BY q) AS b ON s.q = b.q"
        " WHERE NOT s.picked"
    )
