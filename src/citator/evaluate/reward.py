"""The spec's reward normalisations of a mean metric."""

from __future__ import annotations

# Workload 1 baseline, un-rounded as the spec gives it.
STANCE_BASELINE = 0.5610484855098774
# Workload 2: strongest simple baseline and best order of the fixed pool, TREC DL 2020.
RERANK_BASELINE = 0.49536006501146507
RERANK_UPPER = 0.8707005096559685


def clamp01(x: float) -> float:
    return min(1.0, max(0.0, x))


def reward(q: float, baseline: float = STANCE_BASELINE) -> float:
    """clamp((Q - B) / (1 - B), 0, 1)."""
    return clamp01((q - baseline) / (1.0 - baseline))


def reward_between(q: float, baseline: float = RERANK_BASELINE, upper: float = RERANK_UPPER) -> float:
    """clip((Q - B) / (U - B), 0, 1)."""
    return clamp01((q - baseline) / (upper - baseline))
