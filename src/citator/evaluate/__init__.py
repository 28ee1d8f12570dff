"""Metrics (one file each), the spec's reward normalisations and run evaluation."""

from citator.evaluate.hit import hit
from citator.evaluate.measures import Measure, evaluate, parse_measure, per_query
from citator.evaluate.ndcg import ndcg
from citator.evaluate.precision import precision
from citator.evaluate.recall import recall
from citator.evaluate.reward import reward, reward_between
from citator.evaluate.rr import reciprocal_rank

__all__ = [
    "Measure", "evaluate", "parse_measure", "per_query",
    "ndcg", "hit", "precision", "recall", "reciprocal_rank", "reward", "reward_between",
]
