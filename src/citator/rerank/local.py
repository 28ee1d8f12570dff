"""An in-process stand-in for the runner's pipe: same ledger and replies, no sandbox (fitting, unit tests).

Never used to score a submission: it does not isolate or meter the strategy.
"""

from __future__ import annotations

from collections.abc import Sequence

from citator.models.llm import LLMBackend
from citator.rerank.ledger import Refused, TokenLedger
from citator.rerank.pool import PoolQuery
from citator.rerank.strategy import BudgetRefused, Candidate, QueryInfo, Reply


class LocalClient:
    """Implements the SDK client surface (count, generate, budget_left, output_weight) over a backend."""

    def __init__(self, backend: LLMBackend, budget: int = 2048, output_weight: int = 4) -> None:
        self.backend = backend
        self.ledger = TokenLedger(budget, output_weight)
        self.output_weight = output_weight
        self.seen: dict[str, None] = {}

    @property
    def budget_left(self) -> int:
        return self.ledger.left

    def count(self, messages: list) -> int:
        return self.backend.count(messages)

    def generate(
        self, messages: list, max_new_tokens: int, logprob_tokens: Sequence[str] = (), candidate_ids: Sequence[str] = ()
    ) -> Reply:
        tokens = self.backend.count(messages)
        try:
            self.ledger.reserve(tokens, max_new_tokens)
        except Refused as r:
            raise BudgetRefused(r.needed, r.left) from None
        gen = self.backend.generate(messages, max_new_tokens, tuple(logprob_tokens))
        entry = self.ledger.settle(gen.output_tokens)
        self.seen.update(dict.fromkeys(candidate_ids))
        return Reply(
            {
                "text": gen.text,
                "input_tokens": tokens,
                "output_tokens": entry.output_tokens,
                "weighted_tokens": entry.weighted,
                "budget_left": self.ledger.left,
                "logprobs": dict(gen.logprobs),
                "multi_token": list(gen.multi_token),
            }
        )

    def fits(self, input_tokens: int, max_new_tokens: int) -> bool:
        return input_tokens + self.output_weight * max_new_tokens <= self.budget_left


def query_info(query: PoolQuery) -> QueryInfo:
    """The SDK's view of a pool query."""
    cands = [Candidate(c.id, c.text, c.rank, c.bm25_score) for c in query.candidates]
    return QueryInfo(query.query_id, query.query, cands, {})
