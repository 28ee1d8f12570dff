"""The HTTP client: pinned version checked, transport errors returned once (no retry), key only in the header."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures.servers import free_port

from citator.errors import ProviderError
from citator.providers.base import chat_payload
from citator.providers.openai_http import OpenAIHTTPProvider


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


def test_provider_serve_refuses_an_unset_key_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from citator.cli.main import main

    monkeypatch.delenv("CITATOR_UNSET_KEY", raising=False)
    rc = main(["provider-serve", "--model", str(tmp_path), "--port", "1", "--api-key-env", "CITATOR_UNSET_KEY"])
    assert rc == 2 and "CITATOR_UNSET_KEY: that environment variable is not set" in capsys.readouterr().err
