"""Vectorised resampling for :mod:`rank_polars.stats.tests`: paired sign flips and the bootstrap.

Random numbers are drawn in steps of about ``_CHUNK`` elements (so memory stays bounded
whatever ``n``), never one resample per Python iteration.  The work is split into tasks, each
with its own generator spawned from the one given (:meth:`numpy.random.Generator.spawn`), and
the tasks run on threads (NumPy releases the GIL in the heavy calls).  The number of tasks
and their steps depend only on ``n`` and ``n_resamples``, never on the machine, and task
results are combined in task order, so a seed gives the same numbers whatever the thread
count.  Sums use NumPy's own loops (``take().sum()``, ``np.add``, ``einsum``), not BLAS, so the
numbers do not depend on a BLAS build or its thread count either.

Both public functions take ``advance``, called from the tasks (so from several threads) with
the number of resamples just completed; the calls add up to ``n_resamples``.
"""

from __future__ import annotations

import functools
import math
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Optional, TypeVar

import numpy as np

Advance = Optional[Callable[[int], None]]

_CHUNK = 1 << 18  # elements per resampling step: bounded memory; calls long enough for threads to overlap
_TASKS = 16  # resampling work is split into at most this many tasks (a fixed number: see the module doc)
_TASK_WORK = 1 << 22  # elements of work per task below which another task (generator, thread) does not pay
_BATCH = 1 << 16  # resamples per batch of the randomization test (its tasks' partial sums: bounded memory)
_BLOCKS = 64  # rows of 8 differences whose subset-sum tables are read together (64 x 2 KiB: in L2)
_MAX_WORKERS: int | None = None  # threads running the tasks; None: the CPUs this process may use
_TIE_RTOL = 1e-9  # resampled statistics within this relative distance of the observed one count as ties


def _ignore(n: int) -> None:
    pass


def _meter(advance: Callable[[int], None], per_resample: int) -> Callable[[int], None]:
    """A thread-safe counter of work units (``per_resample`` of them make one resample) that
    passes whole resamples on to ``advance``."""
    lock = threading.Lock()
    state = [0, 0]  # units done, resamples reported

    def add(units: int) -> None:
        with lock:
            state[0] += units
            whole = state[0] // per_resample
            step, state[1] = whole - state[1], whole
        if step:
            advance(step)

    return add

_T = TypeVar("_T")


def _rows_per_chunk(n: int, n_resamples: int) -> int:
    return max(1, min(n_resamples, _CHUNK // max(n, 1)))


def _workers() -> int:
    if _MAX_WORKERS is not None:
        return _MAX_WORKERS
    if hasattr(os, "sched_getaffinity"):  # the CPUs this process may run on (containers, taskset)
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _task_bounds(total: int, work: int) -> list[tuple[int, int]]:
    """``[0, total)`` cut into near-equal ranges, one per task.

    The number of tasks depends on the problem size (``work`` elements) only, never on the
    machine: the tasks' generators, hence the numbers, are the same on every machine.
    """
    k = max(1, min(_TASKS, total, work // _TASK_WORK))
    edges = [total * i // k for i in range(k + 1)]
    return list(zip(edges[:-1], edges[1:]))


def _run(tasks: list[Callable[[], _T]]) -> list[_T]:
    """The tasks' results, in task order, computed on up to one thread per CPU."""
    workers = min(len(tasks), _workers())
    if workers <= 1:
        return [task() for task in tasks]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda task: task(), tasks))


def _random_words(rng: np.random.Generator, count: int, dtype: str) -> np.ndarray:
    """``count`` independent uniformly random unsigned integers of ``dtype`` (``"u1"``, ``"<u4"``).

    Cut from full-range 64-bit draws, NumPy's fastest path (``Generator.bytes`` goes through
    32-bit draws and copies), read as little-endian so every machine sees the same numbers.
    """
    size = np.dtype(dtype).itemsize
    raw = rng.integers(0, 1 << 64, -(-count * size // 8), dtype=np.uint64)
    return raw.astype("<u8", copy=False).view(dtype)[:count]


def _uniform_indices(rng: np.random.Generator, n: int, out: np.ndarray) -> np.ndarray:
    """Fill the uint64 buffer ``out`` with independent indices, exactly uniform on ``0 .. n-1``;
    return them as an int64 view (what ``np.take`` wants).

    Lemire's method, vectorised: index = floor(w n / 2^32) for a random 32-bit word w.  Over
    the 2^32 words each index is hit floor(2^32 / n) times or once more; the surplus words
    are exactly those whose low product word (w n mod 2^32) is below 2^32 mod n, and they are
    redrawn (probability < n / 2^32).  NumPy's ``Generator.integers`` does the same one
    element at a time, more slowly.
    """
    if n > 0xFFFFFFFF:
        out[:] = rng.integers(0, n, out.size)
        return out.view(np.int64)
    threshold = (1 << 32) % n
    words = _random_words(rng, out.size, "<u4")
    np.multiply(words, np.uint64(n), out=out, dtype=np.uint64)
    # the low 32 bits of each product, read in place
    low_half = 0 if sys.byteorder == "little" else 1
    low = out.view(np.uint32)[low_half::2]
    if threshold and low.min() < threshold:
        redo = np.flatnonzero(low < threshold)
        while redo.size:
            words = _random_words(rng, redo.size, "<u4")
            out[redo] = np.multiply(words, np.uint64(n), dtype=np.uint64)
            redo = redo[low[redo] < threshold]
    np.right_shift(out, np.uint64(32), out=out)
    return out.view(np.int64)


def _subset_sums(rows: np.ndarray) -> np.ndarray:
    """For each row of 8 values, the sums of its 256 subsets: ``table[i, byte]`` is the sum
    of ``rows[i, k]`` over the bits k set in ``byte`` (added in increasing k)."""
    table = np.zeros((rows.shape[0], 256))
    for bit in range(8):
        low = 1 << bit
        # bytes low .. 2 low - 1 are the bytes below low with bit `bit` set as well
        np.add(table[:, :low], rows[:, bit : bit + 1], out=table[:, low : 2 * low])
    return table


def _flipped_sums(rows: np.ndarray, n_resamples: int, rng: np.random.Generator, done: Callable[[int], None]) -> np.ndarray:
    """``sum_i b_i d_i`` of ``n_resamples`` random bit vectors b over the differences in
    ``rows`` (8 per row).

    A random byte per row picks which of its 8 differences are flipped, and the row's
    subset-sum table gives their sum: one table read per 8 differences instead of 8
    multiply-adds.  The tables are built and read ``_BLOCKS`` rows at a time for every
    resample (bytes drawn in that layout), so the part being read stays in cache; the whole
    table (2 KiB per row) would not.
    """
    out = np.zeros(n_resamples)
    step = max(1, _CHUNK // min(_BLOCKS, rows.shape[0]))
    # work buffers reused by every step (see _bootstrap_sums)
    size = min(_BLOCKS, rows.shape[0]) * min(step, n_resamples)
    index, values = np.empty(size, np.intp), np.empty(size)
    for first in range(0, rows.shape[0], _BLOCKS):
        group = rows[first : first + _BLOCKS]
        g = group.shape[0]
        table = _subset_sums(group).ravel()
        offsets = (np.arange(g) * 256)[:, None]
        for start in range(0, n_resamples, step):
            r = min(step, n_resamples - start)
            coins = _random_words(rng, g * r, "u1").reshape(g, r)
            idx = np.add(coins, offsets, out=index[: g * r].reshape(g, r))
            picked = np.take(table, idx, out=values[: g * r].reshape(g, r), mode="wrap")  # see _bootstrap_sums
            out[start : start + r] += picked.sum(axis=0)
            done(g * r)  # rows x resamples
    return out


def _bootstrap_sums(d: np.ndarray, rng: np.random.Generator, out: np.ndarray, advance: Callable[[int], None]) -> None:
    """Fill ``out`` with the sums of ``out.size`` resamples of ``d`` with replacement.

    Steps of about ``_CHUNK`` indices: several resamples when ``d`` is short, a resample in
    pieces when it is long.
    """
    n = d.size
    width = min(n, _CHUNK)
    step = max(1, _CHUNK // n)
    # Work buffers reused by every step: fresh arrays of this size can cost a page fault per
    # 4 KiB each time (the allocator hands them back to the system), up to half the time.
    size = min(step, out.size) * width
    index, values = np.empty(size, np.uint64), np.empty(size)
    for start in range(0, out.size, step):
        sums = out[start : start + step]
        sums.fill(0.0)
        for first in range(0, n, width):
            k = sums.size * min(width, n - first)
            idx = _uniform_indices(rng, n, index[:k])
            # mode="wrap" (a no-op: the indices are in range) writes straight into the buffer and
            # is the fastest mode; "raise" would copy
            sums += np.take(d, idx, out=values[:k], mode="wrap").reshape(sums.size, -1).sum(axis=1)
        advance(sums.size)


# ----------------------------------------------------------------------------------------
# resampling tests and intervals


def randomization_p(d: np.ndarray, n_resamples: int, rng: np.random.Generator, advance: Advance = None) -> float:
    """Paired randomization (sign-flip permutation) test of the mean difference, two-sided.

    Each resample flips the sign of every difference with probability 1/2 (the versions'
    values of a query are swapped);
    ``p = (1 + #{resamples with |mean*| >= |mean|}) / (1 + n_resamples)``
    (the observed assignment counts once, so p is never 0), where ``>=`` allows a relative
    tolerance of 1e-9 so that exact ties are not lost to rounding.  No queries: NaN.
    The random numbers come from generators spawned from ``rng`` (``rng.spawn``).
    """
    n = d.size
    if n == 0:
        (advance or _ignore)(n_resamples)
        return math.nan
    total = float(d.sum())
    observed = abs(total)
    tol = _TIE_RTOL * float(np.abs(d).sum())
    padded = np.zeros(-(-n // 8) * 8)  # zeros flip to zeros: padding changes no sum
    padded[:n] = d
    rows = padded.reshape(-1, 8)
    done = _meter(advance or _ignore, rows.shape[0])
    hits = 0
    for start in range(0, n_resamples, _BATCH):
        r = min(_BATCH, n_resamples - start)
        # tasks over the differences (each builds and reads only its rows' tables), each
        # giving partial sums for the batch's resamples
        bounds = _task_bounds(rows.shape[0], rows.shape[0] * r)
        parts = _run([
            functools.partial(_flipped_sums, rows[lo:hi], r, child, done)
            for (lo, hi), child in zip(bounds, rng.spawn(len(bounds)))
        ])
        flipped = functools.reduce(np.add, parts)  # in task order: the same sums on every machine
        # sum of s_i d_i with s_i = 1 - 2 b_i  (b_i = 1: the pair is swapped)
        sums = total - 2.0 * flipped
        hits += int(np.count_nonzero(np.abs(sums) >= observed - tol))
    return (1 + hits) / (1 + n_resamples)


def bootstrap_means(d: np.ndarray, n_resamples: int, rng: np.random.Generator, advance: Advance = None) -> np.ndarray:
    """Means of ``n_resamples`` paired bootstrap resamples (n queries drawn with replacement).

    When the differences take few distinct values (at most n/256, as for precision or
    reciprocal rank), a resample is drawn as multinomial counts over the distinct values
    (the same resampling distribution, far fewer random draws, from ``rng`` itself);
    otherwise as n uniformly random query indices, from generators spawned from ``rng``
    (``rng.spawn``), one per task of resamples.
    """
    n = d.size
    advance = advance or _ignore
    out = np.empty(n_resamples)
    if n == 0:
        out.fill(np.nan)
        advance(n_resamples)
        return out
    values, counts = np.unique(d, return_counts=True)
    if values.size * 256 <= n:
        probs = counts / n
        rows = _rows_per_chunk(values.size, n_resamples)
        for start in range(0, n_resamples, rows):
            r = min(rows, n_resamples - start)
            out[start : start + r] = np.einsum("ij,j->i", rng.multinomial(n, probs, size=r), values) / n
            advance(r)
        return out
    bounds = _task_bounds(n_resamples, n * n_resamples)
    _run([
        functools.partial(_bootstrap_sums, d, child, out[lo:hi], advance)
        for (lo, hi), child in zip(bounds, rng.spawn(len(bounds)))
    ])
    out /= n
    return out


def percentile_ci(means: np.ndarray, confidence: float) -> tuple[float, float]:
    """Percentile interval: the (1-c)/2 and (1+c)/2 quantiles of the bootstrap means."""
    if means.size == 0 or np.isnan(means).any():
        return math.nan, math.nan
    low, high = np.quantile(means, [(1 - confidence) / 2, (1 + confidence) / 2])
    return float(low), float(high)


def bootstrap_p(d: np.ndarray, means: np.ndarray) -> float:
    """Paired bootstrap test of mean difference 0, shift method, two-sided.

    The null distribution is the bootstrap distribution of the mean of the differences
    shifted to mean 0 (``d - mean(d)``), i.e. ``means* - mean``;
    ``p = (1 + #{|means* - mean| >= |mean|}) / (1 + n_resamples)`` with the same 1e-9
    relative tolerance as :func:`randomization_p`.  No queries: NaN.
    """
    if d.size == 0:
        return math.nan
    mean = float(d.mean())
    tol = _TIE_RTOL * float(np.abs(d).mean())
    hits = int(np.count_nonzero(np.abs(means - mean) >= abs(mean) - tol))
    return (1 + hits) / (1 + means.size)


__all__ = ["bootstrap_means", "bootstrap_p", "percentile_ci", "randomization_p"]
