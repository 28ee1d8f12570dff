"""Tries every way out of its one process (the escapes a CPU meter of one process would miss), reports on stderr
which the sandbox refused, then answers like bm25.

- a child that leaves the session (setsid) and forks again, so that no one in the session reaps it;
- children reaped by the kernel (SIGCHLD ignored), whose time no parent's counters ever receive;
- a subprocess; and a thread, which is allowed (its CPU is the process's own).
"""

import json
import os
import signal
import subprocess
import sys
import threading


def attempt(name, action, report):
    try:
        action()
        report[name] = "started"
    except (OSError, RuntimeError) as exc:
        report[name] = f"refused: {type(exc).__name__}: {exc}"


def escape_session():
    if os.fork() == 0:  # pragma: no cover - only where the sandbox lets it through
        os.setsid()
        if os.fork() == 0:
            end = os.times()[0] + 2.0
            while os.times()[0] < end:
                pass
        os._exit(0)


def auto_reaped_children():
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    if os.fork() == 0:  # pragma: no cover
        os._exit(0)


def thread():
    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()


def main():
    query = json.loads(sys.stdin.readline())
    report = {}
    attempt("setsid_grandchild", escape_session, report)
    attempt("auto_reaped_child", auto_reaped_children, report)
    attempt("subprocess", lambda: subprocess.run(["/bin/true"], check=False), report)
    attempt("thread", thread, report)
    sys.stderr.write("REPORT " + json.dumps(report) + "\n")
    sys.stderr.flush()
    sys.stdout.write(json.dumps({"type": "result", "ids": [c["id"] for c in query["candidates"]][:10]}) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
