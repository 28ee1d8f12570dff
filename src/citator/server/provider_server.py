"""`citator provider-serve`: an OpenAI-compatible chat-completions server over the local transformers backend."""

from __future__ import annotations

import hmac
from pathlib import Path
from typing import Any

# Top-level on purpose: FastAPI resolves string annotations such as `Request` from module globals.
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from citator.errors import ProviderError
from citator.providers.base import api_key_from_env
from citator.providers.local import LocalChatModel, RequestRejected


def create_app(model: LocalChatModel, *, served_name: str, api_key: str | None = None) -> Any:
    """A FastAPI app with /v1/models and /v1/chat/completions; `api_key`, when set, is required as a Bearer token."""
    app = FastAPI(title="citator provider-serve", docs_url=None, redoc_url=None, openapi_url=None)

    def _error(status: int, message: str) -> JSONResponse:
        return JSONResponse({"error": {"message": message, "type": "invalid_request_error"}}, status_code=status)

    def _authorised(request: Request) -> bool:
        if api_key is None:
            return True
        given = request.headers.get("authorization", "")
        return hmac.compare_digest(given.encode(), f"Bearer {api_key}".encode())

    @app.get("/v1/models")
    def models(request: Request) -> Any:
        if not _authorised(request):
            return _error(401, "missing or wrong API key")
        return {"object": "list", "data": [{"id": served_name, "object": "model", "owned_by": "citator"}]}

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Any:
        if not _authorised(request):
            return _error(401, "missing or wrong API key")
        try:
            payload = await request.json()
        except ValueError:
            return _error(400, "body is not JSON")
        if not isinstance(payload, dict):
            return _error(400, "body must be a JSON object")
        if payload.get("model") not in (None, served_name):
            return _error(404, f"model {payload.get('model')!r} is not served here (serving {served_name!r})")
        if payload.get("stream"):
            return _error(400, "streaming is not supported")
        if payload.get("n", 1) != 1:
            return _error(400, "n must be 1")
        try:
            # Generation is CPU/GPU bound: run it off the event loop.
            body = await run_in_threadpool(model.chat_completion, {**payload, "model": served_name})
        except RequestRejected as exc:
            return _error(400, str(exc))
        return body

    return app


def serve(model_dir: str | Path, *, host: str = "127.0.0.1", port: int = 8000, served_name: str | None = None,
          api_key_env: str | None = None, device: str | None = None) -> None:
    """Load the model and serve until interrupted; the key is read from `api_key_env` and never printed."""
    import uvicorn

    key = api_key_from_env(api_key_env)
    if api_key_env and not key:
        raise ProviderError(f"--api-key-env {api_key_env}: that environment variable is not set")
    model = LocalChatModel(model_dir, device=device)
    app = create_app(model, served_name=served_name or model.model_id, api_key=key or None)
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
