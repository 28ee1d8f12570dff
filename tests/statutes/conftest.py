"""Statute benchmark fixtures: small NRS/D.C. samples, free ports and subprocess helpers."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

FIXTURES = Path(__file__).parent / "fixtures"
FAKE_SERVER = Path(__file__).parent / "fake_chat_server.py"


@pytest.fixture
def nrs_sections() -> Path:
    return FIXTURES / "nrs_sections.jsonl"


@pytest.fixture
def nrs_suite() -> Path:
    return FIXTURES / "nrs_suite.jsonl"


@pytest.fixture
def dc_sections() -> Path:
    return FIXTURES / "dc_sections.jsonl"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(url: str, proc: subprocess.Popen, timeout: float = 90.0, headers: dict | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited early with {proc.returncode}")
        try:
            if httpx.get(url, headers=headers, timeout=1.0).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise TimeoutError(url)


def write_suite(path: Path, source: Path, query_ids: list[str]) -> Path:
    rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows if r["query_id"] in query_ids), encoding="utf-8")
    return path


@pytest.fixture
def fake_server(tmp_path: Path) -> Iterator[Callable[[float], tuple[str, Path]]]:
    """Start the counting fake chat server (a separate process) with a per-request delay."""
    procs: list[subprocess.Popen] = []

    def start(delay: float) -> tuple[str, Path]:
        port = free_port()
        log = tmp_path / f"server-{port}.log"
        proc = subprocess.Popen([sys.executable, str(FAKE_SERVER), str(port), str(log), str(delay)])
        procs.append(proc)
        wait_ready(f"http://127.0.0.1:{port}/v1/models", proc)
        return f"http://127.0.0.1:{port}/v1", log

    yield start
    for proc in procs:
        proc.kill()
        proc.wait()
