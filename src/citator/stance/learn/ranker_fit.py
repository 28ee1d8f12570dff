"""Fit the learned fusion: a linear ranker (L2-regularised logistic regression) or LambdaMART (LightGBM)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from citator.stance.retrieve.ranker import LinearRanker, TreeRanker, import_lightgbm


def fit_linear_ranker(
    names: Sequence[str], x: np.ndarray, y: np.ndarray, l2: float = 1.0, candidates: int = 200
) -> LinearRanker:
    """x: (n_queries, n_candidates, n_features), y: (n_queries, n_candidates) in {0, 1}."""
    nq, nc, nf = x.shape
    flat = x.reshape(-1, nf).astype(np.float64)
    labels = y.reshape(-1).astype(np.float64)
    # Features missing for some candidates (NaN: late interaction scores only the top ones) count as their mean.
    missing = np.isnan(flat).any()
    mean = np.nan_to_num(np.nanmean(flat, axis=0)) if missing else flat.mean(axis=0)
    scale = np.nan_to_num(np.nanstd(flat, axis=0)) if missing else flat.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = np.nan_to_num((flat - mean) / scale)
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


@dataclass(frozen=True)
class LambdaMartSettings:
    """LambdaMART's settings: the candidates the ranker reorders at search, the trees, their leaves, the learning
    rate, the fewest rows a leaf holds, and the seed."""

    candidates: int = 200
    trees: int = 300
    leaves: int = 15
    learning_rate: float = 0.05
    min_leaf: int = 50
    seed: int = 13


def fit_lambdamart(names: Sequence[str], x: np.ndarray, y: np.ndarray,
                   settings: LambdaMartSettings = LambdaMartSettings()) -> TreeRanker:
    """x: (n_queries, n_candidates, n_features), y: (n_queries, n_candidates) in {0, 1}; queries with no relevant
    candidate teach a ranking nothing and are left out. Deterministic for a given input and seed."""
    lightgbm = import_lightgbm()
    keep = y.sum(axis=1) > 0
    if not keep.any():
        raise ValueError("no query has a relevant document among its candidates")
    nq, nc, nf = x[keep].shape
    data = lightgbm.Dataset(x[keep].reshape(-1, nf).astype(np.float64), label=y[keep].reshape(-1).astype(np.int32),
                            group=[nc] * nq, feature_name=[_lgb_name(n) for n in names], free_raw_data=True)
    params = {"objective": "lambdarank", "lambdarank_truncation_level": 20, "num_leaves": settings.leaves,
              "learning_rate": settings.learning_rate, "min_data_in_leaf": settings.min_leaf, "seed": settings.seed,
              "deterministic": True, "force_row_wise": True, "num_threads": 0, "verbosity": -1}
    booster = lightgbm.train(params, data, num_boost_round=settings.trees)
    return TreeRanker(tuple(names), booster.model_to_string(), settings.candidates)


def _lgb_name(name: str) -> str:
    """LightGBM refuses JSON's special characters (":" among them) in feature names; the model text keeps these
    only for reading: the ranker selects its columns by our own names."""
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name)
