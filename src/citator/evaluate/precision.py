"""P@k: relevant documents in the top k divided by k (a short ranking is not padded out)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from citator.evaluate.distinct import distinct_top


def precision(ranking: Sequence[str], grades: Mapping[str, int], k: int, min_grade: int = 1) -> float:
    return sum(1 for d in distinct_top(ranking, k) if grades.get(d, 0) >= min_grade) / k
