"""`adaptive`: a budget planner picks how many candidates to show and how much of each, from BM25 score
statistics and the passages' lengths; one listwise first-token call; fusion of label log-probs with BM25.

Planner: when BM25's top 10 stand out from ranks 11-30 (spread in units of the pool's score deviation), each
shown candidate is guaranteed more text (so fewer fit); when the scores are flat, more candidates are shown,
shorter. Thresholds are the DL19 tertiles of the spread (1.37, 1.70). The number shown is the most (up to 26)
that fit at that guaranteed length; then a common character cap (water level) is raised as far as the budget
allows, so short passages are shown whole and long ones share what is left.
Fusion weights live in adaptive_weights.json (see its note for how they were chosen; DL19 only).
"""

from __future__ import annotations

import json
import math
import os

from citator.rerank.strategies import listwise
from citator.rerank.strategy import Candidate, Client, QueryInfo

SPREAD_TERTILES = (1.37, 1.70)
MIN_CHARS = (160, 280, 440)  # guaranteed characters per shown candidate, per spread tertile
MAX_QUERY_CHARS = 400


def weights() -> dict:
    with open(os.path.join(os.path.dirname(__file__), "adaptive_weights.json"), encoding="utf-8") as f:
        return json.load(f)


def spread(scores: list) -> float:
    """(mean of top 10 - mean of ranks 11-30) / standard deviation of the pool's BM25 scores."""
    mean = sum(scores) / len(scores)
    sd = math.sqrt(sum((s - mean) ** 2 for s in scores) / len(scores))
    top, next_ = scores[:10], scores[10:30] or scores[-1:]
    return (sum(top) / len(top) - sum(next_) / len(next_)) / sd if sd > 0 else 0.0


def plan(scores: list) -> int:
    """Guaranteed characters per shown candidate for a pool's BM25 scores."""
    s = spread(scores)
    return MIN_CHARS[sum(s > t for t in SPREAD_TERTILES)]


def evidence(query: QueryInfo, client: Client) -> tuple[list[Candidate], list[float], list[float]]:
    """(candidates in BM25 order, their BM25 z-scores, label log-probs of the shown ones); spends the budget."""
    cands = sorted(query.candidates, key=lambda c: c.rank)
    scores = [c.bm25_score for c in cands]
    mean = sum(scores) / len(scores)
    sd = math.sqrt(sum((s - mean) ** 2 for s in scores) / len(scores)) or 1.0
    z = [(s - mean) / sd for s in scores]
    q = query.query[:MAX_QUERY_CHARS]
    n, cap = listwise.fit(q, [c.text for c in cands[: len(listwise.LABELS)]], client, plan(scores))
    lp = listwise.label_logprobs(q, cands[:n], cap, client) if n else []
    return cands, z, lp


def fuse(cands: list, z: list, lp: list, w: dict) -> list:
    """Shown candidates by w_llm*logP(label) + w_bm25*z + w_rank*(-ln rank), then the rest in BM25 order."""
    shown = [
        (w["w_llm"] * lp[i] + w["w_bm25"] * z[i] - w["w_rank"] * math.log(c.rank), c.id)
        for i, c in enumerate(cands[: len(lp)])
    ]
    shown.sort(key=lambda p: -p[0])
    return [cid for _, cid in shown] + [c.id for c in cands[len(lp) :]]


def rank(query: QueryInfo, client: Client) -> list[str]:
    cands, z, lp = evidence(query, client)
    return fuse(cands, z, lp, weights())
