"""Stance-aware search over an index directory: signals per document, then fusion, then top-k."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from citator.data.filters import Filter
from citator.data.metadata import with_metadata
from citator.data.queries import cut_for_search
from citator.data.records import Document, Query, ResultLine, ScoredDoc
from citator.engines import dense as dense_module
from citator.engines.dense import DenseIndex
from citator.engines.fusion import top_k
from citator.engines.lexical import LexicalIndex
from citator.engines.passages import document_of_passage, max_per_document
from citator.errors import ConfigError, IndexDirError
from citator.models.encoder import Encoder, TokenStates
from citator.stance.retrieve import contrast
from citator.stance.retrieve.config import RetrievalConfig
from citator.stance.retrieve.documents import DocumentStore
from citator.stance.retrieve.explain import Explained, QueryView, count_above, explain
from citator.stance.retrieve.features import FeatureTable
from citator.stance.retrieve.index_files import (
    REBUILD, AsVerified, check_starts, load_array, load_doc_ids, verify_digests,
)
from citator.stance.retrieve.late_interaction import OFFSETS, SCALES, TOKENS, TokenStore, reads_late_interaction
from citator.stance.retrieve.layout import (
    DENSE, DOC_IDS, FINETUNED_ENCODER, LEXICAL_DOC, LEXICAL_PASSAGE, METADATA, PASSAGE_STARTS, QUERY_GRAPHS, RANKER,
    IndexFolder, open_folder, query_graph,
)
from citator.stance.retrieve.metadata_table import MetadataTable
from citator.stance.retrieve.learned import LearnedParts, reads_encoder
from citator.stance.retrieve.ranker import Ranker, doc_years, load_ranker
from citator.stance.retrieve.treatments import load_treatments
from citator.stance.treat import TreatmentTable

# A signal maps a batch of queries to a (n_queries, n_docs) score matrix.
Signal = Callable[[Sequence[Query]], np.ndarray]
# Largest (queries x passages) score matrix one batch may build: about 200 MB of float32.
MAX_BATCH_CELLS = 50_000_000
# Beyond the exact-search threshold, dense MaxP looks only at each query's best passages.
DENSE_TOP_PASSAGES = 1000


@dataclass(frozen=True)
class EncodedQueries:
    """A batch's fine-tuned query vectors and, where late interaction is used, their token states; `base`: the base
    encoder's vectors, where the caller encoded them once for several searchers (a sharded index's shards)."""

    vectors: np.ndarray | None
    tokens: TokenStates | None
    base: np.ndarray | None = None


# Sees a sub-batch of a search before fusion: (its first row in the batch, its signal matrices, its encoding).
BatchObserver = Callable[[int, Mapping[str, np.ndarray], EncodedQueries | None], None]


# The index's folders of query encoders: each file is checked when a search loads it, not when the index opens.
ENCODER_PARTS = (FINETUNED_ENCODER, QUERY_GRAPHS)


def _is_weights(name: str) -> bool:
    """A model's weights file, which running its ONNX graph instead leaves unread."""
    return name.endswith((".safetensors", ".bin"))


def _checked_tokens(data_dir: Path, n_docs: int) -> TokenStore:
    """The late-interaction token store, its arrays checked against each other and the corpus."""
    tokens = load_array(data_dir / TOKENS, 2, "i", mmap=True)
    scales = load_array(data_dir / SCALES, 1, "f", rows=tokens.shape[0])
    offsets = load_array(data_dir / OFFSETS, 1, "i", rows=n_docs + 1)
    if n_docs and (int(offsets[0]) != 0 or int(offsets[-1]) != tokens.shape[0] or bool((np.diff(offsets) < 0).any())):
        raise IndexDirError(f"{data_dir / OFFSETS}: offsets do not cut the {tokens.shape[0]} tokens in order; "
                            f"{REBUILD}")
    return TokenStore(tokens, scales, offsets)


def query_encoder(folder: IndexFolder, model_dir: str | Path, graph_name: str | None, cold: bool) -> Encoder:
    """The query encoder of `model_dir`, run from the index's ONNX graph `graph_name` where the build wrote one
    (and the search is `cold`): a graph that does not load is index damage."""
    from citator.models.load import load_query_encoder, runs_graph

    manifest, data = folder.manifest, folder.data
    graph = folder.path(query_graph(graph_name)) if graph_name else None
    graph = graph if graph is not None and graph.is_file() else None
    # The index's files this encoder reads are checked now, as it loads them (opening the index left them out).
    graph_run = runs_graph(Path(model_dir), cold, graph)
    reads = {graph.relative_to(data).as_posix()} if graph_run and graph is not None else set()
    inside = Path(model_dir).absolute()
    if inside.is_relative_to(data):
        prefix = inside.relative_to(data).as_posix() + "/"
        reads |= {n for n in manifest.files if n.startswith(prefix) and not (graph_run and _is_weights(n))}
    verify_digests(data, {n: manifest.files[n] for n in sorted(reads) if n in manifest.files})
    try:
        return load_query_encoder(model_dir, cold, graph)
    except ConfigError as exc:
        if graph is None:
            raise
        raise IndexDirError(f"{exc}; {REBUILD}") from None




class StanceSearcher:
    """One index, held in memory (its arrays mapped) with its encoders: answers batches of queries, explains its
    hits, and serves its documents, all from the files as they were verified when it opened."""

    def __init__(self, index: IndexFolder | str | Path, encoder_path: str | Path | None = None, cold: bool = False,
                 encoders: bool = True) -> None:
        """`index`: an opened index directory (or its path, opened here). `cold`: this process answers one batch and
        exits (its query encoders run from the index's ONNX graphs). `encoders=False`: every search is given its
        queries' encodings (EncodedQueries with `base`), as a sharded index's shards are, and no encoder is loaded."""
        self.folder = index if isinstance(index, IndexFolder) else open_folder(index)
        self.index_dir, self.manifest = self.folder.root, self.folder.manifest
        if self.manifest.shards:
            raise IndexDirError(f"{self.index_dir}: a sharded index ({len(self.manifest.shards)} shards): open it "
                                "with citator.stance.shards.open_searcher or citator.StanceIndex.open")
        self.config: RetrievalConfig = self.manifest.config
        path, n_docs, n_passages = self.folder.path, self.manifest.n_docs, self.manifest.n_passages
        # Everything read back is checked against what the build recorded (stance/retrieve/index_files.py), and
        # stays so: the files' state is taken before their digests are checked and compared after every use.
        # Encoders and their graphs are checked when loaded (query_encoder): a search may never read them (a cold
        # one runs the graphs, a server the encoders; with a model, the base encoder's are not used at all).
        self.as_verified = AsVerified.take(self.folder.data, self.manifest.files)
        verify_digests(self.folder.data,
                       {n: e for n, e in self.manifest.files.items() if n.split("/")[0] not in ENCODER_PARTS})
        self.doc_ids: list[str] = load_doc_ids(path(DOC_IDS), n_docs)
        self.years = doc_years(self.doc_ids)
        self.passage_starts = load_array(path(PASSAGE_STARTS), 1, "i", rows=n_docs)
        check_starts(path(PASSAGE_STARTS), self.passage_starts, n_passages)
        self.doc_of_passage = document_of_passage(self.passage_starts, n_passages)
        self.lexical_doc = LexicalIndex.load(path(LEXICAL_DOC), units=n_docs)
        self.lexical_passage = LexicalIndex.load(path(LEXICAL_PASSAGE), units=n_passages)
        self.dense = DenseIndex(load_array(path(DENSE), 2, "f", rows=n_passages, mmap=True))
        self.documents = DocumentStore(self.folder.data, self.doc_ids)
        self.metadata = (MetadataTable.load(path(METADATA), n_docs) if METADATA in self.manifest.files
                         else MetadataTable.empty(n_docs))
        self.metadata_keys = self.metadata.keys
        self._encoder_path = encoder_path or self.manifest.source.encoder_path
        self._cold = cold
        self._encoder: Encoder | None = None  # loaded on first use: with a model, the fine-tuned one may be all it needs
        self.signals: dict[str, Signal] = {
            "bm25": lambda qs: self.lexical_doc.score_all([q.text for q in qs]),
            "bm25_maxp": lambda qs: max_per_document(self.lexical_passage.score_all([q.text for q in qs]),
                                                     self.passage_starts),
            "dense": lambda qs: self.dense_maxp(self.encoder.encode_queries([q.text for q in qs],
                                                                            [q.stance for q in qs])),
        }
        self.ranker: Ranker | None = None
        self.late_store: TokenStore | None = None
        self.learned: LearnedParts | None = None  # the trained model's parts, when the index was built with one
        self.ft_encoder: Encoder | None = None
        if self.manifest.trained:
            # The build copied the model into the index: the model's own folder is not read.
            self.ft_encoder = self._query_encoder(path(FINETUNED_ENCODER), "finetuned") if encoders else None
            self.learned = LearnedParts.load(path, n_docs, self.dense.vectors.shape[1])
            if path(RANKER).is_file():
                self.ranker = load_ranker(path(RANKER))
            if TokenStore.present(self.folder.data):
                self.late_store = _checked_tokens(self.folder.data, n_docs)
        # The corpus's treatment table, shown with hits and never ranked by; a shard has none (its sharded index
        # holds the corpus's), and a shard is the one searcher opened without encoders.
        self.treatments = (load_treatments(self.folder, self.positions, self.documents.get) if encoders
                           else TreatmentTable(()))
        self.check_unchanged()

    def check_unchanged(self) -> None:
        """Refuse, in one line, an index whose files changed since they were verified (written in place, replaced
        or removed): what it would serve is no longer what was checked."""
        self.as_verified.check()

    def use_numba(self) -> None:
        """BM25 by numba's kernel (lexical.LexicalIndex.use_numba): for long-lived processes only."""
        for lexical in (self.lexical_doc, self.lexical_passage, self.learned.expanded if self.learned else None):
            if lexical is not None:
                lexical.use_numba()

    def close(self) -> None:
        """Nothing to release: one index holds no workers."""

    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            # The index's graph is of the encoder it was built with, not of one given in its place.
            own = self._encoder_path == self.manifest.source.encoder_path
            self._encoder = self._query_encoder(self._encoder_path, "base" if own else None)
        return self._encoder

    def _query_encoder(self, model_dir: str | Path, graph_name: str | None) -> Encoder:
        return query_encoder(self.folder, model_dir, graph_name, self._cold)

    @cached_property
    def positions(self) -> dict[str, int]:
        """Each document's position in the corpus, by doc id."""
        return {doc_id: i for i, doc_id in enumerate(self.doc_ids)}

    def term_key(self) -> Callable[[str], str | None]:
        """A word's key as the index's passages match it (its stem; None for a stopword)."""
        return self.lexical_passage.term_key()

    def document(self, position: int) -> Document:
        """The document at `position` of the corpus, from the index's own copy."""
        doc = self.shown_document(position)
        self.check_unchanged()
        return doc

    def shown_document(self, position: int) -> Document:
        """The stored document with the metadata the checked table holds for it (what a reader sees); an index
        built before the table existed shows its stored copy."""
        doc = self.documents.get(position)
        return with_metadata(doc, self.metadata.get(position)) if METADATA in self.manifest.files else doc

    def dense_maxp(self, vectors: np.ndarray) -> np.ndarray:
        """MaxP of query vectors against the passage vectors (base or fine-tuned queries search the same ones)."""
        index = self.dense
        if vectors.ndim != 2 or vectors.shape[1] != index.vectors.shape[1]:
            raise IndexDirError(f"{self.folder.path(DENSE)}: passage vectors of width {index.vectors.shape[1]}, but "
                                f"the query encoder gives {vectors.shape[-1]}; {REBUILD}")
        if index.size <= dense_module.FAISS_THRESHOLD:
            return max_per_document(index.score_all(vectors), self.passage_starts)
        # Millions of passages: faiss finds each query's best passages; other documents get the cosine floor.
        idx, scores = index.search(vectors, min(DENSE_TOP_PASSAGES, index.size))
        out = np.full((len(vectors), len(self.doc_ids)), -1.0, dtype=np.float32)
        rows = np.repeat(np.arange(len(vectors)), idx.shape[1])
        np.maximum.at(out, (rows, self.doc_of_passage[idx.ravel()]), scores.ravel().astype(np.float32))
        return out

    def encode(self, queries: Sequence[Query]) -> EncodedQueries:
        """One pass of the fine-tuned encoder over the queries (in their stance's form): the vector every learned
        signal uses and, when the index holds document tokens for the ranker's late interaction, the token states.

        The memory entries were encoded in the stance-neutral form; matching them with the stance form instead
        measured the same on CaseFacts dev (learned fusion 0.4560 vs 0.4566) and saves a second encoding.
        """
        if self.ft_encoder is None:
            raise ConfigError(f"{self.index_dir}: this searcher has no fine-tuned query encoder (an untrained index, "
                              "or a shard given its queries' encodings)")
        texts, stances = [q.text for q in queries], [q.stance for q in queries]
        if not self.uses_late_interaction:
            return EncodedQueries(self.ft_encoder.encode_queries(texts, stances), None)
        return EncodedQueries(*self.ft_encoder.encode_queries_with_tokens(texts, stances))

    def _encoded(self, queries: Sequence[Query], names: Sequence[str]) -> EncodedQueries:
        """A batch's encodings that the signals `names` and the ranker read: the fine-tuned encoder's (with token
        states for late interaction) and the base encoder's for `dense`, each made once."""
        fine = None
        if (self.learned is not None and reads_encoder(names)) or (self.uses_ranker and self.uses_late_interaction):
            fine = self.encode(queries)
        base = (self.encoder.encode_queries([q.text for q in queries], [q.stance for q in queries])
                if "dense" in names else None)
        return EncodedQueries(None if fine is None else fine.vectors, None if fine is None else fine.tokens, base)

    @property
    def uses_late_interaction(self) -> bool:
        """The ranker has late-interaction features and the index holds the document tokens they need."""
        return self.late_store is not None and self.ranker is not None and reads_late_interaction(self.ranker.features)

    def available_signals(self) -> list[str]:
        return list(self.signals) + (self.learned.names if self.learned is not None else [])

    def signal_matrices(self, queries: Sequence[Query], names: Sequence[str], encoded: EncodedQueries | None = None,
                        learned: LearnedParts | None = None) -> dict[str, np.ndarray]:
        """(n_queries, n_docs) scores of each named signal; `encoded`: this batch's encodings, where already made.
        `learned`: a model's parts over this index's corpus to score with in place of the index's own (training's
        out-of-fold features: parts fitted without these queries)."""
        given = encoded.base if encoded is not None else None
        out = {name: self.dense_maxp(given) if name == "dense" and given is not None else self.signals[name](queries)
               for name in names if name in self.signals}
        learned = learned if learned is not None else self.learned
        if learned is not None:
            vectors = None
            if reads_encoder(names):
                known = encoded.vectors if encoded is not None else None
                vectors = known if known is not None else self.encode(queries).vectors
            out.update(learned.signals([q.text for q in queries], [q.stance for q in queries], vectors, names,
                                       self.dense_maxp))
        return out

    def features(self, queries: Sequence[Query], names: Sequence[str], encoded: EncodedQueries | None = None,
                 learned: LearnedParts | None = None) -> FeatureTable:
        """The named signals' scores for a batch with what ranking them reads (stance/retrieve/features.py): this
        index's years, late-interaction store and the citation counts of `learned` (default: the index's model).
        Search fuses this table, and training reads the ranker's features from it."""
        learned = learned if learned is not None else self.learned
        return FeatureTable(self.signal_matrices(queries, names, encoded, learned), [q.stance for q in queries],
                            self.years, None if learned is None else learned.citations,
                            None if encoded is None else encoded.tokens, self.late_store)

    @property
    def uses_ranker(self) -> bool:
        """The index's fusion is learned and it holds the ranker (else it interpolates)."""
        return self.config.fusion == "learned" and self.ranker is not None

    def needed_signals(self) -> list[str]:
        names = [n for n, w in self.config.weights.items() if w]
        if self.ranker is not None and self.uses_ranker:
            wanted = {f.split(":")[0] for f in self.ranker.features} & set(self.available_signals())
            names = sorted(set(names) | wanted)
        return names

    def _contrast_depth(self) -> int:
        # Only scores on one scale: under learned fusion, the ranker's candidates (the others are placed below them,
        # and a lean between a candidate's score and a non-candidate's would measure that gap).
        if self.ranker is not None and self.uses_ranker:
            return min(contrast.DEPTH, self.ranker.candidates)
        return contrast.DEPTH

    def search(self, queries: Sequence[Query], k: int = 10, batch_size: int = 256,
               on_batch: BatchObserver | None = None, filters: Sequence[Filter] = ()) -> list[ResultLine]:
        """Top-k distinct known documents per query with finite, non-increasing scores; with `filters`, of the
        documents that meet them (fewer than k only where fewer meet them).

        With a stance contrast or refuter slots configured, a text the batch asks with both stances has its two
        rankings read side by side (stance/retrieve/contrast.py), whichever sub-batches its queries fall in.
        `on_batch(first row, signal matrices, encoding)` sees each sub-batch's signals before they are fused (a
        brief shows what ranked each document); it changes nothing of the ranking. A filter applies before the top
        k: the documents it leaves out score -inf under every signal (FeatureTable.masked), so they neither shape
        the fusion nor take a place.
        """
        queries = cut_for_search(queries)  # bounded work per query, whoever calls (data/queries.py)
        allowed = self.metadata.allowed(filters) if filters else None
        names = self.needed_signals()
        batch_size = max(1, min(batch_size, MAX_BATCH_CELLS // max(self.manifest.n_passages, 1)))
        citations = self.learned.citations if self.learned is not None else None
        slots = self.config.refuter_slots if citations is not None else 0
        paired = bool(self.config.stance_contrast or slots) and bool(contrast.both_stance_groups(queries))
        # The contrast and the slots move the first `head` places only, whose scores do not depend on the sub-batch;
        # beyond them, up to `head` extra places make up for documents the head took from further down.
        head = self._contrast_depth()
        depth = (head if k <= head else k + head) if paired else k
        refuters = contrast.known_refuters(citations) if paired and slots and citations is not None else None
        # Rows whose refuted answer gets refuter slots: their best refuters, from the fused order over all documents.
        slot_rows = set(contrast.refuted_rows(queries)) if refuters is not None else set()
        best: dict[int, np.ndarray] = {}
        tops: list[tuple[np.ndarray, np.ndarray]] = []
        for start in range(0, len(queries), batch_size):
            batch = queries[start : start + batch_size]
            encoded = self._encoded(batch, names)
            table = self.features(batch, names, encoded)
            if on_batch is not None:
                on_batch(start, table.signals, encoded)
            table = table if allowed is None else table.masked(allowed)
            fused = np.nan_to_num(table.fused(self.config, self.ranker), nan=0.0, posinf=0.0, neginf=0.0)
            if allowed is not None:
                fused[:, ~allowed] = -np.inf
            tops.append(top_k(fused, depth))
            rows = [r for r in range(start, start + len(batch)) if r in slot_rows]
            if rows and refuters is not None:
                found = contrast.best_refuters(fused[[r - start for r in rows]], refuters, slots)
                best.update(zip(rows, found))
        self.check_unchanged()
        if not tops:
            return []
        idx, scores = np.concatenate([t[0] for t in tops]), np.concatenate([t[1] for t in tops])
        if paired:
            top_idx, top_scores = contrast.contrast_top(idx[:, :head], scores[:, :head], queries,
                                                        self.config.stance_contrast)
            if refuters is not None:
                top_idx, top_scores = contrast.refuter_slots(top_idx, top_scores, queries, slots, refuters, best)
            idx, scores = contrast.splice(top_idx, top_scores, idx, scores, k)
        idx, scores = idx[:, :k], scores[:, :k]
        # Plain lists: iterating numpy rows element by element (memmap-derived, too) costs ~80 us a query.
        return [ResultLine(q.query_id, tuple(ScoredDoc(self.doc_ids[i], s) for i, s in zip(row_idx, row_scores)
                                             if allowed is None or allowed[i]))
                for q, row_idx, row_scores in zip(queries, idx.tolist(), np.asarray(scores, dtype=np.float64).tolist())]

    def explained(self, queries: Sequence[Query], k: int = 10, filters: Sequence[Filter] = ()
                  ) -> list[list[Explained]]:
        """A search of `queries` (with `filters`), each hit explained (stance/retrieve/explain.py) with the very
        signals and query vectors the search computed, and ranked under each signal among all documents."""
        queries = cut_for_search(queries)
        seen: dict[int, QueryView] = {}

        def observe(start: int, signals: Mapping[str, np.ndarray], encoded: EncodedQueries | None) -> None:
            for i in range(len(next(iter(signals.values()))) if signals else 0):
                row = start + i
                seen[row] = QueryView(queries[row].text, {n: m[i] for n, m in signals.items()},
                                      None if encoded is None or encoded.vectors is None else encoded.vectors[i],
                                      None if encoded is None or encoded.base is None else encoded.base[i])

        results = self.search(queries, k, on_batch=observe, filters=filters)
        out = []
        for r, (query, line) in enumerate(zip(queries, results)):
            view = seen.get(r, QueryView(query.text, {}, None, None))
            if view.ft_vector is None and self.manifest.trained:  # the ranking used no fine-tuned signal; the
                # reasons still need it
                vectors = self.encode([query]).vectors
                view = QueryView(view.text, view.signals, None if vectors is None else vectors[0], view.base_vector)
            places = [self.positions[found.doc_id] for found in line.results]
            explanations = explain(self, view, places)
            counts = count_above(view.signals, {n: [e.signals[n] for e in explanations] for n in view.signals})
            out.append([Explained(found, self.shown_document(p), e, {n: 1 + counts[n][i] for n in e.signals})
                        for i, (found, p, e) in enumerate(zip(line.results, places, explanations))])
        self.check_unchanged()
        return out
