"""Hex sha256 of texts and files: the one digest every hash-bound record and manifest uses."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path


def sha256_text(text: str) -> str:
    """Hex sha256 of the UTF-8 bytes of `text`."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_captioned(caption: str, text: str) -> str:
    """Hex sha256 of a text together with the caption or heading shown above it: the UTF-8 bytes of the compact
    JSON array `[caption, text]` (unambiguous wherever either holds a newline)."""
    return sha256_text(json.dumps([caption, text], ensure_ascii=False, separators=(",", ":")))


def sha256_file(path: str | Path) -> str:
    """Hex sha256 of a file's bytes, streamed."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
