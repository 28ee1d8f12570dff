"""The Provider seam: chat providers send one OpenAI-style request; similarity providers score texts."""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
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

    def redact(self, value: Any) -> Any:
        """A JSON value with this provider's credential removed (see Redactor); applied to all that is stored."""
        return value

    def check(self) -> None:
        """Raise ProviderError when the provider cannot serve `request_model` now; called before the first
        request of a run is receipted, so that an absent provider spends no budget. Local providers are loaded."""

    @abstractmethod
    def send(self, payload: Mapping[str, Any]) -> Exchange:
        """Send one request exactly once (no retries) and return what came back."""


class SimilarityProvider(Provider):
    """A local scorer with no model calls to meter (e.g. embedding similarity)."""

    metered = False

    @abstractmethod
    def similarity(self, query: str, texts: Sequence[str]) -> list[float]:
        """One score per text, higher is more relevant."""


# The shortest run of a key's characters (or of one of its encodings) that is treated as the key itself.
MIN_FRAGMENT = 8


def secret_forms(secret: str) -> list[str]:
    """The texts a key commonly travels as: itself, URL-encoded, hex, and base64 (standard and URL-safe, padded,
    unpadded, and the part of it that does not depend on what is encoded before or after the key)."""
    import base64
    from urllib.parse import quote, quote_plus

    raw = secret.encode("utf-8")
    forms = {secret, quote(secret, safe=""), quote_plus(secret), raw.hex(), raw.hex().upper()}
    forms |= {f.lower() for f in list(forms) if "%" in f}
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        whole = encode(raw).decode("ascii")
        forms |= {whole, whole.rstrip("=")}
        # Inside a longer encoded text (e.g. "user:KEY" of Basic auth) the key starts at any of three alignments;
        # the 4-character groups made of key bytes only are the same whatever surrounds them.
        for skip in range(3):
            body = raw[skip:]
            core = encode(body[: len(body) - len(body) % 3]).decode("ascii")
            if len(core) >= MIN_FRAGMENT:  # shorter cores would match unrelated base64
                forms.add(core)
    return sorted((f for f in forms if f), key=len, reverse=True)


class Redactor:
    """Replaces a key with *** wherever it shows in a text: in any of `secret_forms`, and any run of at least
    MIN_FRAGMENT characters copied from one of those forms (a truncated echo, "sk-live-AbC..."), case kept."""

    def __init__(self, secret: str | None) -> None:
        self.forms = secret_forms(secret) if secret else []
        n = MIN_FRAGMENT
        self._windows = {form[i:i + n] for form in self.forms for i in range(len(form) - n + 1)}

    def text(self, text: str) -> str:
        if not self.forms:
            return text
        for form in self.forms:
            text = text.replace(form, "***")
        hidden = [False] * len(text)
        n = MIN_FRAGMENT
        for i in range(len(text) - n + 1):
            if text[i:i + n] in self._windows:
                hidden[i:i + n] = [True] * n
        if not any(hidden):
            return text
        out, i = [], 0
        while i < len(text):
            if hidden[i]:
                while i < len(text) and hidden[i]:
                    i += 1
                out.append("***")
            else:
                out.append(text[i])
                i += 1
        return "".join(out)

    def value(self, value: Any) -> Any:
        """A parsed JSON value with the key removed from every string, keys of objects included."""
        if not self.forms:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, dict):
            return {self.text(k): self.value(v) for k, v in value.items()}
        return value
