"""Score fusion, as pure functions over (n_queries, n_docs) score matrices."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


def topn_bounds(best: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(floor, span) per query from its n best scores (any order): the n-th best maps to 0, the best to 1.

    Shards of one index each give their n best; the n best of those together bound exactly as the whole would.
    A score of -inf (a document a filter leaves out) bounds nothing: with fewer than n documents left, the worst of
    them maps to 0, as it would in an index of those documents alone.
    """
    finite = np.isfinite(best)
    if finite.all():
        top = best.max(axis=1, keepdims=True)
        floor = best.min(axis=1, keepdims=True)
    else:
        some = finite.any(axis=1, keepdims=True)
        top = np.where(some, np.where(finite, best, -np.inf).max(axis=1, keepdims=True), 0.0)
        floor = np.where(some, np.where(finite, best, np.inf).min(axis=1, keepdims=True), 0.0)
    return floor, np.where(top - floor > 1e-12, top - floor, 1.0)


def best_n(scores: np.ndarray, n: int) -> np.ndarray:
    """The n best scores per query, in no particular order (all of them when a query has fewer)."""
    n = min(n, scores.shape[1])
    # np.partition fixes only the n-th place, so the best is their max (not the first column, which is the best only
    # as often as the CPU's partition kernel happens to leave it there).
    return -np.partition(-scores, n - 1, axis=1)[:, :n]


def normalise(scores: np.ndarray, bounds: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Scores mapped by (floor, span) and clipped at 0, as float32."""
    floor, span = bounds
    return np.clip((scores - floor) / span, 0.0, None).astype(np.float32)


def normalise_topn(scores: np.ndarray, n: int = 100) -> np.ndarray:
    """Per query, map the n-th best score to 0 and the best to 1 (clipped), so signals share a scale."""
    return normalise(scores, topn_bounds(best_n(scores, n)))


Bounds = Mapping[str, tuple[np.ndarray, np.ndarray]]


def interpolate(signals: Mapping[str, np.ndarray], weights: Mapping[str, float], n: int = 100,
                bounds: Bounds | None = None) -> np.ndarray:
    """Weighted sum of top-n-normalised signals; signals with weight 0 are skipped.

    `bounds` (signal -> (floor, span)) normalise instead of each matrix's own top n: a shard's documents are scaled
    by the whole index's bounds.
    """
    total: np.ndarray | None = None
    for name, weight in weights.items():
        if weight == 0:
            continue
        scale = bounds[name] if bounds is not None else topn_bounds(best_n(signals[name], n))
        part = weight * normalise(signals[name], scale)
        total = part if total is None else total + part
    if total is None:
        raise ValueError("every fusion weight is zero")
    return total


def ranks(scores: np.ndarray) -> np.ndarray:
    """1-based rank of every document per query (ties broken by index)."""
    order = np.argsort(-scores, axis=1, kind="stable")
    out = np.empty_like(order)
    rows = np.arange(scores.shape[0])[:, None]
    out[rows, order] = np.arange(1, scores.shape[1] + 1)
    return out


def rrf(signals: Mapping[str, np.ndarray], weights: Mapping[str, float], k: int = 60) -> np.ndarray:
    """Weighted reciprocal rank fusion: sum of w / (k + rank)."""
    total: np.ndarray | None = None
    for name, weight in weights.items():
        if weight == 0:
            continue
        part = weight / (k + ranks(signals[name]).astype(np.float32))
        total = part if total is None else total + part
    if total is None:
        raise ValueError("every fusion weight is zero")
    return total


def top_k(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices and scores of the k best documents per query, best first; equal scores by document index.

    Ties are broken the same way whatever k is, so a longer answer starts with the shorter one.
    """
    k = min(k, scores.shape[1])
    if k <= 0:
        return np.zeros((scores.shape[0], 0), dtype=np.int64), np.zeros((scores.shape[0], 0), dtype=scores.dtype)
    idx = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    rows = np.arange(scores.shape[0])[:, None]
    picked = scores[rows, idx]
    kth = picked.min(axis=1)
    # argpartition picks arbitrarily among documents tied at the k-th score: where it left some out, take the
    # lowest-indexed of them instead.
    ambiguous = np.flatnonzero((scores == kth[:, None]).sum(axis=1) > (picked == kth[:, None]).sum(axis=1))
    for r in ambiguous.tolist():
        above = np.flatnonzero(scores[r] > kth[r])
        tied = np.flatnonzero(scores[r] == kth[r])[: k - len(above)]
        idx[r] = np.concatenate([above, tied])
    picked = scores[rows, idx]
    order = np.lexsort((idx, -picked), axis=1)
    idx = idx[rows, order]
    return idx, scores[rows, idx]
