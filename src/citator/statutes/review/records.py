"""The records of human review: what a reviewer sees, and the label they leave bound to its hashes."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

# 0 unrelated, 1 topical but not useful, 2 useful, 3 directly addresses the issue; "unknown" is never 0.
GRADES: tuple[int | str, ...] = (0, 1, 2, 3, "unknown")
GRADE_NAMES = {
    0: "unrelated",
    1: "topical but not useful",
    2: "useful (support, definition, exception, procedure)",
    3: "directly addresses the issue",
    "unknown": "cannot tell",
}

Grade = int | str


def parse_grade(value: Any) -> Grade | None:
    """Return 0-3 or "unknown" from JSON or form input, or None when it is neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value in (0, 1, 2, 3):
        return value
    if isinstance(value, str):
        v = value.strip()
        if v == "unknown":
            return "unknown"
        if v in ("0", "1", "2", "3"):
            return int(v)
    return None


HEX64 = re.compile(r"[0-9a-f]{64}")
TIMESTAMP_RULE = "an ISO-8601 timestamp with a timezone, e.g. 2024-05-01T12:00:00+00:00"


def parse_timestamp(value: Any, naive_is_utc: bool = False) -> datetime | None:
    """An ISO-8601 timestamp with a timezone, as an aware UTC datetime (so "Z", "+02:00" and "+00:00" compare by
    the instant they name, never as text); None for anything else, a naive time included (its instant is unknown)
    unless `naive_is_utc`: a store's own times, which earlier imports kept as given, were documented as UTC."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
        if parsed.utcoffset() is None:
            return parsed.replace(tzinfo=UTC) if naive_is_utc else None
        return parsed.astimezone(UTC)
    except (ValueError, OverflowError):  # OverflowError: year 1 or 9999 pushed past the calendar by its offset
        return None


def item_key(query_id: str, doc_id: str) -> str:
    """An opaque, stable key for a (query, candidate) pair: it says nothing about rank or load order."""
    return hashlib.sha256(f"{query_id}\x1f{doc_id}".encode()).hexdigest()[:20]


@dataclass(frozen=True)
class ReviewItem:
    """One (query, candidate) pair exactly as a reviewer sees it; it holds no rank, score or proposal."""

    query_id: str
    doc_id: str
    query: str
    split: str
    family: str
    kind: str
    heading: str
    section_text: str
    caption: str
    passage: str
    query_sha256: str
    section_sha256: str
    passage_sha256: str

    @property
    def key(self) -> str:
        return item_key(self.query_id, self.doc_id)

    @property
    def hashes(self) -> tuple[str, str, str]:
        return (self.query_sha256, self.section_sha256, self.passage_sha256)


@dataclass(frozen=True)
class Reviewer:
    """A person who grades; `has_token` is false for reviewers known only from an imported label file."""

    reviewer_id: int
    name: str
    has_token: bool


@dataclass(frozen=True)
class LabelRecord:
    """One reviewer's grades for one item, with the hashes of the texts they saw (one export line)."""

    query_id: str
    doc_id: str
    reviewer: str
    section_grade: Grade
    passage_grade: Grade
    note: str
    query_sha256: str
    section_sha256: str
    passage_sha256: str
    complete: bool
    labeled_at: str

    @property
    def hashes(self) -> tuple[str, str, str]:
        return (self.query_sha256, self.section_sha256, self.passage_sha256)

    def is_stale_for(self, item: ReviewItem) -> bool:
        """True when any text the label was given for has changed since (the label must not be reused)."""
        return self.hashes != item.hashes

    def to_json(self) -> dict[str, Any]:
        return {
            "query_id": self.query_id,
            "doc_id": self.doc_id,
            "reviewer": self.reviewer,
            "section_grade": self.section_grade,
            "passage_grade": self.passage_grade,
            "note": self.note,
            "query_sha256": self.query_sha256,
            "section_sha256": self.section_sha256,
            "passage_sha256": self.passage_sha256,
            "complete": self.complete,
            "labeled_at": self.labeled_at,
        }
