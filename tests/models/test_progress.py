"""A long step's bar is drawn on a terminal only and erased when done: no blank or spent lines between the lines a
command prints (a sharded build's steps), whatever the terminal's width, and no carriage-return frames in a log."""

from __future__ import annotations

import os
import pty
import struct
import subprocess
import sys
import termios
import fcntl

import pytest

SCRIPT = """
import sys, time
from citator.models.progress import bar
print("step one", file=sys.stderr, flush=True)
for _ in bar(range(3), desc="encode"):
    time.sleep(0.05)
with bar(total=2, desc="passage tokens") as b:
    b.update(2)
print("step two", file=sys.stderr, flush=True)
"""


def _on_a_terminal(columns: int) -> bytes:
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    done = subprocess.run([sys.executable, "-c", SCRIPT], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=follower, timeout=120)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal's other end is closed: all is read
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert done.returncode == 0
    return b"".join(chunks)


@pytest.mark.parametrize("columns", [0, 40, 120])
def test_a_terminal_keeps_only_the_commands_own_lines(columns: int) -> None:
    seen = _on_a_terminal(columns)
    if columns:
        assert b"encode" in seen  # drawn while it runs
    # What stays on screen: each line as its last carriage return left it.
    lines = [line.split(b"\r")[-1].strip() for line in seen.replace(b"\r\n", b"\n").split(b"\n")]
    assert [line for line in lines if line] == [b"step one", b"step two"] and lines.count(b"") <= 1, seen


def test_a_pipe_gets_no_bar() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert done.stderr == "step one\nstep two\n"
