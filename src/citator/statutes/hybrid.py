"""The hybrid retrieval arm: BM25 and MiniLM, over sections, their captions and their passages, fused by weighted
reciprocal rank (RRF, k=60).

1. Every section is scored by BM25 over heading + text (the keyword arm's scores) and by the cosine of the query
   with its caption vector (chapter name, subchapter, heading: see vectors.py).
2. Candidates: the `depth` best sections of each of those, plus the statute's own structure around the `seeds`
   best of the first fusion: their neighbours in the chapter and the sections their texts cite.
3. Each candidate's first `windows` passages (word windows led by chapter name and heading) are encoded once
   (cached) and the candidate scored by its best one (MaxP); this signal counts for candidates only.
4. The pool is the top of the fusion of all three signals; ties in corpus order.

It answers the same questions as KeywordIndex (`sections`, `analyzer`, `idf`, `search`), so pools, passages and
grading are the keyword arm's; only which 30 and their order differ. Passage extraction keeps the keyword analyzer,
so a section's passage for a query is the same text under either arm and human labels carry over.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from citator.statutes.crossrefs import cross_references, neighbours
from citator.statutes.keyword import Analyzer, Hit, KeywordIndex
from citator.statutes.vectors import SectionVectors, section_passages
from citator.data.statutes import StatuteSection
from citator.engines.fusion import ranks, rrf


@dataclass(frozen=True)
class HybridSettings:
    """What the arm fuses and how; every field is part of its version string."""

    weights: Mapping[str, float] = field(default_factory=lambda: {
        "bm25_section": 1.0, "dense_caption": 1.0, "dense_passage": 1.0})
    rrf_k: int = 60
    depth: int = 30
    seeds: int = 10
    reach: int = 1
    crossrefs: bool = True
    # Passage windows scored per candidate, from the start of the section: MiniLM costs about 4 s a window on a
    # shared two-core CPU, and a statute section's opening states its rule.
    windows: int = 1

    def version(self) -> str:
        w = "-".join(f"{k}{v:g}" for k, v in sorted(self.weights.items()))
        return (f"hybrid-rrf{self.rrf_k}-{w}-depth{self.depth}-seeds{self.seeds}-reach{self.reach}"
                f"-xref{int(self.crossrefs)}-win{self.windows}-minilm-v1")


DEFAULT = HybridSettings()
RETRIEVAL_VERSION = DEFAULT.version()
FULL_SIGNALS = ("bm25_section", "dense_caption")


class HybridIndex:
    """Hybrid search over `sections` with cached MiniLM vectors."""

    def __init__(self, sections: Sequence[StatuteSection], vectors: SectionVectors, encoder,  # type: ignore[no-untyped-def]
                 settings: HybridSettings = DEFAULT, keyword: KeywordIndex | None = None) -> None:
        self.sections = list(sections)
        self.settings = settings
        self.version = settings.version()
        self.keyword = keyword or KeywordIndex(self.sections)
        self.analyzer: Analyzer = self.keyword.analyzer
        self.vectors = vectors
        self.encoder = encoder
        self._xrefs = cross_references(self.sections) if settings.crossrefs else None

    def idf(self, term: str) -> float:
        return self.keyword.idf(term)

    def all_terms(self, query: str, k: int) -> tuple[list[int], bool]:
        """The secondary baseline is the keyword arm's, whichever arm makes the pool."""
        return self.keyword.all_terms(query, k)

    def _top(self, scores: np.ndarray, k: int) -> list[int]:
        return np.lexsort((np.arange(len(scores)), -scores))[:k].tolist()

    def candidates(self, full: Mapping[str, np.ndarray], first: np.ndarray) -> list[int]:
        """The sections whose passages are scored: each full signal's best, and the structure around the best fused."""
        s = self.settings
        picked: dict[int, None] = {}
        for name in FULL_SIGNALS:
            if s.weights.get(name, 0):
                picked.update(dict.fromkeys(self._top(full[name][0], s.depth)))
        for i in self._top(first, s.seeds):
            picked.update(dict.fromkeys(neighbours(self.sections, i, s.reach)))
            if self._xrefs is not None:
                picked.update(dict.fromkeys(self._xrefs[i]))
        return sorted(picked)

    def fused(self, query: str) -> np.ndarray:
        """The fused score of every section (sections outside the candidate set get no passage term)."""
        s = self.settings
        q = self.encoder.encode_queries([query], ["all"])[0]
        full = {"bm25_section": self.keyword.scores(query)[None, :],
                "dense_caption": (self.vectors.captions @ q).astype(np.float64)[None, :]}
        used = {k: v for k, v in s.weights.items() if k in full}
        first = rrf(full, used, k=s.rrf_k)[0].astype(np.float64)
        weight = s.weights.get("dense_passage", 0.0)
        if not weight:
            return first
        cands = self.candidates(full, first)
        texts = [section_passages(self.sections[i])[: s.windows] for i in cands]
        vectors = self.vectors.passages([t for group in texts for t in group])
        best = np.empty(len(cands))
        row = 0
        for n, group in enumerate(texts):
            best[n] = float((vectors[row:row + len(group)] @ q).max())
            row += len(group)
        # Rank among the candidates only; the others get nothing from this signal.
        passage_rank = ranks(best[None, :])[0]
        out = first.copy()
        out[cands] += weight / (s.rrf_k + passage_rank)
        return out

    def search(self, query: str, k: int) -> list[Hit]:
        """Top `k` sections by fused score, ties in corpus order."""
        scores = self.fused(query)
        order = self._top(scores, k)
        return [Hit(int(i), r + 1, float(scores[i])) for r, i in enumerate(order)]
