"""The one rule every metric relies on: a ranking names each document at most once."""

from __future__ import annotations

from collections.abc import Sequence

from citator.errors import RunError


def distinct_top(ranking: Sequence[str], k: int | None) -> Sequence[str]:
    """`ranking[:k]`, refused when it repeats a document: a repeat would be counted as relevant again (a run listing
    the one relevant document ten times would score nDCG@10 far above 1)."""
    top = ranking if k is None else ranking[:k]
    if len(set(top)) != len(top):
        seen: set[str] = set()
        for rank, doc in enumerate(top, 1):
            if doc in seen:
                raise RunError(f'doc id "{doc}" is listed twice (again at rank {rank}): a ranking names each document once')
            seen.add(doc)
    return top
