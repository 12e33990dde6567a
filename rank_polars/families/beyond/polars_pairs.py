"""Co-occurrence by the pairs of items of each user's history, in NumPy
(:mod:`rank_polars.families.beyond.polars`): pairs of positions inside segments, runs of
segments of about :data:`PAIR_CHUNK` pairs, the history's pair counts asked for
(:class:`HistoryPairs`), and each list's sum of its pairs' co-occurrence cosines
(:func:`cooccurrence_pairs`).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from rank_polars.families.diversity import run_starts, segment_sums


#: Pairs of items one chunk of :func:`cooccurrence_pairs` generates (a chunk of lists, or of
#: users' histories): ~30 bytes each.
PAIR_CHUNK = 1 << 24


def _pair_blocks(starts: Any, sizes: Any) -> Any:
    """For the segments of each length, every pair of positions ``(p, q)``, p before q, inside
    each segment ``[start, start + size)``, and the segment's number: one block per length."""
    import numpy as np

    for size in np.unique(sizes[sizes > 1]):
        which = np.flatnonzero(sizes == size)
        p, q = np.triu_indices(int(size), 1)
        at = starts[which][:, None]
        yield (at + p).ravel(), (at + q).ravel(), np.repeat(which, len(p))


def _segment_pairs(starts: Any, sizes: Any, values: Any) -> tuple[Any, Any, Any]:
    """Every pair ``(values[p], values[q])`` of :func:`_pair_blocks`, and the segment's number."""
    import numpy as np

    blocks = [(values[p], values[q], owner) for p, q, owner in _pair_blocks(starts, sizes)]
    if not blocks:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    return tuple(np.concatenate(column) for column in zip(*blocks))  # type: ignore[return-value]


def _chunks(pairs: Any, size: int | None = None) -> list[tuple[int, int]]:
    """Runs ``[lo, hi)`` of consecutive segments holding about ``size`` (:data:`PAIR_CHUNK`)
    pairs each."""
    import numpy as np

    size = PAIR_CHUNK if size is None else size
    ends, out, first = np.cumsum(pairs), [], 0
    while first < len(pairs):
        done = int(ends[first - 1]) if first else 0
        last = max(first + 1, int(np.searchsorted(ends, done + size, side="right")))
        out.append((first, last))
        first = last
    return out


class HistoryPairs:
    """The pairs of items of each user's history, counted where they are asked for: ``N_ij =
    sum_q c_iq c_jq`` over the history's cells (``item``, ``user``, ``count``; item codes below
    ``width``), of the items ``kept`` alone.  The pairs are made a chunk of users at a time
    (:data:`PAIR_CHUNK`), one frame per history length, kept where a key asked for holds them
    (a hash semi-join) and counted; the counts are integers, exact in any order."""

    def __init__(self, item: Any, user: Any, count: Any, width: int, kept: Any) -> None:
        import numpy as np

        self.width = np.int64(width)
        item, user, count = item[kept[item]], user[kept[item]], count[kept[item]]
        order = pl.Series(user.astype(np.int64) * self.width + item).arg_sort().to_numpy()  # by user, then item
        self.item, self.count = item[order], count[order]
        users = user[order]
        self.ones = bool((self.count == 1.0).all())  # (then a pair's count is its number of users)
        self.starts = np.flatnonzero(run_starts(users))
        self.sizes = np.diff(np.append(self.starts, len(users)))
        per_user = self.sizes * (self.sizes - 1) // 2
        self.pairs = float(per_user.sum())
        self.chunks = _chunks(per_user)

    def counts(self, keys: Any) -> Any:
        """``N`` for each key ``x * width + y`` (x < y; 0 where no user has both)."""
        import numpy as np

        needed = pl.DataFrame({"k": keys})
        found = []
        for lo, hi in self.chunks:
            parts = []
            # one frame per history length: no concatenation of the chunk's pairs
            for p, q, _ in _pair_blocks(self.starts[lo:hi], self.sizes[lo:hi]):
                part = {"k": self.item[p] * self.width + self.item[q]}
                if not self.ones:
                    part["w"] = self.count[p] * self.count[q]
                parts.append(pl.DataFrame(part))
            if parts:
                pairs = pl.concat(parts, rechunk=False).lazy().join(needed.lazy(), on="k", how="semi")
                counted = pl.len().cast(pl.Float64) if self.ones else pl.col("w").sum()
                found.append(pairs.group_by("k").agg(counted.alias("w")).collect())
        cooc = pl.concat(found).group_by("k").agg(pl.col("w").sum()) if found else pl.DataFrame(
            schema={"k": pl.Int64, "w": pl.Float64})
        return (needed.join(cooc, on="k", how="left", maintain_order="left")
                .get_column("w").fill_null(0.0).to_numpy())


def cooccurrence_pairs(a: Any, item: Any, user: Any, count: Any, work: float) -> Any:
    """Each list's sum over its pairs of items of their co-occurrence cosine, ``N_ij /
    (sqrt(pop_i) sqrt(pop_j))`` with ``N_ij = sum_q c_iq c_jq`` over the history's users, or None
    where the list sums of :func:`ils_sparse` (their cost: ``work``) cost less.

    ``a``: lists x item codes (CSR, codes sorted); ``item``, ``user``, ``count``: the history's
    cells (an item's rows for a user).  The list sums cost, per list, the history rows of its
    items, which grows as lists x users (a shown item is about as popular as there are users:
    21.6 s at 200k lists of 10 over a 5M-row history, recommenders 104.7 s).  Here, as
    recommenders does: the pairs of each user's history items (only items some list shows), kept
    where some list holds the pair, counted (:class:`HistoryPairs`); then one look-up per pair of
    a list.  That grows with the users' histories squared and the lists' pairs, linearly in
    each.  A list's pairs are added in a fixed order (its codes' order), so the bits do not
    depend on how the lists were collected.  Lists in chunks of :data:`PAIR_CHUNK` pairs (the
    histories' pairs are made once per chunk of lists)."""
    import numpy as np

    pop = np.bincount(item, weights=count, minlength=a.shape[1])
    shown = np.zeros(a.shape[1], dtype=bool)
    shown[a.indices] = True
    history = HistoryPairs(item, user, count, a.shape[1], shown)
    lengths = np.diff(a.indptr)
    l_pairs = lengths * (lengths - 1) // 2
    list_chunks = _chunks(l_pairs)
    if len(list_chunks) * history.pairs + float(l_pairs.sum()) >= work:
        return None
    total = np.zeros(a.shape[0])
    for lo, hi in list_chunks:
        x, y, owner = _segment_pairs(a.indptr[lo:hi], lengths[lo:hi], a.indices)
        if not len(x):
            continue
        sims = history.counts(x.astype(np.int64) * history.width + y) / (np.sqrt(pop[x]) * np.sqrt(pop[y]))
        # a list's pairs in their generated order (its codes' order), added one by one from 0.0
        by_list = np.argsort(owner, kind="stable")
        owners = owner[by_list]
        starts = run_starts(owners)
        total[lo + owners[starts]] = segment_sums(starts, sims[by_list])
    return total
