"""What one query's strategy run produced: ranking or failure, ledger, CPU and timings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from citator.rerank.ledger import LedgerEntry


@dataclass(frozen=True)
class Failure:
    """Why a query scores zero: `kind` is a fixed class (see docs/protocol.md), `reason` the detail."""

    kind: str
    reason: str


@dataclass(frozen=True)
class QueryOutcome:
    """The per-query ledger record the harness writes; `ids` is empty when the query failed."""

    query_id: str
    ids: tuple[str, ...]
    failure: Failure | None
    budget: int
    weighted_tokens: int
    calls: tuple[LedgerEntry, ...]
    count_calls: int
    candidates_seen: tuple[str, ...]
    strategy_cpu_seconds: float
    wall_seconds: float
    model_seconds: float
    notes: tuple[str, ...] = ()
    stderr_tail: str = field(default="", compare=False)

    @property
    def failed(self) -> bool:
        return self.failure is not None

    @property
    def overhead_seconds(self) -> float:
        """Wall time not spent inside the model: process start, pipes, parsing, the strategy's own work."""
        return max(0.0, self.wall_seconds - self.model_seconds)

    def to_json(self) -> dict[str, Any]:
        return {
            "query_id": self.query_id,
            "ids": list(self.ids),
            "failure": None if self.failure is None else {"kind": self.failure.kind, "reason": self.failure.reason},
            "budget": self.budget,
            "weighted_tokens": self.weighted_tokens,
            "generate_calls": sum(1 for c in self.calls if not c.refused),
            "refused_calls": sum(1 for c in self.calls if c.refused),
            "count_calls": self.count_calls,
            "calls": [c.to_json() for c in self.calls],
            "candidates_seen": list(self.candidates_seen),
            "strategy_cpu_seconds": round(self.strategy_cpu_seconds, 4),
            "wall_seconds": round(self.wall_seconds, 4),
            "model_seconds": round(self.model_seconds, 4),
            "overhead_seconds": round(self.overhead_seconds, 4),
            "notes": list(self.notes),
            "stderr_tail": self.stderr_tail,
        }
