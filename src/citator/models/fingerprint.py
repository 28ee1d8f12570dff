"""What identifies a model: a digest of its directory's files, not the folder's name."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from citator.data.hashing import sha256_file
from citator.models.load import default_encoder_path

_FINGERPRINTS: dict[tuple[str, tuple[tuple[str, int, int], ...]], str] = {}


def model_fingerprint(path: str | Path | None = None) -> str:
    """sha256 over a model directory's files (names and contents; hidden files and *.md aside): the one rule that
    identifies a model, for encoders and for the statute benchmark's graders alike.

    Identifies the weights, tokenizer and configuration themselves, not the folder's name: `citator train`'s reuse
    of encoders and cached vectors, and build's check that artifacts fit the index's encoder, compare it. Cached per
    process by (path, sizes, mtimes).
    """
    model_dir = (Path(path) if path is not None else default_encoder_path()).resolve()
    files: list[Path] = []
    seen: set[tuple[int, int]] = set()  # (device, inode) of the folders walked: linked folders count, once
    for root, dirs, names in os.walk(model_dir, followlinks=True):
        info = os.stat(root)
        if (info.st_dev, info.st_ino) in seen:
            dirs[:] = []
            continue
        seen.add((info.st_dev, info.st_ino))
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        files += [Path(root) / n for n in names if not n.startswith(".") and not n.endswith(".md")
                  and (Path(root) / n).is_file()]
    named = sorted((p.relative_to(model_dir).as_posix(), p) for p in files)
    stats = [(name, p.stat()) for name, p in named]
    key = (str(model_dir), tuple((name, st.st_size, st.st_mtime_ns) for name, st in stats))
    if key not in _FINGERPRINTS:
        digest = hashlib.sha256()
        for name, p in named:
            digest.update(f"{name}\0{sha256_file(p)}\0".encode())
        _FINGERPRINTS[key] = digest.hexdigest()
    return _FINGERPRINTS[key]
