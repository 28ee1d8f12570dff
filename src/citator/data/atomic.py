"""Atomic writes under one output rule: write to a temporary file beside the target, then rename over it.

The output rule, for every file citator writes: the target is a regular file or does not exist yet. A symbolic
link, a directory, a device (/dev/null, /dev/full), a FIFO or a socket is refused, and so is a file that is one of
the command's inputs (the same inode, whatever the path: `--output` naming the queries file would destroy them).
A rename replaces a directory entry, so without this rule `--output /dev/null` run as root turns the device node
into a regular file. Problems with the place itself (a missing parent that cannot be made, a parent that is a file,
a directory citator may not write) end in the same typed OutputError, one line naming the path.
"""

from __future__ import annotations

import contextlib
import contextvars
import fcntl
import json
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from citator.errors import OutputError

# Files the running command reads (set by the CLI for each command): no writer may replace one of them.
_INPUTS: contextvars.ContextVar[tuple[tuple[int, int], ...]] = contextvars.ContextVar("citator_inputs", default=())
# Files the command's readers opened from the directories it was given (an index's manifest and data, a run's pool):
# recorded only while a command runs (command_inputs), so a library caller may rebuild what it read before.
_READ: contextvars.ContextVar[set[tuple[int, int]] | None] = contextvars.ContextVar("citator_read", default=None)
# Directories the command line names: a build's cleanup never removes one (or what holds one).
_INPUT_DIRS: contextvars.ContextVar[tuple[tuple[int, int], ...]] = contextvars.ContextVar("citator_input_dirs",
                                                                                         default=())

# Folders citator keeps for itself, each marked by its lock: an index directory (its manifest, and the build and
# server folders inside it) and a statute vector cache. Only the code holding one (`owning`) writes there; a run
# directory's lock keeps a second run out. No output ever replaces a lock file: a second holder would then lock
# the new file while the first holds the old one. An index directory's two names here are stance/retrieve/layout.py's
# BUILD_LOCK and MANIFEST, spelled again because this floor lies below it (tests/test_code_shape.py holds them equal).
INDEX_LOCK, RUN_LOCK, CACHE_LOCK = ".build.lock", ".run.lock", ".vectors.lock"
LOCK_NAMES = frozenset((INDEX_LOCK, RUN_LOCK, CACHE_LOCK))
INDEX_MANIFEST = "manifest.json"
# The kept folders this command holds (real paths): set by `owning`.
_HELD: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("citator_held", default=())

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link"))


def _identity(path: str | Path, kind: Callable[[int], bool] = stat.S_ISREG) -> tuple[int, int] | None:
    """(device, inode) of what `path` names, when it is of `kind` (a regular file unless told otherwise)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino) if kind(st.st_mode) else None


@contextlib.contextmanager
def command_inputs(paths: Iterable[str | Path]) -> Iterator[None]:
    """While the block runs, every atomic write refuses to replace any of these files (those that exist), and any
    file a reader marks as read (mark_read); directories among `paths` are kept from a build's cleanup."""
    paths = list(paths)
    ids = tuple(i for i in (_identity(p) for p in paths) if i is not None)
    dirs = tuple(i for i in (_identity(p, stat.S_ISDIR) for p in paths) if i is not None)
    tokens = (_INPUTS.set(_INPUTS.get() + ids), _INPUT_DIRS.set(_INPUT_DIRS.get() + dirs), _READ.set(set()))
    try:
        yield
    finally:
        _READ.reset(tokens[2])
        _INPUT_DIRS.reset(tokens[1])
        _INPUTS.reset(tokens[0])


def mark_read(paths: Iterable[str | Path]) -> None:
    """Record files a command has read from a directory it was given (an index's manifest and data files, a
    statute run's pool): no output of the same command may replace them. Outside a command, nothing is recorded."""
    read = _READ.get()
    if read is not None:
        read.update(i for i in (_identity(p) for p in paths) if i is not None)


def replacing(path: str | Path) -> None:
    """The command replaces the file it read at `path` by design (an index update, the manifest it read to know
    what it updates): no longer counted as read. A file the command line names stays an input."""
    read = _READ.get()
    if read is not None:
        read.discard(_identity(path))


def holds_command_input(folder: str | Path) -> bool:
    """Whether `folder` holds (or is) a file or directory the running command reads (so it must stay)."""
    files, dirs = set(_INPUTS.get()) | (_READ.get() or set()), set(_INPUT_DIRS.get())
    if not files and not dirs:
        return False
    for d, _, names in os.walk(folder):
        if _identity(d, stat.S_ISDIR) in dirs or any(_identity(os.path.join(d, n)) in files for n in names):
            return True
    return False


@contextlib.contextmanager
def owning(folder: str | Path) -> Iterator[None]:
    """While the block runs, this command may write inside `folder`, a folder citator keeps (the index it builds,
    the server folder of the index it serves, the vector cache it fills)."""
    token = _HELD.set(_HELD.get() + (os.path.realpath(folder),))
    try:
        yield
    finally:
        _HELD.reset(token)


def _kept_from(target: Path) -> str | None:
    """Why `target` is not this command's to write, if it is not: a lock file, or (while a command runs) a path
    inside a folder citator keeps that this command does not hold: a vector cache, an index directory's manifest,
    or anything within an index directory's folders. Beside an index (run.sh's results) is the user's own."""
    if target.name in LOCK_NAMES:
        return "is a lock file of citator's, never an output"
    if _READ.get() is None:
        return None
    held = set(_HELD.get())
    parent = Path(os.path.realpath(target.parent))
    for depth, folder in enumerate((parent, *parent.parents)):
        if str(folder) in held:
            return None
        if (folder / CACHE_LOCK).is_file():
            return f"lies in the vector cache {folder}, which only the run filling it writes"
        if (folder / INDEX_LOCK).is_file() and (depth > 0 or target.name == INDEX_MANIFEST):
            return f"lies in the index directory {folder}, whose own files only its build and server write"
    return None


def check_output(path: str | Path, inputs: Iterable[str | Path] = (), in_place: bool = False) -> Path:
    """Refuse, with an OutputError naming the path, a target that breaks the output rule; return it as a Path.

    `in_place`: the file is a store that is read and updated (a SQLite database), not replaced: being one of the
    command's inputs is then its purpose."""
    target = Path(path)
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        raise OutputError(f"{target}: a parent of this path is a file, not a directory") from None
    except OSError as exc:
        raise OutputError(f"{target}: cannot be inspected ({exc.strerror or exc})") from None
    if st is not None:
        if not stat.S_ISREG(st.st_mode):
            kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a regular file")
            raise OutputError(f"{target}: is {kind}; citator writes only to a regular file or a new path")
        ident = (st.st_dev, st.st_ino)
        if not in_place and (ident in _INPUTS.get() or ident in (_READ.get() or ())
                             or any(_identity(p) == ident for p in inputs)):
            raise OutputError(f"{target}: is one of this command's inputs; write the output somewhere else")
    _check_parent(target)
    if (kept := _kept_from(target)) is not None:
        raise OutputError(f"{target}: {kept}; write the output somewhere else")
    return target


def _check_parent(target: Path) -> None:
    """The nearest existing ancestor must be a directory (missing ones are made), writable when it is the parent."""
    parent = target.parent
    while True:
        try:
            st = os.stat(parent)
            break
        except FileNotFoundError:
            if parent == parent.parent:
                return
            parent = parent.parent
        except NotADirectoryError:
            raise OutputError(f"{target}: a parent of this path is a file, not a directory") from None
        except OSError as exc:
            raise OutputError(f"{target}: its directory cannot be inspected ({exc.strerror or exc})") from None
    if not stat.S_ISDIR(st.st_mode):
        raise OutputError(f"{target}: {parent} is a file, not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"{target}: directory {parent} is not writable")


@contextlib.contextmanager
def atomic_open(
    path: str | Path, mode: str = "w", encoding: str | None = "utf-8", inputs: Iterable[str | Path] = ()
) -> Iterator[IO[Any]]:
    """Open a temp file next to `path`; on clean exit fsync and rename it to `path`, else delete it.

    `path` must satisfy the output rule (see the module docstring), checked before writing and again just before
    the rename; `inputs` are files that must not be replaced, besides the command's own.
    """
    inputs = tuple(inputs)
    target = check_output(path, inputs)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise OutputError(f"{target}: cannot write here ({exc.strerror or exc})") from None
    # mkstemp makes 0600 files; give the result the mode a plain open() would: the mode of the file it replaces
    # (a private 0600 file stays private), else the umask's.
    umask = os.umask(0)
    os.umask(umask)
    try:
        permissions = stat.S_IMODE(os.stat(target).st_mode) & 0o777
    except OSError:
        permissions = 0o666 & ~umask
    os.fchmod(fd, permissions)
    binary = "b" in mode
    try:
        with os.fdopen(fd, mode, encoding=None if binary else encoding) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        check_output(target, inputs)  # the target may have been swapped while we wrote
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_text_atomic(path: str | Path, text: str, inputs: Iterable[str | Path] = ()) -> None:
    """Write a whole text file atomically."""
    with atomic_open(path, inputs=inputs) as handle:
        handle.write(text)


def write_json_atomic(path: str | Path, obj: Any, inputs: Iterable[str | Path] = ()) -> None:
    """Write one JSON document atomically (sorted keys, indented, trailing newline)."""
    write_text_atomic(path, json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n", inputs)


def save_npy_atomic(path: str | Path, array: Any) -> None:
    """numpy.save, atomically (a crash leaves the old file or none, never a truncated one)."""
    import numpy as np

    with atomic_open(path, "wb", encoding=None) as handle:
        np.save(handle, array)


def write_jsonl_atomic(path: str | Path, rows: Iterable[Any], inputs: Iterable[str | Path] = ()) -> None:
    """Write JSON lines atomically, one compact object per line."""
    with atomic_open(path, inputs=inputs) as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def open_append(path: str | Path) -> IO[bytes]:
    """Open a log file for appending under the output rule (never through a symlink, never a device)."""
    target = check_output(path)
    try:
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        raise OutputError(f"{target}: cannot open for writing ({exc.strerror or exc})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped between the check and the open
        os.close(fd)
        raise OutputError(f"{target}: is not a regular file")
    return os.fdopen(fd, "ab")


def open_lock(path: str | Path, create: bool = True) -> IO[bytes]:
    """A lock file, opened read-only for flock: never through a symbolic link (one planted there would have the
    lock create a file elsewhere, as root), and only a regular file; made if absent when `create`. OutputError
    otherwise; FileNotFoundError when it is absent and not to be made."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | (os.O_CREAT if create else 0)
    try:
        fd = os.open(path, flags, 0o644)
    except FileNotFoundError:
        if create:
            raise OutputError(f"{path}: its directory does not exist") from None
        raise
    except OSError as exc:
        what = "is a symbolic link" if os.path.islink(path) else f"cannot be opened ({exc.strerror or exc})"
        raise OutputError(f"{path}: {what}; a lock file is only ever a regular file") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OutputError(f"{path}: is not a regular file; a lock file is only ever a regular file")
    return os.fdopen(fd, "rb")


@contextlib.contextmanager
def exclusive_dir(path: str | Path, lock_name: str, busy: str,
                  error: Callable[[str], Exception] = OutputError) -> Iterator[Path]:
    """The output directory `path` (made if absent, absolute), held by this process alone while the block runs:
    another holder gets `error` naming the directory and `busy`, at once. The lock is the kernel's (flock on
    `lock_name` inside it): it ends with the process, however that ends. The block holds the folder (`owning`)."""
    target = output_dir(Path(path).absolute())
    lock = open_lock(target / lock_name)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        raise error(f"{target}: {busy}") from None
    try:
        with owning(target):
            yield target
    finally:
        lock.close()


def run_directory(path: str | Path) -> contextlib.AbstractContextManager[Path]:
    """The run directory `path`, held by this run alone (exclusive_dir)."""
    return exclusive_dir(path, RUN_LOCK, "another citator run is writing this run directory; wait for it to end")


def output_dir(path: str | Path, make: bool = True) -> Path:
    """Make (or reuse) a directory that a command writes its files into; one OutputError line if it cannot be one.

    `make=False` only checks (a command checks its output directory before its long work, and makes it later)."""
    target = Path(path)
    if target.is_symlink() and not target.is_dir():
        raise OutputError(f"{target}: is a symbolic link to no directory; give a directory for the output")
    if target.exists() and not target.is_dir():
        what = "is a file, not a directory" if target.is_file() else "is not a directory"
        raise OutputError(f"{target}: {what}; give a directory for the output")
    _check_parent(target)
    if (kept := _kept_from(target)) is not None:
        raise OutputError(f"{target}: {kept}; give another directory for the output")
    if not make and not target.exists():
        return target
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{target}: cannot make this directory ({exc.strerror or exc})") from None
    if not os.access(target, os.W_OK | os.X_OK):
        raise OutputError(f"{target}: directory is not writable")
    return target
