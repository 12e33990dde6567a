"""Inputs for the "same numbers as before SciPy" test, and the numbers a ``stats`` module gives.

``tests/data/stats_reference_e89e36c.json`` holds what the hand-written statistics of commit
e89e36c (own t, normal and Wilcoxon tails, own corrections) gave on :func:`cases`; it was
written by::

    git worktree add /tmp/old e89e36c
    python -m tests.stats_reference /tmp/old tests/data/stats_reference_e89e36c.json
    git worktree remove /tmp/old

The inputs are regenerated here from fixed seeds, so the file holds only the outputs.
"""

from __future__ import annotations

import json
import sys
from types import ModuleType
from typing import Any

import numpy as np

SIZES = [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 13, 14, 20, 30, 50, 51, 80, 200, 1000, 3000]
KINDS = ["continuous", "grid", "zeros", "few_values", "constant", "all_zero", "outlier"]
R = 400  # resamples per case


def differences(n: int, kind: str, rng: np.random.Generator) -> np.ndarray:
    """Paired differences of one kind: ties, zeros and degenerate cases included."""
    if kind == "continuous":
        return rng.normal(0.03, 0.2, n)
    if kind == "grid":
        return np.round(rng.normal(0.05, 0.25, n), 1)
    if kind == "zeros":
        return np.where(rng.random(n) < 0.4, 0.0, rng.choice([-0.25, 0.25, 0.5], n))
    if kind == "few_values":
        return rng.choice([0.0, 0.1, 0.2, -0.1], n)
    if kind == "constant":
        return np.full(n, 0.2)
    if kind == "all_zero":
        return np.zeros(n)
    d = rng.normal(0.0, 0.05, n)
    d[0] = 3.0
    return d


def cases() -> list[tuple[str, np.ndarray, int]]:
    """(name, differences, seed) for every size and kind, three times for the random kinds, and a
    few large ones whose resampling runs in several tasks; a few hundred in all."""
    rng = np.random.default_rng(20261122)
    out = []
    for n in SIZES:
        for kind in KINDS:
            for rep in range(1 if kind in ("constant", "all_zero") else 3):
                out.append((f"{kind}-{n}-{rep}", differences(n, kind, rng), len(out)))
    for n in (5000, 20_000):
        for kind in ("continuous", "grid", "few_values"):
            out.append((f"{kind}-{n}-big", differences(n, kind, rng), len(out)))
    return out


def p_vectors() -> list[np.ndarray]:
    """p-value families for the corrections: ties, NaN (left out), zeros and ones."""
    rng = np.random.default_rng(7)
    out = []
    for m in (1, 2, 3, 5, 8, 20, 100):
        for _ in range(4):
            p = rng.random(m) ** 3
            p[rng.random(m) < 0.15] = np.nan
            if m > 2:
                p[1] = p[0]  # a tie
                p[-1] = rng.choice([0.0, 1.0])
            out.append(p)
    return out


def numbers(stats: ModuleType) -> dict[str, Any]:
    """Every statistic of ``stats`` on :func:`cases` and :func:`p_vectors`."""
    rows = {}
    for name, d, seed in cases():
        means = stats.bootstrap_means(d, R, np.random.default_rng(seed))
        low, high = stats.percentile_ci(means, 0.95)
        rows[name] = {
            "paired_t": stats.paired_t_p(d),
            "wilcoxon": stats.wilcoxon_p(d),
            "effect_size": stats.effect_size(d),
            "randomization": stats.randomization_p(d, R, np.random.default_rng(seed + 1)),
            "bootstrap": stats.bootstrap_p(d, means),
            "ci": [low, high],
            "means_sum": float(means.sum()),
        }
    adjusted = {
        method: [stats.adjust(p, method).tolist() for p in p_vectors()] for method in ("bonferroni", "holm", "bh")
    }
    return {"cases": rows, "adjust": adjusted}


if __name__ == "__main__":
    checkout, target = sys.argv[1], sys.argv[2]
    sys.path.insert(0, checkout)
    from rank_polars.stats import tests as old_stats

    assert old_stats.__file__.startswith(checkout), old_stats.__file__
    with open(target, "w") as f:
        json.dump(numbers(old_stats), f, indent=0, sort_keys=True)
        f.write("\n")
