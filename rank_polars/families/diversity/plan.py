"""The Polars computation of the diversity measures: :func:`polars_values` (the family hook), one
:func:`run_values` per set of shared parameters, in ranges of queries past :data:`RANGE_ROWS` run
rows.  The run's rows relevant to a subtopic are joined once and sorted by ranking codes
(:func:`ranking_codes`, :func:`_ranked_rows`), and every sum is a left fold over consecutive rows
(:func:`segment_sums`); the greedy ideal (:mod:`rank_polars.families.diversity.ideal`) runs on a
thread beside them.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Sequence

import polars as pl

from rank_polars.errors import RankPolarsError
from rank_polars.families.diversity.checks import (_in_memory, _subtopic_table, check_subtopics, relevant_expr,
                                                   relevant_pairs, warn_unjudged)
from rank_polars.families.diversity.ideal import ideal_gains, nrbp_depth, subtopic_code
from rank_polars.families.diversity.names import (C, G, GC, IDEAL_KINDS, ITEMH, LIST, POS, QC, SUBC, _key,
                                                  _tables)
from rank_polars.formula.tree import powers_of
from rank_polars.measures.diversity import ideal_ideal, ndeval_discount
from rank_polars.plan import ITEM, Q, RANK


def _products(factor: float, n: int) -> list[float]:
    """``factor^0 .. factor^(n-1)`` by repeated multiplication, as ndeval's loops compute them
    (``pow`` can differ from the product in the last bit)."""
    out = [1.0]
    for _ in range(n - 1):
        out.append(out[-1] * factor)
    return out


def _folded(frame: pl.DataFrame, new: Any, kind: str, k: int | None, beta: float | None, rank: str,
            ranks: int | None) -> Any:
    """Each list's sum behind ``kind`` (``ranks``: see :func:`run_values`): ``frame`` holds the
    lists' rows, ``G`` at ``rank``, in rank order, ``new`` marks each list's first row; a row
    past the cutoff adds 0 (``x + 0.0 == x``).  The divisions are NumPy's: Polars divides a
    column of one row by multiplying with the divisor's reciprocal, another last bit."""
    import numpy as np

    gain = frame.get_column(G).to_numpy()
    at = frame.get_column(rank).to_numpy()
    if kind in ("dcg", "ndcg") and ranks is not None:
        term = gain * np.array([0.0] + [ndeval_discount(r) for r in range(1, ranks + 1)])[at]
    elif kind in ("dcg", "ndcg"):
        # Polars' log2 (ln(x) / ln(2)), the same discount as the plan's nDCG
        term = gain / frame.select((pl.col(rank) + 1).cast(pl.Float64).log(2)).to_series().to_numpy()
    elif kind in ("err", "nerr"):
        term = gain / at.astype(np.float64)
    elif ranks is not None:
        assert beta is not None
        term = gain * np.array(_products(beta, ranks))[at - 1]
    else:
        term = gain * powers_of(beta, int(at.max()) if len(at) else 0)[at - 1]
    if k is not None and kind not in ("nrbp", "nnrbp"):
        term = np.where(at <= k, term, 0.0)
    return segment_sums(new, term)


def segment_sums(new: Any, values: Any) -> Any:
    """The sum of each run of consecutive rows (``new`` marks a run's first row), added one by
    one in row order from 0.0, as ``SUM(x ORDER BY rank)`` and :func:`ordered_sum` add: one
    vectorised step per depth over the runs that long, so the cost is a few passes over the
    rows, with no group-by and no sort.

    >>> import numpy as np
    >>> segment_sums(np.array([True, False, False, True]), np.array([0.1, 0.2, 0.3, 1.0])).tolist()
    [0.6000000000000001, 1.0]
    """
    import numpy as np

    starts = np.flatnonzero(new)
    lengths = np.diff(np.append(starts, len(values)))
    out = np.zeros(len(starts))
    alive = np.arange(len(starts))
    depth = 0
    while len(alive):
        out[alive] += values[starts[alive] + depth]
        depth += 1
        alive = alive[lengths[alive] > depth]
    return out


def run_starts(*columns: Any) -> Any:
    """A boolean array marking the rows where any of the arrays ``columns`` differs from the row
    before (and the first row)."""
    import numpy as np

    new = np.zeros(len(columns[0]), dtype=bool)
    new[:1] = True
    for values in columns:
        new[1:] |= values[1:] != values[:-1]
    return new


def _starts(frame: pl.DataFrame, columns: Sequence[str]) -> Any:
    """A boolean array marking the rows where ``columns`` differ from the row before (and the first)."""
    changed = pl.any_horizontal([pl.col(c).ne_missing(pl.col(c).shift()) for c in columns])
    new = frame.select(changed).to_series().to_numpy().copy()
    if len(new):
        new[0] = True
    return new


def _since_run_start(order: Any, new: Any) -> Any:
    """``C`` of each row: in the rows taken in ``order`` (by list, subtopic and rank), its
    distance from the first row of its run (``new`` marks the runs' first rows), put back in the
    rows' own order."""
    import numpy as np

    seen = np.empty(len(order), dtype=np.int64)
    seen[order] = np.arange(len(order)) - np.flatnonzero(new)[np.cumsum(new) - 1]
    return seen


#: The most low bits :func:`_packed_ranked_rows` gives a row's subtopic and rank below its
#: ranking's code in one 64-bit word.
PACKED_BITS = 20


def ranking_codes(grouped: bool, queries: int) -> pl.Expr:
    """``LIST``: each ranking's exact code, ``GC * queries + QC`` (``grouped``: the keys hold
    more than the query), from the codes of its group (``GC``) and of its query (``QC``, one of
    ``queries``) joined to its rows.  Integers sort and compare at a fraction of the cost of
    the text ids, and unlike a hash of them two rankings never share one."""
    code = pl.col(QC).cast(pl.UInt64)
    return (pl.col(GC).cast(pl.UInt64) * queries + code if grouped else code).alias(LIST)


def _heads(lists: Any, keys: Sequence[str], groups: pl.DataFrame | None, queries: pl.DataFrame) -> pl.DataFrame:
    """``LIST``, ``QC`` and the keys of the rankings coded ``lists`` (:func:`ranking_codes`;
    ``groups`` with ``GC``, ``queries`` with ``QC``: each code is its row number)."""
    import numpy as np

    group, query = np.divmod(lists, np.uint64(max(queries.height, 1)))
    columns = {Q: queries.get_column(Q).gather(pl.Series(query))}
    if groups is not None:
        columns.update(groups.drop(GC)[pl.Series(group)].to_dict())
    return pl.DataFrame([pl.Series(LIST, lists, dtype=pl.UInt64), pl.Series(QC, query).cast(queries.schema[QC]),
                         *(columns[k].alias(k) for k in keys)])


def _ranked_rows(rows: pl.DataFrame, by_count: bool) -> tuple[pl.DataFrame, Any, Any, pl.DataFrame]:
    """``rows`` (``LIST``, ``RANK``, ``SUBC``) with ``C`` (the ranking's earlier rows relevant to
    the same subtopic); the order sorting them by list, subtopic and rank, and its first row of
    each (list, subtopic); and the rows sorted by list, rank and then descending ``C``
    (``by_count``) or subtopic."""
    packed = _packed_ranked_rows(rows, by_count)
    if packed is not None:
        return packed
    # C: in the rows sorted by (list, subtopic, rank), each row's distance from its run's
    # first (a window over (list, subtopic) costs three times as much)
    order = rows.select(pl.arg_sort_by(LIST, SUBC, RANK)).to_series().to_numpy()
    new = run_starts(rows.get_column(LIST).to_numpy()[order], rows.get_column(SUBC).to_numpy()[order])
    seen = _since_run_start(order, new)
    out = rows.with_columns(pl.Series(C, seen))
    ranked = (out.sort(LIST, RANK, C, descending=[False, False, True]) if by_count
              else out.sort(LIST, RANK, SUBC))
    return out, order, new, ranked


def _packed_ranked_rows(rows: pl.DataFrame, by_count: bool) -> tuple[pl.DataFrame, Any, Any, pl.DataFrame] | None:
    """:func:`_ranked_rows` by two sorts of one 64-bit word each: the ranking's code, shifted,
    and in its low bits the row's subtopic code and rank (then its rank and descending ``C``,
    or subtopic), all offset to start at 0.  A sort of one integer column costs ~0.1 s at 3.4M
    rows where the sort by three columns cost 0.28 s and the frame's sort 0.35 s (alpha_ndcg@20
    at 20M run rows).  None (the exact sorts then) when the codes need more than
    :data:`PACKED_BITS` bits or the word, a count outgrows its field (ranks repeated in a
    list)."""
    import numpy as np

    if not rows.height:
        return None
    rank, sub, lists = (rows.get_column(c).to_numpy() for c in (RANK, SUBC, LIST))
    r_lo, s_lo = int(rank.min()), int(sub.min())
    r_bits, s_bits = int(rank.max() - r_lo).bit_length(), int(sub.max() - s_lo).bit_length()
    # C < a list's rows of one subtopic <= its ranks, when they are distinct (checked below)
    low = r_bits + max(s_bits, r_bits)
    if low > PACKED_BITS or int(lists.max()).bit_length() + low > 64:
        return None
    u64 = np.uint64
    # (offset to 0, an int64's bits are the uint64's; the words are built in place)
    r, s = (rank - r_lo).view(u64), (sub - s_lo).view(u64)
    word = lists << u64(low)
    word |= s << u64(r_bits)
    word |= r
    order = pl.Series(word).arg_sort().to_numpy()
    new = run_starts(word[order] >> u64(r_bits))  # each sorted row's (list, subtopic)
    seen = _since_run_start(order, new)
    field = low - r_bits
    if int(seen.max()) >= 1 << field:
        return None
    np.left_shift(lists, u64(low), out=word)
    word |= r << u64(field)
    word |= (u64((1 << field) - 1) - seen.view(u64)) if by_count else s
    out = rows.with_columns(pl.Series(C, seen))
    return out, order, new, out.drop(SUBC)[pl.Series(word).arg_sort()]


def _count_repeats(shown: pl.DataFrame, heads: pl.DataFrame, depth: int | None, repeats: Any) -> None:
    """Hand ``repeats`` the keys and ``REPEATS`` (rows beyond each item's first) of the rankings
    showing an item twice among ``shown`` (one row per relevant ranked row: ``LIST``, ``RANK``,
    ``ITEMH``) to rank ``depth``; ``heads``: each ``LIST``'s keys.  Only the rows relevant to a
    subtopic are read, so only their repeats change a value, as the plan's contributing rows
    (the distinct count of items over every row cost ~0.8 s of ``alpha_ndcg@20``'s ~8 s at 20M
    rows); distinct words of (ranking, item hash) prove there is none."""
    import numpy as np

    from rank_polars.engines.base import REPEATS

    if depth is not None:
        shown = shown.filter(pl.col(RANK) <= depth)
    # a word that is a function of (ranking, item hash): distinct words prove distinct pairs (a
    # hash of the two as a struct cost twice as much)
    with np.errstate(over="ignore"):
        words = shown.get_column(LIST).to_numpy() * np.uint64(0x9E3779B97F4A7C15) ^ shown.get_column(ITEMH).to_numpy()
    if pl.Series(words).n_unique() == shown.height:
        return
    found = (shown.group_by(LIST, ITEMH).agg((pl.len() - 1).alias(REPEATS)).filter(pl.col(REPEATS) > 0)
             .group_by(LIST).agg(pl.col(REPEATS).sum()))
    if found.height:
        repeats(found.join(heads, on=LIST).select(*(c for c in heads.columns if c != LIST), REPEATS))


def _map_ia(by_sub: pl.DataFrame, new: Any, pairs: pl.DataFrame) -> Any:
    """MAP-IA's sum per list (``by_sub``: the rows sorted by list, subtopic and rank, ``new``
    marking each (list, subtopic)'s first row): each subtopic's AP, its precisions added in
    rank order over its R_s, then the APs added in subtopic order."""
    import numpy as np

    seen, rank = (by_sub.get_column(c).to_numpy().astype(np.float64) for c in (C, RANK))
    ap = segment_sums(new, (seen + 1.0) / rank)
    per_sub = pairs.group_by(QC, SUBC).agg(pl.len().cast(pl.Float64).alias("__R"))
    lists = (by_sub.filter(pl.Series(new)).select(LIST, QC, SUBC)
             .join(per_sub, on=[QC, SUBC], how="left", maintain_order="left"))
    # divided in NumPy: Polars multiplies a column of one row by the reciprocal of the divisor
    # (a range of one ranking gave another last bit than the whole log)
    return segment_sums(_starts(lists, [LIST]), ap / lists.get_column("__R").to_numpy())


def run_values(run: pl.LazyFrame, subtopics: pl.LazyFrame, keys: Sequence[str], outputs: Sequence[tuple[str, Any]],
               relevance: str, ranks: int | None = None, checked: bool = False,
               repeats: Any = None, repeat_depth: int | None = None,
               groups: pl.DataFrame | None = None, check_repeats: bool = False) -> pl.LazyFrame:
    """The keys and one column per ``(label, spec)``: every spec shares ``alpha``, ``rel``,
    ``judged_only`` and its judgments.  ``run``: keys, ``ITEM``, ``RANK`` (1, 2, ... per list);
    ``subtopics``: ``Q``, the spec's subtopic column, ``ITEM``, ``relevance``.

    ``ranks`` (the run's largest rank, known to ``rank-polars ndeval``): ndeval's own arithmetic
    for its bytes, where a last bit can move a printed digit: a run's gains ``(1 - alpha)^c`` and
    NRBP's ``beta^(r-1)`` by repeated multiplication, a rank's gains added in subtopic order.
    Otherwise ``pow``, and a rank's gains in ascending order (the same bits in every engine).
    ``checked``: the judgments have passed :func:`check_subtopics` (no repeated row).
    ``repeats`` (``FamilyFrames.repeats``): given, the items repeated among the run's relevant
    rows to rank ``repeat_depth`` are counted and handed to it (:func:`_count_repeats`).
    ``groups``: the distinct values of the keys but the query (only those columns) among the
    rankings evaluated (None: the run's), which give each ranking its code (:func:`ranking_codes`).
    ``check_repeats``: a (query, subtopic, item) read twice is refused here (:func:`check_subtopics`
    when the greedy ideal's sorted rows show one), before the run's repeats.

    The run's rows relevant to a subtopic are joined once and sorted (:func:`_ranked_rows`);
    every sum is then a left fold over consecutive rows in rank order (:func:`segment_sums`:
    ``SUM(x ORDER BY rank)``'s bits, at a fifth of the cost of a sort per group in a group-by)."""
    import numpy as np

    first = outputs[0][1]
    alpha, rel = first.params["alpha"], first.params["rel"]
    column = first.params["subtopic"]
    keys = list(keys)
    if first.params["judged_only"]:
        judged = subtopics.select(Q, ITEM).unique()
        run = (run.join(judged, on=[Q, ITEM], how="semi")
               .with_columns(pl.col(RANK).rank("ordinal").over(keys).cast(pl.Int64)))
    # the relevant pairs are few beside the judgments: read once, used by every part below;
    # a subtopic's code (its order among the query's subtopics) sorts as the subtopic does
    pairs_df = relevant_pairs(subtopics, column, relevance, rel, checked).collect().rechunk()
    # each query judged relevant its code QC (its row in queries), each group its GC: the join
    # below keeps integer codes, not the text ids, and each list's keys are looked up at the end
    queries = pairs_df.lazy().select(pl.col(Q).unique()).with_row_index(QC).collect()
    pairs_df = (pairs_df.lazy().join(queries.lazy(), on=Q).collect()
                .with_columns(subtopic_code(pairs_df).alias(SUBC)))
    by = [k for k in keys if k != Q]
    if by:
        groups = (groups if groups is not None else run.select(by).unique().collect()).with_row_index(GC)
    else:
        groups = None
    kinds = {spec.KIND for _, spec in outputs}
    hashed = [pl.col(ITEM).hash().alias(ITEMH)] if repeats is not None else []
    joined = run.select(*keys, ITEM, RANK).join(pairs_df.lazy().select(Q, ITEM, SUBC, QC), on=[Q, ITEM], how="inner")
    if groups is not None:  # (a ranking outside the groups evaluated is not evaluated)
        joined = joined.join(groups.lazy(), on=by, how="inner", nulls_equal=True)
    joined = (joined.select(pl.col(RANK).cast(pl.Int64), SUBC, *hashed, QC, ranking_codes(groups is not None, queries.height))
              .collect(engine="streaming")
              # one chunk: the streaming engine's 180 chunks made each sort below 3x slower
              .rechunk())
    # one thread beside the sorts and sums below, for the work that reads the judgments alone
    # (the greedy ideal's NumPy steps and |S|: they release the GIL); started after the join,
    # which keeps both cores busy, where the steps below leave one idle (alpha_ndcg@20 at 20M
    # rows: beside the join 7.0 -> 6.3 s; beside the sorts, in an interleaved A/B, 5.3 -> 4.95
    # s); a pool per call, whose thread ends with its jobs (a module-level one would be a dead
    # thread in a forked child)
    beside = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rank_polars_diversity")

    def sizes() -> pl.DataFrame:  # |S|, the query's subtopics with a relevant item
        # the distinct (query, subtopic) codes as one word each, counted per query (a group-by's
        # distinct count cost 0.15 s at 3.1M pairs, the words 0.075 s)
        width = int(pairs_df.get_column(SUBC).max() or 0) + 1
        words = pairs_df.select((pl.col(QC).cast(pl.UInt64) * width + pl.col(SUBC).cast(pl.UInt64)).unique())
        counts = np.bincount((words.to_series().to_numpy() // np.uint64(width)).astype(np.int64), minlength=queries.height)
        return pl.DataFrame({QC: pl.Series(np.arange(queries.height)).cast(queries.schema[QC]),
                             "__S": counts.astype(np.float64)})

    # the ideal first, the longer job, which the steps below wait for (|S| first cost it 0.28 s)
    size_job = beside.submit(sizes) if "nnrbp" in kinds else None
    ideal_job = None
    if kinds & IDEAL_KINDS:
        depth: int | None = max((spec.k or 0 for _, spec in outputs if spec.KIND in ("ndcg", "nerr")), default=0)
        if size_job is not None:  # nNRBP's depth bound reads the largest |S|
            most = size_job.result().get_column("__S").max() if pairs_df.height else 1
            deep = [nrbp_depth(spec.params["beta"], int(most or 1)) for _, spec in outputs if spec.KIND == "nnrbp"]
            depth = None if None in deep else max([depth or 0, *[d for d in deep if d is not None]])
        refuse = None
        if check_repeats:
            def refuse() -> None:
                check_subtopics(subtopics, column, relevance, read=relevant_expr(relevance, rel))
        ideal_job = beside.submit(ideal_gains, pairs_df, alpha, depth, QC, refuse)
    size_job = size_job or beside.submit(sizes)
    beside.shutdown(wait=False)  # the jobs run to their end
    # the rows by ranking, rank and (ndeval's command) subtopic or (otherwise) descending count
    rows, by_sub, new_sub, by_gain = _ranked_rows(joined, by_count=ranks is None)
    if ranks is None:
        # a rank's few subtopic terms added in ascending order, i.e. by descending count (the
        # powers of 1 - alpha fall as the count grows): the same bits whatever their order
        # (each power taken once, by the same kernel, and looked up: 3.4M pow calls cost 0.05 s)
        seen = by_gain.get_column(C).to_numpy()
        terms = powers_of(1.0 - alpha, int(seen.max()) + 1 if len(seen) else 1)[seen]
    else:
        most = int(rows.get_column(C).max() or 0) + 1
        terms = (by_gain.select(pl.col(C).replace_strict(list(range(most)), _products(1.0 - alpha, most),
                                                         return_dtype=pl.Float64)).to_series().to_numpy())
    lists_at, rank = (by_gain.get_column(c).to_numpy() for c in (LIST, RANK))
    new_list = run_starts(lists_at)
    seg = np.cumsum(new_list) - 1
    new_rank = run_starts(lists_at, rank)
    heads = _heads(lists_at[new_list], keys, groups, queries)
    if repeats is not None:
        try:
            _count_repeats(by_gain.filter(pl.Series(new_rank)), heads.select(LIST, *keys), repeat_depth, repeats)
        except RankPolarsError:
            if ideal_job is not None:  # a repeated judgment is refused first
                ideal_job.result()
            raise
    gains = by_gain.filter(pl.Series(new_rank)).select(LIST, RANK).with_columns(
        pl.Series(G, segment_sums(new_rank, terms)))
    gains_list = run_starts(lists_at[new_rank])
    ideal_df = None
    ideal_ranks: int | None = None
    if ideal_job is not None:
        ideal_df = ideal_job.result()  # sorted by query code, then ideal rank
        if ranks is not None:  # the ideal list's decays by the same products
            ideal_ranks = int(ideal_df.get_column(POS).max() or 0) + 1
    # one row per ranking with a relevant row: its keys, then one sum or count per measure
    table = heads.select(QC, *keys)
    ideal_cols = {}
    for i, (label, spec) in enumerate(outputs):
        kind, k = spec.KIND, spec.k
        beta = spec.params.get("beta")
        if kind in ("dcg", "ndcg", "err", "nerr", "nrbp", "nnrbp"):
            table = table.with_columns(pl.Series(f"__v{i}", _folded(gains, gains_list, kind, k, beta, RANK, ranks)))
        if kind in ("ndcg", "nerr", "nnrbp"):
            assert ideal_df is not None
            ideal_cols[f"__i{i}"] = (kind, k, beta)
        if kind == "p":
            hits = np.bincount(seg[rank <= k], minlength=len(table))
            table = table.with_columns(pl.Series(f"__v{i}", hits.astype(np.float64)))
        elif kind == "strec":
            # a subtopic's first row in the ranking is its earliest: it is within k when any is
            firsts = (by_gain.get_column(C).to_numpy() == 0) & (rank <= k)
            table = table.with_columns(pl.Series(f"__v{i}", np.bincount(seg[firsts], minlength=len(table))
                                                 .astype(np.float64)))
    if "map" in kinds:
        table = table.with_columns(pl.Series("__map", _map_ia(rows[by_sub], new_sub, pairs_df)))
    size = size_job.result()
    table = table.lazy().join(size.lazy(), on=QC, how="left")
    if ideal_cols:
        assert ideal_df is not None
        ideal_new = _starts(ideal_df, [QC])
        ideal = ideal_df.filter(pl.Series(ideal_new)).select(QC).with_columns(
            pl.Series(name, _folded(ideal_df, ideal_new, kind, k, beta, POS, ideal_ranks))
            for name, (kind, k, beta) in ideal_cols.items())
        table = table.join(ideal.lazy(), on=QC, how="left")
    sizes = sorted(int(x) for x in size.get_column("__S").unique().drop_nulls()) if ranks is not None else []
    values = []
    for i, (label, spec) in enumerate(outputs):
        kind, k = spec.KIND, spec.k
        v, s = pl.col(f"__v{i}") if kind != "map" else pl.col("__map"), pl.col("__S")
        if ranks is not None and kind in ("dcg", "err", "ndcg", "nerr"):
            # ndeval's: each list over its ideal ideal (|S| inside the sum), nDCG and nERR the
            # run's normalised value over the ideal list's, at depth 1 neither divided
            out, iv = v, pl.col(f"__i{i}")
            if k > 1:
                discount = "log2" if kind.endswith("dcg") else "rank"
                ideal_ideal_k = s.replace_strict(sizes, [ideal_ideal(alpha, k, discount, n) for n in sizes],
                                                  return_dtype=pl.Float64)
                out, iv = out / ideal_ideal_k, iv / ideal_ideal_k
            if kind in ("ndcg", "nerr"):
                out = pl.when(v > 0).then(out / iv).otherwise(0.0)
        elif kind == "dcg":
            out = v / (s * ideal_ideal(alpha, k, "log2")) if k > 1 else v
        elif kind == "err":
            out = v / (s * ideal_ideal(alpha, k, "rank")) if k > 1 else v
        elif kind in ("ndcg", "nerr", "nnrbp"):
            out = pl.when(v > 0).then(v / pl.col(f"__i{i}")).otherwise(0.0)
        elif kind == "nrbp":
            # ndeval's order: the factor over |S| first, then the sum times it
            out = v * (pl.lit(1.0 - (1.0 - alpha) * spec.params["beta"], pl.Float64) / s)
        elif kind == "p":
            out = v / (k * s)
        else:  # strec, map
            out = v / s
        values.append(out.fill_null(0.0).cast(pl.Float64).alias(label))
    return table.select(*keys, *values)


def polars_values(outputs: Sequence[tuple[str, Any]], frames: Any) -> pl.LazyFrame:
    """The family hook (:mod:`rank_polars.engines.base`): every requested diversity measure."""
    groups: dict[tuple[Any, ...], list[tuple[str, Any]]] = {}
    for label, spec in outputs:
        groups.setdefault(_key(spec), []).append((label, spec))
    ranges = _ranges(frames.universe)
    warned: set[int] = set()
    parts = []
    for same in groups.values():
        spec = same[0][1]
        # the checks and the relevant pairs read the table: once, into memory when it is small
        given = frames.source(spec, "subtopics")
        source = _in_memory(given)
        # the repeats among the judgments read: seen in the greedy ideal's sorted rows, where
        # there is one and one range (a hash and sort of their own cost 0.17 s at 3.1M of them)
        strict = frames.checks == "strict"
        in_ideal = len(ranges) == 1 and not strict and any(s.KIND in IDEAL_KINDS for _, s in same)
        table = _subtopic_table(source, spec, frames.columns, ranges, strict=strict, held=source is not given,
                                repeats=not in_ideal)
        key = id(spec.sources.get("subtopics"))
        if frames.qrels is None and key not in warned:
            # no qrels: the universe is the run's queries (with qrels, bind_subtopics compares them)
            warned.add(key)
            warn_unjudged([label for label, _ in _tables(outputs)[key]], frames.universe.select(Q),
                          table.select(Q).unique().collect())
        by = [k for k in frames.keys if k != Q]
        counted = {"repeats": frames.repeats, "repeat_depth": frames.repeat_depth,
                   "groups": frames.universe.select(by).unique() if by else None, "check_repeats": in_ideal}
        if len(ranges) == 1:
            parts.append(run_values(frames.run, table, frames.keys, same, "__rp_relevance", checked=True, **counted))
            continue
        # a large log: each range of queries on its own (the relevant pairs, the greedy ideal
        # and the windows hold their rows), as the metric pass does
        parts.append(pl.concat([
            run_values(frames.run.filter(part), table.filter(part), frames.keys, same, "__rp_relevance", checked=True,
                       **counted).collect(engine="streaming") for part in ranges]).lazy())
    out = parts[0]
    for part in parts[1:]:
        out = out.join(part, on=frames.keys, how="full", coalesce=True, nulls_equal=True)
    # a ranking with relevant rows under one set of parameters only scores 0 under the others
    labels = [label for label, _ in outputs]
    return out.with_columns(pl.col(labels).fill_null(0.0)) if len(parts) > 1 else out


#: The run rows one range of queries may hold in the Polars engine (measured at 200M rows:
#: one pass over all of them held 9.1 GiB, against ~2.5 GiB for a range of this size).
RANGE_ROWS = 25_000_000


def _ranges(universe: pl.DataFrame) -> list[pl.Expr | None]:
    """Ranges of query ids holding about :data:`RANGE_ROWS` run rows each (``[None]``: one)."""
    from rank_polars.engines.polars_engine import ranges_of

    return ranges_of(universe, RANGE_ROWS)
