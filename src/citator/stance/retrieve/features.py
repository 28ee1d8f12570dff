"""A batch's signal scores over one index's documents, and what ranking them makes of them: the interpolation's
candidates with the learned ranker's features, and the fused scores.

A searcher computes the table (`StanceSearcher.features`); its own search fuses it, and training reads the same
table for the ranker's features and to score a fusion it is choosing, so a ranker sees its features computed one
way in both, and training never drives the searcher's steps itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from citator.engines.fusion import interpolate, rrf, top_k
from citator.models.encoder import TokenStates
from citator.stance.retrieve.config import RetrievalConfig
from citator.stance.retrieve.late_interaction import TokenStore, reads_late_interaction
from citator.stance.retrieve.ranker import Ranker, candidate_features, late_scores, ranked_places


@dataclass(frozen=True)
class Candidates:
    """The interpolation's scores (n_queries, n_docs), its top candidates per query (n_queries, depth) and the
    ranker's features of them: names and x (n_queries, depth, n_features)."""

    base: np.ndarray
    idx: np.ndarray
    names: list[str]
    x: np.ndarray


@dataclass(frozen=True)
class FeatureTable:
    """Each signal's (n_queries, n_docs) scores for a batch, with what the ranker's features read besides: the
    queries' stances, the documents' years and citation counts (of the model whose parts scored the batch), and
    the batch's query token states with the index's document tokens where late interaction is scored. `allowed`:
    the documents a filter leaves in (None: all), set by `masked`."""

    signals: Mapping[str, np.ndarray]
    stances: Sequence[str]
    years: np.ndarray
    citations: Mapping[str, np.ndarray] | None
    tokens: TokenStates | None
    store: TokenStore | None
    allowed: np.ndarray | None = None

    def masked(self, allowed: np.ndarray) -> FeatureTable:
        """The table over the `allowed` documents alone: every other document scores -inf under every signal, so it
        neither bounds a signal's normalisation nor becomes a candidate while an allowed one is left."""
        signals = {name: np.where(allowed, m, -np.inf).astype(m.dtype) for name, m in self.signals.items()}
        return replace(self, signals=signals, allowed=allowed)

    def only(self, names: Sequence[str]) -> FeatureTable:
        """The table with the named signals alone."""
        return replace(self, signals={name: self.signals[name] for name in names})

    def candidates(self, weights: Mapping[str, float], depth: int, norm_depth: int = 100) -> Candidates:
        """The interpolation of `weights`, its top `depth` candidates per query, and the ranker's features for them.
        With query tokens and a document store, the first late_interaction.DEPTH candidates are also scored by late
        interaction (the others get NaN)."""
        base = interpolate(self.signals, weights, norm_depth)
        if self.allowed is not None:
            base = np.where(self.allowed, base, -np.inf)
        cand, _ = top_k(base, depth)
        late = late_scores(self.tokens, cand, self.store) if self.tokens is not None and self.store is not None \
            else None
        names, x = candidate_features(self.signals, self.stances, self.years, cand, norm_depth,
                                      citations=self.citations, late=late)
        return Candidates(base, cand, names, x)

    def fused(self, config: RetrievalConfig, ranker: Ranker | None = None) -> np.ndarray:
        """One score per document under `config`; with learned fusion, `ranker` reorders the interpolation's top
        candidates. Candidates rank by the ranker (scores in (1, 2)), above every non-candidate, which keeps its
        interpolated order below (scores at most -1, shifted per query: a query's scores do not depend on the rest of
        the batch)."""
        if config.fusion == "rrf":
            return rrf(self.signals, config.weights, config.rrf_k)
        if config.fusion != "learned" or ranker is None:
            return interpolate(self.signals, config.weights, config.norm_depth)
        table = self if reads_late_interaction(ranker.features) else replace(self, tokens=None)
        found = table.candidates(config.weights, ranker.candidates, config.norm_depth)
        logits = ranker.score(found.names, found.x)
        with np.errstate(invalid="ignore"):  # a query no document is allowed for: -inf - -inf, placed by no one
            out = found.base - found.base.max(axis=1, keepdims=True) - 1.0
        rows = np.arange(found.idx.shape[0])[:, None]
        out[rows, found.idx] = ranked_places(logits)
        return out
