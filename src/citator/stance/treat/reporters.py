"""Reporter citations ("359 U.S. 41", "356 US 44") found by eyecite and resolved against the corpus's own.

Both sides go through eyecite, so a text's "497 US 547" and a record's "497 U.S. 547" meet as one key (volume,
reporter as eyecite corrects it, page). A record's citation comes from the mapping a caller gives or the
document's own `citation` key. Several records may share one citation (cases decided together under one
report): a citation resolves to all of them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # eyecite takes 1.4 s to load: only when citations are read, not when an index opens its table
    from eyecite.models import FullCaseCitation

Key = tuple[str, str, str]
_DIGIT = re.compile(r"\d")


@dataclass(frozen=True)
class CitationHit:
    """Characters [start, end) of a text holding a full reporter citation, as eyecite read it."""

    start: int
    end: int
    key: Key
    text: str
    year: int | None


def _key(citation: FullCaseCitation) -> Key | None:
    groups = citation.groups
    volume, page = groups.get("volume"), groups.get("page")
    if not volume or not page or not page.isdigit():
        return None  # "576 U.S. __": a slip opinion's blank page names no one report
    reporter = citation.corrected_reporter() if hasattr(citation, "corrected_reporter") else groups["reporter"]
    return (volume, str(reporter), page)


def citations_in(text: str) -> list[CitationHit]:
    """The full case citations of `text` with a volume, reporter and page, in text order."""
    if not _DIGIT.search(text):
        return []  # no volume or page: no full citation (and eyecite is the dearest step of a table)
    from eyecite import get_citations
    from eyecite.models import FullCaseCitation

    out = []
    for found in get_citations(text):
        if isinstance(found, FullCaseCitation):
            key = _key(found)
            if key is not None:
                start, end = found.span()
                year = getattr(found.metadata, "year", None)
                out.append(CitationHit(start, end, key, text[start:end],
                                       int(year) if year and str(year).isdigit() else None))
    return out


def citation_index(citations: Mapping[str, str]) -> dict[Key, tuple[str, ...]]:
    """doc_id -> citation string, turned round: each citation's key -> the doc_ids that carry it."""
    index: dict[Key, list[str]] = {}
    for doc_id, text in sorted(citations.items()):
        for hit in citations_in(text)[:1]:
            index.setdefault(hit.key, []).append(doc_id)
    return {k: tuple(v) for k, v in index.items()}
