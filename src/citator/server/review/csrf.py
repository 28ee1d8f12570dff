"""CSRF defence for the review forms: a double-submit token plus a same-origin check."""

from __future__ import annotations

import hmac
import secrets

from starlette.requests import Request

CSRF_COOKIE = "citator_csrf"
CSRF_FIELD = "csrf_token"


def csrf_token_for(request: Request) -> str:
    """The browser's CSRF token (from its cookie), or a fresh one that the response must set."""
    return request.cookies.get(CSRF_COOKIE) or secrets.token_urlsafe(32)


def csrf_ok(request: Request, submitted: str | None) -> bool:
    """True only when the form carries the cookie's token and the request did not come from another origin."""
    cookie = request.cookies.get(CSRF_COOKIE, "")
    if not cookie or not submitted or not hmac.compare_digest(cookie.encode(), submitted.encode()):
        return False
    # Browsers send Origin on form POSTs; a foreign one is refused even if a token leaked.
    origin = request.headers.get("origin")
    if origin is not None and origin != f"{request.url.scheme}://{request.headers.get('host', '')}":
        return False
    return True
