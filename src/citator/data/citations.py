"""Citation resolver: parse NRS and D.C. Code citation forms and look sections up directly (no model)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_NV_PREFIX = r"(?:N\.?\s*R\.?\s*S\.?|Nev(?:ada)?\.?\s*Rev(?:ised)?\.?\s*Stat(?:utes)?\.?)"
_DC_PREFIX = r"(?:D\.?\s*C\.?\s*(?:Official\s+)?Code(?:\s+Ann\.?)?)"
# NRS numbers are chapter.section ("432B.220", "0.025"); D.C. numbers are title-section
# ("42-3505.01", "16-1501") or, for the UCC title, title:article-section ("28:2-201").
_NV_NUM = r"\d+[A-Za-z]?\.\d+[A-Za-z]?"
_DC_NUM = r"\d+[A-Za-z]?(?::\d+[A-Za-z]?)?-\d+[A-Za-z]?(?:\.\d+[A-Za-z]?)*"
# Matched against the stripped text, so no two `\s*` stand side by side: a long run of spaces costs one pass, not
# one per way of splitting it between them (which took 8 s for 20,000 characters).
_CITATION = re.compile(
    rf"(?:(?P<nv>{_NV_PREFIX})|(?P<dc>{_DC_PREFIX}))?\s*(?:§+\s*)?"
    rf"(?P<num>{_DC_NUM}|{_NV_NUM})(?:\s*\.)?",
    re.IGNORECASE,
)
# The longest form ("Nevada Revised Statutes § 432B.220", "D.C. Official Code Ann. § 28:2-201") is under 50
# characters; anything much longer is a question, not a citation.
MAX_CITATION_CHARS = 120
# Starts only where a run of spaces starts, so a long run is scanned once, not once per position in it.
_VERSION = re.compile(r"(?<!\s)\s+\(version \d+\)$")


@dataclass(frozen=True)
class Citation:
    """A parsed citation: jurisdiction ("NV" or "DC") and the section number as printed in doc_ids."""

    jurisdiction: str
    number: str

    @property
    def doc_id(self) -> str:
        return f"NRS {self.number}" if self.jurisdiction == "NV" else f"D.C. Code § {self.number}"


@dataclass(frozen=True)
class Resolution:
    """The answer to a citation query: every matching doc_id (all printed versions) and a plain message."""

    query: str
    citation: Citation | None
    doc_ids: tuple[str, ...]
    message: str

    @property
    def found(self) -> bool:
        return bool(self.doc_ids)


def parse_citation(text: str) -> Citation | None:
    """Parse one citation (`NRS 432B.220`, `N.R.S. 1.210`, `D.C. Code § 42-3505.01`, `§ 22-3211`, ...) or None."""
    text = text.strip()
    if len(text) > MAX_CITATION_CHARS:
        return None
    m = _CITATION.fullmatch(text)
    if m is None:
        return None
    number = m.group("num").upper()
    shape = "DC" if "-" in number else "NV"
    named = "NV" if m.group("nv") else "DC" if m.group("dc") else None
    if named is not None and named != shape:
        return None
    return Citation(shape, number)


def base_doc_id(doc_id: str) -> str:
    """A doc_id without its " (version N)" suffix."""
    return _VERSION.sub("", doc_id)


class CitationResolver:
    """Direct lookup from citations to the corpus's doc_ids, keeping every printed version."""

    def __init__(self, doc_ids: Iterable[str]) -> None:
        self._versions: dict[str, list[str]] = {}
        for doc_id in doc_ids:
            self._versions.setdefault(base_doc_id(doc_id).upper(), []).append(doc_id)

    def resolve(self, text: str) -> Resolution:
        """Resolve a citation query; unknown or unparseable citations say so plainly."""
        citation = parse_citation(text)
        if citation is None:
            return Resolution(text, None, (), f"not a recognised NRS or D.C. Code citation: {text.strip()!r}")
        found = tuple(self._versions.get(citation.doc_id.upper(), ()))
        if not found:
            return Resolution(text, citation, (), f"{citation.doc_id} is not in this corpus")
        versions = "" if len(found) == 1 else f" ({len(found)} printed versions)"
        return Resolution(text, citation, found, f"{citation.doc_id} found{versions}")
