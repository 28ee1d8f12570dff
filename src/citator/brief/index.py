"""StanceIndex: search an index directory by proposition and stance, and read a brief of both stances.

It wraps `StanceSearcher` and ranks nothing itself: a hit's documents and scores are the searcher's own. What it
adds is what a person needs to judge a hit: the document's title and citation, the passage that scored with the
query's terms marked, each signal's score and rank, and the training propositions that cite the document.

A proposition's `supported` and `refuted` answers are always asked in one batch: a brief costs one search (one
encoder call for both stances), an index that reads the stances against each other (a stance contrast or refuter
slots, retrieve/contrast.py) sees both, and `search(text, stance=s)` asks that same batch, so it and the brief's
column `s` are always the same ranking.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from citator.brief.evidence import Span, matched_terms, passage_spans, term_keys
from citator.brief.label import document_label
from citator.brief.records import Brief, Evidence, Hit, MemoryReason, SignalScore
from citator.data.citations import CitationResolver, base_doc_id, parse_citation
from citator.data.records import STANCES, Document, Query
from citator.errors import PropositionError
from citator.retrieve.documents import DocumentStore
from citator.retrieve.passages import PassageSpec
from citator.retrieve.searcher import EncodedQueries, StanceSearcher

MAX_PROPOSITION_CHARS = 2000
MAX_K = 100
# Training propositions shown per document as the reasons it ranked.
REASONS = 3
PAIR = ("supported", "refuted")


@dataclass(frozen=True)
class _Row:
    """What a search saw of one query before fusion: its signals and, with trained parts, its query vector."""

    signals: Mapping[str, np.ndarray]
    vector: np.ndarray | None


class StanceIndex:
    """An opened index directory; `search` and `brief` may be called many times (the index stays in memory)."""

    def __init__(self, searcher: StanceSearcher, documents: DocumentStore) -> None:
        self.searcher = searcher
        self.documents = documents
        self.positions = {doc_id: i for i, doc_id in enumerate(searcher.doc_ids)}
        config = searcher.config
        self.spec = PassageSpec(config.passage_words, config.passage_overlap)
        tokenizer = searcher.lexical_passage.tokenizer
        self._stop = frozenset(tokenizer.stopwords or ())
        self._stem = tokenizer.stemmer
        self._lower = bool(tokenizer.lower)
        self._resolver: CitationResolver | None = None
        # An index of statute sections (most doc ids are NRS or D.C. Code citations as printed, "NRS 432B.220"): a
        # page then shows one column of sections, stance aside.
        self.statutes = sum(_is_citation(d) for d in searcher.doc_ids) * 2 > len(searcher.doc_ids)
        if "dense" in searcher.needed_signals():
            # The evidence passage is chosen with the very query vectors the search's dense signal used.
            searcher._encoder = _RememberLast(searcher.encoder)

    @classmethod
    def open(cls, index_dir: str | Path, cold: bool = False) -> StanceIndex:
        """Open a built index: it holds its documents, encoders and trained model, and needs nothing else.
        `cold`: one brief, then the process exits (the query encoders run in onnxruntime)."""
        searcher = StanceSearcher(index_dir, cold=cold)
        return cls(searcher, DocumentStore(searcher.index_dir / searcher.manifest.data_dir, searcher.doc_ids))

    @classmethod
    def build(cls, corpus: str | Path, index_dir: str | Path, model: str | Path | None = None,
              encoder: str | Path | None = None) -> StanceIndex:
        """Build an index of `corpus` (JSONL: doc_id, text, ...) in `index_dir` and open it: `citator build
        --no-serve`. `model`: a trained artifacts directory (`citator train --out`), which the index copies what
        it searches with from; without one the index is the untrained hybrid, and `trained` says so. `encoder`: a local encoder directory (default: the bundled MiniLM)."""
        from citator.workloads.stance import build
        from citator.retrieve.artifacts import read_artifacts

        artifacts = None if model is None else read_artifacts(Path(model))
        build(Path(corpus), Path(index_dir), None if encoder is None else Path(encoder), serve=False,
              artifacts=artifacts)
        return cls.open(index_dir)

    def cited(self, text: str) -> tuple[str, ...]:
        """The sections of this index that `text` cites exactly (`NRS 432B.220`, `D.C. Code § 16-2301`; every
        printed version), found by parsing alone; () when `text` is no citation or cites nothing here."""
        if self._resolver is None:
            self._resolver = CitationResolver(self.searcher.doc_ids)
        return self._resolver.resolve(text).doc_ids

    @property
    def trained(self) -> bool:
        """Whether the index holds a trained proposition memory (it then gives memory reasons)."""
        return self.searcher.manifest.artifacts_path is not None

    def search(self, text: str, stance: str = "all", k: int = 10) -> tuple[Hit, ...]:
        """The top `k` documents for `text` asked with `stance`, best first."""
        if stance not in STANCES:
            raise PropositionError(f"stance must be one of {', '.join(STANCES)}, got {stance!r}")
        return self._answer(text, self._batch(stance), k)[stance]

    def brief(self, text: str, k: int = 5) -> Brief:
        """The top `k` supporting and refuting documents for `text`, each with its evidence and reasons."""
        hits = self._answer(text, PAIR, k)
        return Brief(" ".join(text.split()), hits["supported"], hits["refuted"], self.trained)

    def document(self, doc_id: str) -> Document:
        if doc_id not in self.positions:
            raise PropositionError(f"no document {doc_id!r} in this index")
        return self.documents.get(self.positions[doc_id])

    def passage_in_place(self, doc_id: str, passage: int, text: str) -> tuple[Document, Span, tuple[Span, ...]]:
        """A document, the span of its passage number `passage` in its text, and the spans there of the words
        `text` matches (characters of the document's text): the document view, with no model call."""
        doc = self.document(doc_id)
        spans = passage_spans(doc.text, self.spec)
        if not 0 <= passage < len(spans):
            raise PropositionError(f"document {doc_id!r} has no passage {passage}")
        span = spans[passage]
        marks = matched_terms(doc.text[span.start:span.end], self._keys(text), self._key)
        return doc, span, tuple(Span(m.start + span.start, m.end + span.start) for m in marks)

    def _batch(self, stance: str) -> tuple[str, ...]:
        """The stances one search asks to answer `stance`: both for either of them, exactly as a brief asks (a
        batch's shape moves the encoder's floats in their last bits), else the stance alone."""
        return PAIR if stance in PAIR else (stance,)

    def _answer(self, text: str, stances: Sequence[str], k: int) -> dict[str, tuple[Hit, ...]]:
        text = _check(text, k)
        queries = [Query(f"q:{s}", text, s) for s in stances]
        rows: dict[int, _Row] = {}

        def observe(start: int, signals: Mapping[str, np.ndarray], encoded: EncodedQueries | None) -> None:
            for i in range(len(next(iter(signals.values()))) if signals else 0):
                rows[start + i] = _Row({n: m[i] for n, m in signals.items()},
                                       None if encoded is None else encoded.vectors[i])

        results = self.searcher.search(queries, k, on_batch=observe)
        keys = self._keys(text)
        out = {}
        for r, (query, line) in enumerate(zip(queries, results)):
            row = rows.get(r, _Row({}, None))
            vector = row.vector
            if vector is None and self.trained:  # the ranking used no fine-tuned signal; the reasons still need it
                vector = self.searcher.encode([query]).vectors[0]
            passage_scorer = self._passage_scorer(queries, r, vector)
            out[query.stance] = tuple(
                self._hit(rank, found.doc_id, found.score, row, vector, passage_scorer, keys)
                for rank, found in enumerate(line.results, 1))
        return out

    def _passage_scorer(self, queries: Sequence[Query], row: int, ft_vector: np.ndarray | None
                        ):  # type: ignore[no-untyped-def]
        """(signal name, scores of a document's passages) for query `row` of a search's `queries`: the dense
        passage signal the ranking used (the fine-tuned encoder's where the index has one), else BM25 over
        passages. The base encoder is asked exactly what the search asked it (an answer it remembers)."""
        s = self.searcher
        names = s.needed_signals()
        if ft_vector is not None and "ft_dense" in names:
            vector, name = ft_vector, "ft_dense"
        elif "dense" in names:
            vector = s.encoder.encode_queries([q.text for q in queries], [q.stance for q in queries])[row]
            name = "dense"
        else:
            scores = s.lexical_passage.score_all([queries[row].text])[0]
            return lambda first, last: ("bm25_maxp", scores[first:last])
        vector = np.asarray(vector, dtype=np.float32)
        return lambda first, last: (name, np.asarray(s.dense.vectors[first:last], dtype=np.float32) @ vector)

    def _hit(self, rank: int, doc_id: str, score: float, row: _Row, vector: np.ndarray | None,
             passage_scorer, keys: set[str]) -> Hit:  # type: ignore[no-untyped-def]
        position = self.positions[doc_id]
        doc = self.documents.get(position)
        starts = self.searcher.passage_starts
        first = int(starts[position])
        last = int(starts[position + 1]) if position + 1 < len(starts) else self.searcher.manifest.n_passages
        signal, scores = passage_scorer(first, last)
        best = int(np.argmax(scores))
        spans = passage_spans(doc.text, self.spec)
        span = spans[min(best, len(spans) - 1)]
        passage_text = doc.text[span.start:span.end]
        evidence = Evidence(best, span.start, span.end, passage_text,
                            tuple(matched_terms(passage_text, keys, self._key)), signal, float(scores[best]))
        signals = tuple(SignalScore(name, float(m[position]), 1 + int((m > m[position]).sum()))
                        for name, m in sorted(row.signals.items()))
        return Hit(rank, doc_id, doc.title, document_label(doc), score, evidence, signals,
                   self._reasons(position, vector) if self.trained else None)

    def _reasons(self, position: int, vector: np.ndarray | None) -> tuple[MemoryReason, ...]:
        """The training propositions nearest the query among those that cite the document (one per proposition
        and stance), nearest first."""
        s = self.searcher
        if vector is None:
            return ()
        rows, cols = s.memory_links
        linked = rows[cols == position]
        if not len(linked):
            return ()
        sims = s.memory.vectors[linked] @ np.asarray(vector, dtype=np.float32)
        out: list[MemoryReason] = []
        seen: set[tuple[str, str]] = set()
        for i in np.argsort(-sims, kind="stable"):
            entry = s.memory.entries[int(linked[i])]
            if (entry.proposition_id, entry.stance) in seen:
                continue
            seen.add((entry.proposition_id, entry.stance))
            out.append(MemoryReason(entry.proposition_id, entry.text, entry.stance, float(sims[i])))
            if len(out) == REASONS:
                break
        return tuple(out)

    def _key(self, word: str) -> str | None:
        word = word.lower() if self._lower else word
        return None if word in self._stop else self._stem(word)

    def _keys(self, text: str) -> set[str]:
        return term_keys(text, self._key)


class _RememberLast:
    """An encoder that answers a call repeating the last one (same texts, stances and options) with its result.

    Only the query side is asked again, and only by the brief (for the evidence passage) right after the search
    asked it; a batch's vectors are returned as that batch computed them, so nothing that ranks changes.
    """

    def __init__(self, encoder) -> None:  # type: ignore[no-untyped-def]
        self.encoder = encoder
        self._last: tuple[object, np.ndarray] | None = None
        self._lock = threading.Lock()

    def encode_queries(self, texts: Sequence[str], stances: Sequence[str], *args, **kwargs) -> np.ndarray:  # type: ignore[no-untyped-def]
        key = (tuple(texts), tuple(stances), args, tuple(sorted(kwargs.items())))
        with self._lock:
            last = self._last
        if last is not None and last[0] == key:
            return last[1]
        out = self.encoder.encode_queries(texts, stances, *args, **kwargs)
        with self._lock:
            self._last = (key, out)
        return out

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self.encoder, name)


def _is_citation(doc_id: str) -> bool:
    citation = parse_citation(base_doc_id(doc_id))
    return citation is not None and citation.doc_id.upper() == base_doc_id(doc_id).upper()


def _check(text: str, k: int) -> str:
    if not isinstance(text, str) or not text.strip():
        raise PropositionError("the proposition is empty: type the statement of law to check")
    if len(text) > MAX_PROPOSITION_CHARS:
        raise PropositionError(f"the proposition is {len(text)} characters; at most {MAX_PROPOSITION_CHARS} are read")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise PropositionError(f"k must be a whole number from 1 to {MAX_K}, got {k!r}")
    return text.strip()
