"""Reranker: a built-in strategy over a local LLM, called from Python on one query at a time.

`Reranker(model_dir, strategy="first-token").rank(query, candidates)` runs the strategy in this process against
the same token ledger the runner meters with (`LocalClient`): the budget holds exactly as in `citator rerank`, but
nothing is sandboxed or CPU-metered, so only the built-in strategies are offered. A submission is scored by the
runner (`citator rerank`), never here.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from citator.data.arguments import path_argument
from citator.data.numbers import finite_number
from citator.data.jsonl import encodable
from citator.errors import ConfigError
from citator.models.llm import LLMBackend
from citator.rerank.limits import Limits
from citator.rerank.local import LocalClient
from citator.rerank.strategies import STRATEGIES
from citator.rerank.strategy import Candidate, QueryInfo

# A candidate: its text alone (its id is then its position, "0", "1", ...), (id, text), or a mapping with "id" and
# "text" and optionally "score" (the first stage's score; some strategies blend it in).
CandidateLike = str | tuple[str, str] | Mapping[str, object]


@dataclass(frozen=True)
class Ranking:
    """Every candidate id, best first, and what the strategy spent of its budget."""

    ids: tuple[str, ...]
    weighted_tokens: int
    calls: int


class Reranker:
    """A local LLM (`model_dir`, loaded once) and a built-in strategy, under the spec's per-query token budget."""

    def __init__(self, model: str | Path | LLMBackend, strategy: str = "first-token",
                 budget: int = Limits.weighted_tokens, output_weight: int = Limits.output_weight) -> None:
        if strategy not in STRATEGIES:
            raise ConfigError(f"strategy must be one of {', '.join(sorted(STRATEGIES))}, got {strategy!r}")
        Limits(weighted_tokens=budget, output_weight=output_weight)  # the runner's own range checks
        if isinstance(model, LLMBackend):
            self.backend = model
        else:
            from citator.models.transformers_llm import TransformersLLM

            self.backend = TransformersLLM(path_argument(model, "model", ConfigError))
        self.strategy = strategy
        self._rank = importlib.import_module(STRATEGIES[strategy]).rank
        self.budget, self.output_weight = budget, output_weight

    def rank(self, query: str, candidates: Sequence[CandidateLike], query_id: str = "q") -> Ranking:
        """Rank `candidates` (given in first-stage order, best first) for `query`; a fresh budget per call."""
        if not isinstance(query, str) or not query.strip():
            raise ConfigError("query must be a non-empty string")
        if not encodable(query):
            raise ConfigError("query holds a lone UTF-16 surrogate, which is no character")
        # A string or a mapping is iterable too: its characters or keys would pass for candidates.
        if isinstance(candidates, (str, bytes, Mapping)) or not isinstance(candidates, Iterable):
            raise ConfigError("candidates must be a list of texts, (id, text) pairs or {'id', 'text'[, 'score']}, "
                              f"got {type(candidates).__name__}")
        cands = [_candidate(c, i) for i, c in enumerate(candidates)]
        if len({c.id for c in cands}) != len(cands):
            raise ConfigError("candidate ids must be distinct")
        if not cands:  # nothing to order, and nothing a strategy should be asked
            return Ranking((), 0, 0)
        client = LocalClient(self.backend, self.budget, self.output_weight)
        ids = self._rank(QueryInfo(query_id, query, cands, {}), client)
        known = {c.id: None for c in cands}
        ranked = list(dict.fromkeys(i for i in ids if i in known))
        # What the strategy left unranked keeps its first-stage order below what it ranked.
        ranked += [c.id for c in cands if c.id not in set(ranked)]
        return Ranking(tuple(ranked), client.ledger.spent, sum(not e.refused for e in client.ledger.entries))


def _candidate(c: CandidateLike, i: int) -> Candidate:
    candidate: Candidate | None = None
    if isinstance(c, str):
        candidate = Candidate(str(i), c, i + 1, 0.0)
    elif isinstance(c, tuple) and len(c) == 2 and all(isinstance(x, str) for x in c):
        candidate = Candidate(c[0], c[1], i + 1, 0.0)
    elif isinstance(c, Mapping) and isinstance(doc_id := c.get("id"), str) and isinstance(text := c.get("text"), str):
        score = c.get("score", 0.0)
        if not isinstance(score, (int, float)) or not finite_number(score):
            raise ConfigError(f"candidate {i}: score must be a finite number, got {score!r:.40}")
        candidate = Candidate(doc_id, text, i + 1, float(score))
    if candidate is not None:
        if not (encodable(candidate.id) and encodable(candidate.text)):
            raise ConfigError(f"candidate {i}: holds a lone UTF-16 surrogate, which is no character")
        return candidate
    raise ConfigError(f"candidate {i}: expected a text, (id, text) or {{'id', 'text'[, 'score']}}, got {c!r:.80}")
