"""Paired bootstrap over query families: percentile 95% intervals of two orders and their difference."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

SEED = 20260920
REPLICATES = 10_000


@dataclass(frozen=True)
class PairedInterval:
    """Means of a and b over queries, b - a, and percentile intervals from family-level resampling."""

    queries: int
    families: int
    mean_a: float
    mean_b: float
    difference: float
    ci_a: tuple[float, float]
    ci_b: tuple[float, float]
    ci_difference: tuple[float, float]


def paired_family_bootstrap(
    a: Sequence[float], b: Sequence[float], families: Sequence[str],
    replicates: int = REPLICATES, seed: int = SEED, level: float = 0.95,
) -> PairedInterval:
    """Resample whole families with replacement; each replicate's mean is over all queries drawn.

    Families are taken in sorted order so the draw depends only on the data, never on input order
    of families; queries in one family stay together because their outcomes are correlated.
    """
    if not (len(a) == len(b) == len(families)) or not a:
        raise ValueError("a, b and families must be non-empty and of equal length")
    names = sorted(set(families))
    where = {f: i for i, f in enumerate(names)}
    idx = np.array([where[f] for f in families])
    va, vb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    counts = np.bincount(idx, minlength=len(names)).astype(np.float64)
    sum_a = np.bincount(idx, weights=va, minlength=len(names))
    sum_b = np.bincount(idx, weights=vb, minlength=len(names))
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(names), size=(replicates, len(names)))
    n = counts[draws].sum(axis=1)
    rep_a = sum_a[draws].sum(axis=1) / n
    rep_b = sum_b[draws].sum(axis=1) / n
    tail = 100 * (1 - level) / 2

    def interval(x: np.ndarray) -> tuple[float, float]:
        lo, hi = np.percentile(x, [tail, 100 - tail])
        return float(lo), float(hi)

    mean_a, mean_b = float(va.mean()), float(vb.mean())
    return PairedInterval(
        len(va), len(names), mean_a, mean_b, mean_b - mean_a,
        interval(rep_a), interval(rep_b), interval(rep_b - rep_a),
    )
