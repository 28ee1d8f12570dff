"""A real review server: a `citator review serve` subprocess on a free loopback port, over a real SQLite file."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from citator.statutes.review import LabelStore, read_pool
from fixtures.review_run import build_run
from fixtures.servers import free_port, stop_process


@dataclass(frozen=True)
class ReviewServer:
    url: str
    db: Path
    run_dir: Path
    token: str


@pytest.fixture(scope="module")
def review_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReviewServer]:
    root = tmp_path_factory.mktemp("review")
    run_dir = build_run(root / "run")
    db = root / "labels.sqlite"
    with LabelStore(db) as store:
        store.load_items(e.item for e in read_pool(run_dir))
        token = store.add_reviewer("alice")
    port = free_port()
    log = (root / "server.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "citator.cli.main", "review", "serve", "--db", str(db), "--port", str(port)],
        stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(url + "/", timeout=1.0)
                break
            except httpx.TransportError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"review server did not start: {(root / 'server.log').read_text()}") from None
                time.sleep(0.1)
        yield ReviewServer(url, db, run_dir, token)
    finally:
        stop_process(proc)
        log.close()
