"""`bm25`: the pool's own BM25 top 10; spends nothing (the sanity baseline)."""

from __future__ import annotations


def rank(query, client) -> list:  # noqa: ANN001 - QueryInfo, Client
    """BM25 order as given."""
    return [c.id for c in sorted(query.candidates, key=lambda c: c.rank)[:10]]
