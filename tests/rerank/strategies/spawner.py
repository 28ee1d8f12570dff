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

from reporting import attempt, report_and_answer


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
    attempt("subprocess", lambda: subprocess.run(["/bin/true"], check=False) and None, report)
    attempt("thread", thread, report)
    return report_and_answer(query, report)


if __name__ == "__main__":
    sys.exit(main())
