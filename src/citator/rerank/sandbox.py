"""One strategy process: unprivileged, no GPU, own work dir, JSONL pipes with deadlines, CPU metering.

CPU is the strategy's whole CPU time (interpreter start-up included): its utime+stime (threads included) read from
/proc while the runner waits, and the exit rusage from wait4. Where syscall_filter.available(), the strategy can start
no other process (which could leave its session, or be reaped by no one who counts its time), so those counters hold
all of it; elsewhere the live members of its session are scanned as well (a child that leaves it is not seen).
RLIMIT_CPU is a backstop.
"""

from __future__ import annotations

import os
import resource
import select
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from citator.rerank import syscall_filter
from citator.rerank.limits import Limits
from citator.rerank.account import SandboxUser
from citator.rerank.namespaces import Confinement
from citator.rerank.protocol import ProtocolViolation

_TICK = os.sysconf("SC_CLK_TCK")
_POLL_S = 0.02
_SESSION_SCAN_S = 0.25


def network_isolation(user: SandboxUser | None) -> list[str]:
    """Where namespaces.available() is False (no mount namespace), the network alone: a command prefix that runs the strategy in a fresh network namespace (no network) and only then drops to
    `user`: `unshare --net -- setpriv ... --`. Empty when not root or when the host does not allow it."""
    unshare, setpriv = shutil.which("unshare"), shutil.which("setpriv")
    if user is None or os.geteuid() != 0 or not unshare or not setpriv:
        return []
    prefix = [
        unshare, "--net", "--",
        setpriv, f"--reuid={user.uid}", f"--regid={user.gid}", "--clear-groups", "--no-new-privs", "--",
    ]
    try:
        ok = subprocess.run([*prefix, "/bin/true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    return prefix if ok else []


def _stat_fields(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    # comm may hold spaces and parentheses: split after the last ')'.
    return raw[raw.rfind(b")") + 2 :].decode().split()


def _cpu_of(fields: list[str]) -> float:
    # After comm: state ppid pgrp session ... utime(11) stime(12) cutime(13) cstime(14).
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / _TICK


def session_cpu(leader: int, scan: bool = True) -> float:
    """CPU seconds of `leader` (with its reaped children) plus, if `scan`, other live members of its session."""
    fields = _stat_fields(leader)
    total = _cpu_of(fields) if fields else 0.0
    if scan:
        for pid in _session_members(leader):
            f = _stat_fields(pid)
            if f:
                total += _cpu_of(f)
    return total


def _session_members(sid: int) -> list[int]:
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != sid:
            f = _stat_fields(int(name))
            if f and len(f) > 3 and f[3] == str(sid):
                out.append(int(name))
    return out


def _rlimits(cpu_seconds: float, dropped: bool) -> None:
    cap = int(cpu_seconds) + 2
    resource.setrlimit(resource.RLIMIT_CPU, (cap, cap + 1))
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 20, 64 << 20))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if dropped:
        # Counts every process of the sandbox user, so only set when that user is not the runner's own.
        resource.setrlimit(resource.RLIMIT_NPROC, (256, 256))


def _confine(cpu_seconds: float, dropped: bool, single_process: bool, confinement: Confinement | None) -> None:
    """In the child, before exec: namespaces and the drop to the strategy's user, rlimits, then the filter against
    new processes and sockets."""
    if confinement is not None:
        confinement.enter()
    _rlimits(cpu_seconds, dropped)
    if single_process:
        syscall_filter.apply()


@dataclass(frozen=True)
class Confining:
    """How a strategy process is confined: the user it runs as; `confinement` (check namespaces.available() first)
    or `prefix` (from network_isolation, its fallback), which switch to that user themselves (otherwise Popen
    does); and `single_process`, which installs the syscall filter (check syscall_filter.available() first)."""

    user: SandboxUser | None = None
    prefix: Sequence[str] = ()
    single_process: bool = False
    confinement: Confinement | None = None


class StrategyProcess:
    """A running strategy; every wait is bounded by the response deadline and the CPU limit."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str], work_dir: Path, stderr_path: Path, limits: Limits,
                 confining: Confining = Confining()) -> None:
        user, prefix, confinement = confining.user, confining.prefix, confining.confinement
        single_process = confining.single_process
        self.limits = limits
        self.cpu = 0.0
        self._buffer = b""
        self._eof = False
        self._last_scan = 0.0
        switches = bool(prefix) or confinement is not None
        with stderr_path.open("wb") as err:
            self.proc = subprocess.Popen(
                [*prefix, *argv],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                cwd=work_dir,
                env=dict(env),
                close_fds=True,
                start_new_session=True,
                user=user.uid if user and not switches else None,
                group=user.gid if user and not switches else None,
                extra_groups=[] if user and not switches else None,
                umask=0o077,
                preexec_fn=lambda: _confine(limits.cpu_seconds, user is not None, single_process, confinement),
            )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in = self.proc.stdin.fileno()
        self._out = self.proc.stdout.fileno()
        os.set_blocking(self._in, False)
        os.set_blocking(self._out, False)
        self.returncode: int | None = None

    def check_cpu(self, force_scan: bool = False) -> None:
        """Update the CPU reading; kill and raise once the strategy is over its CPU limit."""
        now = time.monotonic()
        scan = force_scan or now - self._last_scan >= _SESSION_SCAN_S
        if scan:
            self._last_scan = now
        if self.returncode is None:
            self.cpu = max(self.cpu, session_cpu(self.proc.pid, scan))
        if self.cpu > self.limits.cpu_seconds:
            self.kill()
            raise ProtocolViolation("cpu", f"strategy used {self.cpu:.2f} CPU s, limit {self.limits.cpu_seconds} s")

    def send(self, data: bytes) -> None:
        """Write one line without ever blocking past the response deadline."""
        deadline = time.monotonic() + self.limits.response_timeout_s
        view = memoryview(data)
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ProtocolViolation("timeout", "strategy did not read its input within the response timeout")
            _, writable, _ = select.select([], [self._in], [], min(_POLL_S * 5, remaining))
            if writable:
                try:
                    n = os.write(self._in, view)
                except BrokenPipeError:
                    raise ProtocolViolation("crash", self._exit_reason("closed its input")) from None
                view = view[n:]
            self.check_cpu()

    def read_line(self) -> bytes:
        """The next complete line; raises on timeout, oversize, CPU overrun or exit without a line."""
        deadline = time.monotonic() + self.limits.response_timeout_s
        cap = self.limits.max_message_bytes
        while True:
            nl = self._buffer.find(b"\n")
            if nl >= 0:
                line, self._buffer = self._buffer[: nl + 1], self._buffer[nl + 1 :]
                if len(line) > cap:
                    raise ProtocolViolation("oversize", f"message of {len(line)} bytes exceeds {cap}")
                if line.strip():
                    self.check_cpu()
                    return line
                continue
            if len(self._buffer) > cap:
                raise ProtocolViolation("oversize", f"message longer than {cap} bytes without a newline")
            if self._eof:
                raise ProtocolViolation(*self._missing_result())
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                raise ProtocolViolation(
                    "timeout", f"no message within the {self.limits.response_timeout_s} s response timeout"
                )
            readable, _, _ = select.select([self._out], [], [], min(_POLL_S, remaining))
            if readable:
                chunk = os.read(self._out, 1 << 16)
                if chunk:
                    self._buffer += chunk
                else:
                    self._eof = True
                    if not self.wait(self.limits.exit_grace_s):
                        raise ProtocolViolation(
                            "missing_result", "strategy closed its output without a result and did not exit"
                        )
            self.check_cpu()

    def _missing_result(self) -> tuple[str, str]:
        if self.returncode is None:
            return "missing_result", "strategy closed its output without sending a result"
        if self.returncode == 0:
            return "missing_result", "strategy exited (code 0) without sending a result"
        return "crash", self._exit_reason("exited")

    def _exit_reason(self, what: str) -> str:
        code = self.proc.poll() if self.returncode is None else self.returncode
        if code is not None and code < 0:
            return f"strategy {what}: killed by signal {signal.Signals(-code).name}"
        return f"strategy {what} with exit code {code}"

    def wait(self, grace: float) -> bool:
        """Reap the process within `grace` seconds (True) or kill it (False); records exit CPU from wait4."""
        if self.returncode is not None:
            return True
        deadline = time.monotonic() + grace
        while True:
            pid, status, usage = os.wait4(self.proc.pid, os.WNOHANG)
            if pid:
                self._reaped(status, usage)
                return True
            if time.monotonic() >= deadline:
                self.kill()
                return False
            self.check_cpu_quiet()
            time.sleep(0.005)

    def check_cpu_quiet(self) -> None:
        self.cpu = max(self.cpu, session_cpu(self.proc.pid, scan=False))

    def _reaped(self, status: int, usage: resource.struct_rusage) -> None:
        self.returncode = os.waitstatus_to_exitcode(status)
        self.proc.returncode = self.returncode
        self.cpu = max(self.cpu, usage.ru_utime + usage.ru_stime)

    def kill(self) -> None:
        """SIGKILL the whole session (and stragglers that left its process group) and reap the leader."""
        # Once reaped, the leader's pid may belong to someone else: only stragglers are signalled then.
        leader = [self.proc.pid] if self.returncode is None else []
        for pid in [*leader, *_session_members(self.proc.pid)]:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if self.returncode is None:
            try:
                _, status, usage = os.wait4(self.proc.pid, 0)
                self._reaped(status, usage)
            except ChildProcessError:
                self.returncode = self.proc.poll()

    def notify(self, data: bytes) -> None:
        """Best effort, never blocking: one last line to a strategy that is about to be stopped."""
        try:
            os.write(self._in, data)
        except OSError:
            pass

    def close(self) -> None:
        """Kill anything left and close the pipes."""
        self.kill()
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                if stream:
                    stream.close()
            except OSError:
                pass
