"""When to say "no good match": the best hit's base-encoder similarity to the query is weak.

A fused score cannot say it: fusion maps each query's best score to 1 (engines/fusion.py), however poor. The base
encoder's cosine between the query and a document's best passage (the `dense` signal, MaxP) has one scale for
every query, so a weak best match shows as a low value. The threshold was chosen on dev propositions only
(benchmarks/no_match.py, docs/brief.md): below it, none of the top hits held a relevant document for most dev
propositions. An index whose ranking computes no `dense` signal gives no value, and the page then says nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from citator.stance.brief.records import Hit

SIGNAL = "dense"
# Chosen on dev by benchmarks/no_match.py (benchmarks/results/no_match.json): see docs/brief.md.
THRESHOLD = 0.39


def best_match(hits: Iterable[Hit]) -> float | None:
    """The best `dense` score among `hits` (None when the index computed none)."""
    scores = [s.score for hit in hits for s in hit.signals if s.name == SIGNAL]
    return max(scores) if scores else None


def weak(hits: Iterable[Hit], threshold: float = THRESHOLD) -> bool:
    """Whether the best of `hits` matches too weakly to be called a match (False where no value was computed)."""
    best = best_match(hits)
    return best is not None and best < threshold
