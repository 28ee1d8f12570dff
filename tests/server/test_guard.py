"""Every server's guard, over real sockets: only its own host names, a whole request in time, a cap on connections.

The mechanism is tested here on a small app with short limits (a real uvicorn server in a thread); the three
commands that serve pages (`citator ui`, `review serve`, `provider-serve`) are tested as real processes with their
default limits in test_hostile_http.py.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from fastapi import FastAPI, Request
from fastapi.responses import PlainTextResponse

from citator.errors import ConfigError
from citator.server.guard import LOOPBACK_HOSTS, Limits, allowed_hosts
from citator.server.pages import guarded_server, listen
from fixtures.servers import closed_count

LIMITS = Limits(header_seconds=1.0, body_seconds=1.5, max_connections=8)


def _app() -> FastAPI:
    app = FastAPI()

    @app.get("/")
    async def home() -> PlainTextResponse:
        return PlainTextResponse("home")

    @app.get("/slow")
    async def slow() -> PlainTextResponse:
        await asyncio.sleep(LIMITS.body_seconds + 1.5)  # longer than any deadline: a request that is in is not timed
        return PlainTextResponse("done")

    @app.post("/echo")
    async def echo(request: Request) -> PlainTextResponse:
        return PlainTextResponse(str(len(await request.body())))

    return app


@dataclass(frozen=True)
class Server:
    port: int

    def connect(self) -> socket.socket:
        conn = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        return conn

    def ask(self, raw: bytes) -> bytes:
        with self.connect() as conn:
            conn.sendall(raw)
            return _read_all(conn)


def _read_all(conn: socket.socket, timeout: float = 10.0) -> bytes:
    """Everything the server sends until it closes the connection (or `timeout` passes: then b'<open>' is added)."""
    conn.settimeout(timeout)
    chunks = []
    try:
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    except TimeoutError:
        chunks.append(b"<open>")
    except ConnectionResetError:
        pass
    return b"".join(chunks)


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    sock = listen("127.0.0.1", 0)
    uv = guarded_server(_app(), allowed_hosts("127.0.0.1", ["citator.test"]), LIMITS, timeout_keep_alive=30)
    thread = threading.Thread(target=uv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not uv.started:
        time.sleep(0.02)
    yield Server(sock.getsockname()[1])
    uv.should_exit = True
    thread.join(10)
    sock.close()


def _get(path: str, host: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode()


def test_the_bound_names_are_answered_and_no_other(server: Server) -> None:
    for host in ("127.0.0.1", f"127.0.0.1:{server.port}", "localhost", f"LOCALHOST:{server.port}", "citator.test",
                 "[::1]"):
        assert server.ask(_get("/", host)).startswith(b"HTTP/1.1 200"), host
    for host in ("evil.example.com", f"evil.example.com:{server.port}", "127.0.0.1.nip.io", "localhost.evil",
                 "sub.citator.test", "[::2]", "", "127.0.0.1 evil"):
        reply = server.ask(_get("/", host))
        assert reply.startswith(b"HTTP/1.1 400") and b"home" not in reply, host
    # No Host at all (HTTP/1.0): not one of the names either.
    assert server.ask(b"GET / HTTP/1.0\r\n\r\n").startswith(b"HTTP/1.1 400")


def test_a_request_line_alone_is_closed_after_the_header_deadline(server: Server) -> None:
    with server.connect() as conn:
        conn.sendall(b"GET / HTTP/1.1\r\n")
        start = time.monotonic()
        assert _read_all(conn, timeout=LIMITS.header_seconds + 5) == b""
        assert time.monotonic() - start >= LIMITS.header_seconds - 0.2
    # Nothing at all, and headers trickled a byte at a time, are closed alike.
    with server.connect() as silent, server.connect() as trickle:
        for byte in b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb":
            try:
                trickle.sendall(bytes([byte]))
            except OSError:
                break
            time.sleep(0.05)
        assert _read_all(trickle, timeout=5) == b"" and _read_all(silent, timeout=5) == b""


def test_a_slow_body_is_closed_after_the_body_deadline(server: Server) -> None:
    with server.connect() as conn:
        conn.sendall(b"POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n" + b"x" * 10)
        assert b"200" not in _read_all(conn, timeout=LIMITS.body_seconds + 5)
    whole = b"POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\nConnection: close\r\n\r\n" + b"x" * 100
    assert server.ask(whole).endswith(b"100")


def test_a_request_that_is_in_is_answered_however_long_it_takes(server: Server) -> None:
    assert server.ask(_get("/slow", "127.0.0.1")).endswith(b"done")


def test_a_kept_alive_connection_is_timed_again_for_its_next_request(server: Server) -> None:
    with server.connect() as conn:
        conn.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        conn.settimeout(5)
        first = b""
        while not first.endswith(b"home"):
            first += conn.recv(65536)
        assert first.startswith(b"HTTP/1.1 200")
        conn.sendall(b"GET / HTTP/1.1\r\n")  # half a second request: keep-alive's own timer stops at its first byte
        assert _read_all(conn, timeout=LIMITS.header_seconds + 5) == b""


def test_connections_past_the_cap_are_closed_at_once_and_idle_ones_do_not_last(server: Server) -> None:
    idle = [server.connect() for _ in range(40)]
    try:
        time.sleep(0.3)
        assert closed_count(idle, timeout=0.05) >= 40 - LIMITS.max_connections
        time.sleep(LIMITS.header_seconds + 0.5)  # the ones held are closed by the header deadline
        assert server.ask(_get("/", "127.0.0.1")).endswith(b"home")
    finally:
        for conn in idle:
            conn.close()


def test_allowed_hosts_are_the_bound_names() -> None:
    assert set(allowed_hosts("127.0.0.1")) == set(LOOPBACK_HOSTS)
    assert set(allowed_hosts("::1")) == set(LOOPBACK_HOSTS)
    assert set(allowed_hosts("localhost", ["Example.ORG", "*.lan", "10.0.0.5", "fe80::1"])) == {
        *LOOPBACK_HOSTS, "example.org", "*.lan", "10.0.0.5", "[fe80::1]"}
    assert allowed_hosts("192.0.2.7") == ("192.0.2.7",)
    everywhere = allowed_hosts("0.0.0.0")
    assert set(LOOPBACK_HOSTS) <= set(everywhere) and socket.gethostname().lower() in everywhere
    for bad in ("evil.com:80", "*", "a b", "http://x", "", "*evil.com", "ex*ample.com"):
        with pytest.raises(ConfigError, match="--allow-host"):
            allowed_hosts("127.0.0.1", [bad])


def test_a_socket_from_a_workers_listener_sends_without_waiting() -> None:
    # uvicorn's workers (`citator ui --workers N`) accept on a listener made with proto 0, on whose sockets asyncio
    # leaves Nagle's algorithm on: each keep-alive response after the first then waits for the client's delayed ACK.
    import uvicorn

    from citator.server.guard import guarded_protocol

    nodelay: list[int] = []

    class Recording(guarded_protocol(LIMITS)):  # type: ignore[misc,valid-type]
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            nodelay.append(transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # as uvicorn's Config.bind_socket makes it
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    assert sock.proto == 0
    uv = uvicorn.Server(uvicorn.Config(_app(), http=Recording, log_level="warning"))
    thread = threading.Thread(target=uv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not uv.started and thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert uv.started, "the server did not start"
        assert Server(sock.getsockname()[1]).ask(_get("/", "127.0.0.1")).startswith(b"HTTP/1.1 200")
        assert nodelay == [1]
    finally:
        uv.should_exit = True
        thread.join(10)
        sock.close()
