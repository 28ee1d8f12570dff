"""The index's own copy of the corpus: one JSON line per document, found by its byte offset.

A brief shows titles and passages, which the search structures do not hold. The copy lives in the index's data
folder so that an index answers on its own; documents are read one by one (seek + one line), so opening an index
of millions of documents costs one small offsets array, not the corpus.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from citator.data.records import Document
from citator.data.jsonl import loads
from citator.errors import IndexDirError
from citator.stance.retrieve.layout import DOCUMENT_OFFSETS, DOCUMENTS



def write_documents(directory: Path, docs: Sequence[Document]) -> None:
    """documents.jsonl (in corpus order) and the byte offset of each line, plus the end of the file."""
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    with (directory / DOCUMENTS).open("wb") as handle:
        for i, doc in enumerate(docs):
            handle.write(json.dumps(doc.to_json(), ensure_ascii=False).encode("utf-8") + b"\n")
            offsets[i + 1] = handle.tell()
    np.save(directory / DOCUMENT_OFFSETS, offsets)


class DocumentStore:
    """Reads documents of an index by position; each line read back is checked against the index's doc ids."""

    def __init__(self, directory: Path, doc_ids: Sequence[str]) -> None:
        self.path = directory / DOCUMENTS
        self.doc_ids = doc_ids
        try:
            self.offsets = np.load(directory / DOCUMENT_OFFSETS)
        except (OSError, ValueError, EOFError) as exc:
            raise IndexDirError(f"{directory / DOCUMENT_OFFSETS}: unreadable ({exc}); rebuild the index") from None
        size = self.path.stat().st_size if self.path.is_file() else -1
        if (self.offsets.ndim != 1 or len(self.offsets) != len(doc_ids) + 1 or int(self.offsets[-1]) != size
                or bool((np.diff(self.offsets) <= 0).any())):
            raise IndexDirError(f"{self.path}: does not match the index's {len(doc_ids)} documents; rebuild the index")

    def get(self, position: int) -> Document:
        start, end = int(self.offsets[position]), int(self.offsets[position + 1])
        try:
            with self.path.open("rb") as handle:
                handle.seek(start)
                raw = handle.read(end - start)
        except FileNotFoundError:  # a build replaced this index's folder since it was opened
            raise IndexDirError(f"{self.path}: gone (the index was rebuilt since it was opened): open it again") \
                from None
        return self._parsed(position, raw)

    def all(self) -> list[Document]:
        """Every document in corpus order, the copy read in one pass (an update's)."""
        raw = self.path.read_bytes()
        return [self._parsed(p, raw[int(a):int(b)]) for p, (a, b) in enumerate(zip(self.offsets, self.offsets[1:]))]

    def _parsed(self, position: int, raw: bytes) -> Document:
        try:
            obj = loads(raw)
            doc = Document(obj.pop("doc_id"), obj.pop("title"), obj.pop("text"), obj)
        except (ValueError, KeyError, AttributeError, TypeError) as exc:
            raise IndexDirError(f"{self.path}: document {position} unreadable ({exc}); rebuild the index") from None
        if doc.doc_id != self.doc_ids[position] or not isinstance(doc.title, str) or not isinstance(doc.text, str):
            raise IndexDirError(f"{self.path}: document {position} is not {self.doc_ids[position]!r}; rebuild the index")
        return doc
