"""MiniLM vectors for the hybrid arm, cached in an index directory and validated whenever they are read back.

Two kinds: one caption vector per section (chapter name, subchapter, heading), built for the whole corpus up front,
and passage vectors (word windows of a section's text, led by its chapter name and heading), encoded only for the
sections a query's candidate set holds and kept by the sha256 of their text, so later queries and later runs reuse
them. Encoding every passage of the D.C. Code (about 7M word pieces) takes about an hour on two CPU cores; the
captions take about 0.4M.

The cache is keyed by encoder fingerprint and vectors version: a directory made with another encoder is started
afresh. Files whose sha256 does not match the one recorded when they were written (damaged or edited) are refused.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from citator.data.atomic import save_npy_atomic, write_json_atomic
from citator.data.hashing import sha256_file, sha256_text
from citator.data.statutes import StatuteSection
from citator.errors import StatuteError
from citator.engines.passages import PassageSpec, split_passages

# MiniLM reads 256 word pieces; 160 words of statute text stay within that, and 40 words of overlap keep a
# sentence that straddles two windows whole in one of them.
PASSAGE_SPEC = PassageSpec(words=160, overlap=40)
VECTORS_VERSION = "minilm-caption+passages-160w-40o-v1"
META = "hybrid_vectors.json"
CAPTIONS, PASSAGES, PASSAGE_KEYS = "captions.npy", "passages.npy", "passage_keys.json"


def _context(section: StatuteSection) -> str:
    parts = [p.strip().rstrip(".") for p in (section.chapter_name, section.heading) if p.strip()]
    return ". ".join(parts)


def caption_text(section: StatuteSection) -> str:
    """The short text a caption vector encodes: chapter name, subchapter and heading."""
    parts = [p.strip().rstrip(".") for p in (section.chapter_name, section.subchapter, section.heading) if p.strip()]
    return ". ".join(parts) or section.doc_id


def section_passages(section: StatuteSection) -> list[str]:
    """A section's word windows, each led by its chapter name and heading."""
    return split_passages(_context(section), section.text, PASSAGE_SPEC)


def _texts_sha256(texts: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode("utf-8"))
        digest.update(b"\x1f")
    return digest.hexdigest()


class SectionVectors:
    """A corpus's caption vectors and a growing, cached store of passage vectors."""

    def __init__(self, sections: Sequence[StatuteSection], encoder, encoder_id: str,  # type: ignore[no-untyped-def]
                 directory: Path, progress: bool = True) -> None:
        self.encoder, self.directory, self.progress = encoder, directory, progress
        self._key = {"version": VECTORS_VERSION, "encoder": encoder_id}
        captions = [caption_text(s) for s in sections]
        meta = self._read_meta()
        self._rows: dict[str, int] = {}
        self._passages = np.zeros((0, 0), dtype=np.float32)
        self.captions: np.ndarray | None = None
        if meta is not None:
            self._load_passages(meta)
            if meta.get("captions_texts_sha256") == _texts_sha256(captions):
                self.captions = self._load(CAPTIONS, meta)
                if self.captions.shape[0] != len(captions):
                    raise StatuteError(directory / CAPTIONS, None, "caption vectors do not match the corpus; "
                                       "delete the directory to rebuild")
        self.source = "cache" if self.captions is not None else "built"
        if self.captions is None:
            self.captions = np.asarray(encoder.encode_documents(captions, progress=progress), dtype=np.float32)
            self._save(captions_sha256=_texts_sha256(captions))

    # -- reading back ---------------------------------------------------------------------------------------------
    def _read_meta(self) -> dict[str, Any] | None:
        path = self.directory / META
        if not path.is_file():
            return None
        try:
            meta = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise StatuteError(path, None, f"unreadable vector cache ({exc}); delete the directory to rebuild") from None
        if not isinstance(meta, dict) or not isinstance(meta.get("files"), dict):
            raise StatuteError(path, None, "not a vector cache; delete the directory to rebuild")
        return meta if meta.get("key") == self._key else None

    def _load(self, name: str, meta: dict[str, Any]) -> np.ndarray:
        path = self.directory / name
        if not path.is_file() or sha256_file(path) != meta["files"].get(name):
            raise StatuteError(path, None, "does not match the sha256 recorded in the vector cache; "
                               "delete the directory to rebuild")
        array = np.load(path, allow_pickle=False)
        if array.ndim != 2 or array.dtype != np.float32 or not np.isfinite(array).all():
            raise StatuteError(path, None, "vector cache has the wrong shape or non-finite values; "
                               "delete the directory to rebuild")
        return array

    def _load_passages(self, meta: dict[str, Any]) -> None:
        if PASSAGES not in meta["files"]:
            return
        keys_path = self.directory / PASSAGE_KEYS
        if not keys_path.is_file() or sha256_file(keys_path) != meta["files"].get(PASSAGE_KEYS):
            raise StatuteError(keys_path, None, "does not match the sha256 recorded in the vector cache; "
                               "delete the directory to rebuild")
        keys = json.loads(keys_path.read_text(encoding="utf-8"))
        vectors = self._load(PASSAGES, meta)
        if not isinstance(keys, list) or len(keys) != vectors.shape[0] or len(set(keys)) != len(keys):
            raise StatuteError(keys_path, None, "passage keys do not match the passage vectors; "
                               "delete the directory to rebuild")
        self._rows = {k: i for i, k in enumerate(keys)}
        self._passages = vectors

    # -- writing --------------------------------------------------------------------------------------------------
    def _save(self, captions_sha256: str | None = None) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        files: dict[str, str] = {}
        previous = self._read_meta() or {}
        if captions_sha256 is not None:
            save_npy_atomic(self.directory / CAPTIONS, self.captions)
        else:
            captions_sha256 = previous.get("captions_texts_sha256")
        files[CAPTIONS] = sha256_file(self.directory / CAPTIONS)
        if self._rows:
            save_npy_atomic(self.directory / PASSAGES, self._passages)
            write_json_atomic(self.directory / PASSAGE_KEYS, list(self._rows))
            files[PASSAGES] = sha256_file(self.directory / PASSAGES)
            files[PASSAGE_KEYS] = sha256_file(self.directory / PASSAGE_KEYS)
        # The meta file last: files written before it and not named in it are never read.
        write_json_atomic(self.directory / META, {"key": self._key, "captions_texts_sha256": captions_sha256,
                                                  "files": files})

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of `texts` (rows in order), encoding and caching the ones not seen before."""
        keys = [sha256_text(t) for t in texts]
        missing = list(dict.fromkeys(k for k in keys if k not in self._rows))
        if missing:
            by_key = dict(zip(keys, texts))
            new = np.asarray(self.encoder.encode_documents([by_key[k] for k in missing], progress=self.progress),
                             dtype=np.float32)
            start = len(self._rows)
            self._passages = new if start == 0 else np.concatenate([self._passages, new])
            self._rows.update((k, start + i) for i, k in enumerate(missing))
            self._save()
        return self._passages[[self._rows[k] for k in keys]] if keys else np.zeros((0, self.captions.shape[1]), np.float32)
