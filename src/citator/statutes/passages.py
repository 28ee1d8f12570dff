"""Passage extraction: the caption and best-matching window of a section that a grader sees."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from citator.data.hashing import sha256_captioned
from citator.data.statutes import StatuteSection

PASSAGE_VERSION = "window-1200B-idf-v1"
# Byte-level BPE never yields more tokens than bytes, so a byte bound is a conservative token bound.
MAX_PASSAGE_BYTES = 1200


@dataclass(frozen=True)
class Passage:
    """What the grader sees of one section: caption (citation and heading) and an excerpt, hashed together."""

    caption: str
    text: str

    @property
    def sha256(self) -> str:
        # The caption is part of what a grade was given for: a heading that turns into "Repealed." changes it.
        return sha256_captioned(self.caption, self.text)


def caption(section: StatuteSection) -> str:
    """The citation and heading, as a reviewer or a grader reads it above the passage."""
    return f"{section.doc_id} — {section.heading}" if section.heading.strip() else section.doc_id


def _nbytes(text: str) -> int:
    return len(text.encode("utf-8"))


def _units(text: str, limit: int) -> list[str]:
    """Lines of the section, any line over `limit` bytes cut at word boundaries."""
    units: list[str] = []
    for line in text.split("\n"):
        line = line.strip()
        if not line:
            continue
        current = ""
        for word in line.split(" "):
            while _nbytes(word) > limit:  # a single huge token: hard cut on characters
                cut = len(word.encode("utf-8")[:limit].decode("utf-8", "ignore"))
                if current:
                    units.append(current)
                    current = ""
                units.append(word[:cut])
                word = word[cut:]
            candidate = f"{current} {word}" if current else word
            if _nbytes(candidate) > limit:
                units.append(current)
                current = word
            else:
                current = candidate
        if current:
            units.append(current)
    return units


def best_window(
    text: str, query_terms: frozenset[str], analyze: Callable[[str], Sequence[str]],
    idf: Callable[[str], float], limit: int = MAX_PASSAGE_BYTES,
) -> str:
    """The run of consecutive lines within `limit` bytes that covers the most query-term idf; earliest on ties."""
    units = _units(text, limit)
    if not units:
        return ""
    unit_terms = [frozenset(analyze(u)) & query_terms for u in units]
    best, best_score = "", -1.0
    for start in range(len(units)):
        size, end = 0, start
        terms: set[str] = set()
        while end < len(units) and size + _nbytes(units[end]) + (1 if end > start else 0) <= limit:
            size += _nbytes(units[end]) + (1 if end > start else 0)
            terms |= unit_terms[end]
            end += 1
        # fsum over sorted terms: set order varies between processes, the score must not.
        score = math.fsum(idf(t) for t in sorted(terms))
        if score > best_score:
            best, best_score = "\n".join(units[start:end]), score
    return best


def extract_passage(
    section: StatuteSection, query_terms: frozenset[str], analyze: Callable[[str], Sequence[str]],
    idf: Callable[[str], float], limit: int = MAX_PASSAGE_BYTES,
) -> Passage:
    """Caption plus the best window of the section body (the heading, else the citation, when the body is empty)."""
    window = best_window(section.text, query_terms, analyze, idf, limit)
    # A passage is never empty: reviewers grade it, and an empty text would hash like any other empty text.
    return Passage(caption(section), window or section.heading.strip() or section.doc_id)
