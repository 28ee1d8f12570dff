"""What a trained model adds to search over one corpus, and the signals it gives a batch of queries.

An index holds its model's parts, linked to its documents when it was built. Training makes the same parts from
a model fitted without a fold's queries, to compute the ranker's features for those queries as they will look
for unseen ones; both score through `LearnedParts.signals`, so a ranker sees its features computed one way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from citator.stance.retrieve.expansion import SIGNAL as EXPANDED
from citator.engines.dense import DenseIndex
from citator.engines.lexical import LexicalIndex
from citator.stance.retrieve.memory import PropositionMemory, citation_counts, memory_signals

MEMORY_SIGNALS = ("memory_max", "memory_same", "memory_vote", "memory_centroid")
# Signals of the fine-tuned query encoder (one encoding per query feeds them all).
ENCODER_SIGNALS = ("ft_dense", *MEMORY_SIGNALS, "doc_embedding")
# Every signal a model gives: its encoder's, and BM25 over the documents expanded by the propositions citing them.
LEARNED_SIGNALS = (*ENCODER_SIGNALS, EXPANDED)


def reads_encoder(names: Sequence[str]) -> bool:
    """Whether any of the signals `names` needs the fine-tuned encoder's query vectors."""
    return any(name in ENCODER_SIGNALS for name in names)


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
    def of(cls, memory: PropositionMemory, links: tuple[np.ndarray, np.ndarray], doc_vectors: np.ndarray | None,
           expanded: LexicalIndex | None, n_docs: int) -> LearnedParts:
        return cls(memory, links, citation_counts(memory, links, n_docs), doc_vectors, expanded, n_docs)

    @cached_property
    def _doc_index(self) -> DenseIndex:
        """The learned document vectors, scored as passages are (exact_inner, the float64 copy kept)."""
        return DenseIndex(self.doc_vectors)

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
        if "doc_embedding" in names and self.doc_vectors is not None:
            out["doc_embedding"] = self._doc_index.score_all(vectors)
        if any(name in MEMORY_SIGNALS for name in names):
            found = memory_signals(vectors, stances, self.memory, self.links, self.n_docs)
            out.update({k: v for k, v in found.items() if k in names})
        return out
