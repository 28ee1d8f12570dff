"""Kill a real run (SIGKILL) mid-request, resume it: nothing is sent twice, nothing completed is lost."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from fixtures.suites import write_suite

pytestmark = pytest.mark.slow


def _bench(suite: Path, corpus: Path, base_url: str, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "citator.cli.main", "bench", "statutes", "--corpus", str(corpus),
            "--suite", str(suite), "--provider", "openai", "--base-url", base_url, "--model-name", "fake-grader",
            "--model-version", "fake-grader-2026-01-01", "--out", str(out), *extra]


def _receipts(out: Path) -> dict[str, dict]:
    found = {}
    for p in sorted((out / "receipts").glob("*.json")):
        found[p.stem] = json.loads(p.read_text(encoding="utf-8"))
    return found


def _served(log: Path) -> Counter:
    return Counter(json.loads(x)["user_sha256"] for x in log.read_text().splitlines()) if log.exists() else Counter()


def test_kill_then_resume(tmp_path: Path, nrs_sections: Path, nrs_suite: Path, fake_server) -> None:  # type: ignore[no-untyped-def]
    base_url, log = fake_server(0.4)
    suite = write_suite(tmp_path / "suite.jsonl", nrs_suite, ["nrs-dev-10", "nrs-dev-11", "nrs-exact-01"])
    out = tmp_path / "run"
    env = {**os.environ, "OPENAI_API_KEY": "sk-test-never-written"}
    proc = subprocess.Popen(_bench(suite, nrs_sections, base_url, out), env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    killed_in_flight = False
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            receipts = _receipts(out)
        except (json.JSONDecodeError, FileNotFoundError):
            continue
        done = sum(r["status"] == "completed" for r in receipts.values())
        if done >= 3 and any(r["status"] == "attempted" for r in receipts.values()):
            os.kill(proc.pid, signal.SIGKILL)
            killed_in_flight = True
            break
        time.sleep(0.01)
    proc.wait()
    assert killed_in_flight, "the run finished or stalled before it could be killed mid-request"
    time.sleep(0.6)  # let the server finish the request it was answering
    before = _receipts(out)
    completed = {h: r for h, r in before.items() if r["status"] == "completed"}
    unfinished = [h for h, r in before.items() if r["status"] == "attempted"]
    assert len(unfinished) == 1 and len(completed) >= 3

    subprocess.run(_bench(suite, nrs_sections, base_url, out), env=env, check=True, capture_output=True)
    after = _receipts(out)
    served = _served(log)
    assert max(served.values()) == 1, "a request reached the server twice"
    for digest, receipt in completed.items():
        assert after[digest] == receipt  # reused, not re-sent or rewritten
    assert after[unfinished[0]]["status"] == "attempted"  # never re-sent without the flag
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["failures"] == {"attempted_unfinished": 1}
    assert metrics["provider_requests"] == 16 == len(after)
    assert sum(served.values()) in (15, 16)  # the killed request may or may not have arrived

    # With the explicit flag the one unfinished request is sent again, and only it.
    subprocess.run([*_bench(suite, nrs_sections, base_url, out), "--resend-attempted"], env=env, check=True,
                   capture_output=True)
    final = _receipts(out)
    assert all(r["status"] == "completed" and r["usage"]["prompt_tokens"] > 0 for r in final.values())
    assert all({"request_hash", "attempted_at", "finished_at", "response", "http_status"} <= set(r) for r in final.values())
    assert final[unfinished[0]]["attempts"] == 2
    assert sum(_served(log).values()) == sum(served.values()) + 1
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["failures"] == {} and metrics["provider_requests"] == 17
    for path in out.rglob("*"):
        if path.is_file():
            assert b"sk-test-never-written" not in path.read_bytes(), path
