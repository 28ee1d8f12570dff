"""The search service's wire format and where its files live inside the index directory.

One JSON line per request over a Unix socket; the server answers with an acknowledgement line as soon as it has
read the request (`{"accepted": true}`), then with the reply line. A request carries the fingerprint of the index the
client expects; a server built for another index refuses it, so it can never answer stale. The acknowledgement lets
a client tell a stopped or hung server from a slow or queued search at once, and search in-process while run.sh still
has the time to.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from citator.data.numbers import finite_number
from citator.data.jsonl import loads
from citator.data.records import Query, ResultLine, ScoredDoc
from citator.stance.retrieve.layout import READY_NAME, SERVICE_DIR, SOCKET_NAME

MAX_REPLY_BYTES = 256 * 1024 * 1024
# A live server acknowledges a request within milliseconds of reading it; one that has not within this long is
# stopped or hung (a busy one acknowledges on another thread and queues the search).
ACCEPT_SECONDS = 1.5


class ServiceUnavailable(Exception):
    """The server gave no usable answer; the message says why (for run.sh's report)."""


def service_dir(index_dir: Path) -> Path:
    return index_dir / SERVICE_DIR


@contextlib.contextmanager
def short_socket_path(directory: Path) -> Iterator[str]:
    """A socket path under 108 bytes even for deep index dirs, via /proc/self/fd of the open directory."""
    full = str(directory / SOCKET_NAME)
    if len(full.encode()) < 100:
        yield full
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        yield f"/proc/self/fd/{fd}/{SOCKET_NAME}"
    finally:
        os.close(fd)


def encode_request(fingerprint: str, queries: Sequence[Query], k: int, filters: Sequence[str] = ()) -> bytes:
    """A search request; `filters`: "KEY OP VALUE" texts the server parses as the command line does."""
    rows = [{"query_id": q.query_id, "text": q.text, "stance": q.stance} for q in queries]
    asked = {"filters": list(filters)} if filters else {}
    return (json.dumps({"fingerprint": fingerprint, "k": k, "queries": rows, **asked}) + "\n").encode()


def decode_results(reply: dict[str, Any]) -> list[ResultLine]:
    """The reply's results, each part's type checked: a TypeError for anything a server of this version would not
    send (the caller then searches in process)."""
    lines = []
    for r in _listed(reply.get("results")):
        if not isinstance(r, dict) or not isinstance(r.get("query_id"), str):
            raise TypeError("a result line without a query id")
        docs = []
        for d in _listed(r.get("results")):
            score = d.get("score") if isinstance(d, dict) else None
            if not isinstance(d, dict) or not isinstance(d.get("doc_id"), str) or not isinstance(score, (int, float)) \
                    or not finite_number(score):
                raise TypeError("a result without a document id and a finite score")
            docs.append(ScoredDoc(d["doc_id"], float(score)))
        lines.append(ResultLine(r["query_id"], tuple(docs)))
    return lines


def _listed(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError(f"a JSON {type(value).__name__} where a list belongs")
    return value


class _Lines:
    """Reply lines from a socket, each read by a deadline."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""

    def next(self, deadline: float, what: str) -> dict[str, Any]:
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ServiceUnavailable(f"the server sent no {what} in time")
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(1 << 20)
            except TimeoutError:
                raise ServiceUnavailable(f"the server sent no {what} in time") from None
            if not chunk:
                raise ServiceUnavailable(f"the server closed the connection before its {what}")
            self.buffer += chunk
            if len(self.buffer) > MAX_REPLY_BYTES:
                raise ServiceUnavailable(f"the server's {what} is over {MAX_REPLY_BYTES} bytes")
        line, self.buffer = self.buffer.split(b"\n", 1)
        reply = loads(line.decode("utf-8"))  # a ValueError for any malformed reply, however deeply nested
        if not isinstance(reply, dict):
            raise ValueError(f"the server's {what} is not a JSON object")
        return reply


def ask(index_dir: Path, payload: bytes, timeout: float, accept_timeout: float = ACCEPT_SECONDS) -> dict[str, Any]:
    """Send one request line, then read the acknowledgement (within `accept_timeout`) and the reply (within
    `timeout` of the start); raises ServiceUnavailable, OSError or ValueError on any failure."""
    start = time.monotonic()
    accept_within = min(accept_timeout, timeout)
    directory = service_dir(index_dir)
    with short_socket_path(directory) as path, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(accept_within)
        sock.connect(path)
        sock.sendall(payload)
        lines = _Lines(sock)
        ack = lines.next(start + accept_within, "acknowledgement")
        if "accepted" not in ack:
            raise ServiceUnavailable("the server did not acknowledge the request (a server of an older version?)")
        return lines.next(start + timeout, "answer")


def _check_alive(pid: int) -> None:
    """Raise ProcessLookupError if `pid` is gone; a server owned by another user (EPERM) counts as alive."""
    try:
        os.kill(pid, 0)
    except PermissionError:
        pass


def search_via_service(
    index_dir: Path, fingerprint: str, queries: Sequence[Query], k: int, timeout: float = 10.0,
    filters: Sequence[str] = (),
) -> tuple[list[ResultLine] | None, str]:
    """Results from a live server for this exact index, or None and why not (absent, dead, stopped or hung,
    stale, or a wrong answer)."""
    ready = service_dir(index_dir) / READY_NAME
    try:
        info = loads(ready.read_text(encoding="utf-8"))
        pid = info.get("pid") if isinstance(info, dict) else None
        if not isinstance(pid, int) or isinstance(pid, bool) or not 0 < pid < 1 << 22:
            return None, f"{ready} is damaged (no process id)"
        if info.get("fingerprint") != fingerprint:
            return None, "the running server holds another build of the index"
        _check_alive(pid)
        reply = ask(index_dir, encode_request(fingerprint, queries, k, filters), timeout)
        if not isinstance(reply, dict):
            return None, "no usable answer from the server (not a JSON object)"
        if reply.get("fingerprint") != fingerprint or "results" not in reply:
            return None, f"the server refused the request: {reply.get('error', 'no results')}"
        results = decode_results(reply)
    except FileNotFoundError:
        return None, "no server is running"
    except ProcessLookupError:
        return None, "the server has died"
    except ServiceUnavailable as exc:
        return None, str(exc)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return None, f"no usable answer from the server ({type(exc).__name__}: {exc})"
    if [r.query_id for r in results] != [q.query_id for q in queries]:
        return None, "the server answered other queries"
    return results, "server"
