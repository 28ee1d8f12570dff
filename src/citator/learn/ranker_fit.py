"""Fit the linear ranker: L2-regularised logistic regression, every query weighted equally."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.optimize import minimize

from citator.retrieve.ranker import LinearRanker


def fit_linear_ranker(
    names: Sequence[str], x: np.ndarray, y: np.ndarray, l2: float = 1.0, candidates: int = 200
) -> LinearRanker:
    """x: (n_queries, n_candidates, n_features), y: (n_queries, n_candidates) in {0, 1}."""
    nq, nc, nf = x.shape
    flat = x.reshape(-1, nf).astype(np.float64)
    labels = y.reshape(-1).astype(np.float64)
    mean = flat.mean(axis=0)
    scale = flat.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = (flat - mean) / scale
    # Each query has the same total weight, and its positives as much weight as its negatives.
    pos = y.sum(axis=1, keepdims=True)
    w_pos = np.where(pos > 0, 0.5 / np.maximum(pos, 1), 0.0)
    w_neg = 0.5 / np.maximum(nc - pos, 1)
    sample_w = np.where(y > 0, w_pos, w_neg).reshape(-1) * (pos > 0).repeat(nc, axis=1).reshape(-1)

    def loss(params: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = params[:-1], params[-1]
        logits = z @ w + b
        p = 1.0 / (1.0 + np.exp(-logits))
        eps = 1e-12
        value = -np.sum(sample_w * (labels * np.log(p + eps) + (1 - labels) * np.log(1 - p + eps))) + 0.5 * l2 * w @ w / nq
        grad_logits = sample_w * (p - labels)
        grad = np.append(z.T @ grad_logits + l2 * w / nq, grad_logits.sum())
        return float(value), grad

    result = minimize(loss, np.zeros(nf + 1), jac=True, method="L-BFGS-B")
    w = result.x
    return LinearRanker(tuple(names), tuple(mean.tolist()), tuple(scale.tolist()), tuple(w[:-1].tolist()),
                        float(w[-1]), candidates)
