"""The LLM backend seam: chat-template token counting and generation with first-position log-probabilities."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

Message = Mapping[str, str]


@dataclass(frozen=True)
class Generation:
    """What one generation call produced and cost, in the model's own tokens."""

    text: str
    input_tokens: int
    output_tokens: int
    # Requested string -> log-probability of its first token at the first generated position.
    logprobs: Mapping[str, float] = field(default_factory=dict)
    # Requested strings that the tokenizer splits into more than one token (only the first is scored).
    multi_token: tuple[str, ...] = ()


class LLMBackend(ABC):
    """A frozen causal LM behind chat messages; implementations own model and tokenizer."""

    model_id: str

    @abstractmethod
    def count(self, messages: Sequence[Message]) -> int:
        """Input tokens of `messages` rendered with the chat template and generation prompt."""

    @abstractmethod
    def generate(
        self, messages: Sequence[Message], max_new_tokens: int, logprob_tokens: Sequence[str] = ()
    ) -> Generation:
        """Greedy generation of at most `max_new_tokens` tokens."""

    def warm_up(self) -> None:
        """Run one tiny call so that the first real call does not pay start-up costs."""
        self.generate([{"role": "user", "content": "Hi"}], max_new_tokens=1)
