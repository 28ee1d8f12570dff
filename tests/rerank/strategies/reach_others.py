"""Tries to reach other processes, reports on stderr what the sandbox refused, then answers like bm25.

argv: the pid of another process of the strategy's own user (another run's strategy, say).
- signal it (kill with signal 0: the permission check alone), and the runner;
- attach to it with ptrace, and read its memory with process_vm_readv;
- make a System V message queue with a known key (a fresh IPC namespace keeps it from the host and the next query).
"""

import ctypes
import json
import os
import sys

from reporting import attempt, report_and_answer

libc = ctypes.CDLL(None, use_errno=True)


def checked(ret):
    if ret == -1:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return "done"


def read_memory(pid):
    class IoVec(ctypes.Structure):
        _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]

    buf = ctypes.create_string_buffer(8)
    local, remote = IoVec(ctypes.addressof(buf), 8), IoVec(0x400000, 8)
    return checked(libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0))


def main(other):
    query = json.loads(sys.stdin.readline())
    report = {}
    attempt("signal_other", lambda: os.kill(other, 0) or "signalled", report)
    attempt("signal_runner", lambda: os.kill(os.getppid(), 0) or "signalled", report)
    attempt("ptrace_other", lambda: checked(libc.ptrace(16, other, None, None)), report)  # PTRACE_ATTACH
    attempt("read_other_memory", lambda: read_memory(other), report)
    attempt("message_queue", lambda: checked(libc.msgget(0x43495441, 0o1600)), report)  # IPC_CREAT | 0600
    return report_and_answer(query, report)


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1])))
