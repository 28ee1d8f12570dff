"""What a trained model adds to search over one corpus, and the signals it gives a batch of queries.

An index holds its model's parts, fitted to its documents when it was built. Training makes the same parts from
a model fitted without a fold's queries, to compute the ranker's features for those queries as they will look
for unseen ones. Both assemble them with `LearnedParts.fit_to` and score through `LearnedParts.signals`, so a
ranker sees its features made one way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from citator.engines.dense import DenseIndex
from citator.engines.lexical import LexicalIndex
from citator.errors import IndexDirError
from citator.stance.retrieve.doc_embedding import DocumentOffsets
from citator.stance.retrieve.expansion import SIGNAL as EXPANDED
from citator.stance.retrieve.index_files import REBUILD, load_array
from citator.stance.retrieve.layout import DOC_EMBEDDING, LEXICAL_EXPANDED, MEMORY, MEMORY_LINKS
from citator.stance.retrieve.memory import VECTORS, PropositionMemory, citation_counts, memory_signals

MEMORY_SIGNALS = ("memory_max", "memory_same", "memory_vote", "memory_centroid")
# Signals of the fine-tuned query encoder (one encoding per query feeds them all).
ENCODER_SIGNALS = ("ft_dense", *MEMORY_SIGNALS, "doc_embedding")
# Every signal a model gives: its encoder's, and BM25 over the documents expanded by the propositions citing them.
LEARNED_SIGNALS = (*ENCODER_SIGNALS, EXPANDED)


def reads_encoder(names: Sequence[str]) -> bool:
    """Whether any of the signals `names` needs the fine-tuned encoder's query vectors."""
    return any(name in ENCODER_SIGNALS for name in names)


Links = tuple[np.ndarray, np.ndarray]


@dataclass(frozen=True)
class CorpusSlice:
    """Documents `start` .. `start + n_docs - 1` of a corpus whose ids and titles are given whole (a shard's, or a
    whole corpus with `start` 0): a model's parts reach documents by titles unique in the whole corpus."""

    ids: Sequence[str]
    titles: Sequence[str]
    start: int
    n_docs: int


def corpus_links(memory: PropositionMemory, corpus: CorpusSlice) -> Links:
    """(memory entry, document) links of a memory to the documents of `corpus`, numbered from its start."""
    rows, cols = memory.link(corpus.ids, corpus.titles)
    keep = (cols >= corpus.start) & (cols < corpus.start + corpus.n_docs)
    return rows[keep], cols[keep] - corpus.start


@dataclass(frozen=True)
class LearnedParts:
    """A model's parts over one corpus of `n_docs` documents: the proposition memory with its (entry, document)
    links, each document's citation counts by stance (ranker features), the learned document vectors (None: the
    model has none) and the BM25 index of the documents expanded by the propositions that cite them (an index
    holds one; training makes one only when its ranker reads that signal)."""

    memory: PropositionMemory
    links: tuple[np.ndarray, np.ndarray]
    citations: dict[str, np.ndarray]
    doc_vectors: np.ndarray | None
    expanded: LexicalIndex | None
    n_docs: int

    @classmethod
    def of(cls, memory: PropositionMemory, links: Links, doc_vectors: np.ndarray | None,
           expanded: LexicalIndex | None, n_docs: int) -> LearnedParts:
        return cls(memory, links, citation_counts(memory, links, n_docs), doc_vectors, expanded, n_docs)

    @classmethod
    def fit_to(cls, memory: PropositionMemory, offsets: DocumentOffsets | None, corpus: CorpusSlice,
               base_vectors: np.ndarray, expand: Callable[[Links], LexicalIndex] | None) -> LearnedParts:
        """A model's memory and document offsets fitted to the documents of `corpus`: the memory's links to them,
        their learned vectors (`base_vectors`: their base vectors, each the mean of its passages') and, with
        `expand`, the BM25 index of them expanded by the propositions that cite them, made from the links."""
        links = corpus_links(memory, corpus)
        vectors = offsets.vectors(corpus.ids, corpus.titles, base_vectors, corpus.start) if offsets else None
        return cls.of(memory, links, vectors, expand(links) if expand else None, corpus.n_docs)

    def save(self, data_dir: Path) -> None:
        """What these parts give over an index's documents, into its data folder (the memory is copied apart)."""
        np.save(data_dir / MEMORY_LINKS, np.stack(self.links))
        if self.expanded is not None:
            self.expanded.save(data_dir / LEXICAL_EXPANDED)
        if self.doc_vectors is not None:
            np.save(data_dir / DOC_EMBEDDING, self.doc_vectors)

    @classmethod
    def load(cls, path: Callable[[str], Path], n_docs: int, width: int) -> LearnedParts:
        """The parts a build saved into an index's data folder (`path` of a name there), checked: links inside the
        corpus and the memory, vectors of the passage vectors' `width` (queries meet them in the same space)."""
        memory = PropositionMemory.load(path(MEMORY))
        links = load_array(path(MEMORY_LINKS), 2, "i", rows=2)
        if len(links[0]) and (int(links[1].max()) >= n_docs or int(links[0].max()) >= len(memory.entries)
                              or int(links.min()) < 0):
            raise IndexDirError(f"{path(MEMORY_LINKS)}: links point outside the corpus; {REBUILD}")
        vectors = load_array(path(DOC_EMBEDDING), 2, "f", rows=n_docs) if path(DOC_EMBEDDING).is_file() else None
        for name, array in ((f"{MEMORY}/{VECTORS}", memory.vectors), (DOC_EMBEDDING, vectors)):
            if array is not None and len(array) and (array.ndim != 2 or array.shape[1] != width):
                raise IndexDirError(f"{path(name)}: vectors of shape {array.shape}, not of width {width} as the "
                                    f"passage vectors; {REBUILD}")
        return cls.of(memory, (links[0], links[1]), vectors, LexicalIndex.load(path(LEXICAL_EXPANDED)), n_docs)

    @cached_property
    def _doc_index(self) -> DenseIndex | None:
        """The learned document vectors, scored as passages are (exact_inner, the float64 copy kept)."""
        return None if self.doc_vectors is None else DenseIndex(self.doc_vectors)

    @property
    def names(self) -> list[str]:
        """The signals these parts give."""
        absent = {"doc_embedding": self.doc_vectors is None, EXPANDED: self.expanded is None}
        return [n for n in LEARNED_SIGNALS if not absent.get(n, False)]

    def signals(self, texts: Sequence[str], stances: Sequence[str], vectors: np.ndarray | None,
                names: Sequence[str], dense_maxp: Callable[[np.ndarray], np.ndarray]) -> dict[str, np.ndarray]:
        """The signals in `names` these parts give a batch: from its texts (the expanded BM25) and the fine-tuned
        encoder's `vectors` of them (None: the batch asks for no encoder signal). `dense_maxp` scores query vectors
        against the index's base passage vectors, which the fine-tuned encoder is trained to search."""
        out: dict[str, np.ndarray] = {}
        if EXPANDED in names and self.expanded is not None:
            out[EXPANDED] = self.expanded.score_all(list(texts))
        if vectors is None:
            return out
        if "ft_dense" in names:
            out["ft_dense"] = dense_maxp(vectors)
        doc_index = self._doc_index
        if "doc_embedding" in names and doc_index is not None:
            out["doc_embedding"] = doc_index.score_all(vectors)
        if any(name in MEMORY_SIGNALS for name in names):
            found = memory_signals(vectors, stances, self.memory, self.links, self.n_docs)
            out.update({k: v for k, v in found.items() if k in names})
        return out
