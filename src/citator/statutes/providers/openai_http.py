"""An OpenAI-compatible chat-completions client over HTTP (httpx); the key comes from an environment variable."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx

from citator.errors import ProviderError
from citator.statutes.providers.base import ChatProvider, Exchange, Redactor, api_key_from_env


class OpenAIHTTPProvider(ChatProvider):
    """POSTs to `{base_url}/chat/completions`; requests name the pinned `version`, which must come back."""

    name = "openai"

    def __init__(
        self, base_url: str, model: str, version: str | None = None, *, api_key_env: str | None = "OPENAI_API_KEY",
        timeout_s: float = 120.0,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ProviderError(f"base URL must start with http:// or https://, got {base_url!r}")
        # The URL is recorded in every receipt and named in transport errors: it must carry no credential.
        parts = urlsplit(base_url)
        if parts.username is not None or parts.password is not None or parts.query or parts.fragment:
            raise ProviderError("base URL must not carry a user, password, query or fragment (it is written into "
                                "every receipt): pass the key through the environment variable instead")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.version = version or model
        self.api_key_env = api_key_env
        self.timeout_s = timeout_s
        key = self._key()
        if key is not None and not _header_safe(key):
            # Refused before any request, so that no receipt is spent on it (a failed receipt is never re-sent).
            raise ProviderError(_UNSAFE_KEY.format(env=api_key_env))

    def redact(self, value: Any) -> Any:
        return Redactor(self._key()).value(value)

    def describe(self) -> dict[str, Any]:
        # The env var's name is configuration; its value is a credential and never leaves this object.
        return {"provider": self.name, "base_url": self.base_url, "model": self.model, "version": self.version,
                "api_key_env": self.api_key_env}

    def _key(self) -> str | None:
        return api_key_from_env(self.api_key_env)

    def _headers(self, key: str | None) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    @property
    def request_model(self) -> str:
        return self.version

    def check(self) -> None:
        """GET {base_url}/models: the server answers, accepts the key and serves the pinned version."""
        key = self._key()
        url = f"{self.base_url}/models"
        try:
            response = httpx.get(url, headers=self._headers(key), timeout=min(self.timeout_s, 30.0))
        except Exception as exc:  # noqa: BLE001 - any transport failure means the provider is not there
            raise ProviderError(redact(f"{url} did not answer ({type(exc).__name__}: {exc}); nothing was sent "
                                       "and no budget was spent: start the server, or wait until it has loaded, "
                                       "and run again", key)) from None
        try:
            body: Any = response.json()
        except ValueError:
            body = None
        if response.status_code != 200:
            message = body.get("error") if isinstance(body, dict) else None
            message = message.get("message") if isinstance(message, dict) else message
            raise ProviderError(redact(f"{url} answered HTTP {response.status_code}"
                                       + (f" ({str(message)[:200]})" if message else "")
                                       + "; nothing was sent and no budget was spent", key))
        data = body.get("data") if isinstance(body, dict) else None
        served = [m.get("id") for m in data if isinstance(m, dict)] if isinstance(data, list) else None
        if served is None:
            raise ProviderError(f"{url} did not answer with an OpenAI model list; nothing was sent")
        if self.version not in served:
            names = ", ".join(repr(redact(str(m), key)) for m in served[:10]) or "none"
            raise ProviderError(f"{url} does not serve model {self.version!r} (it serves {names}); nothing was sent")

    def send(self, payload: Mapping[str, Any]) -> Exchange:
        key = self._key()
        if key is not None and not _header_safe(key):
            # The variable changed since construction. Sent, such a key would fail in the HTTP library, whose error
            # quotes the header.
            return Exchange(0, None, _UNSAFE_KEY.format(env=self.api_key_env) + "; nothing was sent")
        try:
            response = httpx.post(f"{self.base_url}/chat/completions", json=dict(payload), headers=self._headers(key),
                                  timeout=self.timeout_s)
        except Exception as exc:  # noqa: BLE001 - any failure is this request's outcome, with the key redacted
            return Exchange(0, None, redact(f"{type(exc).__name__}: {exc}", key))
        try:
            parsed: Any = response.json()
        except ValueError:
            parsed = response.text
        # What comes back is stored as it came, but for the key: a proxy may echo it ("Invalid API key: sk-...").
        parsed = Redactor(key).value(parsed)
        if response.status_code != 200:
            detail = parsed.get("error") if isinstance(parsed, dict) else parsed
            detail = detail.get("message") if isinstance(detail, dict) else detail
            reason = f"HTTP {response.status_code}" + (f": {str(detail)[:300]}" if detail else "")
            return Exchange(response.status_code, parsed, reason)
        served = parsed.get("model") if isinstance(parsed, dict) else None
        if served != self.version:
            return Exchange(response.status_code, parsed, f"served model {served!r} is not the pinned {self.version!r}")
        return Exchange(200, parsed)


def _header_safe(value: str) -> bool:
    """Printable ASCII without spaces: what a bearer token may hold."""
    return all("!" <= c <= "~" for c in value)


def redact(text: str, secret: str | None) -> str:
    """`text` with `secret` replaced by *** in every form `Redactor` knows, so that no stored text carries it."""
    return Redactor(secret).text(text)


_UNSAFE_KEY = "${env} holds a character an HTTP header cannot carry (the key is not shown)"
