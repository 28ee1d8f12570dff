from __future__ import annotations

import os
import time
from functools import partial
from pathlib import Path

import pytest

from citator.stance.learn.lanes import LaneError, balanced_lanes, run_in_lanes


def test_balanced_lanes_put_the_costliest_job_alone_and_pair_the_rest() -> None:
    assert balanced_lanes([2.0, 1.0, 1.0], 2) == [[0], [1, 2]]  # citator train's full encoder and its two folds
    assert balanced_lanes([1.0, 3.0, 2.0, 2.0], 2) == [[1, 0], [2, 3]]
    assert balanced_lanes([5.0], 2) == [[0]]
    assert sorted(i for lane in balanced_lanes([1.0] * 7, 3) for i in lane) == list(range(7))


def pid_and_threads(tag: str) -> tuple[str, int, int]:
    import torch

    return tag, os.getpid(), torch.get_num_threads()


def fail(message: str) -> None:
    raise ValueError(message)


def test_jobs_run_in_other_single_thread_processes_and_come_back_in_order() -> None:
    results = run_in_lanes([partial(pid_and_threads, t) for t in "abc"], [1.0, 2.0, 1.0])
    assert [r[0] for r in results] == ["a", "b", "c"]
    pids = {r[1] for r in results}
    assert os.getpid() not in pids and len(pids) == 2  # b alone in one lane, a then c in the other
    assert results[0][1] == results[2][1] != results[1][1]
    assert {r[2] for r in results} == {1}


def slow(finished: Path, seconds: float) -> None:
    time.sleep(seconds)
    finished.write_text("finished")


def test_a_failing_job_raises_at_once_and_stops_the_other_lanes(tmp_path: Path) -> None:
    finished = tmp_path / "finished"
    with pytest.raises(LaneError, match="ValueError: lane broke"):
        run_in_lanes([partial(slow, finished, 120.0), partial(fail, "lane broke")], [1.0, 1.0])
    # The slow lane was stopped, not waited for (waiting, this test would take two minutes and then fail here).
    assert not finished.exists()
    import multiprocessing

    assert not multiprocessing.active_children()


def exits_after(seconds: float, marker: Path) -> str:
    """A job whose process, at exit, sleeps `seconds` and then writes `marker`."""
    import atexit

    def last_words() -> None:
        time.sleep(seconds)
        marker.write_text("exited")

    atexit.register(last_words)
    return "result"


def test_a_lane_that_delivered_is_left_to_exit_on_its_own(tmp_path: Path) -> None:
    # Stopped in its shutdown, a lane leaks what its finalisers release (tqdm's semaphore warned at every training).
    marker = tmp_path / "exited"
    assert run_in_lanes([partial(exits_after, 1.0, marker)], [1.0]) == ["result"]
    assert marker.read_text() == "exited"


ORPHAN_SCRIPT = """
import os, sys, time
from pathlib import Path
from citator.stance.learn.lanes import run_in_lanes

def hang(pid_file):
    Path(pid_file).write_text(str(os.getpid()))
    time.sleep(120)

if __name__ == "__main__":
    from functools import partial
    run_in_lanes([partial(hang, sys.argv[1])], [1.0])
"""


def _running(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status  # a zombie has ended; only its parent's reaping is left


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads process states from /proc")
def test_lanes_end_when_their_parent_is_killed(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys

    script, pid_file = tmp_path / "orphan.py", tmp_path / "lane.pid"
    script.write_text(ORPHAN_SCRIPT)
    parent = subprocess.Popen([sys.executable, str(script), str(pid_file)])
    try:
        deadline = time.monotonic() + 60
        while not pid_file.exists() or not pid_file.read_text():
            assert parent.poll() is None and time.monotonic() < deadline, "the lane never started"
            time.sleep(0.05)
        lane = int(pid_file.read_text())
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 30
        while _running(lane) and time.monotonic() < deadline:
            time.sleep(0.05)
        alive = _running(lane)
        if alive:
            os.kill(lane, signal.SIGKILL)
        assert not alive, "the lane outlived its killed parent"
    finally:
        if parent.poll() is None:
            parent.kill()


def test_a_lane_that_does_not_exit_within_the_grace_is_stopped(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import multiprocessing

    from citator.stance.learn import lanes

    monkeypatch.setattr(lanes, "EXIT_GRACE_SECONDS", 1.0)
    markers = [tmp_path / "a", tmp_path / "b"]
    assert run_in_lanes([partial(exits_after, 120.0, m) for m in markers], [1.0, 1.0]) == ["result", "result"]
    # Both stopped after the grace instead of waited for (that would take two minutes and write the markers).
    assert not any(m.exists() for m in markers)
    assert not multiprocessing.active_children()
