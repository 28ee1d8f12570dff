"""Built-in strategies, by name; each module defines `rank(query, client) -> list[str]`.

Kept import-free: the strategy process imports only the module it runs.
"""

STRATEGIES = {
    "bm25": "citator.rerank.strategies.bm25",
    "first-token": "citator.rerank.strategies.first_token",
    "pointwise": "citator.rerank.strategies.pointwise",
    "adaptive": "citator.rerank.strategies.adaptive",
}
