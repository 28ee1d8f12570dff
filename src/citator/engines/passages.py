"""Split long documents into overlapping word windows (passages) so that a strong paragraph is not diluted."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PassageSpec:
    words: int = 200
    overlap: int = 50


def split_passages(title: str, text: str, spec: PassageSpec) -> list[str]:
    """Windows of `spec.words` words stepping by words - overlap; each carries the title for context."""
    words = text.split()
    step = max(1, spec.words - spec.overlap)
    prefix = f"{title}. " if title else ""
    if len(words) <= spec.words:
        return [prefix + " ".join(words)]
    out = []
    for start in range(0, len(words), step):
        out.append(prefix + " ".join(words[start : start + spec.words]))
        if start + spec.words >= len(words):
            break
    return out


def passage_layout(titles: Sequence[str], texts: Sequence[str], spec: PassageSpec) -> tuple[list[str], np.ndarray]:
    """All passages in document order, and `starts[i]` = index of document i's first passage."""
    passages: list[str] = []
    starts = np.zeros(len(texts), dtype=np.int64)
    for i, (title, text) in enumerate(zip(titles, texts)):
        starts[i] = len(passages)
        passages.extend(split_passages(title, text, spec))
    return passages, starts


def document_of_passage(starts: np.ndarray, n_passages: int) -> np.ndarray:
    """The document index of every passage, from the documents' first-passage indices."""
    return np.repeat(np.arange(len(starts)), np.diff(np.append(starts, n_passages)))


def max_per_document(passage_scores: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """MaxP: each document's best passage score (passages of a document are contiguous)."""
    return np.maximum.reduceat(passage_scores, starts, axis=-1)
