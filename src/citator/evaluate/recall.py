"""Recall@k: share of the query's relevant documents found in the top k."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from citator.evaluate.distinct import distinct_top


def recall(ranking: Sequence[str], grades: Mapping[str, int], k: int, min_grade: int = 1) -> float:
    relevant = sum(1 for g in grades.values() if g >= min_grade)
    if relevant == 0:
        return 0.0
    return sum(1 for d in distinct_top(ranking, k) if grades.get(d, 0) >= min_grade) / relevant
