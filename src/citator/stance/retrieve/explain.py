"""What an index can say of a document it ranked for a query, beyond its score: each signal's score there, the
passage that scored best, and the training propositions that cite the document, nearest the query first.

One index explains its hits with these functions, and so does each shard of a sharded index for the hits it holds,
so a brief reads the same numbers either way. A signal's rank over a sharded corpus is one plus the documents that
score above the hit in every shard (`count_above` per shard, added up).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from citator.data.records import Document, ScoredDoc
from citator.engines.dense import DenseIndex, exact_inner
from citator.engines.lexical import LexicalIndex
from citator.stance.retrieve.layout import Manifest
from citator.stance.retrieve.learned import LearnedParts
from citator.stance.retrieve.memory import MemoryEntry


class Explaining(Protocol):
    """What explaining a hit reads of an index (a StanceSearcher, or a shard's): its passages' BM25 and vectors,
    each document's first passage, its manifest and the trained model's parts."""

    lexical_passage: LexicalIndex
    dense: DenseIndex
    passage_starts: np.ndarray
    manifest: Manifest
    learned: LearnedParts | None

# Training propositions shown per document as the reasons it ranked.
REASONS = 3


@dataclass(frozen=True)
class QueryView:
    """One query as a search saw it: its text, its signals' scores over the index's documents, the fine-tuned
    query vector (with trained parts) and the base encoder's vector (where the dense signal used it)."""

    text: str
    signals: Mapping[str, np.ndarray]
    ft_vector: np.ndarray | None
    base_vector: np.ndarray | None


@dataclass(frozen=True)
class Explanation:
    """A document at `position` of the index: its score under each signal, its best passage (number, the signal
    that chose it and its score there) and the nearest training propositions that cite it with their similarity."""

    position: int
    signals: Mapping[str, float]
    passage: int
    passage_signal: str
    passage_score: float
    reasons: tuple[tuple[MemoryEntry, float], ...] | None


@dataclass(frozen=True)
class Explained:
    """A hit as its index explains it: its place and score, its document, the explanation, and its rank under each
    signal over the whole corpus."""

    scored: ScoredDoc
    document: Document
    explanation: Explanation
    ranks: Mapping[str, int]


def explain(searcher: Explaining, view: QueryView, positions: Sequence[int]) -> list[Explanation]:
    """Each document at `positions` explained for the query `view`. The passage is chosen by the dense passage
    signal the ranking used (the fine-tuned encoder's where the index has one), else by BM25 over passages."""
    names = set(view.signals)
    if view.ft_vector is not None and "ft_dense" in names:
        name, vector = "ft_dense", view.ft_vector
    elif view.base_vector is not None and "dense" in names:
        name, vector = "dense", view.base_vector
    else:
        name, vector = "bm25_maxp", None
    bm25 = searcher.lexical_passage.score_all([view.text])[0] if vector is None else None
    trained = searcher.manifest.trained  # it then holds the memory and its links
    out = []
    for position in positions:
        first, last = passage_range(searcher, position)
        if bm25 is not None:
            scores = bm25[first:last]
        else:
            # As the search scored them (exact_inner), so the passage shown is the one whose score ranked the hit.
            scores = exact_inner(np.asarray(vector)[None, :], searcher.dense.vectors[first:last])[0]
        best = int(np.argmax(scores))
        out.append(Explanation(
            position, {n: float(m[position]) for n, m in sorted(view.signals.items())}, best, name,
            float(scores[best]), _reasons(searcher, position, view.ft_vector) if trained else None))
    return out


def passage_range(searcher: Explaining, position: int) -> tuple[int, int]:
    """The index's passages [first, last) of the document at `position`."""
    starts = searcher.passage_starts
    first = int(starts[position])
    last = int(starts[position + 1]) if position + 1 < len(starts) else searcher.manifest.n_passages
    return first, last


def count_above(signals: Mapping[str, np.ndarray], values: Mapping[str, Sequence[float]]) -> dict[str, list[int]]:
    """Per signal, how many of the index's documents score above each of `values` (a signal's rank is one more)."""
    return {name: [int((signals[name] > v).sum()) for v in vs] for name, vs in values.items() if name in signals}


def _reasons(searcher: Explaining, position: int, vector: np.ndarray | None
             ) -> tuple[tuple[MemoryEntry, float], ...]:
    """The training propositions nearest the query among those that cite the document (one per proposition and
    stance), nearest first."""
    learned = searcher.learned
    if vector is None or learned is None:
        return ()
    rows, cols = learned.links
    linked = rows[cols == position]
    if not len(linked):
        return ()
    sims = exact_inner(np.asarray(vector)[None, :], learned.memory.vectors[linked])[0]
    out: list[tuple[MemoryEntry, float]] = []
    seen: set[tuple[str, str]] = set()
    for i in np.argsort(-sims, kind="stable"):
        entry = learned.memory.entries[int(linked[i])]
        if (entry.proposition_id, entry.stance) in seen:
            continue
        seen.add((entry.proposition_id, entry.stance))
        out.append((entry, float(sims[i])))
        if len(out) == REASONS:
            break
    return tuple(out)
