"""One strict parser for an OpenAI chat-completions request body: every field is honoured or refused, none ignored.

The local backend decodes greedily, one choice, text only. A field that cannot change that output (top_p under
greedy decoding, a seed, metadata) is accepted when well-formed; a field that asks for something else (sampling,
penalties, tools, JSON mode, streaming) is refused with OpenAI's error shape: message, `param` and `code`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from citator.data.numbers import finite_number
from citator.data.jsonl import encodable

DEFAULT_MAX_TOKENS = 64
MAX_TOP_LOGPROBS = 20
MAX_STOP_SEQUENCES = 4
# Roles the chat template renders; `developer` is the system role's name in newer OpenAI clients.
ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}


class RequestRejected(ValueError):
    """A request this backend will not serve; becomes a 400 with OpenAI's error envelope."""

    def __init__(self, message: str, param: str | None = None, code: str | None = "invalid_value") -> None:
        super().__init__(message)
        self.param = param
        self.code = code


@dataclass(frozen=True)
class ChatRequest:
    """What the backend will do for a request: render `messages`, decode greedily up to `max_tokens`."""

    messages: tuple[tuple[str, str], ...]  # (role, text) with developer mapped to system
    max_tokens: int
    stop: tuple[str, ...]
    logprobs: bool
    top_logprobs: int
    model: str | None


def _number(payload: Mapping[str, Any], name: str) -> float | None:
    value = payload.get(name)
    if value is None:
        return None
    if not finite_number(value):
        raise RequestRejected(f"{name} must be a number, got {value!r}", name)
    return float(value)


def _int(payload: Mapping[str, Any], name: str, low: int, high: int | None) -> int | None:
    value = payload.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        bounds = f"{low}..{high}" if high is not None else f">= {low}"
        raise RequestRejected(f"{name} must be an integer in {bounds}, got {value!r}", name)
    return value


def _refuse_unless(payload: Mapping[str, Any], name: str, allowed: tuple[Any, ...], why: str) -> None:
    value = payload.get(name)
    if value is not None and value not in allowed:
        raise RequestRejected(f"{name}={value!r} is not supported: {why}", name, "unsupported_value")


def _encodable(text: str, where: str) -> str:
    """`text`, refused when it holds a lone UTF-16 surrogate (JSON "\\ud800"): no character, no tokenizer takes it."""
    if not encodable(text):
        raise RequestRejected(f"{where} holds a lone UTF-16 surrogate escape (\\ud800-\\udfff), which is no "
                              "character", where)
    return text


def _text(content: Any, where: str) -> str:
    """String content, or the concatenated text parts of list-form content."""
    if isinstance(content, str):
        return _encodable(content, where)
    if not isinstance(content, list) or not content:
        raise RequestRejected(f"{where} must be a string or a non-empty list of text parts", where)
    texts = []
    for j, part in enumerate(content):
        here = f"{where}[{j}]"
        if not isinstance(part, dict) or part.get("type") != "text":
            kind = part.get("type") if isinstance(part, dict) else type(part).__name__
            raise RequestRejected(f"{here}: only text parts are served, got {kind!r}", f"{here}.type",
                                  "unsupported_value")
        if set(part) - {"type", "text"} or not isinstance(part.get("text"), str):
            raise RequestRejected(f"{here} must be {{\"type\": \"text\", \"text\": string}}", here)
        texts.append(_encodable(part["text"], f"{here}.text"))
    return "".join(texts)


def _messages(value: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, list) or not value:
        raise RequestRejected("messages must be a non-empty list", "messages")
    out = []
    for i, m in enumerate(value):
        where = f"messages[{i}]"
        if not isinstance(m, dict):
            raise RequestRejected(f"{where} must be an object", where)
        role = m.get("role")
        if not isinstance(role, str) or role not in ROLES:
            raise RequestRejected(f"{where}.role must be one of {', '.join(ROLES)} (tools are not served), "
                                  f"got {role!r}", f"{where}.role", "unsupported_value")
        extra = sorted(set(m) - {"role", "content"})
        if extra:
            raise RequestRejected(f"{where}.{extra[0]} is not supported (messages carry role and content only)",
                                  f"{where}.{extra[0]}", "unsupported_parameter")
        out.append((ROLES[role], _text(m.get("content"), f"{where}.content")))
    return tuple(out)


def _stop(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if (not isinstance(items, list) or len(items) > MAX_STOP_SEQUENCES
            or not all(isinstance(s, str) and s for s in items)):
        raise RequestRejected(f"stop must be a non-empty string or a list of at most {MAX_STOP_SEQUENCES} "
                              "non-empty strings", "stop")
    return tuple(_encodable(s, "stop") for s in items)


# Fields the backend honours (they change what it does) or accepts because they cannot change a greedy, single,
# unstored completion; everything else is an unknown argument.
_KNOWN = {
    "messages", "model", "max_tokens", "max_completion_tokens", "stop", "logprobs", "top_logprobs", "temperature",
    "top_p", "n", "seed", "stream", "stream_options", "frequency_penalty", "presence_penalty", "logit_bias",
    "response_format", "tools", "tool_choice", "parallel_tool_calls", "functions", "function_call", "user",
    "metadata", "store", "service_tier", "modalities", "audio", "prediction", "reasoning_effort", "verbosity",
    "web_search_options", "safety_identifier", "prompt_cache_key", "prompt_cache_options", "prompt_cache_retention",
    "moderation",
}


def parse_chat_request(payload: Any, *, max_tokens_cap: int) -> ChatRequest:
    """The request as the backend will serve it, or RequestRejected naming the first field it cannot honour."""
    if not isinstance(payload, dict):
        raise RequestRejected("body must be a JSON object", None)
    unknown = sorted(set(payload) - _KNOWN)
    if unknown:
        raise RequestRejected(f"Unrecognized request argument supplied: {unknown[0]}", unknown[0],
                              "unknown_parameter")
    model = payload.get("model")
    if model is not None and not isinstance(model, str):
        raise RequestRejected("model must be a string", "model")
    messages = _messages(payload.get("messages"))

    limit = _int(payload, "max_completion_tokens", 1, max_tokens_cap)
    legacy = _int(payload, "max_tokens", 1, max_tokens_cap)
    if limit is not None and legacy is not None and limit != legacy:
        raise RequestRejected("max_tokens and max_completion_tokens disagree; send one", "max_tokens")
    max_tokens = limit or legacy or min(DEFAULT_MAX_TOKENS, max_tokens_cap)

    temperature = _number(payload, "temperature")
    if temperature not in (None, 0.0):
        raise RequestRejected("only greedy decoding is served: temperature must be 0 (absent means 0)",
                              "temperature", "unsupported_value")
    top_p = _number(payload, "top_p")
    if top_p is not None and not 0 <= top_p <= 1:
        raise RequestRejected(f"top_p must be in 0..1, got {top_p}", "top_p")
    # Under greedy decoding the most probable token is always inside the nucleus: any top_p gives the same output.
    for name in ("frequency_penalty", "presence_penalty"):
        value = _number(payload, name)
        if value is not None and value != 0:
            raise RequestRejected(f"{name} is not supported (only 0)", name, "unsupported_value")
    if payload.get("logit_bias") not in (None, {}):
        raise RequestRejected("logit_bias is not supported (only {} or null)", "logit_bias", "unsupported_value")
    _int(payload, "n", 1, 1)
    # Greedy decoding is deterministic: every seed gives the same completion, so a seed is honoured as given.
    seed = payload.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise RequestRejected(f"seed must be an integer, got {seed!r}", "seed")
    _refuse_unless(payload, "stream", (False,), "streaming is not served")
    _refuse_unless(payload, "stream_options", (), "streaming is not served")
    response_format = payload.get("response_format")
    if response_format is not None and response_format != {"type": "text"}:
        raise RequestRejected("response_format: only {\"type\": \"text\"} is served (no JSON mode or schema)",
                              "response_format", "unsupported_value")
    for name in ("tools", "functions"):
        if payload.get(name) not in (None, []):
            raise RequestRejected(f"{name} are not supported (no tool calling)", name, "unsupported_value")
    _refuse_unless(payload, "tool_choice", ("none",), "no tool calling")
    _refuse_unless(payload, "function_call", ("none",), "no tool calling")
    if payload.get("parallel_tool_calls") is not None and not isinstance(payload["parallel_tool_calls"], bool):
        raise RequestRejected("parallel_tool_calls must be a boolean", "parallel_tool_calls")
    _refuse_unless(payload, "store", (False,), "completions are not stored")
    _refuse_unless(payload, "service_tier", ("auto", "default"), "one tier is served")
    _refuse_unless(payload, "modalities", (["text"],), "text only")
    for name, why in (("audio", "text only"), ("prediction", "predicted outputs are not served"),
                      ("reasoning_effort", "thinking is off"), ("verbosity", "not served"),
                      ("web_search_options", "no web search"), ("moderation", "no moderation is run"),
                      ("prompt_cache_options", "there is no prompt cache"),
                      ("prompt_cache_retention", "there is no prompt cache")):
        _refuse_unless(payload, name, (), why)
    for name in ("user", "safety_identifier", "prompt_cache_key"):
        if payload.get(name) is not None and not isinstance(payload[name], str):
            raise RequestRejected(f"{name} must be a string", name)
    metadata = payload.get("metadata")
    if metadata is not None and not (isinstance(metadata, dict)
                                     and all(isinstance(v, str) for v in metadata.values())):
        raise RequestRejected("metadata must be an object of strings", "metadata")

    logprobs = payload.get("logprobs")
    if logprobs is not None and not isinstance(logprobs, bool):
        raise RequestRejected("logprobs must be a boolean", "logprobs")
    top = _int(payload, "top_logprobs", 0, MAX_TOP_LOGPROBS) or 0
    if top and not logprobs:
        raise RequestRejected("top_logprobs needs logprobs: true", "top_logprobs")
    return ChatRequest(messages, max_tokens, _stop(payload.get("stop")), bool(logprobs), top, model)


def error_body(message: str, param: str | None = None, code: str | None = None,
               kind: str = "invalid_request_error") -> dict[str, Any]:
    """OpenAI's error object: the value of the envelope's "error" key."""
    return {"message": message, "type": kind, "param": param, "code": code}
