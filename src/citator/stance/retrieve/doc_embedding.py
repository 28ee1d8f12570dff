"""Learned document vectors: each document as its base vector plus a trained offset (document-side expansion).

Training (`citator.stance.learn.doc_embedding`) moves the vectors of documents that training propositions cite towards
those propositions, as the fine-tuned query encoder sees them. The offsets ship in the artifacts, keyed by
doc_id and title (`DocumentOffsets`); an index applies them to its own documents, and the ones no offset reaches keep their base vector.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from citator.data.atomic import save_npy_atomic, write_jsonl_atomic
from citator.data.jsonl import iter_jsonl, require_str
from citator.errors import ArtifactError
from citator.engines.dense import normalise_rows
from citator.stance.retrieve.memory import match_documents
from citator.engines.passages import document_of_passage

DELTAS = "document_deltas.npy"
DOCUMENTS = "document_deltas.jsonl"


def base_document_vectors(passage_vectors: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Each document's normalised mean passage vector (the starting point of its learned vector)."""
    out = np.zeros((len(starts), passage_vectors.shape[1]), dtype=np.float32)
    np.add.at(out, document_of_passage(starts, len(passage_vectors)), np.asarray(passage_vectors, dtype=np.float32))
    return normalise_rows(out)


def learned_document_vectors(base: np.ndarray, deltas: np.ndarray, rows: Sequence[int] | np.ndarray) -> np.ndarray:
    """normalise(base + delta) where `rows[i]` >= 0 names document i's offset, else the base vector."""
    rows = np.asarray(rows, dtype=np.int64)
    out = np.array(base, dtype=np.float32, copy=True)
    has = rows >= 0
    out[has] += deltas[rows[has]]
    return normalise_rows(out)


def save_deltas(directory: Path, doc_ids: Sequence[str], titles: Sequence[str], deltas: np.ndarray) -> None:
    """Only documents that moved are kept."""
    moved = np.flatnonzero(np.abs(deltas).max(axis=1) > 0)
    write_jsonl_atomic(directory / DOCUMENTS, ({"doc_id": doc_ids[i], "title": titles[i]} for i in moved.tolist()))
    save_npy_atomic(directory / DELTAS, deltas[moved].astype(np.float32))


@dataclass(frozen=True)
class DocumentOffsets:
    """Trained offsets of document vectors, one row per (doc_id, title) of the training corpus that moved: as
    training fitted them (every document of its corpus), or as a model ships them (`load`)."""

    keys: Sequence[tuple[str, str]]
    deltas: np.ndarray

    @classmethod
    def load(cls, directory: Path, width: int) -> DocumentOffsets | None:
        """The offsets a model's memory folder carries, checked (rows of `width`, the passage vectors'); None when
        it carries none."""
        if not (directory / DELTAS).is_file():
            return None
        wanted = []
        for line, obj in iter_jsonl(directory / DOCUMENTS, ArtifactError):
            wanted.append(tuple(require_str(obj, key, directory / DOCUMENTS, line, ArtifactError, nonempty=False)
                                for key in ("doc_id", "title")))
        try:
            deltas = np.load(directory / DELTAS, allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:
            raise ArtifactError(directory / DELTAS, None, f"unreadable array ({exc})") from None
        if deltas.dtype.kind == "f" and deltas.shape == (len(wanted), width) and not np.isfinite(deltas).all():
            raise ArtifactError(directory / DELTAS, None, "holds NaN or infinite values; retrain with citator train")
        if deltas.ndim != 2 or deltas.dtype.kind != "f" or deltas.shape != (len(wanted), width):
            raise ArtifactError(directory / DELTAS, None, f"{deltas.dtype} array of shape {deltas.shape}: expected "
                                f"finite offsets of shape ({len(wanted)}, {width}), one per line of {DOCUMENTS}")
        return cls([(doc_id, title) for doc_id, title in wanted], deltas)

    def vectors(self, doc_ids: Sequence[str], titles: Sequence[str], base: np.ndarray, start: int = 0) -> np.ndarray:
        """The learned vectors of documents `start`, `start + 1`, ... of a corpus (`base`: their base vectors; a
        shard's, whose offsets reach documents by titles unique in the whole corpus of `doc_ids` and `titles`)."""
        row_of_doc = np.full(len(doc_ids), -1, dtype=np.int64)
        for row, i in enumerate(match_documents(self.keys, doc_ids, titles)):
            if i >= 0:
                row_of_doc[i] = row
        return learned_document_vectors(base, self.deltas, row_of_doc[start:start + len(base)])
