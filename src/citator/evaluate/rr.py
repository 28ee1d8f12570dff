"""Reciprocal rank of the first relevant document (0 when none is retrieved)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from citator.evaluate.distinct import distinct_top


def reciprocal_rank(ranking: Sequence[str], grades: Mapping[str, int], k: int | None = None, min_grade: int = 1) -> float:
    for i, d in enumerate(distinct_top(ranking, k)):
        if grades.get(d, 0) >= min_grade:
            return 1.0 / (i + 1)
    return 0.0
