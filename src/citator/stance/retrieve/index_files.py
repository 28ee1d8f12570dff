"""What an index directory's data folder holds, recorded at build time and checked whenever it is read back.

The manifest lists every file of the data folder with its size and sha256. Sizes are checked on every read of the
manifest (a stat per file: run.sh's client path can afford it); digests, array shapes, dtypes and finiteness when
the arrays are loaded to search (the search server's start and a cold in-process search), so a damaged index is an
IndexDirError naming the file and what is wrong, never a traceback or a silent ranking of zeros. An opened index
then stays what was verified: `AsVerified` refuses one whose files changed since.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citator.data.jsonl import loads
from citator.data.hashing import sha256_file
from citator.errors import IndexDirError

if TYPE_CHECKING:  # run.sh's client path imports no numpy
    import numpy as np

REBUILD = "rebuild with build.sh"


def record_files(data_dir: Path, leave_out: Collection[str] = ()) -> dict[str, dict[str, Any]]:
    """Every regular file under `data_dir` (relative POSIX path) -> {"bytes", "sha256"}, but those named
    `leave_out` (a build's own mark)."""
    return {path.relative_to(data_dir).as_posix(): file_entry(path) for path in sorted(data_dir.rglob("*"))
            if path.is_file() and not path.is_symlink() and path.name not in leave_out}


def file_entry(path: Path) -> dict[str, Any]:
    """What a file table records of one file: {"bytes", "sha256"}."""
    return {"bytes": path.stat().st_size, "sha256": sha256_file(path)}


def check_recorded(files: Any, where: Path, remedy: str = REBUILD) -> dict[str, dict[str, Any]]:
    """The manifest's `files` table, its form checked (names inside the data folder, sizes, hex digests).
    `remedy`: what the error tells the user to do (a trained model's is to retrain)."""
    if not isinstance(files, dict) or not files:
        raise IndexDirError(f"{where}: no file table (made by an older citator or edited); {remedy}")
    for name, entry in files.items():
        parts = Path(name).parts
        ok = (isinstance(entry, dict) and name and not Path(name).is_absolute() and ".." not in parts
              and isinstance(entry.get("bytes"), int) and not isinstance(entry.get("bytes"), bool)
              and entry["bytes"] >= 0 and isinstance(entry.get("sha256"), str) and len(entry["sha256"]) == 64)
        if not ok:
            raise IndexDirError(f"{where}: file table entry {name!r} is malformed; {remedy}")
    return files


def verify_sizes(data_dir: Path, files: Mapping[str, Mapping[str, Any]], remedy: str = REBUILD) -> None:
    """Each recorded file is there, a regular file, of its recorded size (a truncated or swapped file is refused)."""
    for name, entry in files.items():
        path = data_dir / name
        try:
            st = os.lstat(path)
        except OSError:
            raise IndexDirError(f"{path}: missing; {remedy}") from None
        if not stat.S_ISREG(st.st_mode):
            raise IndexDirError(f"{path}: not a regular file; {remedy}")
        if st.st_size != entry["bytes"]:
            raise IndexDirError(f"{path}: {st.st_size} bytes, made as {entry['bytes']} (damaged); {remedy}")


def verify_digests(data_dir: Path, files: Mapping[str, Mapping[str, Any]], remedy: str = REBUILD) -> None:
    """Each recorded file has its recorded sha256."""
    for name, entry in files.items():
        if sha256_file(data_dir / name) != entry["sha256"]:
            raise IndexDirError(f"{data_dir / name}: content differs from what was made (sha256); {remedy}")


# What identifies a file's state: device and inode (which file), size, and the times of its last write and of its
# last change of any kind (ctime: set by the kernel on every write, chmod or utime, so a write whose mtime is set
# back still shows).
FileState = tuple[int, int, int, int, int]


def file_state(path: Path) -> FileState | None:
    """The state of the file at `path` (None: absent or unreadable)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


@dataclass(frozen=True)
class AsVerified:
    """The state of an index's files taken before their digests were checked, checked again once they were: what
    an opened index serves later is what was verified then. Its files stay mapped or open (the dense vectors, the
    document tokens, the BM25 arrays, the corpus copy), so a file written in place afterwards, even at the same size
    and with its old mtime set back, would change answers; `check` after each use refuses them instead."""

    data_dir: Path
    states: dict[str, FileState | None]

    @classmethod
    def take(cls, data_dir: Path, names: Iterable[str]) -> AsVerified:
        return cls(data_dir, {name: file_state(data_dir / name) for name in names})

    def check(self) -> None:
        """An IndexDirError naming the first file that is not as it was when verified (written, replaced or gone)."""
        for name, state in self.states.items():
            if file_state(self.data_dir / name) != state:
                raise IndexDirError(f"{self.data_dir / name}: changed since the index was opened (written, replaced "
                                    "or removed); open the index again")


def load_array(path: Path, ndim: int, kind: str, rows: int | None = None, mmap: bool = False) -> np.ndarray:
    """np.load with the checks every index array needs: readable, `ndim` dimensions, dtype kind ('f' float, 'i'
    integer), `rows` rows when given, and finite values when floating."""
    import numpy as np

    try:
        array = np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        raise IndexDirError(f"{path}: unreadable array ({exc}); {REBUILD}") from None
    if array.ndim != ndim or array.dtype.kind not in (kind if kind != "i" else "iu"):
        raise IndexDirError(f"{path}: {array.dtype} array of shape {array.shape}, expected {ndim}-D "
                            f"{'floating' if kind == 'f' else 'integer'}; {REBUILD}")
    if rows is not None and array.shape[0] != rows:
        raise IndexDirError(f"{path}: {array.shape[0]} rows, the manifest says {rows}; {REBUILD}")
    if kind == "f" and not bool(np.isfinite(array).all()):
        raise IndexDirError(f"{path}: holds NaN or infinite values; {REBUILD}")
    return array


def load_doc_ids(path: Path, n_docs: int) -> list[str]:
    """doc_ids.json: a list of `n_docs` distinct non-empty strings."""
    try:
        ids = loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise IndexDirError(f"{path}: unreadable ({type(exc).__name__}); {REBUILD}") from None
    if not isinstance(ids, list) or not all(isinstance(i, str) and i for i in ids):
        raise IndexDirError(f"{path}: not a list of document ids; {REBUILD}")
    if len(ids) != n_docs or len(set(ids)) != len(ids):
        raise IndexDirError(f"{path}: {len(ids)} ids ({len(set(ids))} distinct), the manifest says {n_docs}; {REBUILD}")
    return ids


def check_starts(path: Path, starts: np.ndarray, n_passages: int) -> None:
    """Each document's first passage: starts at 0, non-decreasing, every one inside the passages."""
    import numpy as np

    if len(starts) and (starts[0] != 0 or bool((np.diff(starts) < 0).any()) or int(starts[-1]) > n_passages
                        or bool((starts >= max(n_passages, 1)).any())):
        raise IndexDirError(f"{path}: passage starts are not increasing within 0..{n_passages}; {REBUILD}")
