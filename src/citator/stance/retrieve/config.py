"""Retrieval parameters: stored in the index manifest, tuned on `dev` only."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from citator.data.numbers import finite_number
from citator.errors import ConfigError


# bm25: whole document; bm25_maxp / dense: best passage; ft_dense: best passage under the fine-tuned encoder;
# memory_*: nearest labeled training propositions; doc_embedding: learned document vectors; bm25_expanded: whole
# document followed by the training propositions that cite it (all but the first three need trained artifacts).
SIGNALS = ("bm25", "bm25_maxp", "dense", "ft_dense", "memory_max", "memory_same", "memory_vote", "memory_centroid",
           "doc_embedding", "bm25_expanded")
BASE_SIGNALS = ("bm25", "bm25_maxp", "dense")


@dataclass(frozen=True)
class RetrievalConfig:
    k1: float = 0.9
    b: float = 0.4
    passage_words: int = 200
    passage_overlap: int = 50
    fusion: str = "interpolate"  # or "rrf", or "learned" (the trained ranker over the interpolation's top candidates)
    # Signal name -> weight. Signals: bm25 (whole document), bm25_maxp (best passage), dense (best passage).
    weights: dict[str, float] = field(default_factory=lambda: {"bm25": 0.3, "bm25_maxp": 0.2, "dense": 0.7})
    norm_depth: int = 100
    rrf_k: int = 60
    # Weight of the stance contrast between the two answers of a text asked with both stances in one batch
    # (stance/retrieve/contrast.py); 0 turns it off. Trained artifacts carry the weight chosen on dev.
    stance_contrast: float = 0.0
    # Opt-in, CaseFacts-specific prior, off by default and never chosen by `citator train`: places of a both-stance
    # text's answers reserved for (refuted) or kept free of (supported) the documents the memory's propositions cite
    # as refuting (stance/retrieve/contrast.py). It reads which documents a dataset cites, not what the proposition says:
    # on fresh propositions it fills the refuted answer with famous overruling decisions whatever the question. Set
    # only by a --config file; 0 turns it off.
    refuter_slots: int = 0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, obj: dict[str, Any], source: str = "retrieval config") -> RetrievalConfig:
        """A checked config from its JSON form; `source` (e.g. the file's name) begins every error message."""
        if not isinstance(obj, dict):
            raise ConfigError(f"{source}: expected a JSON object, got {type(obj).__name__}")
        try:
            config = cls(**obj)
            config.check()
        except TypeError as exc:
            raise ConfigError(f"{source}: {exc}") from None
        except ConfigError as exc:
            raise ConfigError(f"{source}: {exc}") from None
        return config

    def check(self) -> None:
        for name in ("k1", "b"):
            value = getattr(self, name)
            if not (finite_number(value) and value >= 0):
                raise ConfigError(f"{name} must be a finite number >= 0, got {value!r}")
        for name in ("passage_words", "passage_overlap", "norm_depth", "rrf_k"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < (0 if name == "passage_overlap" else 1):
                raise ConfigError(f"{name} must be a positive integer, got {value!r}")
        if not isinstance(self.weights, dict) or not all(finite_number(w) for w in self.weights.values()):
            raise ConfigError(f"weights must map signal names to finite numbers, got {self.weights!r}")
        if not isinstance(self.fusion, str) or self.fusion not in ("interpolate", "rrf", "learned"):
            raise ConfigError(f'fusion must be "interpolate", "rrf" or "learned", got {self.fusion!r}')
        unknown = set(self.weights) - set(SIGNALS)
        if unknown:
            raise ConfigError(f"unknown signals in weights: {sorted(unknown)}")
        value = self.stance_contrast
        if not (finite_number(value) and value >= 0):
            raise ConfigError(f"stance_contrast must be a finite number >= 0, got {self.stance_contrast!r}")
        slots = self.refuter_slots
        if isinstance(slots, bool) or not isinstance(slots, int) or slots < 0:
            raise ConfigError(f"refuter_slots must be an integer >= 0, got {self.refuter_slots!r}")
        if self.passage_overlap >= self.passage_words:
            raise ConfigError("passage_overlap must be smaller than passage_words")
