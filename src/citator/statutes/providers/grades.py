"""Validate a chat-completions response and turn it into one grade distribution (0-3) per candidate label."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from citator.data.jsonl import loads

GRADE_TOKENS = ("0", "1", "2", "3")


class InvalidResponse(ValueError):
    """A response that breaks the schema; it is kept raw as a failure and never repaired."""


@dataclass(frozen=True)
class Usage:
    """Token usage as the provider reported it."""

    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True)
class GradeDistribution:
    """P(grade) for grades 0..3; `source` is "logprobs" or "parsed" (one-hot from the answer, flagged)."""

    probs: tuple[float, float, float, float]
    source: str

    @property
    def p_useful(self) -> float:
        """Normalised P(2) + P(3), kept within [0, 1] (two normalised floats can add up to 1 + 2e-16)."""
        return min(1.0, max(0.0, self.probs[2] + self.probs[3]))

    @property
    def confidence(self) -> float:
        """Concentration of the distribution (its largest probability); not P(correct)."""
        return max(self.probs)

    @property
    def grade(self) -> int:
        """The most probable grade (the lower one on ties)."""
        return max(range(4), key=lambda g: (self.probs[g], -g))

    @property
    def expected(self) -> float:
        return sum(g * p for g, p in enumerate(self.probs))


def usage_of(body: Any) -> Usage:
    """The reported usage, or InvalidResponse when it is missing or malformed."""
    usage = body.get("usage") if isinstance(body, dict) else None
    if not isinstance(usage, dict):
        raise InvalidResponse("response has no usage object")
    return Usage(_tokens(usage, "prompt_tokens"), _tokens(usage, "completion_tokens"))


def _tokens(usage: dict[str, Any], key: str) -> int:
    value = usage.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidResponse(f"usage.{key} must be a non-negative integer, got {value!r}")
    return value


def _choice(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise InvalidResponse(f"response body is not a JSON object ({type(body).__name__})")
    choices = body.get("choices")
    if not isinstance(choices, list) or len(choices) != 1 or not isinstance(choices[0], dict):
        raise InvalidResponse("response must have exactly one choice")
    message = choices[0].get("message")
    if not isinstance(message, dict) or not isinstance(message.get("content"), str):
        raise InvalidResponse("choice has no message content string")
    return choices[0]


def _answer(content: str, labels: Sequence[str]) -> tuple[dict[str, int], int]:
    """The grades object and the offset in `content` where it starts (surrounding whitespace allowed)."""
    stripped = content.strip()
    try:
        obj = loads(stripped)
    except json.JSONDecodeError as exc:
        raise InvalidResponse(f"answer is not a JSON object: {exc.msg}") from None
    if not isinstance(obj, dict):
        raise InvalidResponse("answer is not a JSON object")
    if sorted(obj) != sorted(labels):
        raise InvalidResponse(f"answer labels {sorted(obj)} do not match the candidates {sorted(labels)}")
    for label, grade in obj.items():
        if isinstance(grade, bool) or grade not in (0, 1, 2, 3):
            raise InvalidResponse(f"grade of {label} must be 0, 1, 2 or 3, got {grade!r}")
    return {k: int(v) for k, v in obj.items()}, content.index(stripped[:1]) if stripped else 0


def _grade_offsets(content: str, start: int, grades: Mapping[str, int]) -> dict[str, int]:
    """Character offset of each label's grade digit in `content` (the digit after `"label":`)."""
    out = {}
    for label in grades:
        key = content.find(json.dumps(label), start)
        colon = content.find(":", key)
        pos = colon + 1
        while pos < len(content) and content[pos] in " \t\r\n":
            pos += 1
        out[label] = pos
    return out


def _token_distribution(entry: Any) -> tuple[float, float, float, float] | None:
    """Normalised probabilities of the grade digits among a token's top alternatives, if any is there."""
    tops = entry.get("top_logprobs") if isinstance(entry, dict) else None
    if not isinstance(tops, list):
        return None
    weights = dict.fromkeys(GRADE_TOKENS, 0.0)
    for alt in tops:
        token = alt.get("token") if isinstance(alt, dict) else None
        logprob = alt.get("logprob") if isinstance(alt, dict) else None
        # "3" and " 3" are the same grade under tokenizers that attach a space: their probabilities add up.
        if isinstance(token, str) and token.strip() in weights and isinstance(logprob, (int, float)):
            weights[token.strip()] += math.exp(logprob)
    # Digits missing from the top alternatives were less likely than all shown; they count as 0.
    total = sum(weights.values())
    if total <= 0 or not math.isfinite(total):
        return None
    g0, g1, g2, g3 = (weights[t] / total for t in GRADE_TOKENS)
    return g0, g1, g2, g3


def _logprob_distributions(choice: dict[str, Any], content: str, offsets: Mapping[str, int]) -> dict[str, tuple]:
    logprobs = choice.get("logprobs")
    entries = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not isinstance(entries, list) or not all(isinstance(e, dict) and isinstance(e.get("token"), str) for e in entries):
        return {}
    if "".join(e["token"] for e in entries) != content:
        return {}  # tokens do not spell the answer: positions cannot be trusted
    spans, pos = [], 0
    for e in entries:
        spans.append((pos, pos + len(e["token"])))
        pos += len(e["token"])
    out = {}
    for label, offset in offsets.items():
        for e, (start, end) in zip(entries, spans):
            # The token that ends right after the grade digit and is nothing but that digit (maybe with a space).
            if start <= offset < end and end == offset + 1 and e["token"].strip() in GRADE_TOKENS:
                dist = _token_distribution(e)
                if dist is not None:
                    out[label] = dist
                break
    return out


def parse_chat_grades(body: Any, labels: Sequence[str]) -> dict[str, GradeDistribution]:
    """Per label: the grade distribution from token log-probs where given, else one-hot from the answer."""
    choice = _choice(body)
    content = choice["message"]["content"]
    grades, start = _answer(content, labels)
    from_logprobs = _logprob_distributions(choice, content, _grade_offsets(content, start, grades))
    out = {}
    for label, grade in grades.items():
        dist = from_logprobs.get(label)
        if dist is not None and max(range(4), key=lambda g: (dist[g], -g)) == grade:
            out[label] = GradeDistribution(dist, "logprobs")
        else:
            out[label] = GradeDistribution((float(grade == 0), float(grade == 1), float(grade == 2),
                                            float(grade == 3)), "parsed")
    return out
