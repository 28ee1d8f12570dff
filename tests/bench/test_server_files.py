"""The server's pid file is trusted only for a `citator serve` of this very index."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from citator.bench.stance import stop_server


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
