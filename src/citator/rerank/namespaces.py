"""The strategy's own namespaces: no network, a private /tmp, and no view of the judgments.

`Confinement.enter()` runs in the forked child before exec (Popen's preexec_fn), so it costs the strategy no
process and no interpreter start-up:

- it leaves the host's network namespace (a fresh one has only a loopback that is down) and mount namespace;
  as root directly, as any other user inside a new user namespace that maps only its own uid (the capabilities it
  holds there end at exec, since that uid is not 0 in it);
- /tmp, /var/tmp, /dev/shm and /run/lock become empty tmpfs (64 MiB each), and System V and POSIX IPC objects
  live in a fresh IPC namespace: nothing another user left there is visible, and nothing the strategy leaves there
  outlives it;
- `keep` paths the tmpfs covered (the run's directory, the strategy's own files) are bound back at the same path,
  through handles opened before the tmpfs covered them;
- `hide` paths (the judgments) are covered last: a file by an empty file of mode 0000, a directory by an empty
  tmpfs of mode 0000 (so a judgment inside a kept directory is hidden too);
- as root, it then drops to the strategy's user (no groups, no new privileges).

Mounts made here change only the child's view; the host's never changes. `available()` says whether this host
allows it (a probe child running /bin/true); where it does not, the runner says which protections are missing.
"""

from __future__ import annotations

import ctypes
import os
import stat
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from citator.rerank.account import SandboxUser

_CLONE_NEWNS, _CLONE_NEWUSER, _CLONE_NEWNET, _CLONE_NEWIPC = 0x00020000, 0x10000000, 0x40000000, 0x08000000
# System V shared memory, semaphores, message queues and POSIX message queues live in the IPC namespace: a fresh one
# per strategy, so nothing it makes there outlives it or reaches the next query's strategy.
_UNSHARE = _CLONE_NEWNS | _CLONE_NEWNET | _CLONE_NEWIPC
_MS_NOSUID, _MS_NODEV, _MS_BIND, _MS_REC, _MS_PRIVATE = 0x2, 0x4, 0x1000, 0x4000, 0x40000
_PR_SET_NO_NEW_PRIVS = 38
# Every directory any user may write to on a usual host (/run/lock too: lock files outlive their process).
PRIVATE_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")
_HIDDEN_FILE = "/tmp/.citator-hidden"
# Loaded in the parent: the child after fork must not load libraries.
_libc = ctypes.CDLL(None, use_errno=True)


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    _check(_libc.mount(source and source.encode(), target.encode(), fstype and fstype.encode(), flags,
                       data and data.encode()), f"mount {target}")


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _placeholder(path: str, is_dir: bool) -> None:
    os.makedirs(path if is_dir else os.path.dirname(path), mode=0o755, exist_ok=True)
    if not is_dir and not os.path.exists(path):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))


@dataclass(frozen=True)
class Confinement:
    """What one strategy process sees: `keep` stays visible, `hide` does not; `user` is who it runs as (root's
    runner only; None runs it as the runner's own user)."""

    user: SandboxUser | None
    keep: tuple[str, ...] = ()
    hide: tuple[str, ...] = ()
    # Symbolic links under a private directory made again inside it, (link, target): the way to a kept program.
    links: tuple[tuple[str, str], ...] = ()

    def enter(self) -> None:
        """In the child, before exec: namespaces, mounts, then (as root) the drop to `user`."""
        uid, gid, cwd = os.getuid(), os.getgid(), os.getcwd()
        # Folders made to hold a bound-back path must be searchable by the strategy's user, whatever its umask.
        umask = os.umask(0o022)
        if uid == 0:
            _check(_libc.unshare(_UNSHARE), "unshare")
        else:
            _check(_libc.unshare(_CLONE_NEWUSER | _UNSHARE), "unshare")
            _write("/proc/self/setgroups", "deny")
            _write("/proc/self/uid_map", f"{uid} {uid} 1")
            _write("/proc/self/gid_map", f"{gid} {gid} 1")
        # O_PATH: a handle on the path itself, whatever its mode, bound back once the tmpfs covers its old path.
        held = [(p, os.open(p, os.O_PATH), os.path.isdir(p)) for p in self.keep if os.path.exists(p)]
        _mount(None, "/", None, _MS_REC | _MS_PRIVATE, None)
        for d in PRIVATE_DIRS:
            if os.path.isdir(d) and not os.path.islink(d):
                _mount("tmpfs", d, "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=1777,size=64m")
        for path, fd, is_dir in held:
            _placeholder(path, is_dir)
            _mount(f"/proc/self/fd/{fd}", path, None, _MS_BIND | _MS_REC, None)
            os.close(fd)
        for link, target in self.links:
            if not os.path.lexists(link):
                os.makedirs(os.path.dirname(link), mode=0o755, exist_ok=True)
                os.symlink(target, link)
        _placeholder(_HIDDEN_FILE, False)
        os.chmod(_HIDDEN_FILE, 0)
        for path in self.hide:
            try:
                mode = os.stat(path).st_mode
            except OSError:
                continue  # already out of view (under a private directory) or gone
            if stat.S_ISDIR(mode):
                _mount("tmpfs", path, "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=0000,size=4k")
            else:
                _mount(_HIDDEN_FILE, path, None, _MS_BIND, None)
        try:
            os.chdir(cwd)  # through the new mounts
        except FileNotFoundError:  # a directory a private tmpfs now covers: the process starts at the root
            os.chdir("/")
        os.umask(umask)
        if uid == 0 and self.user is not None:
            os.setgroups([])
            os.setresgid(self.user.gid, self.user.gid, self.user.gid)
            os.setresuid(self.user.uid, self.user.uid, self.user.uid)
            _check(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl")


def program_paths(path: str) -> tuple[list[str], list[tuple[str, str]]]:
    """What a strategy needs to find the program or file at `path` in its own view: the folder of the file the path
    resolves to, or the file alone where that folder is a private one (all of /tmp would be shared again), and every
    symbolic link on the way that lies under a private directory, as (link, target), to be made again there (a
    venv's `bin/python` under /tmp points out to /usr/bin). Nothing else beside a link is exposed."""
    links: list[tuple[str, str]] = []
    parts = os.path.abspath(path).split("/")[1:]
    current, hops = "/", 0
    while parts:
        part = parts.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            current = os.path.dirname(current)
            continue
        step = os.path.join(current, part)
        if os.path.islink(step) and hops < 40:  # the kernel's own limit on links in one lookup
            hops += 1
            target = os.readlink(step)
            if any(step.startswith(private + "/") for private in PRIVATE_DIRS):
                links.append((step, target))
            if target.startswith("/"):
                current = "/"
            parts = target.split("/") + parts
        else:
            current = step
    real = os.path.realpath(current)
    if os.path.isdir(real):
        return [real], links
    folder = os.path.dirname(real)
    return [real if folder in PRIVATE_DIRS else folder], links


def confined_paths(paths: Sequence[str | os.PathLike[str]]) -> tuple[str, ...]:
    """Absolute real paths, once each, in order (a symlink's target is what a mount covers)."""
    return tuple(dict.fromkeys(os.path.realpath(p) for p in paths))


@cache
def available(user: SandboxUser | None) -> bool:
    """Whether this host lets a child enter a Confinement (root's namespaces, or an unprivileged user namespace)."""
    try:
        # From the root: the probe answers for the host, not for the directory the runner happens to be in.
        done = subprocess.run(["/bin/true"], preexec_fn=Confinement(user).enter, capture_output=True, timeout=10,
                              cwd="/")
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0
