"""Atomic writes: write to a temporary file beside the target, then rename over it."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any


@contextlib.contextmanager
def atomic_open(path: str | Path, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO[Any]]:
    """Open a temp file next to `path`; on clean exit fsync and rename it to `path`, else delete it."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    # mkstemp makes 0600 files; give the result the mode a plain open() would (readers may be other users).
    umask = os.umask(0)
    os.umask(umask)
    os.fchmod(fd, 0o666 & ~umask)
    binary = "b" in mode
    try:
        with os.fdopen(fd, mode, encoding=None if binary else encoding) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write a whole text file atomically."""
    with atomic_open(path) as handle:
        handle.write(text)


def write_json_atomic(path: str | Path, obj: Any) -> None:
    """Write one JSON document atomically (sorted keys, indented, trailing newline)."""
    write_text_atomic(path, json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def save_npy_atomic(path: str | Path, array: Any) -> None:
    """numpy.save, atomically (a crash leaves the old file or none, never a truncated one)."""
    import numpy as np

    with atomic_open(path, "wb", encoding=None) as handle:
        np.save(handle, array)


def write_jsonl_atomic(path: str | Path, rows: Iterable[Any]) -> None:
    """Write JSON lines atomically, one compact object per line."""
    with atomic_open(path) as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
