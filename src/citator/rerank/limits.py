"""The per-query limits a strategy runs under; constructor values so tests can shrink them."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from citator.data.numbers import finite_number
from citator.rerank.errors import RerankError


@dataclass(frozen=True)
class Limits:
    """Spec defaults (SPEC section 2); everything the runner enforces per query."""

    weighted_tokens: int = 2048
    output_weight: int = 4
    cpu_seconds: float = 1.0
    response_timeout_s: float = 90.0
    max_message_bytes: int = 1 << 20
    max_result_ids: int = 10
    # Free `count` calls still cost the runner time; a cap keeps a looping strategy from stalling a run.
    max_requests: int = 512
    # Counting is free for the budget, not for the runner: tokenising 1 MB takes it about 0.4 s. Per query, at most
    # this many characters of messages are counted (count and generate alike), some 6 s of tokenising.
    max_counted_chars: int = 16 << 20
    # After `result` the strategy should exit; it gets this long before it is killed.
    exit_grace_s: float = 2.0
    model_load_s: float = 600.0
    warm_up_s: float = 60.0
    # Device memory the model may use (reference: 24 GiB on an A100 40 GB); enforced through torch's allocator.
    device_memory_gib: float = 24.0

    def __post_init__(self) -> None:
        # NaN passes every comparison below (and a NaN or infinite timeout waits forever): finite numbers only.
        for name, value in asdict(self).items():
            if not finite_number(value):
                raise RerankError(f"{name} must be a finite number, got {value!r:.40}")
            if isinstance(Limits.__dataclass_fields__[name].default, int) and not isinstance(value, int):
                raise RerankError(f"{name} must be a whole number, got {value!r:.40}")
        if self.weighted_tokens < 1 or self.output_weight < 1:
            raise RerankError("weighted_tokens and output_weight must be >= 1")
        if self.cpu_seconds <= 0 or self.response_timeout_s <= 0 or self.exit_grace_s <= 0:
            raise RerankError("cpu_seconds, response_timeout_s and exit_grace_s must be > 0")
        if self.max_message_bytes < 1024 or self.max_result_ids < 1 or self.max_requests < 1:
            raise RerankError("max_message_bytes must be >= 1024, max_result_ids and max_requests >= 1")
        if self.max_counted_chars < 1:
            raise RerankError("max_counted_chars must be >= 1")

    def budgets(self) -> dict[str, Any]:
        """The `budgets` object of the query message."""
        return {
            "weighted_tokens": self.weighted_tokens,
            "output_weight": self.output_weight,
            "cpu_seconds": self.cpu_seconds,
            "response_timeout_s": self.response_timeout_s,
            "max_message_bytes": self.max_message_bytes,
            "max_result_ids": self.max_result_ids,
            "max_requests": self.max_requests,
            "max_counted_chars": self.max_counted_chars,
        }

    def to_json(self) -> dict[str, Any]:
        return asdict(self)
