"""Statute benchmark fixtures: small NRS/D.C. samples and the fake chat server."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fixtures.servers import free_port, wait_ready

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
