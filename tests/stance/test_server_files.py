"""The server's pid file is trusted only for a `citator serve` of this very index."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from citator.stance.workload import stop_server


def test_stale_pid_file_never_kills_an_unrelated_process(tmp_path: Path) -> None:
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        (tmp_path / "service").mkdir()
        (tmp_path / "service" / "server.pid").write_text(f"{other.pid}\n")
        assert stop_server(tmp_path, wait=0.5) is False
        assert other.poll() is None
        (tmp_path / "service" / "server.pid").write_text(f"{os.getpid()}\n")
        assert stop_server(tmp_path, wait=0.5) is False
    finally:
        other.kill()


def test_a_server_started_with_a_relative_index_dir_is_stopped(tmp_path: Path) -> None:
    """`citator serve --index-dir idx` run by hand from the parent folder: `citator stop` (and a rebuild) must find it."""
    index = tmp_path / "idx"
    (index / "service").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "idx").mkdir(parents=True)
    sleeper = [sys.executable, "-c", "import time; time.sleep(30)", "serve", "--index-dir", "idx"]
    ours = subprocess.Popen(sleeper, cwd=tmp_path)
    other = subprocess.Popen(sleeper, cwd=elsewhere)  # the same relative path, another index
    try:
        (index / "service" / "server.pid").write_text(f"{other.pid}\n")
        assert stop_server(index, wait=0.5) is False
        assert other.poll() is None
        (index / "service" / "server.pid").write_text(f"{ours.pid}\n")
        assert stop_server(index, wait=5.0) is True
        assert ours.wait(timeout=5) is not None
    finally:
        ours.kill()
        other.kill()
