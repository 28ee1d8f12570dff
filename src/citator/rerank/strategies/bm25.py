"""`bm25`: the pool's own BM25 top 10; spends nothing (the sanity baseline)."""

from __future__ import annotations

from citator.rerank.strategy import Client, QueryInfo


def rank(query: QueryInfo, client: Client) -> list[str]:
    """BM25 order as given."""
    return [c.id for c in sorted(query.candidates, key=lambda c: c.rank)[:10]]
