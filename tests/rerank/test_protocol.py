"""Strict parsing of strategy messages: each malformed message maps to a failure kind."""

from __future__ import annotations

import json

import pytest

from citator.rerank.limits import Limits
from citator.rerank.protocol import (
    CountRequest,
    GenerateRequest,
    ProtocolViolation,
    ResultRequest,
    parse_request,
)

POOL = {f"d{i}" for i in range(20)}
MSG = [{"role": "user", "content": "hi"}]


def parse(obj: object) -> object:
    return parse_request(json.dumps(obj).encode() + b"\n", POOL, Limits())


def test_valid_requests() -> None:
    assert parse({"type": "count", "messages": MSG}) == CountRequest(tuple(MSG))
    req = parse({"type": "generate", "messages": MSG, "max_new_tokens": 2, "logprob_tokens": ["A"], "candidate_ids": ["d1"]})
    assert req == GenerateRequest(tuple(MSG), 2, ("A",), ("d1",))
    assert parse({"type": "result", "ids": ["d3", "d1"]}) == ResultRequest(("d3", "d1"))
    assert parse({"type": "result", "ids": []}) == ResultRequest(())


@pytest.mark.parametrize(
    "obj, kind",
    [
        ([1, 2], "garbage"),
        ({"type": "hello"}, "bad_request"),
        ({"type": "count"}, "bad_request"),
        ({"type": "count", "messages": []}, "bad_request"),
        ({"type": "count", "messages": [{"role": "tool", "content": "x"}]}, "bad_request"),
        ({"type": "count", "messages": [{"role": "user", "content": 3}]}, "bad_request"),
        ({"type": "count", "messages": MSG, "extra": 1}, "bad_request"),
        ({"type": "generate", "messages": MSG}, "bad_request"),
        ({"type": "generate", "messages": MSG, "max_new_tokens": 0}, "bad_request"),
        ({"type": "generate", "messages": MSG, "max_new_tokens": True}, "bad_request"),
        ({"type": "generate", "messages": MSG, "max_new_tokens": 1, "logprob_tokens": [""]}, "bad_request"),
        ({"type": "generate", "messages": MSG, "max_new_tokens": 1, "logprob_tokens": ["a", "a"]}, "bad_request"),
        ({"type": "generate", "messages": MSG, "max_new_tokens": 1, "candidate_ids": ["zz"]}, "unknown_id"),
        ({"type": "result"}, "bad_result"),
        ({"type": "result", "ids": "d1"}, "bad_result"),
        ({"type": "result", "ids": ["d1", "d1"]}, "duplicate_ids"),
        ({"type": "result", "ids": ["nope"]}, "unknown_id"),
        ({"type": "result", "ids": [f"d{i}" for i in range(11)]}, "too_many_ids"),
    ],
)
def test_violations(obj: object, kind: str) -> None:
    with pytest.raises(ProtocolViolation) as info:
        parse(obj)
    assert info.value.kind == kind


def test_non_json_and_non_utf8_lines_are_garbage() -> None:
    for line in (b"not json\n", b"\xff\xfe\n"):
        with pytest.raises(ProtocolViolation) as info:
            parse_request(line, POOL, Limits())
        assert info.value.kind == "garbage"
