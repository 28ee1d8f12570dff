"""StanceIndex: search an index directory by proposition and stance, and read a brief of both stances.

It wraps the index's searcher (stance/retrieve/opened.py: one index's `StanceSearcher`, or a sharded index's
`ShardedSearcher`, whose shards explain the hits they hold) and ranks nothing itself: a hit's documents, scores
and explanations are the searcher's own. What it adds is what a person needs to judge a hit: the document's title
and citation, the passage that scored with the query's terms marked, each signal's score and rank, and the
training propositions that cite the document (stance/retrieve/explain.py, the same numbers for one index and for
shards).

A proposition's `supported` and `refuted` answers are always asked in one batch: a brief costs one search (one
encoder call for both stances), an index that reads the stances against each other (a stance contrast or refuter
slots, stance/retrieve/contrast.py) sees both, and `search(text, stance=s)` asks that same batch, so it and the brief's
column `s` are always the same ranking.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from citator.stance.brief.evidence import Span, highlight_key, matched_terms, passage_spans, term_keys
from citator.stance.brief.kind import cited_kind, wrong_kind
from citator.stance.brief.label import document_label
from citator.stance.brief.records import Brief, Citing, Evidence, Hit, MemoryReason, SignalScore
from citator.data.citations import CitationResolver, base_doc_id, parse_citation
from citator.data.arguments import flag, optional_text, path_argument, whole_number
from citator.data.atomic import command_inputs
from citator.data.filters import Filter, check_keys, parse_filters
from citator.data.jsonl import encodable
from citator.data.metadata import document_metadata, short_citation
from citator.data.queries import MAX_QUERY_CHARS, cut_for_search
from citator.data.records import STANCES, Document, Query, ScoredDoc
from citator.errors import IndexDirError, PropositionError
from citator.engines.passages import PassageSpec
from citator.stance.retrieve.explain import Explained
from citator.stance.read.parts import kind_at, label_parts
from citator.stance.retrieve.opened import Searcher
from citator.stance.retrieve.current import Current
from citator.stance.retrieve.update import Change, given
from citator.stance.shards.search import open_searcher
from citator.stance.shards.update import update
from citator.stance.treat import flag as treatment_flag
from citator.stance.treat.reporters import citations_in

# A proposition is read whole or refused: never longer than what the search reads of one query.
MAX_PROPOSITION_CHARS = MAX_QUERY_CHARS
MAX_K = 100
PAIR = ("supported", "refuted")
_SEVERITY = {"red": 0, "yellow": 1, None: 2}


class StanceIndex:
    """An opened index directory, one index or sharded; `search` and `brief` may be called many times (the index
    stays in memory; a sharded index's shard workers run until `close`). Opened with `open`, it follows the
    index's generations: each call answers from the generation the manifest names (stance/retrieve/current.py),
    one update's `add` or `remove` having made, whoever made it."""

    def __init__(self, searcher: Searcher, current: Current[Searcher] | None = None) -> None:
        self._current = current
        self._take(searcher)

    def _take(self, searcher: Searcher) -> None:
        self.searcher = searcher
        self.positions = searcher.positions
        config = searcher.config
        self.spec = PassageSpec(config.passage_words, config.passage_overlap)
        self._key = highlight_key(searcher.term_key())  # marks skip stopwords a reader need not see marked
        self._resolver: CitationResolver | None = None
        # An index of statute sections (most doc ids are NRS or D.C. Code citations as printed, "NRS 432B.220"): a
        # page then shows one column of sections, stance aside.
        self.statutes = sum(_is_citation(d) for d in searcher.doc_ids) * 2 > len(searcher.doc_ids)

    @classmethod
    def open(cls, index_dir: str | Path, cold: bool = False, ray: str | None = None) -> StanceIndex:
        """Open a built index: it holds its documents, encoders and trained model, and needs nothing else.
        `cold`: one brief, then the process exits (the query encoders run in onnxruntime). `ray`: a sharded
        index's shards as actors on this Ray cluster (default $CITATOR_RAY; without either, in this process).
        What it serves is what was verified as it opened: once a file of the index changes, it refuses (one
        line, IndexDirError) until it is opened again."""
        index_dir = path_argument(index_dir, "index_dir", IndexDirError)
        opener = partial(open_searcher, cold=flag(cold, "cold", IndexDirError),
                         ray=optional_text(ray, "ray", IndexDirError))
        current = Current(Path(index_dir), opener, _close)
        return cls(current.get(), current)

    def _fresh(self) -> None:
        """Serve the generation the manifest names now (an update since switched it)."""
        if self._current is not None:
            searcher = self._current.get()
            if searcher is not self.searcher:
                self._take(searcher)

    def add(self, records: Sequence[Any]) -> None:
        """Add documents (Documents or corpus objects: doc_id, title, text, ...) to the index as its next
        generation; one whose doc_id the index holds replaces it (`citator add`). Only they are encoded, and the
        index then answers as a build of the resulting corpus would."""
        self._update(given(add=records, source="StanceIndex.add"))

    def remove(self, doc_ids: Sequence[str]) -> None:
        """Remove documents by doc id as the index's next generation (`citator remove`)."""
        self._update(given(remove=doc_ids, source="StanceIndex.remove"))

    def _update(self, change: Change) -> None:
        update(self.searcher.index_dir, change, progress=False)
        if self._current is not None:
            self._fresh()
        else:
            old = self.searcher
            self._take(open_searcher(old.index_dir))
            old.close()

    @classmethod
    def build(cls, corpus: str | Path, index_dir: str | Path, model: str | Path | None = None,
              encoder: str | Path | None = None) -> StanceIndex:
        """Build an index of `corpus` (JSONL: doc_id, text, ...) in `index_dir` and open it: `citator build
        --no-serve`. `model`: a trained artifacts directory (`citator train --out`), which the index copies what
        it searches with from; without one the index is the untrained hybrid, and `trained` says so. `encoder`: a local encoder directory (default: the bundled MiniLM)."""
        from citator.stance.retrieve.index_dir import BuildOptions
        from citator.stance.retrieve.model import StanceModel
        from citator.stance.workload import build

        # The same protection as the command line's: nothing the build reads is replaced or removed by it.
        corpus = path_argument(corpus, "corpus", IndexDirError)
        index_dir = path_argument(index_dir, "index_dir", IndexDirError)
        model, encoder = (None if p is None else path_argument(p, name, IndexDirError)
                          for p, name in ((model, "model"), (encoder, "encoder")))
        with command_inputs([str(p) for p in (corpus, model, encoder) if p is not None]):
            artifacts = None if model is None else StanceModel.load(Path(model))
            options = BuildOptions(encoder_path=None if encoder is None else Path(encoder), artifacts=artifacts)
            build(Path(corpus), Path(index_dir), options, serve=False)
        return cls.open(index_dir)

    def close(self) -> None:
        """Stop a sharded index's shard workers (nothing to do for one index)."""
        self.searcher.close()

    def cited(self, text: str) -> tuple[str, ...]:
        """The documents of this index that `text` cites exactly, found by parsing alone: a statute index's sections
        (`NRS 432B.220`, `D.C. Code § 16-2301`; every printed version), or the decisions of a case index whose
        `citation` metadata is the reporter citation that `text` is ("500 U.S. 565", "500 US 565", "see 500 U. S.
        565."; compared as volume, reporter and page). () when `text` is no citation or cites nothing here."""
        _text(text, "text")
        self._fresh()
        if not self.statutes:
            return self._cited_case(text)
        if self._resolver is None:
            self._resolver = CitationResolver(self.searcher.doc_ids)
        return self._resolver.resolve(text).doc_ids

    def _cited_case(self, text: str) -> tuple[str, ...]:
        if "citation" not in self.searcher.metadata_keys or cited_kind(text) != "case":
            return ()
        found = citations_in(text)
        if len(found) != 1:
            return ()
        volume, reporter, page = found[0].key
        # The metadata filter compares exactly: the citation as the index's documents write it, "500 U.S. 565".
        hits = self.search(text, "all", 5, [f"citation={volume} {reporter} {page}"])
        return tuple(hit.doc_id for hit in hits)

    def mismatch(self, text: str) -> str | None:
        """One sentence when `text` is an exact citation of a kind this index does not hold (a statute typed into
        a case index, a reporter citation into a statute index), else None (stance/brief/kind.py)."""
        return wrong_kind(_text(text, "text"), self.statutes)

    @property
    def trained(self) -> bool:
        """Whether the index holds a trained proposition memory (it then gives memory reasons)."""
        return self.searcher.manifest.trained

    @property
    def ranks_stance(self) -> bool:
        """Whether the stance asked changes the ranking: a trained model (its memory and ranker read it) or a stance
        contrast (stance/retrieve/contrast.py). Without either, `search` answers every stance alike and a brief
        is one list of relevant authority."""
        config = self.searcher.config
        return self.trained or config.stance_contrast > 0 or config.refuter_slots > 0

    @property
    def metadata_keys(self) -> list[str]:
        """Every metadata key a document of the index has (what a filter may name), sorted."""
        self._fresh()
        return sorted(self.searcher.metadata_keys)

    def search(self, text: str, stance: str = "all", k: int = 10, filters: Sequence[str | Filter] = ()
               ) -> tuple[Hit, ...]:
        """The top `k` documents for `text` asked with `stance`, best first; with `filters` ("date>=1980-01-01",
        ANDed: docs/metadata.md), the top `k` of the documents that meet them."""
        if stance not in STANCES:
            raise PropositionError(f"stance must be one of {', '.join(STANCES)}, got {stance!r}")
        self._fresh()
        asked, parsed = self._request(text, k, filters)
        return self._answer(asked, k, parsed, self._batch(stance))[stance]

    def brief(self, text: str, k: int = 5, filters: Sequence[str | Filter] = ()) -> Brief:
        """The top `k` supporting and refuting documents for `text` (of those that meet `filters`), each with its
        evidence and reasons: two columns where the index ranks by stance (a trained index) and the two rankings
        differ, else one list of relevant authority that says why (records.Brief)."""
        self._fresh()
        asked, parsed = self._request(text, k, filters)
        hits = self._answer(asked, k, parsed, PAIR)
        return Brief.of(" ".join(text.split()), hits["supported"], hits["refuted"], self.trained, self.ranks_stance,
                        tuple(str(f) for f in parsed))

    def document(self, doc_id: str) -> Document:
        self._fresh()
        if _text(doc_id, "doc_id") not in self.positions:
            raise PropositionError(f"no document {doc_id!r} in this index")
        return self.searcher.document(self.positions[doc_id])

    def passage_in_place(self, doc_id: str, passage: int, text: str) -> tuple[Document, Span, tuple[Span, ...]]:
        """A document, the span of its passage number `passage` in its text, and the spans there of the words
        `text` matches (characters of the document's text): the document view, with no model call."""
        whole_number(passage, "passage", 0, error=PropositionError)
        _text(text, "text")
        doc = self.document(doc_id)
        spans = passage_spans(doc.text, self.spec)
        if not passage < len(spans):
            raise PropositionError(f"document {doc_id!r} has no passage {passage}")
        span = spans[passage]
        marks = matched_terms(doc.text[span.start:span.end], self._keys(text), self._key)
        return doc, span, tuple(Span(m.start + span.start, m.end + span.start) for m in marks)

    def _batch(self, stance: str) -> tuple[str, ...]:
        """The stances one search asks to answer `stance`: both for either of them, exactly as a brief asks (with a
        stance contrast configured, a text asked both ways is answered otherwise than asked one way), else the
        stance alone."""
        return PAIR if stance in PAIR else (stance,)

    def _request(self, text: str, k: int, filters: Sequence[str | Filter]) -> tuple[str, tuple[Filter, ...]]:
        """A search's text and filters, checked with its k in the order their errors are told (text and k first)."""
        text = _check(text, k)
        parsed = tuple(parse_filters(filters))
        check_keys(parsed, self.searcher.metadata_keys)
        return text, parsed

    def _answer(self, text: str, k: int, parsed: Sequence[Filter], stances: Sequence[str]
                ) -> dict[str, tuple[Hit, ...]]:
        # The words a search reads (data/queries.py): the evidence is chosen and marked with the same.
        queries = cut_for_search([Query(f"q:{s}", text, s) for s in stances])
        found = self.searcher.explained(queries, k, parsed)
        keys = self._keys(queries[0].text)
        return {query.stance: tuple(self._hit(rank, hit, keys) for rank, hit in enumerate(row, 1))
                for query, row in zip(queries, found)}

    def _hit(self, rank: int, found: Explained, keys: set[str]) -> Hit:
        scored, doc, e, ranks = found.scored, found.document, found.explanation, found.ranks
        spans = passage_spans(doc.text, self.spec)
        span = spans[min(e.passage, len(spans) - 1)]
        passage_text = doc.text[span.start:span.end]
        evidence = Evidence(e.passage, span.start, span.end, passage_text,
                            tuple(matched_terms(passage_text, keys, self._key)), e.passage_signal, e.passage_score,
                            kind_at(label_parts(doc.text), span.start, span.end))
        signals = tuple(SignalScore(name, score, ranks[name]) for name, score in e.signals.items())
        memory = None if e.reasons is None else tuple(
            MemoryReason(entry.proposition_id, entry.text, entry.stance, similarity) for entry, similarity in e.reasons)
        metadata = document_metadata(doc)
        flag, cited_by = self.treatment(scored.doc_id)
        return Hit(rank, scored.doc_id, doc.title, document_label(doc), scored.score, evidence, signals, memory,
                   flag=flag, cited_by=cited_by, metadata=metadata, citation=short_citation(doc.title, metadata))

    def treatment(self, doc_id: str) -> tuple[str | None, tuple[Citing, ...]]:
        """A document's flag and what later decisions of the index say of it (red first, then yellow, then the
        rest), as its hits carry them: shown, never ranked by."""
        rows = sorted(self.searcher.treatments.of(doc_id), key=lambda r: _SEVERITY[treatment_flag(r.treatment)])
        return self.searcher.treatments.flag(doc_id), tuple(
            Citing(r.citing_doc_id, self.document(r.citing_doc_id).title, r.treatment, r.passage,
                   treatment_flag(r.treatment)) for r in rows)

    def _keys(self, text: str) -> set[str]:
        return term_keys(text, self._key)


def _is_citation(doc_id: str) -> bool:
    citation = parse_citation(base_doc_id(doc_id))
    return citation is not None and citation.doc_id.upper() == base_doc_id(doc_id).upper()


def _text(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise PropositionError(f"{name} must be text (str), got {type(value).__name__}")
    return value


def _check(text: str, k: int) -> str:
    if not isinstance(text, str):
        raise PropositionError(f"the proposition must be text (str), got {type(text).__name__}")
    if not text.strip():
        raise PropositionError("the proposition is empty: type the statement of law to check")
    text = " ".join(text.split())
    if not encodable(text):  # a command-line argument of bytes that are not UTF-8, or a lone surrogate
        raise PropositionError("the proposition holds bytes or escapes that are not UTF-8 text")
    if len(text) > MAX_PROPOSITION_CHARS:
        raise PropositionError(f"the proposition is {len(text)} characters; at most {MAX_PROPOSITION_CHARS} are read")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise PropositionError(f"k must be a whole number from 1 to {MAX_K}, got {k!r}")
    return text


def _close(searcher: Searcher) -> None:
    searcher.close()
