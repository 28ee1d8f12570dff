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
    `part`: the part of the document it lies in (stance/read/parts.py: "holding", "facts", "question", "dissent",
    "concurrence", or "text" where the document marks no parts): a passage from a separate opinion says so.
    """

    passage: int
    start: int
    end: int
    text: str
    marks: tuple[Span, ...]
    signal: str
    score: float
    part: str = "text"

    @property
    def separate_opinion(self) -> str | None:
        """"dissent" or "concurrence" when the passage is from one: not what the court held."""
        return self.part if self.part in ("dissent", "concurrence") else None


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
    the later decisions that treat it, the reasons for its flag among them.
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
    flag: str | None = None
    cited_by: tuple[Citing, ...] = ()
    metadata: Mapping[str, Scalar] = field(default_factory=dict)
    citation: str | None = None

    @property
    def reasons(self) -> tuple[Citing, ...]:
        """The treatments that give the hit its flag (the overruling decision and its passage, for a red one)."""
        return tuple(c for c in self.cited_by if c.flag == self.flag) if self.flag else ()

    def to_json(self) -> dict[str, Any]:
        ev = self.evidence
        return {
            "rank": self.rank, "doc_id": self.doc_id, "title": self.title, "label": self.label, "score": self.score,
            "evidence": {"passage": ev.passage, "start": ev.start, "end": ev.end, "text": ev.text,
                         "marks": [[m.start, m.end] for m in ev.marks], "signal": ev.signal, "score": ev.score,
                         "part": ev.part},
            "signals": [{"name": s.name, "family": s.family, "score": s.score, "rank": s.rank} for s in self.signals],
            "memory": None if self.memory is None else [
                {"proposition_id": m.proposition_id, "text": m.text, "stance": m.stance, "similarity": m.similarity}
                for m in self.memory],
            "flag": self.flag, "cited_by": [c.to_json() for c in self.cited_by],
            "citation": self.citation, "metadata": dict(self.metadata),
        }


# The heading of a brief's one list when its index does not rank by stance: what the reader is told, not two
# columns titled supporting and refuting that hold the same ranking.
UNRANKED = "Relevant authority (stance not ranked: train artifacts to rank it)"
# The heading when a stance-ranked index ranked both stances of this proposition alike.
ALIKE = "Relevant authority (both stances ranked alike for this proposition)"
HEADINGS = {"supported": "Supporting authority", "refuted": "Refuting authority"}


@dataclass(frozen=True)
class Brief:
    """A proposition's supporting and refuting authority, side by side; `trained`: the index has a memory.

    Only an index whose ranking reads the stance (a trained one, or one with a stance contrast) gives two columns: then `supported` and `refuted`
    hold them and `relevant` is None. Otherwise (an untrained index ranks the same whatever stance is asked, and a
    trained one may rank both stances of a proposition alike) there is one list, `relevant`, with `heading` saying
    why, and `supported` and `refuted` are None: nothing was ranked by stance, so nothing is shown as if it were.
    """

    proposition: str
    supported: tuple[Hit, ...] | None
    refuted: tuple[Hit, ...] | None
    trained: bool
    relevant: tuple[Hit, ...] | None = None
    heading: str | None = None
    # The metadata filters the authority was narrowed by ("date>=1980-01-01"): an export says what it leaves out.
    filters: tuple[str, ...] = ()

    @classmethod
    def of(cls, proposition: str, supported: tuple[Hit, ...], refuted: tuple[Hit, ...], trained: bool,
           ranks_stance: bool, filters: tuple[str, ...] = ()) -> Brief:
        """The brief of two rankings: two columns where the index ranks by stance (`ranks_stance`: a trained model
        or a stance contrast reads the stance asked) and they differ, else one list."""
        if not ranks_stance:
            return cls(proposition, None, None, trained, supported, UNRANKED, filters)
        if [h.doc_id for h in supported] == [h.doc_id for h in refuted]:
            return cls(proposition, None, None, trained, supported, ALIKE, filters)
        return cls(proposition, supported, refuted, trained, filters=filters)

    @property
    def stance_ranked(self) -> bool:
        return self.relevant is None

    def columns(self) -> list[tuple[str, str, tuple[Hit, ...]]]:
        """What a renderer shows, in order: (key, heading, hits) per column ("supported", "refuted"; or "relevant")."""
        if self.relevant is not None:
            return [("relevant", self.heading or UNRANKED, self.relevant)]
        assert self.supported is not None and self.refuted is not None
        return [("supported", HEADINGS["supported"], self.supported), ("refuted", HEADINGS["refuted"], self.refuted)]

    def column(self, stance: str) -> tuple[Hit, ...]:
        """The hits of one side: "supported" or "refuted" (or "relevant", the one list of a brief not ranked by
        stance)."""
        from citator.errors import PropositionError

        for key, _, hits in self.columns():
            if key == stance:
                return hits
        if stance in HEADINGS:
            raise PropositionError(f"this brief has no {stance} column: {self.heading}")
        raise PropositionError(f'a brief has the columns "supported" and "refuted", or "relevant", not {stance!r:.40}')

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"proposition": self.proposition, "filters": list(self.filters),
                               "trained": self.trained, "stance_ranked": self.stance_ranked}
        for key, heading, hits in self.columns():
            out[key] = [h.to_json() for h in hits]
        if not self.stance_ranked:
            out.update(heading=self.heading, supported=None, refuted=None)
        return out
