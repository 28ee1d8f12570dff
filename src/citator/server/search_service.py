"""`citator serve`: keep encoder and index in memory and answer batch searches over a Unix socket.

The server follows its index's generations (stance/retrieve/current.py): once an update or a build switches the
manifest, it opens the new generation (a watcher notices within WATCH_SECONDS, and a request that carries the new
fingerprint opens it first), answers from it and publishes its fingerprint in the ready file; until then it
answers from the generation it holds, whose folder the switch leaves in place."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import signal
import socketserver
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from citator.data.atomic import output_dir, write_json_atomic, write_text_atomic
from citator.data.filters import parse_filters
from citator.data.records import Query
from citator.errors import CitatorError, OutputError, one_line
from citator.stance.retrieve.current import Current
from citator.stance.retrieve.layout import PID_NAME, READY_NAME, SOCKET_NAME
from citator.stance.retrieve.opened import Searcher
from citator.stance.retrieve.service_protocol import MAX_REPLY_BYTES, service_dir, short_socket_path
from citator.stance.shards.search import open_searcher


# How often the server looks for a new generation of its index (a stat of the manifest).
WATCH_SECONDS = 0.5


def _answer(current: Current[Searcher], raw: bytes) -> dict[str, Any]:
    try:
        searcher = current.get()
    except CitatorError as exc:  # a generation that does not open: the one held keeps answering its own clients
        return {"fingerprint": None, "error": f"{type(exc).__name__}: {exc}"}
    fingerprint = searcher.manifest.fingerprint
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
    current = Current(index_dir, partial(_opened, ray=ray), _closed)
    searcher = current.get()
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
            answer = worker.submit(_answer, current, raw).result()
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
    # A warm-up query pays one-off costs (first encoder call, numba JIT) before anyone waits on them.
    worker.submit(searcher.search, [Query("warm-up", "warm up", "all")], 1).result()
    # What is loaded now lives as long as the server: frozen, it is left out of every later garbage collection.
    # Otherwise a full collection walks it (CaseFacts: 0.3 s over ~400k objects) during about one search in six.
    gc.collect()
    gc.freeze()
    write_text_atomic(directory / PID_NAME, f"{os.getpid()}\n")
    publish = partial(_publish, ready)
    publish(searcher)
    threading.Thread(target=_follow, args=(current, worker, publish), name="generations", daemon=True).start()

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


def _opened(index_dir: Path, ray: str | None) -> Searcher:
    searcher = open_searcher(index_dir, ray=ray)
    searcher.use_numba()
    return searcher


def _closed(searcher: Searcher) -> None:
    searcher.close()


def _publish(ready: Path, searcher: Searcher) -> None:
    """The ready file run.sh reads: this server, and the fingerprint of the generation it answers from."""
    write_json_atomic(ready, {"pid": os.getpid(), "fingerprint": searcher.manifest.fingerprint,
                              "socket": SOCKET_NAME, "frozen_objects": gc.get_freeze_count()})


def _follow(current: Current[Searcher], worker: ThreadPoolExecutor, publish: Any) -> None:
    """Open each new generation of the index on the search worker (between searches) and publish it."""
    failed: str | None = None
    while True:
        threading.Event().wait(WATCH_SECONDS)
        if not current.changed():
            continue
        try:
            publish(worker.submit(current.get).result())
            failed = None
        except CitatorError as exc:  # said once in the server's log; the generation held keeps answering
            if str(exc) != failed:
                print(f"cannot open the new generation: {one_line(str(exc))}", file=sys.stderr, flush=True)
            failed = str(exc)
        except RuntimeError:  # the worker was shut down: the server is stopping
            return
