"""Statute structure for retrieval: citations inside section texts and each section's neighbours in its chapter."""

from __future__ import annotations

import re
from collections.abc import Sequence

from citator.data.citations import base_doc_id
from citator.data.statutes import StatuteSection

# "NRS 432B.220", "NRS 1.4653"; "§ 42-3205", "§§ 16-904 and 16-905" (the first number only), "section 22-3211".
_NRS = re.compile(r"\bNRS\s+(\d+[A-Z]?\.\d+[A-Za-z]?)")
_DC = re.compile(r"(?:§+|\bsection)\s*(\d+[A-Za-z]?(?::\d+[A-Za-z]?)?-\d+[A-Za-z]?(?:\.\d+[A-Za-z]?)*)")


def cited_doc_ids(text: str) -> list[str]:
    """The citations a section text makes, as doc_ids ("NRS 1.4653", "D.C. Code § 42-3205"), first mention order."""
    found = [f"NRS {m.upper()}" for m in _NRS.findall(text)]
    found += [f"D.C. Code § {m.rstrip('.')}" for m in _DC.findall(text)]
    return list(dict.fromkeys(found))


def cross_references(sections: Sequence[StatuteSection]) -> list[tuple[int, ...]]:
    """Per section, the corpus indexes of the other sections its text cites (every printed version of each)."""
    by_id: dict[str, list[int]] = {}
    for i, s in enumerate(sections):
        by_id.setdefault(base_doc_id(s.doc_id).upper(), []).append(i)
    out = []
    for i, s in enumerate(sections):
        targets = [j for d in cited_doc_ids(s.text) for j in by_id.get(d.upper(), ()) if j != i]
        out.append(tuple(dict.fromkeys(targets)))
    return out


def neighbours(sections: Sequence[StatuteSection], index: int, reach: int = 1) -> list[int]:
    """The sections within `reach` places of `index` in corpus order that share its chapter (nearest first)."""
    chapter = sections[index].chapter
    out = []
    for step in range(1, reach + 1):
        for j in (index - step, index + step):
            if 0 <= j < len(sections) and sections[j].chapter == chapter:
                out.append(j)
    return out
