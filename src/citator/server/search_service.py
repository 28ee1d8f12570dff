"""`citator serve`: keep encoder and index in memory and answer batch searches over a Unix socket."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import signal
import socketserver
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from citator.data.atomic import output_dir, write_json_atomic, write_text_atomic
from citator.data.filters import parse_filters
from citator.data.records import Query
from citator.errors import OutputError
from citator.stance.retrieve.layout import PID_NAME, READY_NAME, SOCKET_NAME
from citator.stance.retrieve.opened import Searcher
from citator.stance.retrieve.service_protocol import MAX_REPLY_BYTES, service_dir, short_socket_path
from citator.stance.shards.search import open_searcher


def _answer(searcher: Searcher, fingerprint: str, raw: bytes) -> dict[str, Any]:
    try:
        request = json.loads(raw.decode("utf-8"))
        if request.get("fingerprint") != fingerprint:
            return {"fingerprint": fingerprint, "error": "fingerprint mismatch: this server holds another index"}
        queries = [Query(q["query_id"], q["text"], q.get("stance", "all")) for q in request["queries"]]
        filters = parse_filters(request.get("filters") or [])
        results = searcher.search(queries, int(request.get("k", 10)), filters=filters)
        return {"fingerprint": fingerprint, "results": [r.to_json() for r in results]}
    except Exception as exc:  # noqa: BLE001 - a bad request must not take the server down
        return {"fingerprint": fingerprint, "error": f"{type(exc).__name__}: {exc}"}


def serve(index_dir: str | Path, ray: str | None = None) -> None:
    """Load the index, write pid and ready files, then serve until SIGTERM/SIGINT. A sharded index's shards are
    held by workers on the Ray cluster `ray` (or $CITATOR_RAY), else in this process."""
    index_dir = Path(index_dir).absolute()
    searcher = open_searcher(index_dir, ray=ray)
    fingerprint = searcher.manifest.fingerprint
    directory = output_dir(service_dir(index_dir))  # one line, not a traceback, where it cannot be written
    ready = directory / READY_NAME
    try:
        ready.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise OutputError(f"{ready}: cannot remove the last server's file ({exc.strerror or exc})") from None

    # Every connection is read and acknowledged at once on a thread of its own, so a client waiting behind another's
    # search knows the server is alive and only a stopped or hung one goes unacknowledged. Searches run one at a
    # time on one long-lived worker: 2 cores gain nothing from two, and torch's OpenMP pool belongs to the thread
    # that calls it (a fresh thread per request made warm run.sh about 0.25 s slower).
    worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="search")

    class Handler(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            raw = self.rfile.readline(MAX_REPLY_BYTES)
            self.wfile.write(b'{"accepted": true}\n')
            answer = worker.submit(_answer, searcher, fingerprint, raw).result()
            self.wfile.write((json.dumps(answer) + "\n").encode())

    class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
        daemon_threads = True

    with short_socket_path(directory) as path:
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            server = Server(path, Handler)
        except OSError as exc:
            raise OutputError(f"{directory / SOCKET_NAME}: cannot listen here ({exc.strerror or exc})") from None
    # Owner only: build.sh and run.sh run as one user, and no one else (a strategy sandbox's user included) may make
    # this server work for them.
    os.chmod(directory / SOCKET_NAME, 0o600)
    searcher.use_numba()
    # A warm-up query pays one-off costs (first encoder call, numba JIT) before anyone waits on them.
    worker.submit(searcher.search, [Query("warm-up", "warm up", "all")], 1).result()
    # What is loaded now lives as long as the server: frozen, it is left out of every later garbage collection.
    # Otherwise a full collection walks it (CaseFacts: 0.3 s over ~400k objects) during about one search in six.
    gc.collect()
    gc.freeze()
    write_text_atomic(directory / PID_NAME, f"{os.getpid()}\n")
    write_json_atomic(ready, {"pid": os.getpid(), "fingerprint": fingerprint, "socket": SOCKET_NAME,
                              "frozen_objects": gc.get_freeze_count()})

    def stop(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        worker.shutdown(wait=False, cancel_futures=True)
        server.server_close()
        for name in (READY_NAME, PID_NAME, SOCKET_NAME):
            with contextlib.suppress(FileNotFoundError):
                (directory / name).unlink()
