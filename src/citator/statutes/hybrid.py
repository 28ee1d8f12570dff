"""The hybrid retrieval arm: BM25 and MiniLM, over sections, their captions and their passages, fused by weighted
reciprocal rank (RRF, k=60).

1. Every section is scored by BM25 over heading + text (the keyword arm's scores) and by the cosine of the query
   with its caption vector (chapter name, subchapter, heading: see vectors.py).
2. Candidates: the `depth` best sections of each of those, plus the statute's own structure around the `seeds`
   best of the first fusion: their neighbours in the chapter, the sections their texts cite, the definitions of the
   terms their texts use and, when `cited_by` is set, the best sections whose texts cite them.
3. Each candidate's first `windows` passages (word windows led by chapter name and heading) are encoded once
   (cached) and the candidate scored by its best one (MaxP); this signal counts for candidates only.
4. Structure: each section a seed cites (or, with `cited_by`, that cites a seed) or whose defined term a seed uses
   earns 1 / (k + the seed's rank), a definition scaled by its term's specificity (crossrefs.definitions_used);
   summed over seeds. A controlling section's definitions and the procedures it points to rarely share the
   question's words or meaning, so neither BM25 nor MiniLM finds them; the strong hits that use them do. This
   signal too counts for the sections it reaches only.
5. The pool is the top of the fusion of all four signals; ties in corpus order.

It answers the same questions as KeywordIndex (`sections`, `analyzer`, `idf`, `search`), so pools, passages and
grading are the keyword arm's; only which 30 and their order differ. Passage extraction keeps the keyword analyzer,
so a section's passage for a query is the same text under either arm and human labels carry over.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from citator.statutes.crossrefs import cited_by, cross_references, definitions_used, neighbours
from citator.statutes.keyword import Analyzer, Hit, KeywordIndex
from citator.statutes.vectors import SectionVectors, section_passages
from citator.data.statutes import StatuteSection
from citator.engines.fusion import ranks, rrf
from citator.models.encoder import Encoder


@dataclass(frozen=True)
class HybridSettings:
    """What the arm fuses and how; every field is part of its version string."""

    # Structure reaches dozens of sections in a chapter whose sections cite each other densely, and RRF gives every
    # one of them nearly the bonus of the first: at full weight it crowds the pool (BENCHMARKS.md, the sweep).
    weights: Mapping[str, float] = field(default_factory=lambda: {
        "bm25_section": 1.0, "dense_caption": 1.0, "dense_passage": 1.0, "structure": 0.25})
    rrf_k: int = 60
    depth: int = 30
    seeds: int = 10
    reach: int = 1
    crossrefs: bool = True
    # How many of a seed's citing sections to reach, the best of the first fusion first (a general provision is cited
    # by hundreds, 296 in the D.C. Code, and each reached section costs a passage encoding). Off: measured at 5 it
    # lowered NRS dev coverage and raised D.C. fresh (BENCHMARKS.md, what each part adds).
    cited_by: int = 0
    definitions: bool = True
    # Passage windows scored per candidate, from the start of the section: MiniLM costs about 4 s a window on a
    # shared two-core CPU, and a statute section's opening states its rule.
    windows: int = 1

    def version(self) -> str:
        w = "-".join(f"{k}{v:g}" for k, v in sorted(self.weights.items()))
        return (f"hybrid-rrf{self.rrf_k}-{w}-depth{self.depth}-seeds{self.seeds}-reach{self.reach}"
                f"-xref{int(self.crossrefs)}-citedby{self.cited_by}-defs{int(self.definitions)}-win{self.windows}-minilm-v2")


DEFAULT = HybridSettings()
RETRIEVAL_VERSION = DEFAULT.version()
FULL_SIGNALS = ("bm25_section", "dense_caption")


class HybridIndex:
    """Hybrid search over `sections` with cached MiniLM vectors."""

    def __init__(self, sections: Sequence[StatuteSection], vectors: SectionVectors, encoder: Encoder,
                 settings: HybridSettings = DEFAULT, keyword: KeywordIndex | None = None) -> None:
        self.sections = list(sections)
        self.settings = settings
        self.version = settings.version()
        self.keyword = keyword or KeywordIndex(self.sections)
        self.analyzer: Analyzer = self.keyword.analyzer
        self.vectors = vectors
        self.encoder = encoder
        self._xrefs = cross_references(self.sections) if settings.crossrefs else None
        self._citers = cited_by(self._xrefs) if self._xrefs is not None and settings.cited_by else None
        self._definitions = definitions_used(self.sections) if settings.definitions else None

    def idf(self, term: str) -> float:
        return self.keyword.idf(term)

    def all_terms(self, query: str, k: int) -> tuple[list[int], bool]:
        """The secondary baseline is the keyword arm's, whichever arm makes the pool."""
        return self.keyword.all_terms(query, k)

    def _top(self, scores: np.ndarray, k: int) -> list[int]:
        return np.lexsort((np.arange(len(scores)), -scores))[:k].tolist()

    def structure(self, first: np.ndarray) -> dict[int, float]:
        """What the `seeds` best of the first fusion cite, are cited by and define, each scored by the ranks of the seeds
        reaching it."""
        s = self.settings
        out: dict[int, float] = {}
        for rank, i in enumerate(self._top(first, s.seeds), start=1):
            reached = dict.fromkeys(self._xrefs[i], 1.0) if self._xrefs is not None else {}
            if self._citers is not None:
                citing = sorted(self._citers[i], key=lambda j: (-first[j], j))[: s.cited_by]
                reached.update(dict.fromkeys(citing, 1.0))
            if self._definitions is not None:
                for j, specificity in self._definitions[i].items():
                    reached[j] = max(reached.get(j, 0.0), specificity)
            for j, strength in reached.items():
                out[j] = out.get(j, 0.0) + strength / (s.rrf_k + rank)
        return out

    def candidates(self, full: Mapping[str, np.ndarray], first: np.ndarray) -> list[int]:
        """The sections whose passages are scored: each full signal's best, and the structure around the best fused."""
        s = self.settings
        picked: dict[int, None] = {}
        for name in FULL_SIGNALS:
            if s.weights.get(name, 0):
                picked.update(dict.fromkeys(self._top(full[name][0], s.depth)))
        for i in self._top(first, s.seeds):
            picked.update(dict.fromkeys(neighbours(self.sections, i, s.reach)))
        picked.update(dict.fromkeys(self.structure(first)))
        return sorted(picked)

    def _add_ranked(self, out: np.ndarray, rows: Sequence[int], scores: np.ndarray, weight: float) -> None:
        """Add `weight` / (k + rank) to `rows` by their `scores`, ranked among those rows only."""
        if weight and len(rows):
            out[list(rows)] += weight / (self.settings.rrf_k + ranks(np.asarray(scores, dtype=np.float64)[None, :])[0])

    def fused(self, query: str) -> np.ndarray:
        """The fused score of every section (sections outside the candidate set get no passage term)."""
        s = self.settings
        q = self.encoder.encode_queries([query], ["all"])[0]
        full = {"bm25_section": self.keyword.scores(query)[None, :],
                "dense_caption": (self.vectors.captions @ q).astype(np.float64)[None, :]}
        used = {k: v for k, v in s.weights.items() if k in full}
        first = rrf(full, used, k=s.rrf_k)[0].astype(np.float64)
        out = first.copy()
        structure = self.structure(first)
        reached = sorted(structure)  # ties in corpus order
        self._add_ranked(out, reached, np.array([structure[i] for i in reached]), s.weights.get("structure", 0.0))
        weight = s.weights.get("dense_passage", 0.0)
        if not weight:
            return out
        cands = self.candidates(full, first)
        texts = [section_passages(self.sections[i])[: s.windows] for i in cands]
        vectors = self.vectors.passages([t for group in texts for t in group])
        best = np.empty(len(cands))
        row = 0
        for n, group in enumerate(texts):
            best[n] = float((vectors[row:row + len(group)] @ q).max())
            row += len(group)
        # Ranked among the candidates only; the others get nothing from this signal.
        self._add_ranked(out, cands, best, weight)
        return out

    def search(self, query: str, k: int) -> list[Hit]:
        """Top `k` sections by fused score, ties in corpus order."""
        scores = self.fused(query)
        order = self._top(scores, k)
        return [Hit(int(i), r + 1, float(scores[i])) for r, i in enumerate(order)]
