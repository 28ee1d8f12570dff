"""Fitting prompts to a token budget with exact counts from the runner (never estimated)."""

from __future__ import annotations

import math
from collections.abc import Callable

from citator.rerank.strategy import Client


def clip(text: str, chars: int) -> str:
    """`text` cut to at most `chars` characters, at a word boundary where one is near."""
    if len(text) <= chars:
        return text
    cut = text[:chars]
    space = cut.rfind(" ")
    return cut[:space] if space > chars * 0.7 else cut


def clip_all(texts: list, cap: int) -> list:
    return [clip(t, cap) for t in texts]


def largest_fitting(build: Callable[[int], list[dict[str, str]]], client: Client, limit: int, hi: int
                    ) -> tuple[int, int]:
    """Largest integer x in [0, hi] with count(build(x)) <= limit, by bisection; (x, tokens) or (-1, tokens at 0)."""
    lo_tokens = client.count(build(0))
    if lo_tokens > limit:
        return -1, lo_tokens
    hi_tokens = client.count(build(hi))
    if hi_tokens <= limit:
        return hi, hi_tokens
    lo, best = 0, lo_tokens
    # Invariant: build(lo) fits, build(hi) does not.
    while hi - lo > 1:
        mid = (lo + hi) // 2
        tokens = client.count(build(mid))
        if tokens <= limit:
            lo, best = mid, tokens
        else:
            hi = mid
    return lo, best


def log_softmax(values: list) -> list:
    """Normalised log-probabilities over a list of log-scores."""
    top = max(values)
    total = top + math.log(sum(math.exp(v - top) for v in values))
    return [v - total for v in values]


def logsumexp(values: list) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))
