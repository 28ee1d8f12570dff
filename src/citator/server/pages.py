"""What every server of citator shares: security headers, the rule for where it listens, and how it starts (behind
server/guard.py's host names, request deadlines and connection cap)."""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import sys
from collections.abc import Iterable, Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import Response

from citator.errors import ConfigError
from citator.server.guard import Limits, guarded_protocol, host_guard


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


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to host:port and listening, or one ConfigError line (the port is taken, the address is not
    this machine's) before anything says it is serving."""
    try:
        found = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (OSError, UnicodeError) as exc:
        raise ConfigError(f"cannot listen on {host}:{port}: {getattr(exc, 'strerror', None) or exc}") from None
    # A name with both kinds of address ("localhost") listens on IPv4, as uvicorn does: clients mostly ask there.
    family, kind, proto, _, address = sorted(found, key=lambda a: a[0] != socket.AF_INET)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def bound_port(sock: socket.socket) -> int:
    """The port `sock` listens on (the one the system chose for port 0)."""
    return int(sock.getsockname()[1])


def address_of(host: str, sock: socket.socket) -> str:
    """`http://HOST:PORT` for a banner: an IPv6 address in brackets, as a browser wants it."""
    return f"http://{f'[{host}]' if ':' in host else host}:{bound_port(sock)}"


def guarded_server(app: Any, hosts: Iterable[str], limits: Limits = Limits(), **options: Any) -> Any:
    """A uvicorn server of `app` that answers only requests whose Host is one of `hosts` (guard.allowed_hosts),
    each received within `limits`, on at most `limits.max_connections` connections at once."""
    import uvicorn

    return uvicorn.Server(uvicorn.Config(host_guard(app, hosts), log_level="warning", http=guarded_protocol(limits),
                                         **options))


def serve_on(sock: socket.socket, app: Any, hosts: Iterable[str], limits: Limits = Limits(), **options: Any) -> None:
    """Serve `app` (guarded_server) on the already listening `sock` until interrupted."""
    server = guarded_server(app, hosts, limits, **options)
    with contextlib.suppress(KeyboardInterrupt), sock:
        server.run(sockets=[sock])
