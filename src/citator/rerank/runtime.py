"""The per-run directory that makes a strategy's runtime reachable by the strategy's own user.

The runner's checkout or virtual environment may sit under a private home (mode 0700) that the sandbox user cannot
enter. So each run gets one directory of its own, `TMP/citator-strategy-XXXX/` (owned by the runner, mode 0755, the
strategy user reads it and never writes it), holding:

- `code/citator/...`: the stdlib-only strategy SDK and the built-in strategies, nothing else (strategies get
  `code/` as their PYTHONPATH);
- `python/` when no system interpreter is runnable by that user: the runner's own interpreter binary, its shared
  libpython and its standard library, hard-linked where the file system allows, copied otherwise;
- `q-XXXX/`: each query's work dir (owned by the strategy user, mode 0700) and the runner's stderr capture files.

`close()` removes all of it; so do garbage collection and interpreter exit (weakref.finalize). A signal that ends
the runner (SIGTERM, SIGHUP) goes to `exit_on_signal`, which kills each live strategy, removes each run's
directory, then exits: raising an exception from a signal handler instead is not enough, since one that lands in a
callback (an at-fork handler, a finalizer) is printed and dropped, and the run goes on.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
import tempfile
import weakref
from pathlib import Path
from types import FrameType

from citator.rerank.account import SandboxUser
from citator.rerank.sandbox import StrategyProcess

PREFIX = "citator-strategy-"

# The SDK's files, relative to the directory that holds the `citator` package: stdlib-only by design (see
# citator/rerank/__init__.py). The copy's own citator/__init__.py is empty, so nothing heavier is ever imported.
_SDK = ("citator/rerank/__init__.py", "citator/rerank/strategy.py")
_STRATEGIES = "citator/rerank/strategies"

# Left out of a private interpreter's standard library: never imported by a strategy, and most of its size.
_STDLIB_SKIP = ("site-packages", "dist-packages", "test", "idlelib", "tkinter", "turtledemo", "ensurepip",
                "lib2to3", "config-*", "tests")


_LIVE: weakref.WeakSet[StrategyRuntime] = weakref.WeakSet()


class StrategyRuntime:
    """One run's directory: the SDK copy, perhaps an interpreter, and the per-query work dirs."""

    def __init__(self, user: SandboxUser | None, work_root: str | Path | None = None) -> None:
        self.user = user
        # The strategy process of the query in progress, if any (the runner sets it): killed by exit_on_signal.
        self.process: StrategyProcess | None = None
        self.root = Path(tempfile.mkdtemp(prefix=PREFIX, dir=work_root)).resolve()
        self._finalizer = weakref.finalize(self, shutil.rmtree, str(self.root), True)
        os.chmod(self.root, 0o755)
        self.code = self.root / "code"
        copy_sdk(self.code)
        self._python: tuple[str, dict[str, str]] | None = None
        _LIVE.add(self)

    def work_dir(self) -> Path:
        """A fresh, empty work dir for one query: the strategy user's own, mode 0700."""
        work = Path(tempfile.mkdtemp(prefix="q-", dir=self.root))
        if self.user:
            os.chown(work, self.user.uid, self.user.gid)
        os.chmod(work, 0o700)
        return work

    def stderr_file(self) -> Path:
        """A file the runner owns (mode 0600) that receives one strategy process's stderr."""
        fd, name = tempfile.mkstemp(prefix="stderr-", dir=self.root)
        os.close(fd)
        return Path(name)

    def private_python(self) -> tuple[str, dict[str, str]]:
        """The runner's interpreter, linked or copied into this directory (once): its path and the environment it
        needs."""
        if self._python is None:
            self._python = private_interpreter(self.root / "python")
        return self._python

    def close(self) -> None:
        """Remove the directory and everything in it (idempotent)."""
        self._finalizer()

    def abandon(self) -> None:
        """Kill the live strategy, if any, then close."""
        if self.process is not None:
            self.process.kill()
        self.close()


def exit_on_signal(signum: int, frame: FrameType | None) -> None:
    """A signal handler: kill every live strategy, remove every run's directory, exit with 128 + signum."""
    for runtime in list(_LIVE):
        try:
            runtime.abandon()
        except OSError:
            pass
    print(f"citator: stopped by signal {signum}; strategies killed and their directories removed", file=sys.stderr)
    sys.stderr.flush()
    os._exit(128 + signum)


def package_parent() -> Path:
    """The directory that holds the installed `citator` package (a checkout's src/, or site-packages)."""
    return Path(__file__).resolve().parents[2]


def copy_sdk(dest: Path) -> None:
    """Write the strategy SDK and the built-in strategies under `dest` (world-readable, nothing else of citator)."""
    src = package_parent()
    (dest / "citator").mkdir(parents=True)
    (dest / "citator" / "__init__.py").write_text('"""The strategy SDK alone (see citator.rerank.runtime)."""\n')
    for rel in _SDK:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / rel, dest / rel)
    shutil.copytree(src / _STRATEGIES, dest / _STRATEGIES, ignore=shutil.ignore_patterns("__pycache__"))
    _open_up(dest)


def private_interpreter(dest: Path) -> tuple[str, dict[str, str]]:
    """Lay out the running interpreter under `dest` as `bin/pythonX.Y` + `lib/pythonX.Y/` (+ its libpython), so
    that a user who cannot reach the original can run it. Returns the binary's path and the extra environment
    (LD_LIBRARY_PATH when the interpreter links libpython dynamically)."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    binary = Path(os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable))
    stdlib = Path(os.path.dirname(os.__file__))
    (dest / "bin").mkdir(parents=True)
    target = dest / "bin" / version
    _link_or_copy(str(binary), str(target))
    shutil.copytree(stdlib, dest / "lib" / version, copy_function=_link_or_copy,
                    ignore=shutil.ignore_patterns(*_STDLIB_SKIP))
    env: dict[str, str] = {}
    if sysconfig.get_config_var("Py_ENABLE_SHARED"):
        libdir, name = sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("INSTSONAME")
        if libdir and name and os.path.exists(os.path.join(libdir, name)):
            _link_or_copy(os.path.join(libdir, name), str(dest / "lib" / name))
            env["LD_LIBRARY_PATH"] = str(dest / "lib")
    _open_up(dest)
    return str(target), env


def _link_or_copy(src: str, dst: str) -> str:
    """A hard link (free) where the file system allows and the file is already open to everyone; otherwise a copy.

    A hard link shares its mode with the original, so a file that is not world-readable (and, if a program,
    world-runnable) is copied: no permission outside this directory ever changes."""
    if _open_enough(os.stat(src).st_mode):
        try:
            os.link(src, dst)
            return dst
        except OSError:
            pass
    shutil.copy2(src, dst)
    return dst


def _needed(mode: int) -> int:
    return 0o444 | (0o111 if mode & 0o100 else 0)


def _open_enough(mode: int) -> bool:
    return mode & _needed(mode) == _needed(mode)


def _open_up(top: Path) -> None:
    """Make the tree readable by everyone (directories searchable, programs runnable), never writable by others."""
    for dirpath, _, filenames in os.walk(top):
        os.chmod(dirpath, 0o755)
        for name in filenames:
            path = os.path.join(dirpath, name)
            mode = os.stat(path).st_mode
            if not _open_enough(mode):  # a copy (see _link_or_copy): its mode is ours to set
                os.chmod(path, (mode | _needed(mode)) & 0o755)
