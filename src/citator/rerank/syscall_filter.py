"""A seccomp filter under which a process may start threads but no other process, and open no socket.

A strategy's CPU is metered from its own counters (/proc and wait4). A child process escapes them: one that leaves
the session (setsid) and is reaped by init, or one the kernel reaps itself because SIGCHLD is ignored, never adds its
time to the strategy's. So the strategy may not make one: fork and vfork fail with EPERM, clone fails unless it makes
a thread (CLONE_THREAD), and clone3, whose flags a filter cannot read, fails with ENOSYS (glibc then falls back to
clone). EPERM rather than EAGAIN, since shells retry a fork that failed with EAGAIN. A foreign calling convention
(i386 on x86_64, x32) is refused whole. Linux on x86_64 and aarch64 only; elsewhere `available()` is False.

A strategy talks to the runner over the pipes it was started with, and to nothing else: socket() and socketpair()
fail with EPERM for every address family (a Unix socket on the host, such as a search server's, included; a network
namespace alone leaves those reachable), and so does io_uring_setup, whose requests can open sockets without a
system call the filter sees.

Nor does it reach other processes: signals (kill, tkill, tgkill, the sigqueue calls, pidfd_send_signal), ptrace
and reading or writing another process's memory fail with EPERM. Without them a strategy could kill or read any
process of its user: another run's strategy (all run as `nobody` under a root runner), or under an ordinary
user's runner that user's processes, the runner included.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import struct
import subprocess
from functools import cache

_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}  # AUDIT_ARCH_*
_PROCESS_CALLS = {"x86_64": (57, 58), "aarch64": ()}  # fork, vfork (aarch64 has neither)
_CLONE = {"x86_64": 56, "aarch64": 220}
_CLONE3 = 435
_SOCKET_CALLS = {"x86_64": (41, 53), "aarch64": (198, 199)}  # socket, socketpair
_IO_URING_SETUP = 425
# kill, tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo, ptrace, process_vm_readv, process_vm_writev; then
# pidfd_send_signal, pidfd_open and pidfd_getfd (numbered alike on both).
_REACH_CALLS = {"x86_64": (62, 200, 234, 129, 297, 101, 310, 311), "aarch64": (129, 130, 131, 138, 240, 117, 270, 271)}
_PIDFD_CALLS = (424, 434, 438)
_X32_BIT = 0x40000000
_CLONE_THREAD = 0x00010000

_LD_W_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2


def _program(machine: str) -> bytes:
    """The BPF program, as struct sock_filter entries (u16 code, u8 jt, u8 jf, u32 k)."""
    # (code, k, where to go if true, if false): a label ("deny", "enosys", "allow") or None for the next one.
    steps: list[tuple[int, int, str | None, str | None]] = [
        (_LD_W_ABS, 4, None, None),                        # seccomp_data.arch
        (_JEQ, _ARCH[machine], None, "deny"),              # another calling convention
        (_LD_W_ABS, 0, None, None),                        # seccomp_data.nr
    ]
    if machine == "x86_64":
        steps.append((_JGE, _X32_BIT, "deny", None))       # the x32 convention
    denied = (*_PROCESS_CALLS[machine], *_SOCKET_CALLS[machine], _IO_URING_SETUP, *_REACH_CALLS[machine], *_PIDFD_CALLS)
    steps += [(_JEQ, nr, "deny", None) for nr in denied]
    steps += [
        (_JEQ, _CLONE3, "enosys", None),
        (_JEQ, _CLONE[machine], None, "allow"),
        (_LD_W_ABS, 16, None, None),                       # clone's flags: args[0], low word
        (_JSET, _CLONE_THREAD, "allow", "deny"),           # a thread, or a process
    ]
    returns = {"deny": _ERRNO | errno.EPERM, "enosys": _ERRNO | errno.ENOSYS, "allow": _ALLOW}
    at = {label: len(steps) + i for i, label in enumerate(returns)}
    out = []
    for pc, (code, k, yes, no) in enumerate(steps):
        jt = at[yes] - pc - 1 if yes else 0
        jf = at[no] - pc - 1 if no else 0
        out.append(struct.pack("=HBBI", code, jt, jf, k))
    out += [struct.pack("=HBBI", _RET, 0, 0, k) for k in returns.values()]
    return b"".join(out)


class _Filter:
    """Built in the parent, so that the child between fork and exec only calls prctl twice."""

    def __init__(self, machine: str) -> None:
        code = _program(machine)
        self._buffer = ctypes.create_string_buffer(code, len(code))  # kept alive: _prog_buffer points into it
        prog = struct.pack("=HxxxxxxQ", len(code) // 8, ctypes.addressof(self._buffer))  # struct sock_fprog
        self._prog_buffer = ctypes.create_string_buffer(prog, len(prog))
        self._libc = ctypes.CDLL(None, use_errno=True)

    def apply(self) -> None:
        ulong = ctypes.c_ulong
        if self._libc.prctl(_PR_SET_NO_NEW_PRIVS, ulong(1), ulong(0), ulong(0), ulong(0)) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        if self._libc.prctl(_PR_SET_SECCOMP, ulong(_SECCOMP_MODE_FILTER), ulong(ctypes.addressof(self._prog_buffer)),
                            ulong(0), ulong(0)) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")


@cache
def _filter() -> _Filter | None:
    machine = platform.machine()
    if platform.system() != "Linux" or machine not in _ARCH:
        return None
    return _Filter(machine)


@cache
def available() -> bool:
    """True when the filter can be installed here and refuses a fork (checked once, in a child)."""
    flt = _filter()
    if flt is None:
        return False
    try:
        done = subprocess.run(["/bin/sh", "-c", "/bin/true && echo forked"], capture_output=True, timeout=10,
                              preexec_fn=flt.apply)
    except (OSError, subprocess.SubprocessError):
        return False
    return b"forked" not in done.stdout


def apply() -> None:
    """Install the filter in this process (for a preexec_fn); its children and what it execs keep it."""
    flt = _filter()
    if flt is None:
        raise OSError("no process filter on this platform")
    flt.apply()
