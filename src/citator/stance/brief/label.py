"""A document's date or citation, from what the corpus has: its own fields first, else what its id encodes."""

from __future__ import annotations

import re

from citator.data.records import Document

# Corpus fields that name a document's citation or date, in the order a brief prefers them.
FIELDS = ("citation", "cite", "date", "decided", "year")
# Oyez ids: "1971.70-18" is the 1971 term, docket 70-18; "1789_1850.10us87" is 10 U.S. 87 (decided 1789-1850).
_OYEZ_TERM = re.compile(r"^(\d{4})\.(\S+)$")
_OYEZ_REPORTS = re.compile(r"^(\d{4})_(\d{4})\.(\d+)us(\d+)$")


def document_label(doc: Document) -> str:
    """E.g. "410 U.S. 113", "1971 term, docket 70-18"; the doc id when nothing better is known."""
    for name in FIELDS:
        value = doc.extra.get(name)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
            return str(value).strip()
    if m := _OYEZ_REPORTS.match(doc.doc_id):
        return f"{m.group(3)} U.S. {m.group(4)} ({m.group(1)}-{m.group(2)})"
    if m := _OYEZ_TERM.match(doc.doc_id):
        return f"{m.group(1)} term, docket {m.group(2)}"
    return doc.doc_id
