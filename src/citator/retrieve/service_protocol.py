"""The search service's wire format and where its files live inside the index directory.

One JSON line per request and per reply over a Unix socket. A request carries the fingerprint of the
index the client expects; a server built for another index refuses it, so it can never answer stale.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from citator.data.records import Query, ResultLine, ScoredDoc

SERVICE_DIR = "service"
SOCKET_NAME = "search.sock"
READY_NAME = "ready.json"
PID_NAME = "server.pid"
MAX_REPLY_BYTES = 256 * 1024 * 1024


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


def encode_request(fingerprint: str, queries: Sequence[Query], k: int) -> bytes:
    rows = [{"query_id": q.query_id, "text": q.text, "stance": q.stance} for q in queries]
    return (json.dumps({"fingerprint": fingerprint, "k": k, "queries": rows}) + "\n").encode()


def decode_results(reply: dict[str, Any]) -> list[ResultLine]:
    return [
        ResultLine(r["query_id"], tuple(ScoredDoc(d["doc_id"], float(d["score"])) for d in r["results"]))
        for r in reply["results"]
    ]


def ask(index_dir: Path, payload: bytes, timeout: float) -> dict[str, Any]:
    """Send one request line and read one reply line; raises OSError/ValueError on any failure."""
    directory = service_dir(index_dir)
    with short_socket_path(directory) as path, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(path)
        sock.sendall(payload)
        chunks, size = [], 0
        while True:
            chunk = sock.recv(1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if chunk.endswith(b"\n") or size > MAX_REPLY_BYTES:
                break
    reply = json.loads(b"".join(chunks).decode("utf-8"))
    if not isinstance(reply, dict):
        raise ValueError("reply is not an object")
    return reply


def _check_alive(pid: int) -> None:
    """Raise ProcessLookupError if `pid` is gone; a server owned by another user (EPERM) counts as alive."""
    try:
        os.kill(pid, 0)
    except PermissionError:
        pass


def search_via_service(
    index_dir: Path, fingerprint: str, queries: Sequence[Query], k: int, timeout: float = 10.0
) -> list[ResultLine] | None:
    """Results from a live server for this exact index, or None (absent, dead, stale or wrong answer)."""
    ready = service_dir(index_dir) / READY_NAME
    try:
        info = json.loads(ready.read_text(encoding="utf-8"))
        if info.get("fingerprint") != fingerprint:
            return None
        _check_alive(int(info["pid"]))
        reply = ask(index_dir, encode_request(fingerprint, queries, k), timeout)
        if reply.get("fingerprint") != fingerprint or "results" not in reply:
            return None
        results = decode_results(reply)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if [r.query_id for r in results] != [q.query_id for q in queries]:
        return None
    return results
