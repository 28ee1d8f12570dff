"""The Provider seam: chat providers send one OpenAI-style request; similarity providers score texts."""

from __future__ import annotations

import hashlib
import os
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Top alternatives per generated token, enough to hold every grade digit at a grade position.
TOP_LOGPROBS = 5


@dataclass(frozen=True)
class Exchange:
    """One request's outcome as received: HTTP status (0 when nothing came back), raw body, transport error."""

    status: int
    body: Any
    error: str | None = None


def api_key_from_env(name: str | None) -> str | None:
    """The key in environment variable `name`, surrounding white space and byte-order marks (a file's) removed;
    None when unset or empty. Client and server read it alike, so one file's value matches on both sides."""
    key = (os.environ.get(name) or "") if name else ""
    return key.strip().strip("\ufeff").strip() or None


def chat_payload(model: str, messages: Sequence[Mapping[str, str]], max_tokens: int) -> dict[str, Any]:
    """The exact OpenAI chat-completions request body: greedy, with per-token log-probabilities asked for."""
    return {
        "model": model,
        "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
        "max_tokens": max_tokens,
        "temperature": 0,
        "logprobs": True,
        "top_logprobs": TOP_LOGPROBS,
    }


def model_digest(model_dir: str | Path) -> str:
    """sha256 over a model directory's config, tokenizer and weight files (names and contents): its version."""
    root = Path(model_dir)
    digest = hashlib.sha256()
    patterns = ("config.json", "tokenizer.json", "*.safetensors", "*.bin")
    files = sorted({f for pattern in patterns for f in root.rglob(pattern) if f.is_file()})
    for f in files:
        digest.update(str(f.relative_to(root)).encode() + b"\0")
        with f.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


class Provider(ABC):
    """Anything that can grade or score a query's candidates; `describe` goes into the run manifest."""

    name: str
    metered: bool

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """Provider name, model and pinned version (never credentials)."""


class ChatProvider(Provider):
    """A chat-completions grader; every call is metered, budgeted and receipted by the caller."""

    metered = True
    model: str

    @property
    def request_model(self) -> str:
        """The `model` field of every request body (a pinned version where the provider has one)."""
        return self.model

    @abstractmethod
    def send(self, payload: Mapping[str, Any]) -> Exchange:
        """Send one request exactly once (no retries) and return what came back."""


class SimilarityProvider(Provider):
    """A local scorer with no model calls to meter (e.g. embedding similarity)."""

    metered = False

    @abstractmethod
    def similarity(self, query: str, texts: Sequence[str]) -> list[float]:
        """One score per text, higher is more relevant."""
