"""Strategy SDK: a strategy is a plain function `rank(query, client) -> ids`, run by `serve`.

Runs inside the sandboxed strategy process, whose whole CPU time counts against the 1 s limit, so this
module imports only `json` and `sys` (no dataclasses, no typing: each costs milliseconds at start-up).
"""

from __future__ import annotations

import json
import sys

# The types below are the checker's only: a strategy process starts without importing `typing` (its start-up counts
# against its CPU limit), and mypy takes any TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import BinaryIO


class BudgetRefused(Exception):
    """The runner refused a generate: input + 4 x max_new_tokens exceeds the budget left. Nothing was spent."""

    def __init__(self, needed: int, budget_left: int) -> None:
        self.needed = needed
        self.budget_left = budget_left
        super().__init__(f"needs {needed} weighted tokens, {budget_left} left")


class RunnerClosed(Exception):
    """The runner stopped the query (protocol error reply or closed pipe)."""


class Candidate:
    """One pool candidate as the runner sent it."""

    __slots__ = ("id", "text", "rank", "bm25_score")

    def __init__(self, id: str, text: str, rank: int, bm25_score: float) -> None:
        self.id, self.text, self.rank, self.bm25_score = id, text, rank, bm25_score

    def __repr__(self) -> str:
        return f"Candidate({self.id!r}, rank={self.rank})"


class QueryInfo:
    """The query message: id, text, candidates in BM25 order and the limits in force."""

    __slots__ = ("query_id", "query", "candidates", "budgets")

    def __init__(self, query_id: str, query: str, candidates: list[Candidate], budgets: dict) -> None:
        self.query_id, self.query, self.candidates, self.budgets = query_id, query, candidates, budgets

    @classmethod
    def from_json(cls, obj: dict) -> QueryInfo:
        cands = [Candidate(c["id"], c["text"], c["rank"], c["bm25_score"]) for c in obj["candidates"]]
        return cls(obj["query_id"], obj["query"], cands, obj.get("budgets", {}))


class Reply:
    """What one generate returned and cost."""

    __slots__ = ("text", "input_tokens", "output_tokens", "weighted_tokens", "budget_left", "logprobs", "multi_token")

    def __init__(self, obj: dict) -> None:
        self.text = obj["text"]
        self.input_tokens = obj["input_tokens"]
        self.output_tokens = obj["output_tokens"]
        self.weighted_tokens = obj["weighted_tokens"]
        self.budget_left = obj["budget_left"]
        self.logprobs = obj.get("logprobs", {})
        self.multi_token = obj.get("multi_token", [])


class Client:
    """The runner as a strategy sees it; over stdin/stdout one JSON object per line."""

    def __init__(self, inp: BinaryIO | None = None, out: BinaryIO | None = None) -> None:
        self._in = inp or sys.stdin.buffer
        self._out = out or sys.stdout.buffer
        self.budget_left = 0
        self.output_weight = 4

    def _send(self, obj: dict) -> None:
        self._out.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n")
        self._out.flush()

    def _receive(self) -> dict:
        line = self._in.readline()
        if not line:
            raise RunnerClosed("runner closed the pipe")
        obj = json.loads(line)
        if obj.get("type") == "error":
            raise RunnerClosed(f"{obj.get('kind')}: {obj.get('reason')}")
        if "budget_left" in obj:
            self.budget_left = obj["budget_left"]
        return obj

    def receive_query(self) -> QueryInfo:
        """Block for the query message."""
        obj = self._receive()
        budgets = obj.get("budgets", {})
        self.budget_left = budgets.get("weighted_tokens", 0)
        self.output_weight = budgets.get("output_weight", 4)
        return QueryInfo.from_json(obj)

    def count(self, messages: list) -> int:
        """Exact input tokens of `messages` under the chat template (free)."""
        self._send({"type": "count", "messages": messages})
        return self._receive()["input_tokens"]

    def generate(
        self, messages: list, max_new_tokens: int, logprob_tokens: list | tuple = (), candidate_ids: list | tuple = ()
    ) -> Reply:
        """Greedy generation; raises BudgetRefused when the reservation does not fit (nothing is spent)."""
        msg: dict = {"type": "generate", "messages": messages, "max_new_tokens": max_new_tokens}
        if logprob_tokens:
            msg["logprob_tokens"] = list(logprob_tokens)
        if candidate_ids:
            msg["candidate_ids"] = list(candidate_ids)
        self._send(msg)
        obj = self._receive()
        if obj["type"] == "refused":
            raise BudgetRefused(obj["needed"], obj["budget_left"])
        return Reply(obj)

    def fits(self, input_tokens: int, max_new_tokens: int) -> bool:
        """Whether a call of this size would be accepted now."""
        return input_tokens + self.output_weight * max_new_tokens <= self.budget_left

    def submit(self, ids: list | tuple) -> None:
        """Send the final ranking (at most 10 distinct pool ids, best first); ends the query."""
        self._send({"type": "result", "ids": list(ids)})


def serve(rank: Callable[[QueryInfo, Client], Sequence[str]], client: Client | None = None) -> int:
    """Run one query: read it, call `rank`, submit the first 10 distinct ids."""
    client = client or Client()
    query = client.receive_query()
    ids = rank(query, client)
    client.submit(list(dict.fromkeys(ids))[:10])
    return 0
