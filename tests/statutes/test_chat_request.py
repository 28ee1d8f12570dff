"""The chat-completions request parser: every field the official client can send is honoured or refused."""

from __future__ import annotations

import typing

import pytest

from citator.statutes.providers.chat_request import _KNOWN, RequestRejected, parse_chat_request

USER = [{"role": "user", "content": "hi"}]


def test_every_field_of_the_official_client_has_a_decided_behaviour() -> None:
    from openai.types.chat.completion_create_params import CompletionCreateParamsBase

    fields = set(typing.get_type_hints(CompletionCreateParamsBase, include_extras=False))
    assert fields - _KNOWN == set()


def test_defaults_and_equivalent_forms() -> None:
    plain = parse_chat_request({"messages": USER}, max_tokens_cap=512)
    assert plain.max_tokens == 64 and plain.stop == () and not plain.logprobs
    parts = parse_chat_request({"messages": [{"role": "developer", "content": "be brief"},
                                             {"role": "user", "content": [{"type": "text", "text": "h"},
                                                                          {"type": "text", "text": "i"}]}],
                                "stop": "x", "max_completion_tokens": 5, "seed": 3, "top_p": 0.1,
                                "response_format": {"type": "text"}, "user": "u", "metadata": {"a": "b"},
                                "store": False, "tool_choice": "none", "n": 1, "logit_bias": {}},
                               max_tokens_cap=512)
    assert parts.messages == (("system", "be brief"), ("user", "hi"))
    assert parts.stop == ("x",) and parts.max_tokens == 5
    assert parse_chat_request({"messages": USER}, max_tokens_cap=8).max_tokens == 8


@pytest.mark.parametrize(("extra", "param"), [
    ({"top_p": 1.5}, "top_p"),
    ({"seed": "7"}, "seed"),
    ({"stream": True}, "stream"),
    ({"store": True}, "store"),
    ({"tool_choice": "auto"}, "tool_choice"),
    ({"top_logprobs": 3}, "top_logprobs"),  # without logprobs: true
    ({"logprobs": "yes"}, "logprobs"),
    ({"max_tokens": 5, "max_completion_tokens": 6}, "max_tokens"),
    ({"stop": ""}, "stop"),
    ({"temperature": float("nan")}, "temperature"),
    ({"reasoning_effort": "high"}, "reasoning_effort"),
    ({"modalities": ["text", "audio"]}, "modalities"),
    ({"messages": []}, "messages"),
    ({"messages": [{"role": "user", "content": []}]}, "messages[0].content"),
    ({"messages": [{"role": "user", "content": [{"type": "text", "text": 3}]}]}, "messages[0].content[0]"),
])
def test_refusals_name_the_field(extra: dict, param: str) -> None:
    with pytest.raises(RequestRejected) as caught:
        parse_chat_request({"messages": USER, **extra}, max_tokens_cap=512)
    assert caught.value.param == param
