"""Statute benchmark fixtures: small NRS/D.C. samples and the fake chat server."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fixtures.servers import SERVE_KEY, Served, free_port, wait_ready

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
def fake_server(tmp_path: Path) -> Iterator[Callable[..., tuple[str, Path]]]:
    """Start the counting fake chat server (a separate process) with a per-request delay and a mode (see it)."""
    procs: list[subprocess.Popen] = []

    def start(delay: float, mode: str = "grades") -> tuple[str, Path]:
        port = free_port()
        log = tmp_path / f"server-{port}.log"
        proc = subprocess.Popen([sys.executable, str(FAKE_SERVER), str(port), str(log), str(delay), mode])
        procs.append(proc)
        wait_ready(f"http://127.0.0.1:{port}/v1/models", proc)
        return f"http://127.0.0.1:{port}/v1", log

    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="session")
def provider_serve(tiny_qwen3_causal_dir: Path) -> Iterator[Served]:
    """A real `citator provider-serve` subprocess over the tiny random Qwen3, shared by the session's tests."""
    key = SERVE_KEY
    port = free_port()
    env = {**os.environ, "CITATOR_TEST_KEY": key, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "citator.cli.main", "provider-serve", "--model", str(tiny_qwen3_causal_dir),
         "--port", str(port), "--served-name", "tiny-qwen3", "--api-key-env", "CITATOR_TEST_KEY", "--device", "cpu"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        wait_ready(f"http://127.0.0.1:{port}/v1/models", proc, headers={"Authorization": f"Bearer {key}"})
        yield Served(f"http://127.0.0.1:{port}/v1", key)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
