"""Updating an index: documents added, replaced and removed, with the answers a rebuild gives.

An update is a build of the resulting corpus that encodes only the documents it has not encoded before. BM25
(bm25s) stores each (term, document) score with the corpus's document frequencies and average length folded in,
so any change to the corpus changes every stored score: the lexical indexes are made again from the texts, which
costs a small part of a build (docs/scale.md). A document's passage vectors and token states depend on its own
text alone, so an old document's rows are taken from the earlier generation and only new or replaced documents
pass through the encoder. The rest (the model's links to the documents, its learned document vectors, the BM25
index of expanded documents) is fitted to the resulting corpus by the build's own code (`write_data`): the index
an update writes is the one a build of that corpus writes, given those passages.

The resulting corpus is the earlier one in its order, less the removed documents, each replaced document in its
place, and the new documents after them in the order given: `citator build` over its copy in the index
(documents.jsonl) gives the same answers. The new generation is written beside the current one and the manifest
switched to it last and atomically (index_dir.build_into), under the lock a build holds.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from citator.data.corpus import iter_numbered_corpus, parse_document
from citator.data.hashing import sha256_text
from citator.data.jsonl import iter_text_lines, loads
from citator.data.metadata import read_side_metadata
from citator.data.records import Document
from citator.engines.passages import PassageSpec, passage_layout
from citator.errors import IndexDirError, UpdateError
from citator.models.encoder import Encoder
from citator.stance.retrieve.documents import DocumentStore
from citator.stance.retrieve.index_dir import MIN_DOCS, BuildRequest, build_into, build_lock
from citator.stance.retrieve.index_files import REBUILD, load_array, load_doc_ids, verify_digests
from citator.stance.retrieve.late_interaction import TokenStore
from citator.stance.retrieve.layout import (
    DENSE, DOC_IDS, PASSAGE_STARTS, Generation, IndexFolder, Manifest, open_folder,
)
from citator.stance.retrieve.model import BaseEncoder
from citator.stance.retrieve.passage_store import Passages


@dataclass(frozen=True)
class Change:
    """One update: documents to add (one whose doc_id the index holds replaces it) and doc ids to remove. `source`
    and `lines`: where each was read (a file and its line numbers, or an argument and item numbers), for the one
    line that refuses it."""

    add: tuple[Document, ...] = ()
    remove: tuple[str, ...] = ()
    source: str = "update"
    lines: tuple[int, ...] = ()

    def line(self, item: int) -> int | None:
        return self.lines[item] if item < len(self.lines) else None


def read_additions(path: Path, metadata: Path | None = None) -> Change:
    """The documents of a corpus file to add, under the corpus rules a build applies; `metadata`: a side file of
    their metadata keyed by doc_id (docs/metadata.md), laid over their own extra keys as a build lays it, naming
    only documents of this file."""
    numbered = list(iter_numbered_corpus(path, lenient=True))
    if not numbered:
        raise UpdateError(path, None, "no documents to add")
    docs = [doc for _, doc in numbered]
    if metadata is not None:
        side = read_side_metadata(metadata)
        side.check_known([d.doc_id for d in docs])
        docs = side.apply(docs)
    return Change(tuple(docs), (), str(path), tuple(line for line, _ in numbered))


def given(add: Sequence[Any] = (), remove: Sequence[Any] = (), source: str = "update") -> Change:
    """A change given in memory (StanceIndex.add / .remove): records (Documents or corpus objects) under the corpus
    rules, and doc ids; each refused naming `source` and its item number."""
    if isinstance(add, (str, bytes, Mapping)) or isinstance(remove, (str, bytes)):
        raise UpdateError(source, None, "give a list of records or of doc ids, not one")
    seen: dict[str, int] = {}
    docs = []
    for item, record in enumerate(add, 1):
        obj = record.to_json() if isinstance(record, Document) else record
        if not isinstance(obj, Mapping):
            raise UpdateError(source, item, f"a {type(record).__name__}, not a record (a Document or an object with "
                              "doc_id, title, text)")
        docs.append(parse_document(dict(obj), seen, source, item, lenient=True))
    return Change(tuple(docs), tuple(remove), source, tuple(range(1, len(docs) + 1)) + tuple(range(1, len(remove) + 1)))


def read_removals(path: Path) -> Change:
    """The doc ids to remove: one a line, or JSON lines of objects with a `doc_id` (the first line decides)."""
    ids, lines, jsonl = [], [], None
    for number, raw in iter_text_lines(path, UpdateError):
        text = raw.strip()
        if not text:
            continue
        jsonl = text.startswith("{") if jsonl is None else jsonl
        ids.append(_json_id(path, number, text) if jsonl else text)
        lines.append(number)
    if not ids:
        raise UpdateError(path, None, "no doc ids to remove")
    return Change((), tuple(ids), str(path), tuple(lines))


def _json_id(path: Path, line: int, text: str) -> str:
    try:
        obj = loads(text)
    except ValueError as exc:
        raise UpdateError(path, line, f"malformed JSON ({exc}); give one doc id a line or JSON lines of "
                          '{"doc_id": ...}') from None
    doc_id = obj.get("doc_id") if isinstance(obj, dict) else None
    if not isinstance(doc_id, str) or not doc_id:
        raise UpdateError(path, line, "expected an object with a non-empty doc_id", field="doc_id")
    return doc_id


def check(change: Change, held: Sequence[str], min_docs: int = MIN_DOCS) -> tuple[int, int, int]:
    """Refuse a change that names a document twice, removes one the index does not hold, changes nothing or leaves
    fewer than `min_docs` documents; else (added, replaced, removed)."""
    known, seen = set(held), dict[str, int]()
    for item, doc_id in enumerate([*(d.doc_id for d in change.add), *change.remove]):
        if not isinstance(doc_id, str) or not doc_id:
            raise UpdateError(change.source, change.line(item), f"doc_id {doc_id!r} is not a non-empty string",
                              field="doc_id")
        if doc_id in seen:
            raise UpdateError(change.source, change.line(item), f'duplicate doc_id "{doc_id}" (first on line '
                              f"{change.line(seen[doc_id])}): an update names each document once", field="doc_id")
        seen[doc_id] = item
        if item >= len(change.add) and doc_id not in known:
            raise UpdateError(change.source, change.line(item), f'no document "{doc_id}" in the index to remove',
                              field="doc_id")
    if not seen:
        raise UpdateError(change.source, None, "the update names no document")
    replaced = sum(d.doc_id in known for d in change.add)
    left = len(held) + len(change.add) - replaced - len(change.remove)
    if left < min_docs:
        raise UpdateError(change.source, None, f"the update would leave {left} documents; an index answers every "
                          f"query with top-k {min_docs} distinct documents, so it needs at least {min_docs}")
    return len(change.add) - replaced, replaced, len(change.remove)


@dataclass(frozen=True)
class Stored:
    """What a generation holds of each document: the documents in corpus order, their base passage vectors and
    token states (None: the index keeps none), and where each document's passages start (n_docs + 1 bounds)."""

    docs: list[Document]
    passages: Passages
    bounds: np.ndarray

    @classmethod
    def read(cls, folder: IndexFolder) -> Stored:
        """One index's, every file checked against its digest first: the update copies what it reads."""
        manifest = folder.manifest
        verify_digests(folder.data, manifest.files)
        starts = load_array(folder.path(PASSAGE_STARTS), 1, "i", rows=manifest.n_docs)
        vectors = load_array(folder.path(DENSE), 2, "f", rows=manifest.n_passages)
        tokens = TokenStore.load(folder.data) if TokenStore.present(folder.data) else None
        if tokens is not None and len(tokens.offsets) != manifest.n_docs + 1:
            raise IndexDirError(f"{folder.data}: token store of {len(tokens.offsets) - 1} documents, the index "
                                f"holds {manifest.n_docs}; {REBUILD}")
        docs = DocumentStore(folder.data, load_doc_ids(folder.path(DOC_IDS), manifest.n_docs)).all()
        return cls(docs, Passages(np.asarray(vectors, dtype=np.float32), tokens),
                   np.append(starts, manifest.n_passages).astype(np.int64))

    def part(self, start: int, end: int) -> Passages:
        """The passages of documents `start` .. `end - 1` (a shard's)."""
        lo, hi = int(self.bounds[start]), int(self.bounds[end])
        tokens = self.passages.tokens
        if tokens is not None:
            first, last = int(tokens.offsets[start]), int(tokens.offsets[end])
            tokens = TokenStore(tokens.tokens[first:last], tokens.scales[first:last],
                                tokens.offsets[start:end + 1] - first)
        return Passages(self.passages.vectors[lo:hi], tokens)

    @classmethod
    def joined(cls, parts: Sequence[Stored]) -> Stored:
        """Shards' stores, one after another: the corpus's."""
        docs = [d for part in parts for d in part.docs]
        vectors = np.concatenate([p.passages.vectors for p in parts])
        shifts = np.cumsum([0, *(len(p.passages.vectors) for p in parts)])
        bounds = np.concatenate([[0], *(p.bounds[1:] + s for p, s in zip(parts, shifts))]).astype(np.int64)
        stores = [p.passages.tokens for p in parts]
        tokens = None if any(t is None for t in stores) else _joined_tokens([t for t in stores if t is not None])
        return cls(docs, Passages(vectors, tokens), bounds)


def _joined_tokens(stores: Sequence[TokenStore]) -> TokenStore:
    shifts = np.cumsum([0, *(len(t.tokens) for t in stores)])
    offsets = np.concatenate([[0], *(t.offsets[1:] + s for t, s in zip(stores, shifts))]).astype(np.int64)
    return TokenStore(np.concatenate([t.tokens for t in stores]), np.concatenate([t.scales for t in stores]), offsets)


def resulting(stored: Stored, change: Change) -> tuple[list[Document], list[int]]:
    """The corpus after the change, and for each of its documents its position in the earlier corpus (-1: new or
    replaced, so encoded)."""
    new = {d.doc_id: d for d in change.add}
    gone = set(change.remove)
    docs, sources = [], []
    for position, doc in enumerate(stored.docs):
        if doc.doc_id in gone:
            continue
        replacing = new.pop(doc.doc_id, None)
        docs.append(doc if replacing is None else replacing)
        sources.append(position if replacing is None else -1)
    docs += new.values()
    return docs, sources + [-1] * len(new)


def _rows(bounds: np.ndarray, pick: np.ndarray) -> np.ndarray:
    """The rows of documents `pick` (positions into `bounds`, each document's rows bounds[d]:bounds[d + 1]), in the
    order picked."""
    lengths = bounds[pick + 1] - bounds[pick]
    firsts = np.cumsum(lengths) - lengths
    return (np.repeat(bounds[pick] - firsts, lengths) + np.arange(int(lengths.sum()))).astype(np.int64)


def carried_passages(stored: Stored, docs: Sequence[Document], sources: Sequence[int], spec: PassageSpec,
                     encoder: Encoder | None, progress: bool = False) -> Stored:
    """The resulting corpus with its base passages: an old document's rows taken from `stored`, the others encoded
    once (in one batch, with token states where the index keeps them)."""
    fresh = [i for i, s in enumerate(sources) if s < 0]
    made = None
    if fresh:
        if encoder is None:
            raise ValueError("documents to encode and no encoder")
        texts, starts = passage_layout([docs[i].title for i in fresh], [docs[i].text for i in fresh], spec)
        if stored.passages.tokens is not None:
            vectors, tokens = TokenStore.encode(encoder, texts, starts, progress)
        else:
            vectors, tokens = encoder.encode_documents(texts, progress=progress), None
        made = Stored([docs[i] for i in fresh], Passages(vectors, tokens), np.append(starts, len(texts)))
    pool = Stored.joined([stored, made]) if made is not None else stored
    # Position of each resulting document in `pool`: old ones where they were, fresh ones after the old.
    where = np.array(sources, dtype=np.int64)
    where[fresh] = len(stored.docs) + np.arange(len(fresh))
    vectors = pool.passages.vectors[_rows(pool.bounds, where)]
    lengths = pool.bounds[where + 1] - pool.bounds[where]
    bounds = np.append(0, np.cumsum(lengths)).astype(np.int64)
    tokens = pool.passages.tokens
    if tokens is not None:
        picked = _rows(tokens.offsets.astype(np.int64), where)
        lengths = tokens.offsets[where + 1] - tokens.offsets[where]
        tokens = TokenStore(np.asarray(tokens.tokens)[picked], tokens.scales[picked],
                            np.append(0, np.cumsum(lengths)).astype(np.int64))
    return Stored(list(docs), Passages(vectors, tokens), bounds)


def corpus_sha256(docs: Sequence[Document]) -> str:
    """The sha256 of the resulting corpus as the index copies it (documents.jsonl): the digest a build of that
    copy records."""
    return sha256_text("".join(json.dumps(d.to_json(), ensure_ascii=False) + "\n" for d in docs))


def base_encoder(manifest: Manifest) -> Encoder:
    """The index's base encoder, loaded: it must still be the one the index was built with (its weights' digest),
    or new passages would be of another encoder than the old ones."""
    from citator.models.fingerprint import model_fingerprint
    from citator.models.load import load_encoder

    source = manifest.source
    if model_fingerprint(Path(source.encoder_path)) != source.encoder_sha256:
        raise UpdateError(source.encoder_path, None, "the base encoder is not the one this index was built with "
                          f"(sha256 {source.encoder_sha256[:12]}); rebuild the index with build.sh")
    return load_encoder(Path(source.encoder_path))


def update_request(folder: IndexFolder, docs: Sequence[Document], passages: Passages,
                   progress: bool) -> BuildRequest:
    """The build request of an update: the resulting corpus, with the earlier generation's settings and encoder."""
    source = folder.manifest.source
    return BuildRequest(docs, corpus_sha256(docs), BaseEncoder(source.encoder_path, source.encoder_id,
                                                               source.encoder_sha256),
                        source.config, None, passages, passages.tokens is not None, progress=progress, earlier=folder)


def next_generation(manifest: Manifest, counts: tuple[int, int, int]) -> Generation:
    return Generation(manifest.generation.number + 1, manifest.data_dir, *counts)


def read_ids(folder: IndexFolder) -> list[str]:
    """The index's doc ids (of a sharded index, the whole corpus's), checked against their digest."""
    verify_digests(folder.data, {DOC_IDS: folder.manifest.files[DOC_IDS]})
    return load_doc_ids(folder.path(DOC_IDS), folder.manifest.n_docs)


def say(progress: bool, message: str) -> None:
    if progress:
        print(f"update: {message}", file=sys.stderr, flush=True)
