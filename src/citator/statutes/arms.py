"""The declared retrieval arms of the statute benchmark: `keyword` (primary, BM25) and `hybrid` (see hybrid.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from citator.statutes import hybrid, keyword
from citator.data.statutes import StatuteSection
from citator.errors import ConfigError

RETRIEVALS = ("keyword", "hybrid")


def retrieval_version(arm: str) -> str:
    if arm == "keyword":
        return keyword.RETRIEVAL_VERSION
    if arm == "hybrid":
        return hybrid.RETRIEVAL_VERSION
    raise ConfigError(f"retrieval must be one of {', '.join(RETRIEVALS)}, got {arm!r}")


def describe(arm: str) -> dict[str, Any] | None:
    """What a hybrid run records beyond its version (the encoder's fingerprint); None for the keyword arm."""
    retrieval_version(arm)
    if arm == "keyword":
        return None
    from citator.statutes.vectors import PASSAGE_SPEC, VECTORS_VERSION
    from citator.models.fingerprint import model_fingerprint
    from citator.models.load import default_encoder_path

    return {"arm": arm, "retrieval_version": hybrid.RETRIEVAL_VERSION, "vectors_version": VECTORS_VERSION,
            "encoder": default_encoder_path().name, "encoder_sha256": model_fingerprint(),
            "passage_words": PASSAGE_SPEC.words, "passage_overlap": PASSAGE_SPEC.overlap}


def build_index(arm: str, sections: Sequence[StatuteSection], index_dir: Path) -> keyword.KeywordIndex | hybrid.HybridIndex:
    """The arm's index over `sections`; the hybrid arm reads (or builds and caches) its vectors in `index_dir`."""
    retrieval_version(arm)
    if arm == "keyword":
        return keyword.KeywordIndex(sections)
    from citator.statutes.vectors import SectionVectors
    from citator.models.fingerprint import model_fingerprint
    from citator.models.load import load_encoder

    encoder = load_encoder(device="cpu")
    return hybrid.HybridIndex(sections, SectionVectors(sections, encoder, model_fingerprint(), index_dir), encoder)
