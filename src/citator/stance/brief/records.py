"""What a search or a brief returns: frozen records that the CLI, the page and JSON render alike."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from citator.data.metadata import Scalar

from citator.stance.brief.evidence import Span

# The families a signal belongs to, as a brief names the reasons a document ranked.
SIGNAL_FAMILIES = {
    "bm25": "lexical", "bm25_maxp": "lexical", "bm25_expanded": "lexical",
    "dense": "dense", "ft_dense": "dense", "doc_embedding": "dense",
    "memory_max": "memory", "memory_same": "memory", "memory_vote": "memory", "memory_centroid": "memory",
}


@dataclass(frozen=True)
class SignalScore:
    """One signal's score of a document for the query, and the document's rank among all under that signal alone."""

    name: str
    score: float
    rank: int

    @property
    def family(self) -> str:
        return SIGNAL_FAMILIES.get(self.name, "other")


@dataclass(frozen=True)
class Evidence:
    """The passage that scored: its place in the document's text, and the query terms it matched.

    `start`/`end`: characters of the document's text; `text` is that slice; `marks` are spans of `text`.
    `signal`: the passage-level signal that chose it (its best passage under that signal), with its `score`.
    """

    passage: int
    start: int
    end: int
    text: str
    marks: tuple[Span, ...]
    signal: str
    score: float


@dataclass(frozen=True)
class MemoryReason:
    """A training proposition that cites the document, with the stance it cites it for, and how near it is."""

    proposition_id: str
    text: str
    stance: str
    similarity: float


@dataclass(frozen=True)
class Hit:
    """One ranked document: `score` is the fused score search ranks by; `memory` is None without trained memory.
    `metadata`: the document's (docs/metadata.md), {} without; `citation`: its short citation ("California v.
    Acevedo, 500 U.S. 565 (1991)"), None where the metadata has no reporter citation."""

    rank: int
    doc_id: str
    title: str
    label: str
    score: float
    evidence: Evidence
    signals: tuple[SignalScore, ...]
    memory: tuple[MemoryReason, ...] | None
    metadata: Mapping[str, Scalar] = field(default_factory=dict)
    citation: str | None = None

    def to_json(self) -> dict[str, Any]:
        ev = self.evidence
        return {
            "rank": self.rank, "doc_id": self.doc_id, "title": self.title, "label": self.label, "score": self.score,
            "evidence": {"passage": ev.passage, "start": ev.start, "end": ev.end, "text": ev.text,
                         "marks": [[m.start, m.end] for m in ev.marks], "signal": ev.signal, "score": ev.score},
            "signals": [{"name": s.name, "family": s.family, "score": s.score, "rank": s.rank} for s in self.signals],
            "memory": None if self.memory is None else [
                {"proposition_id": m.proposition_id, "text": m.text, "stance": m.stance, "similarity": m.similarity}
                for m in self.memory],
            "citation": self.citation, "metadata": dict(self.metadata),
        }


@dataclass(frozen=True)
class Brief:
    """A proposition's supporting and refuting authority, side by side; `trained`: the index has a memory."""

    proposition: str
    supported: tuple[Hit, ...]
    refuted: tuple[Hit, ...]
    trained: bool

    def column(self, stance: str) -> tuple[Hit, ...]:
        """The hits of one side: "supported" or "refuted"."""
        if stance not in ("supported", "refuted"):
            from citator.errors import PropositionError

            raise PropositionError(f'a brief has the columns "supported" and "refuted", not {stance!r:.40}')
        return self.supported if stance == "supported" else self.refuted

    def to_json(self) -> dict[str, Any]:
        return {"proposition": self.proposition, "trained": self.trained,
                "supported": [h.to_json() for h in self.supported], "refuted": [h.to_json() for h in self.refuted]}
