"""The runner <-> strategy JSONL protocol: typed requests parsed strictly, replies built in one place.

Every parse problem is a ProtocolViolation; the runner turns it into a failed query (see docs/protocol.md).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from citator.data.jsonl import encodable, loads
from citator.rerank.limits import Limits
from citator.rerank.pool import PoolQuery

ROLES = frozenset({"system", "user", "assistant"})
MAX_LOGPROB_TOKENS = 256


class ProtocolViolation(Exception):
    """A strategy message breaks the protocol; `kind` is the failure class recorded in the ledger."""

    def __init__(self, kind: str, reason: str) -> None:
        self.kind = kind
        self.reason = reason
        super().__init__(f"{kind}: {reason}")


@dataclass(frozen=True)
class CountRequest:
    messages: tuple[dict[str, str], ...]


@dataclass(frozen=True)
class GenerateRequest:
    messages: tuple[dict[str, str], ...]
    max_new_tokens: int
    logprob_tokens: tuple[str, ...] = ()
    candidate_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class ResultRequest:
    ids: tuple[str, ...]


Request = CountRequest | GenerateRequest | ResultRequest


def query_message(query: PoolQuery, limits: Limits) -> dict[str, Any]:
    """The first line a strategy reads."""
    return {
        "type": "query",
        "query_id": query.query_id,
        "query": query.query,
        "candidates": [c.to_json() for c in query.candidates],
        "budgets": limits.budgets(),
    }


def encode(obj: Mapping[str, Any]) -> bytes:
    """One compact JSON line (escaped to ASCII where a text holds what UTF-8 cannot carry, a lone surrogate)."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return json.dumps(obj, separators=(",", ":")).encode("ascii") + b"\n"


def parse_request(line: bytes, pool_ids: Collection[str], limits: Limits) -> Request:
    """Decode one strategy line into a request, checking every field against the protocol and the pool."""
    try:
        obj = loads(line.decode("utf-8"))  # nesting past the parser, or a number too long, is malformed too
    except UnicodeDecodeError:
        raise ProtocolViolation("garbage", "line is not valid UTF-8") from None
    except json.JSONDecodeError as exc:
        raise ProtocolViolation("garbage", f"line is not JSON ({exc.msg}): {_snippet(line)}") from None
    if not isinstance(obj, dict):
        raise ProtocolViolation("garbage", f"expected a JSON object, got {type(obj).__name__}")
    kind = obj.get("type")
    if kind == "count":
        _only(obj, {"type", "messages"})
        return CountRequest(_messages(obj))
    if kind == "generate":
        _only(obj, {"type", "messages", "max_new_tokens", "logprob_tokens", "candidate_ids"})
        max_new = obj.get("max_new_tokens")
        if not isinstance(max_new, int) or isinstance(max_new, bool) or max_new < 1:
            raise ProtocolViolation("bad_request", f"max_new_tokens must be an integer >= 1, got {max_new!r}")
        tokens = obj.get("logprob_tokens", [])
        if not isinstance(tokens, list) or not all(isinstance(t, str) and t and encodable(t) for t in tokens):
            raise ProtocolViolation("bad_request", "logprob_tokens must be a list of non-empty strings")
        if len(tokens) > MAX_LOGPROB_TOKENS or len(set(tokens)) != len(tokens):
            raise ProtocolViolation("bad_request", f"logprob_tokens must be distinct, at most {MAX_LOGPROB_TOKENS}")
        declared = _ids(obj.get("candidate_ids", []), pool_ids, "candidate_ids", None)
        return GenerateRequest(_messages(obj), max_new, tuple(tokens), declared)
    if kind == "result":
        _only(obj, {"type", "ids"})
        if "ids" not in obj:
            raise ProtocolViolation("bad_result", "result has no ids")
        return ResultRequest(_ids(obj["ids"], pool_ids, "ids", limits.max_result_ids))
    raise ProtocolViolation("bad_request", f"unknown message type {kind!r} (count, generate or result)")


def count_reply(input_tokens: int, budget_left: int) -> dict[str, Any]:
    return {"type": "count", "input_tokens": input_tokens, "budget_left": budget_left}


def generation_reply(
    text: str,
    input_tokens: int,
    output_tokens: int,
    weighted: int,
    budget_left: int,
    logprobs: Mapping[str, float],
    multi_token: Collection[str],
) -> dict[str, Any]:
    return {
        "type": "generation",
        "text": text,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "weighted_tokens": weighted,
        "budget_left": budget_left,
        "logprobs": dict(logprobs),
        "multi_token": list(multi_token),
    }


def refused_reply(needed: int, budget_left: int) -> dict[str, Any]:
    return {
        "type": "refused",
        "reason": f"input + 4 x max_new_tokens = {needed} exceeds the {budget_left} weighted tokens left",
        "needed": needed,
        "budget_left": budget_left,
    }


def error_reply(kind: str, reason: str) -> dict[str, Any]:
    return {"type": "error", "kind": kind, "reason": reason}


def _only(obj: dict[str, Any], allowed: set[str]) -> None:
    extra = sorted(set(obj) - allowed)
    if extra:
        raise ProtocolViolation("bad_request", f"unexpected field(s) {extra} in a {obj['type']!r} message")


def _messages(obj: dict[str, Any]) -> tuple[dict[str, str], ...]:
    raw = obj.get("messages")
    if not isinstance(raw, list) or not raw:
        raise ProtocolViolation("bad_request", "messages must be a non-empty list of {role, content}")
    out = []
    for i, m in enumerate(raw):
        if not isinstance(m, dict) or set(m) != {"role", "content"}:
            raise ProtocolViolation("bad_request", f"messages[{i}] must be an object with exactly role and content")
        if not isinstance(m["role"], str) or m["role"] not in ROLES or not isinstance(m["content"], str):
            raise ProtocolViolation("bad_request", f"messages[{i}]: role must be one of {sorted(ROLES)}, content a string")
        if not encodable(m["content"]):
            raise ProtocolViolation("bad_request", f"messages[{i}].content holds a lone UTF-16 surrogate, no character")
        out.append({"role": m["role"], "content": m["content"]})
    return tuple(out)


def _ids(raw: Any, pool_ids: Collection[str], field: str, cap: int | None) -> tuple[str, ...]:
    kind = "bad_result" if field == "ids" else "bad_request"
    if not isinstance(raw, list) or not all(isinstance(i, str) for i in raw):
        raise ProtocolViolation(kind, f"{field} must be a list of strings")
    if cap is not None and len(raw) > cap:
        raise ProtocolViolation("too_many_ids", f"{field} has {len(raw)} ids; at most {cap} are allowed")
    if len(set(raw)) != len(raw):
        dup = next(i for i in raw if raw.count(i) > 1)
        raise ProtocolViolation("duplicate_ids", f"{field} repeats id {_shown(dup)}")
    unknown = [i for i in raw if i not in pool_ids]
    if unknown:
        raise ProtocolViolation("unknown_id", f"{field} has id {_shown(unknown[0])} which is not in this query's pool")
    return tuple(raw)


def _shown(text: str, n: int = 80) -> str:
    """A strategy's string as a reason quotes it: escaped (no control character reaches the operator's terminal, no
    lone surrogate the ledger's UTF-8), and cut."""
    return ascii(text[:n]) + ("..." if len(text) > n else "")


def _snippet(line: bytes, n: int = 80) -> str:
    text = line[:n].decode("utf-8", "replace").rstrip("\n")
    return repr(text) + ("..." if len(line) > n else "")
