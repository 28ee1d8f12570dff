"""An OpenAI-compatible chat-completions client over HTTP (httpx); the key comes from an environment variable."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import httpx

from citator.errors import ProviderError
from citator.providers.base import ChatProvider, Exchange


class OpenAIHTTPProvider(ChatProvider):
    """POSTs to `{base_url}/chat/completions`; requests name the pinned `version`, which must come back."""

    name = "openai"

    def __init__(
        self, base_url: str, model: str, version: str | None = None, *, api_key_env: str | None = "OPENAI_API_KEY",
        timeout_s: float = 120.0,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ProviderError(f"base URL must start with http:// or https://, got {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.version = version or model
        self.api_key_env = api_key_env
        self.timeout_s = timeout_s

    def describe(self) -> dict[str, Any]:
        # The env var's name is configuration; its value is a credential and never leaves this object.
        return {"provider": self.name, "base_url": self.base_url, "model": self.model, "version": self.version,
                "api_key_env": self.api_key_env}

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    @property
    def request_model(self) -> str:
        return self.version

    def send(self, payload: Mapping[str, Any]) -> Exchange:
        try:
            response = httpx.post(f"{self.base_url}/chat/completions", json=dict(payload), headers=self._headers(),
                                  timeout=self.timeout_s)
        except httpx.HTTPError as exc:
            # The exception text names the URL and error type, never request headers.
            return Exchange(0, None, f"{type(exc).__name__}: {exc}")
        try:
            parsed: Any = response.json()
        except ValueError:
            parsed = response.text
        if response.status_code != 200:
            return Exchange(response.status_code, parsed, f"HTTP {response.status_code}")
        served = parsed.get("model") if isinstance(parsed, dict) else None
        if served != self.version:
            return Exchange(response.status_code, parsed, f"served model {served!r} is not the pinned {self.version!r}")
        return Exchange(200, parsed)
