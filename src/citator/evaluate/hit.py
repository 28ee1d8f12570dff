"""Hit@k: 1 if any relevant document is in the top k."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from citator.evaluate.distinct import distinct_top


def hit(ranking: Sequence[str], grades: Mapping[str, int], k: int, min_grade: int = 1) -> float:
    return float(any(grades.get(d, 0) >= min_grade for d in distinct_top(ranking, k)))
