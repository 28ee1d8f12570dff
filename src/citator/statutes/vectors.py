"""MiniLM vectors for the hybrid arm, cached in an index directory and validated whenever they are read back.

Two kinds: one caption vector per section (chapter name, subchapter, heading), built for the whole corpus up front,
and passage vectors (word windows of a section's text, led by its chapter name and heading), encoded only for the
sections a query's candidate set holds and kept by the sha256 of their text, so later queries and later runs reuse
them. Encoding every passage of the D.C. Code (about 7M word pieces) takes about an hour on two CPU cores; the
captions take about 0.4M.

The cache is keyed by encoder fingerprint and vectors version: a directory made with another encoder is started
afresh. Files whose sha256 does not match the one recorded when they were written (damaged or edited) are refused,
and so are arrays of the wrong shape, type or values. Digests kept beside the files can be rewritten with them, so on
every load SPOT_CHECK_ROWS rows of each file that this corpus can use, drawn at random, are encoded again and must
match: vectors of another encoder, random or shuffled vectors are refused; a file with r of its n usable rows
forged is refused with probability 1 - C(n - r, 8) / C(n, 8) per load (all of them when n <= 8; two swapped rows
among 10,000, about 0.16%). Checking every row would cost what the cache saves, so the cache does not stand against
someone who may write it and forges a few rows: keep it where only its user writes.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import random
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from citator.data.atomic import CACHE_LOCK, open_lock, owning, save_npy_atomic, write_json_atomic
from citator.data.hashing import sha256_file, sha256_text
from citator.data.jsonl import loads
from citator.data.statutes import StatuteSection
from citator.errors import OutputError, StatuteError
from citator.engines.passages import PassageSpec, split_passages
from citator.models.encoder import Encoder

# MiniLM reads 256 word pieces; 160 words of statute text stay within that, and 40 words of overlap keep a
# sentence that straddles two windows whole in one of them.
PASSAGE_SPEC = PassageSpec(words=160, overlap=40)
VECTORS_VERSION = "minilm-caption+passages-160w-40o-v1"
META = "hybrid_vectors.json"
CAPTIONS, PASSAGES, PASSAGE_KEYS = "captions.npy", "passages.npy", "passage_keys.json"
_SHA256 = re.compile(r"[0-9a-f]{64}")
# Rows of each cached file encoded again on every load (random.SystemRandom: a forger cannot tell which), and the
# least cosine a row must have with its text's vector made afresh (the same encoder gives the same vector, up to
# float rounding across batch shapes).
SPOT_CHECK_ROWS = 8
SPOT_CHECK_COSINE = 0.999
_DRAW = random.SystemRandom()


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


def check_cache_dir(directory: Path) -> None:
    """Refuse, before any work, a vector cache that is not a directory and cannot become one."""
    probe = directory
    while not probe.exists() and not probe.is_symlink() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        where = "is" if probe == directory else f"lies under {probe}, which is"
        raise OutputError(f"{directory}: the hybrid arm's vector cache {where} not a directory")


def _texts_sha256(texts: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode("utf-8"))
        digest.update(b"\x1f")
    return digest.hexdigest()


class SectionVectors:
    """A corpus's caption vectors and a growing, cached store of passage vectors."""

    def __init__(self, sections: Sequence[StatuteSection], encoder: Encoder, encoder_id: str, directory: Path,
                 progress: bool = True) -> None:
        self.encoder, self.directory, self.progress = encoder, directory, progress
        self._key = {"version": VECTORS_VERSION, "encoder": encoder_id}
        self._rebuild = f"delete {directory} to rebuild"  # errors name a file; this names its cache
        check_cache_dir(directory)
        captions = [caption_text(s) for s in sections]
        self._rows: dict[str, int] = {}
        self._passages = np.zeros((0, 0), dtype=np.float32)
        cached: np.ndarray | None = None
        with self._locked(shared=True):
            meta = self._read_meta()
            if meta is not None:
                self._load_passages(meta)
                if meta.get("captions_texts_sha256") == _texts_sha256(captions):
                    cached = self._load(CAPTIONS, meta, rows=len(captions))
        if cached is not None:
            self._spot_check(CAPTIONS, cached, dict(enumerate(captions)))
        if self._rows:
            reachable = {sha256_text(t): t for s in sections for t in section_passages(s)}
            self._spot_check(PASSAGES, self._passages,
                             {self._rows[k]: text for k, text in reachable.items() if k in self._rows})
        self.source = "cache" if cached is not None else "built"
        self.captions: np.ndarray = cached if cached is not None else np.asarray(
            encoder.encode_documents(captions, progress=progress), dtype=np.float32)
        if cached is None:
            self._save(captions_sha256=_texts_sha256(captions))

    @contextmanager
    def _locked(self, shared: bool) -> Iterator[None]:
        """Readers share the cache; a writer has it alone from its first file to the meta file, so two runs on one
        cache never record one run's vectors beside the other's keys, and holds it (`owning`: no other command
        writes in a vector cache). The lock is never opened through a symbolic link."""
        lock = self.directory / CACHE_LOCK
        if shared:
            try:
                handle = open_lock(lock, create=os.access(self.directory, os.W_OK))
            except FileNotFoundError:  # nothing to read yet, or a cache this user may read but not lock
                yield
                return
        else:
            try:
                self.directory.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise OutputError(f"{self.directory}: cannot write the vector cache ({exc.strerror or exc})") from None
            handle = open_lock(lock)
        with handle:
            fcntl.flock(handle, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
            if shared:
                yield
            else:
                with owning(self.directory):
                    yield

    # -- reading back ---------------------------------------------------------------------------------------------
    def _json(self, path: Path, what: str) -> Any:
        try:
            return loads(path.read_bytes().decode("utf-8"))
        except (OSError, ValueError) as exc:  # unreadable, not UTF-8, malformed or too deeply nested JSON
            raise StatuteError(path, None, f"unreadable {what} ({exc}); {self._rebuild}") from None

    def _read_meta(self) -> dict[str, Any] | None:
        path = self.directory / META
        if not path.is_file():
            return None
        meta = self._json(path, "vector cache")
        if not isinstance(meta, dict) or not isinstance(meta.get("files"), dict):
            raise StatuteError(path, None, f"not a vector cache; {self._rebuild}")
        return meta if meta.get("key") == self._key else None

    def _verified(self, name: str, meta: dict[str, Any]) -> Path:
        path = self.directory / name
        if not path.is_file() or sha256_file(path) != meta["files"].get(name):
            raise StatuteError(path, None, f"does not match the sha256 recorded in the vector cache; {self._rebuild}")
        return path

    def _load(self, name: str, meta: dict[str, Any], rows: int | None = None) -> np.ndarray:
        path = self._verified(name, meta)
        try:
            array = np.load(path, allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:
            raise StatuteError(path, None, f"unreadable vectors ({exc}); {self._rebuild}") from None
        # The width is the encoder's: vectors of another width were not made by it, whatever the meta file says.
        if (array.ndim != 2 or array.dtype != np.float32 or array.shape[1] != self.encoder.dim
                or (rows is not None and array.shape[0] != rows) or not np.isfinite(array).all()):
            raise StatuteError(path, None, f"a {array.dtype} array of shape {array.shape}, not {rows or 'n'} finite "
                               f"float32 vectors of width {self.encoder.dim}; {self._rebuild}")
        return array

    def _load_passages(self, meta: dict[str, Any]) -> None:
        if PASSAGES not in meta["files"]:
            return
        keys_path = self._verified(PASSAGE_KEYS, meta)
        keys = self._json(keys_path, "passage keys")
        if not isinstance(keys, list) or not all(isinstance(k, str) and _SHA256.fullmatch(k) for k in keys):
            raise StatuteError(keys_path, None, f"not a list of passage sha256 digests; {self._rebuild}")
        vectors = self._load(PASSAGES, meta, rows=len(keys))
        if len(set(keys)) != len(keys):
            raise StatuteError(keys_path, None, f"a passage key is listed twice; {self._rebuild}")
        self._rows = {k: i for i, k in enumerate(keys)}
        self._passages = vectors

    def _spot_check(self, name: str, vectors: np.ndarray, texts: dict[int, str]) -> None:
        """Encode SPOT_CHECK_ROWS of the rows this run can use (`texts`: row -> its text), drawn afresh on every
        load, and refuse the file when one is not its text's vector: the digests show only that the files are
        those the meta file names, and a meta file can be rewritten."""
        rows = sorted(texts) if len(texts) <= SPOT_CHECK_ROWS else sorted(_DRAW.sample(sorted(texts), SPOT_CHECK_ROWS))
        if not rows:
            return
        fresh = np.asarray(self.encoder.encode_documents([texts[r] for r in rows]), dtype=np.float32)
        cosine = np.einsum("ij,ij->i", fresh, vectors[rows]) / (
            np.linalg.norm(fresh, axis=1) * np.linalg.norm(vectors[rows], axis=1) + 1e-12)
        wrong = [r for r, c in zip(rows, cosine) if not c >= SPOT_CHECK_COSINE]
        if wrong:
            raise StatuteError(self.directory / name, None, f"row {wrong[0]} is not the vector the encoder makes of "
                               f"its text ({len(wrong)} of {len(rows)} rows checked); {self._rebuild}")

    # -- writing --------------------------------------------------------------------------------------------------
    def _save(self, captions_sha256: str | None = None) -> None:
        with self._locked(shared=False):
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
