"""What every server-rendered page of citator shares: its security headers, and the rule for where it listens."""

from __future__ import annotations

import ipaddress
import sys
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import Response


def add_security_headers(app: FastAPI, headers: Mapping[str, str]) -> None:
    """Every response of `app` carries `headers` (a header a route set itself is kept)."""

    @app.middleware("http")
    async def security_headers(request: Request, call_next: Any) -> Response:
        response = await call_next(request)
        for name, value in headers.items():
            response.headers.setdefault(name, value)
        return response


def warn_unless_loopback(host: str, exposed: str) -> None:
    """A page bound beyond this machine says so on stderr: `exposed` names what others could then reach."""
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if not loopback:
        print(f"warning: serving on {host}: anyone who can reach it {exposed}", file=sys.stderr)
