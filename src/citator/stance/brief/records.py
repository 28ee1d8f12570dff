"""What a search or a brief returns: frozen records that the CLI, the page and JSON render alike."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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


# What a flag says of a hit, in words (docs/treatments.md): red, no longer good law; yellow, limited or questioned.
FLAG_WORDS = {"red": "no longer good law", "yellow": "limited or questioned"}
# A treatment seen from the cited side: "Austin ... overruled by Citizens United".
TREATED = {"overrules": "overruled", "abrogates": "abrogated", "limits": "limited", "questions": "questioned",
           "follows": "followed", "distinguishes": "distinguished"}


@dataclass(frozen=True)
class Citing:
    """A later decision of the index that treats the hit ("cited by"): how, and the passage that says so (the
    reason for a flag). `flag`: what this treatment alone flags ("red", "yellow" or None)."""

    doc_id: str
    title: str
    treatment: str
    passage: str
    flag: str | None

    @property
    def treated(self) -> str:
        """The treatment as the cited case undergoes it ("overruled")."""
        return TREATED.get(self.treatment, self.treatment)

    def to_json(self) -> dict[str, Any]:
        return {"doc_id": self.doc_id, "title": self.title, "treatment": self.treatment, "flag": self.flag,
                "passage": self.passage}


@dataclass(frozen=True)
class Hit:
    """One ranked document: `score` is the fused score search ranks by; `memory` is None without trained memory.
    `flag`: the index's treatment flag of the document (red, yellow or None), shown and never ranked by; `cited_by`:
    the later decisions that treat it, the reasons for its flag among them."""

    rank: int
    doc_id: str
    title: str
    label: str
    score: float
    evidence: Evidence
    signals: tuple[SignalScore, ...]
    memory: tuple[MemoryReason, ...] | None
    flag: str | None = None
    cited_by: tuple[Citing, ...] = ()

    @property
    def reasons(self) -> tuple[Citing, ...]:
        """The treatments that give the hit its flag (the overruling decision and its passage, for a red one)."""
        return tuple(c for c in self.cited_by if c.flag == self.flag) if self.flag else ()

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
            "flag": self.flag, "cited_by": [c.to_json() for c in self.cited_by],
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
