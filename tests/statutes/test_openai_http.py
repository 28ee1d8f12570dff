"""The HTTP client: pinned version checked, transport errors returned once (no retry), key only in the header."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from fixtures.servers import free_port

from citator.errors import ProviderError
from citator.statutes.providers.base import chat_payload
from citator.statutes.providers.openai_http import OpenAIHTTPProvider


def test_pinned_version_must_come_back(fake_server, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    base_url, log = fake_server(0.0)
    monkeypatch.setenv("CITATOR_KEY_UNDER_TEST", "sk-abc")
    messages = [{"role": "user", "content": "[C1] x"}]
    good = OpenAIHTTPProvider(base_url, "fake", "fake-grader-2026-01-01", api_key_env="CITATOR_KEY_UNDER_TEST")
    ok = good.send(chat_payload(good.request_model, messages, 8))
    assert ok.status == 200 and ok.error is None and json.loads(ok.body["choices"][0]["message"]["content"]) == {"C1": 3}
    other = OpenAIHTTPProvider(base_url, "fake", "fake-grader-2099-01-01", api_key_env=None)
    bad = other.send(chat_payload(other.request_model, messages, 8))
    assert bad.status == 200 and "is not the pinned 'fake-grader-2099-01-01'" in (bad.error or "")
    seen = [json.loads(x) for x in Path(log).read_text().splitlines()]
    assert [s["auth"] for s in seen] == [True, False]
    assert "sk-abc" not in json.dumps(good.describe())


def test_transport_error_is_returned_once() -> None:
    provider = OpenAIHTTPProvider(f"http://127.0.0.1:{free_port()}/v1", "m", timeout_s=2.0)
    exchange = provider.send(chat_payload("m", [{"role": "user", "content": "x"}], 4))
    assert exchange.status == 0 and exchange.body is None and exchange.error.startswith("ConnectError")


def test_base_url_must_be_http() -> None:
    with pytest.raises(ProviderError):
        OpenAIHTTPProvider("ftp://x", "m")


@pytest.mark.parametrize("url", ["https://user:sk-secret@api.example/v1", "https://api.example/v1?key=sk-secret",
                                 "https://sk-secret@api.example/v1"])
def test_base_url_carrying_a_credential_is_refused_without_echoing_it(url: str) -> None:
    with pytest.raises(ProviderError) as err:
        OpenAIHTTPProvider(url, "m")
    assert "sk-secret" not in str(err.value)


def test_a_key_read_with_its_newline_is_sent_without_it(fake_server, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    base_url, log = fake_server(0.0)
    monkeypatch.setenv("CITATOR_KEY_UNDER_TEST", "sk-abc\r\n")
    provider = OpenAIHTTPProvider(base_url, "fake", "fake-grader-2026-01-01", api_key_env="CITATOR_KEY_UNDER_TEST")
    ok = provider.send(chat_payload(provider.request_model, [{"role": "user", "content": "[C1] x"}], 8))
    assert ok.status == 200 and ok.error is None
    assert [json.loads(x)["authorization"] for x in Path(log).read_text().splitlines()] == ["Bearer sk-abc"]


def test_a_key_no_header_can_carry_is_refused_before_any_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITATOR_KEY_UNDER_TEST", "sk-abc\ndef")
    with pytest.raises(ProviderError) as err:
        OpenAIHTTPProvider("http://127.0.0.1:9/v1", "fake", api_key_env="CITATOR_KEY_UNDER_TEST")
    assert "CITATOR_KEY_UNDER_TEST holds a character" in str(err.value)
    assert "sk-abc" not in str(err.value) and "def" not in str(err.value)
    monkeypatch.setenv("CITATOR_KEY_UNDER_TEST", "\ufeffsk-abc\r\n")  # a Notepad file's BOM goes too
    assert OpenAIHTTPProvider("http://127.0.0.1:9/v1", "m", api_key_env="CITATOR_KEY_UNDER_TEST")._key() == "sk-abc"


def test_a_response_that_echoes_the_key_is_stored_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    def post(*args, headers, **kwargs):  # type: ignore[no-untyped-def]  # a proxy that quotes the key back
        key = headers["Authorization"].removeprefix("Bearer ")
        return httpx.Response(401, json={"error": {"message": f"Invalid API key: {key}", key: [key]}})

    monkeypatch.setenv("CITATOR_KEY_UNDER_TEST", "sk-live-SECRET")
    monkeypatch.setattr(httpx, "post", post)
    provider = OpenAIHTTPProvider("http://127.0.0.1:9/v1", "m", api_key_env="CITATOR_KEY_UNDER_TEST")
    exchange = provider.send(chat_payload("m", [{"role": "user", "content": "x"}], 4))
    assert exchange.status == 401
    assert exchange.body == {"error": {"message": "Invalid API key: ***", "***": ["***"]}}


def test_an_error_that_quotes_the_key_is_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    def post(*args, headers, **kwargs):  # type: ignore[no-untyped-def]  # what h11 does with a header it rejects
        raise httpx.LocalProtocolError(f"Illegal header value {headers['Authorization'].encode()!r}")

    monkeypatch.setenv("CITATOR_KEY_UNDER_TEST", "sk-abc")
    monkeypatch.setattr(httpx, "post", post)
    provider = OpenAIHTTPProvider("http://127.0.0.1:9/v1", "m", api_key_env="CITATOR_KEY_UNDER_TEST")
    exchange = provider.send(chat_payload("m", [{"role": "user", "content": "x"}], 4))
    assert exchange.status == 0 and exchange.error == "LocalProtocolError: Illegal header value b'Bearer ***'"


def test_provider_serve_refuses_an_unset_key_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from citator.cli.main import main

    monkeypatch.delenv("CITATOR_UNSET_KEY", raising=False)
    rc = main(["provider-serve", "--model", str(tmp_path), "--port", "0", "--api-key-env", "CITATOR_UNSET_KEY"])
    assert rc == 2 and "CITATOR_UNSET_KEY: that environment variable is not set" in capsys.readouterr().err
