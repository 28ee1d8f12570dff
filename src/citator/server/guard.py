"""What every HTTP server of citator accepts from a connection: its own host names, a whole request in time, and
no more connections than it can hold.

A server bound to 127.0.0.1 is still within reach of any web page open in a browser on the same machine through
DNS rebinding: a name the attacker controls is made to resolve to 127.0.0.1, and the browser then sends that
name as `Host`. Answering only the names the server was bound to (and those given with `--allow-host`) closes
that path; an address typed as digits is not a rebinding, so the bound address itself is always allowed.

uvicorn has no timeout for receiving a request: its keep-alive timer covers the idle time between requests and
any byte resets it, so a client that sends a request line and nothing more holds its connection for ever. The
protocol below closes a connection whose request headers are not all in within `header_seconds` of its start (or
of the end of its last response), or whose body is not all in within `body_seconds` of its headers, and closes
at once a connection past `max_connections`. A request that is all in is never timed: a long generation or
search answers whenever it is done.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

import h11
from starlette.middleware.trustedhost import TrustedHostMiddleware
from uvicorn.protocols.http.h11_impl import H11Protocol

from citator.errors import ConfigError

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")
# A host name or address as --allow-host takes it: letters, digits, dots and dashes (an optional leading "*." for
# a domain's subdomains), or an IPv6 address in brackets.
_HOST = re.compile(r"(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\]")


@dataclass(frozen=True)
class Limits:
    """How long a client may take to send a request, and how many connections are held at once."""

    header_seconds: float = 10.0
    body_seconds: float = 30.0
    max_connections: int = 100


def _bracketed(host: str) -> str:
    """An IPv6 address as a Host header writes it (in brackets); anything else lower-cased as it is."""
    host = host.strip().lower()
    try:
        return f"[{host}]" if ipaddress.ip_address(host.strip("[]")).version == 6 else host
    except ValueError:
        return host


def allowed_hosts(bind: str, extra: Iterable[str] = ()) -> tuple[str, ...]:
    """The Host names a server bound to `bind` answers: `bind` itself; for a loopback address or `localhost`, the
    loopback names; for every address (0.0.0.0, ::), also this machine's names and the addresses its name
    resolves to; and `extra` (`--allow-host`), each checked to be a host name or address."""
    hosts = {_bracketed(bind)}
    try:
        address = ipaddress.ip_address(bind.strip("[]"))
    except ValueError:
        address = None
    if bind.lower() == "localhost" or (address is not None and address.is_loopback):
        hosts.update(LOOPBACK_HOSTS)
    if bind in ("", "*") or (address is not None and address.is_unspecified):
        hosts.update(LOOPBACK_HOSTS)
        hosts.update(name.lower() for name in (socket.gethostname(), socket.getfqdn()) if name)
        try:
            hosts.update(_bracketed(str(info[4][0])) for info in socket.getaddrinfo(socket.gethostname(), None))
        except OSError:
            pass
    for host in extra:
        if not _HOST.fullmatch(_bracketed(host)):
            raise ConfigError(f"--allow-host {host!r}: give a host name (or *.domain) or an IP address, no port")
        hosts.add(_bracketed(host))
    hosts.discard("")
    return tuple(sorted(hosts))


def host_guard(app: Any, hosts: Iterable[str]) -> Any:
    """`app` answering only requests whose Host is one of `hosts`; any other is a 400 that runs none of `app`."""
    return TrustedHostMiddleware(app, allowed_hosts=list(hosts), www_redirect=False)


def _no_delay(transport: asyncio.Transport) -> None:
    """Send each response as soon as it is written. asyncio turns Nagle's algorithm off only on sockets accepted
    from a listener made with proto IPPROTO_TCP; uvicorn's workers (`--workers N`) listen on one made with proto 0,
    so each keep-alive request after a connection's first waited for the client's delayed ACK: about 40 ms."""
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        with contextlib.suppress(OSError):  # a peer that has already reset the connection
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for receiving each request and a cap on connections (`limits`)."""

    limits: ClassVar[Limits] = Limits()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]  # as uvicorn's own
        self._deadline: asyncio.TimerHandle | None = None
        self._waiting_for: Any = None  # h11's state of the client while a deadline runs
        _no_delay(transport)
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections:
            transport.close()
            return
        self._expect(h11.IDLE)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._follow(next_request=True)

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop()
        super().connection_lost(exc)

    def _follow(self, next_request: bool = False) -> None:
        """Time what the client owes now: headers (IDLE), a body (SEND_BODY), or nothing (its request is in)."""
        state = self.conn.their_state
        if state is h11.IDLE and (next_request or self._waiting_for is not h11.IDLE):
            self._expect(h11.IDLE)
        elif state is h11.SEND_BODY and self._waiting_for is not h11.SEND_BODY:
            self._expect(h11.SEND_BODY)
        elif state not in (h11.IDLE, h11.SEND_BODY):
            self._stop()

    def _expect(self, state: Any) -> None:
        self._stop()
        seconds = self.limits.header_seconds if state is h11.IDLE else self.limits.body_seconds
        self._waiting_for = state
        self._deadline = self.loop.call_later(seconds, self._too_slow)

    def _stop(self) -> None:
        deadline = getattr(self, "_deadline", None)  # absent when the connection is lost before it was made
        if deadline is not None:
            deadline.cancel()
        self._deadline, self._waiting_for = None, None

    def _too_slow(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            self.transport.close()


def guarded_protocol(limits: Limits) -> type[GuardedH11Protocol]:
    """GuardedH11Protocol with other limits (tests use short ones)."""
    if limits == GuardedH11Protocol.limits:
        return GuardedH11Protocol
    return type("GuardedH11Protocol", (GuardedH11Protocol,), {"limits": limits})
