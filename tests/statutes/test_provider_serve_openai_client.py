"""`citator provider-serve` as the official `openai` Python client sees it: every field honoured or refused."""

from __future__ import annotations

import time
from typing import Any

import httpx
import openai
import pytest
from fixtures.servers import Served

pytestmark = pytest.mark.slow


@pytest.fixture
def client(provider_serve: Served) -> openai.OpenAI:
    return openai.OpenAI(base_url=provider_serve.base_url, api_key=provider_serve.key, max_retries=0, timeout=120)


def _chat(client: openai.OpenAI, **kwargs: Any) -> Any:
    params = {"model": "tiny-qwen3", "messages": [{"role": "user", "content": "Say something."}], "max_tokens": 16}
    return client.chat.completions.create(**{**params, **kwargs})


def test_developer_role_and_text_parts_are_served_as_system_and_string(client: openai.OpenAI) -> None:
    parts = _chat(client, messages=[
        {"role": "developer", "content": "Answer briefly."},
        {"role": "user", "content": [{"type": "text", "text": "Name a "}, {"type": "text", "text": "statute."}]},
    ], logprobs=True, top_logprobs=3, seed=7, top_p=0.5, max_tokens=None, max_completion_tokens=8)
    plain = _chat(client, messages=[
        {"role": "system", "content": "Answer briefly."}, {"role": "user", "content": "Name a statute."},
    ], max_tokens=8)
    assert parts.choices[0].message.content == plain.choices[0].message.content
    assert parts.usage.prompt_tokens == plain.usage.prompt_tokens and parts.usage.completion_tokens <= 8
    assert all(len(e.top_logprobs) == 3 for e in parts.choices[0].logprobs.content)
    assert parts.id != plain.id and parts.id.startswith("chatcmpl-")
    assert abs(parts.created - time.time()) < 3600


def test_stop_sequence_ends_the_completion_before_it(client: openai.OpenAI) -> None:
    free = _chat(client, max_tokens=24)
    text = free.choices[0].message.content
    assert len(text) >= 6, "the tiny model wrote too little to pick a stop sequence from"
    stop = text[3:6]
    stopped = _chat(client, max_tokens=24, stop=[stop, "\x00never"], logprobs=True)
    choice = stopped.choices[0]
    assert choice.message.content == text[: text.index(stop)]
    assert choice.finish_reason == "stop"
    assert "".join(e.token for e in choice.logprobs.content) == choice.message.content
    single = _chat(client, max_tokens=24, stop=stop)
    assert single.choices[0].message.content == choice.message.content


@pytest.mark.parametrize(("kwargs", "param", "code"), [
    ({"temperature": 0.7}, "temperature", "unsupported_value"),
    ({"presence_penalty": 0.5}, "presence_penalty", "unsupported_value"),
    ({"frequency_penalty": 1.0}, "frequency_penalty", "unsupported_value"),
    ({"logit_bias": {"15": 5}}, "logit_bias", "unsupported_value"),
    ({"response_format": {"type": "json_object"}}, "response_format", "unsupported_value"),
    ({"tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]}, "tools",
     "unsupported_value"),
    ({"n": 2}, "n", "invalid_value"),
    ({"max_tokens": 100_000}, "max_tokens", "invalid_value"),
    ({"stop": ["a", "b", "c", "d", "e"]}, "stop", "invalid_value"),
    ({"extra_body": {"bogus": 1}}, "bogus", "unknown_parameter"),
    ({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "http://x/y.png"}}]}]},
     "messages[0].content[0].type", "unsupported_value"),
    ({"messages": [{"role": "tool", "content": "x", "tool_call_id": "1"}]}, "messages[0].role", "unsupported_value"),
    ({"messages": [{"role": "user", "content": "x", "name": "bob"}]}, "messages[0].name", "unsupported_parameter"),
])
def test_a_field_that_cannot_be_honoured_is_refused_with_the_envelope(
    client: openai.OpenAI, kwargs: dict[str, Any], param: str, code: str
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        _chat(client, **kwargs)
    assert caught.value.status_code == 400
    assert caught.value.param == param and caught.value.code == code
    assert set(caught.value.body) == {"message", "type", "param", "code"}


def test_a_prompt_longer_than_the_context_is_refused_before_generation(client: openai.OpenAI) -> None:
    # The tiny model's config allows 32,768 positions: this prompt has more than 33,000 tokens.
    with pytest.raises(openai.BadRequestError) as caught:
        _chat(client, messages=[{"role": "user", "content": "statute " * 33_000}])
    assert caught.value.code == "context_length_exceeded" and caught.value.param == "messages"
    assert "maximum context length is 32768 tokens" in caught.value.message


def test_models_auth_and_model_name_errors(client: openai.OpenAI, provider_serve: Served) -> None:
    assert [m.id for m in client.models.list()] == ["tiny-qwen3"]
    assert client.models.retrieve("tiny-qwen3").id == "tiny-qwen3"
    with pytest.raises(openai.NotFoundError) as missing:
        _chat(client, model="gpt-4o")
    assert missing.value.code == "model_not_found"
    stranger = openai.OpenAI(base_url=provider_serve.base_url, api_key="sk-wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError) as denied:
        stranger.models.list()
    assert denied.value.code == "invalid_api_key"


@pytest.mark.parametrize(("method", "path", "status", "code"), [
    ("GET", "/v1/embeddings", 404, "unknown_url"),
    ("POST", "/v2/chat/completions", 404, "unknown_url"),
    ("DELETE", "/v1/chat/completions", 405, "method_not_allowed"),
    ("GET", "/v1/chat/completions", 405, "method_not_allowed"),
])
def test_unknown_routes_and_wrong_methods_get_the_envelope(provider_serve: Served, method: str, path: str,
                                                           status: int, code: str) -> None:
    root = provider_serve.base_url.removesuffix("/v1")
    r = httpx.request(method, root + path, headers={"Authorization": f"Bearer {provider_serve.key}"})
    assert r.status_code == status
    assert r.json()["error"]["code"] == code
    assert set(r.json()["error"]) == {"message", "type", "param", "code"}


# Each body names the served model: what it tests is checked after the model.
_MODEL = b'{"model": "tiny-qwen3", '
_MESSAGES = '"model": "tiny-qwen3", "messages": [{"role": "user", "content": "hi"}]'


@pytest.mark.parametrize(("body", "content_type", "status", "code"), [
    (_MODEL + b'"messages": [{"role": ["user"], "content": "hi"}]}', "application/json", 400, "unsupported_value"),
    (_MODEL + b'"messages": [{"role": {"a": 1}, "content": "hi"}]}', "application/json", 400, "unsupported_value"),
    (_MODEL + b'"messages": [{"role": "user", "content": "\\ud800 hi"}]}', "application/json", 400, "invalid_value"),
    (_MODEL + b'"messages": [{"role": "user", "content": [{"type": "text", "text": "\\udfff"}]}]}',
     "application/json", 400, "invalid_value"),
    (b'{"stop": "\\ud800", ' + _MESSAGES.encode() + b"}", "application/json", 400, "invalid_value"),
    (_MODEL + b'"messages": ' + b"[" * 100_000, "application/json", 400, "invalid_json"),
    (_MODEL + b'"messages": "\xff"}', "application/json", 400, "invalid_json"),
    (b'{"messages": [{"role": "user", "content": "hi"}]}', "application/json", 400, "missing_required_parameter"),
    # A body a browser would send across origins without asking: no page may make the server generate.
    (b"{" + _MESSAGES.encode() + b"}", "text/plain", 415, "unsupported_media_type"),
    (b"{" + _MESSAGES.encode() + b"}", "application/x-www-form-urlencoded", 415, "unsupported_media_type"),
    (b"{" + _MESSAGES.encode() + b"," + b" " * (9 * 1024 * 1024) + b"}", "application/json", 413,
     "request_too_large"),
])
def test_hostile_bodies_get_a_4xx_envelope_not_a_500(provider_serve: Served, body: bytes, content_type: str,
                                                      status: int, code: str) -> None:
    r = httpx.post(f"{provider_serve.base_url}/chat/completions", content=body, timeout=60,
                   headers={"Authorization": f"Bearer {provider_serve.key}", "Content-Type": content_type})
    assert r.status_code == status, r.text
    assert r.json()["error"]["code"] == code and set(r.json()["error"]) == {"message", "type", "param", "code"}


def test_a_model_that_is_not_a_string_is_a_400(provider_serve: Served) -> None:
    r = httpx.post(f"{provider_serve.base_url}/chat/completions", timeout=60,
                   json={"model": 7, "messages": [{"role": "user", "content": "hi"}]},
                   headers={"Authorization": f"Bearer {provider_serve.key}"})
    assert r.status_code == 400 and r.json()["error"]["param"] == "model"


@pytest.mark.parametrize("path", ["/models", "/models/tiny-qwen3"])
def test_head_is_answered_wherever_get_is(provider_serve: Served, path: str) -> None:
    auth = {"Authorization": f"Bearer {provider_serve.key}"}
    got = httpx.get(provider_serve.base_url + path, headers=auth)
    head = httpx.head(provider_serve.base_url + path, headers=auth)
    assert got.status_code == head.status_code == 200
    assert head.content == b"" and head.headers["content-type"] == got.headers["content-type"]
    assert httpx.head(provider_serve.base_url + path).status_code == 401  # the key is asked of HEAD as of GET
    assert httpx.head(provider_serve.base_url + "/models/other", headers=auth).status_code == 404
    wrong = httpx.delete(provider_serve.base_url + "/models", headers=auth)
    assert wrong.status_code == 405 and set(wrong.headers["allow"].split(", ")) == {"GET", "HEAD"}
