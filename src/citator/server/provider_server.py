"""`citator provider-serve`: an OpenAI-compatible chat-completions server over the local transformers backend.

Every answer that is not a completion is OpenAI's error envelope `{"error": {message, type, param, code}}`:
refused fields, unknown routes, wrong methods and unexpected failures alike.
"""

from __future__ import annotations

import hmac
import socket
import time
from collections.abc import Callable, Iterable
from typing import Any

# Top-level on purpose: FastAPI resolves string annotations such as `Request` from module globals.
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from citator.data.jsonl import loads
from citator.errors import ProviderError
from citator.server.pages import serve_on
from citator.statutes.providers.base import api_key_from_env
from citator.statutes.providers.chat_request import RequestRejected, error_body
from citator.statutes.providers.local import LocalChatModel

# Codes of the envelope for what the routes themselves refuse (OpenAI's names where it has one).
_STATUS_CODES = {404: "unknown_url", 405: "method_not_allowed"}
# A request carries at most a context window of text (Qwen3: 32k tokens, some 130 KB); 8 MiB leaves room for any
# JSON around it while bounding what one request makes the server read and tokenise.
MAX_BODY_BYTES = 8 * 1024 * 1024


class _TooLarge(Exception):
    pass


async def _body(request: Request) -> bytes:
    """The request body, refused past MAX_BODY_BYTES before more of it is read."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise _TooLarge
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise _TooLarge
        chunks.append(chunk)
    return b"".join(chunks)


def _error(status: int, message: str, param: str | None = None, code: str | None = None,
           kind: str = "invalid_request_error") -> JSONResponse:
    return JSONResponse({"error": error_body(message, param, code, kind)}, status_code=status)


def _answer_errors_as_openai(app: FastAPI) -> None:
    """HTTP errors and failures answered in OpenAI's error shape."""

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 404:
            message = f"Unknown request URL: {request.method} {request.url.path}"
        elif exc.status_code == 405:
            message = f"Method {request.method} is not allowed on {request.url.path}"
        else:
            message = str(exc.detail)
        response = _error(exc.status_code, message, None, _STATUS_CODES.get(exc.status_code))
        response.headers.update(exc.headers or {})  # a 405's Allow names the methods the path answers
        return response

    @app.exception_handler(Exception)
    async def server_error(request: Request, exc: Exception) -> JSONResponse:
        # The message names the failure's type only: its text may quote the request.
        return _error(500, f"the server failed on this request ({type(exc).__name__})", None, None, "server_error")


def create_app(model: LocalChatModel, *, served_name: str, api_key: str | None = None) -> Any:
    """A FastAPI app with /v1/models and /v1/chat/completions; `api_key`, when set, is required as a Bearer token."""
    app = FastAPI(title="citator provider-serve", docs_url=None, redoc_url=None, openapi_url=None)
    created = int(time.time())
    _answer_errors_as_openai(app)

    def _authorised(request: Request) -> bool:
        if api_key is None:
            return True
        given = request.headers.get("authorization", "")
        return hmac.compare_digest(given.encode(), f"Bearer {api_key}".encode())

    def _unauthorised() -> JSONResponse:
        return _error(401, "missing or wrong API key (send it as: Authorization: Bearer KEY)", None, "invalid_api_key")

    # HEAD is answered wherever GET is, as HTTP asks (FastAPI's `get` routes answer GET alone).
    @app.api_route("/v1/models", methods=["GET", "HEAD"])
    def models(request: Request) -> Any:
        if not _authorised(request):
            return _unauthorised()
        return {"object": "list",
                "data": [{"id": served_name, "object": "model", "created": created, "owned_by": "citator"}]}

    @app.api_route("/v1/models/{name:path}", methods=["GET", "HEAD"])
    def model_info(name: str, request: Request) -> Any:
        if not _authorised(request):
            return _unauthorised()
        if name != served_name:
            return _error(404, f"The model {name!r} does not exist (serving {served_name!r})", "model",
                          "model_not_found")
        return {"id": served_name, "object": "model", "created": created, "owned_by": "citator"}

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Any:
        if not _authorised(request):
            return _unauthorised()
        # A browser may send text/plain across origins without asking first; JSON it must ask for, so a web page
        # cannot make this server generate for it.
        if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            return _error(415, "send the body as JSON (Content-Type: application/json)", None,
                          "unsupported_media_type")
        try:
            payload = loads((await _body(request)).decode("utf-8"))
        except _TooLarge:
            return _error(413, f"the body is over {MAX_BODY_BYTES} bytes", None, "request_too_large")
        except ClientDisconnect:
            return _error(400, "the client left before sending the whole body", None, "invalid_json")
        except ValueError:  # not UTF-8, malformed, or nested too deeply for the parser
            return _error(400, "body is not JSON", None, "invalid_json")
        if not isinstance(payload, dict):
            return _error(400, "body must be a JSON object", None, "invalid_json")
        # The model is required, as in OpenAI's API: the name is how a client knows it reached the model it meant.
        if payload.get("model") is None:
            return _error(400, "Missing required parameter: 'model'.", "model", "missing_required_parameter")
        if not isinstance(payload["model"], str):
            return _error(400, "model must be a string", "model", "invalid_value")
        if payload["model"] != served_name:
            return _error(404, f"The model {payload['model']!r} does not exist (serving {served_name!r})",
                          "model", "model_not_found")
        try:
            # Generation is CPU/GPU bound: run it off the event loop.
            return await run_in_threadpool(model.chat_completion, {**payload, "model": served_name})
        except RequestRejected as exc:
            return _error(400, str(exc), exc.param, exc.code)

    return app


def serve(load: Callable[[], LocalChatModel], *, sock: socket.socket, hosts: Iterable[str],
          served_name: str | None = None, api_key_env: str | None = None,
          ready: Callable[[], None] = lambda: None) -> None:
    """Load the model (`load`, called once the key is known to be there) and serve on the listening `sock` until
    interrupted, to requests whose Host is one of `hosts` (`ready` is called once the model is loaded); the key is
    read from `api_key_env` and never printed."""
    with sock:
        key = api_key_from_env(api_key_env)
        if api_key_env and not key:
            raise ProviderError(f"--api-key-env {api_key_env}: that environment variable is not set")
        model = load()
        app = create_app(model, served_name=served_name or model.model_id, api_key=key or None)
        ready()
        serve_on(sock, app, hosts, access_log=False)
