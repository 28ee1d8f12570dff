"""nDCG@k with linear gain; array position is the rank (ties are never re-sorted)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from citator.evaluate.distinct import distinct_top


def dcg(gains: Sequence[float]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains) if g)


def ndcg(ranking: Sequence[str], grades: Mapping[str, int], k: int) -> float:
    """nDCG@k; the ideal DCG uses every judged document of the query, not only the retrieved ones."""
    ideal = dcg(sorted((g for g in grades.values() if g > 0), reverse=True)[:k])
    if ideal == 0:
        return 0.0
    return dcg([max(grades.get(d, 0), 0) for d in distinct_top(ranking, k)]) / ideal
