"""What kind of authority an exact citation names, so that a citation typed into the wrong kind of index is answered
with one sentence instead of a list of unrelated documents.

A text is an exact citation when a citation is all it holds: a statute section ("NRS 200.010", "42 U.S.C. § 1983",
"D.C. Code § 16-2301"; NRS and D.C. Code by citator's own parser, the rest by eyecite's laws) or a reporter
citation of a decision ("500 U.S. 565"). A citation inside a sentence is part of a proposition and is searched.
"""

from __future__ import annotations

import re

from citator.data.citations import MAX_CITATION_CHARS, parse_citation

# What may stand around an exact citation: a signal word or punctuation ("see 42 U.S.C. § 1983.").
_SIGNAL = re.compile(r"^\s*(?:see|cf\.?|under|per)\s+", re.I)
_AROUND = re.compile(r"^[\s,.;:()\[\]\"'“”]*(?:see|cf\.?|under|per)?[\s,.;:()\[\]\"'“”]*$", re.I)


def cited_kind(text: str) -> str | None:
    """"statute" or "case" when `text` is one exact citation of that kind, else None."""
    text = text.strip()
    if not text or len(text) > MAX_CITATION_CHARS:
        return None
    bare = _SIGNAL.sub("", text).rstrip(" .;,")
    if parse_citation(bare) is not None and re.search(r"[A-Za-z§]", bare):
        return "statute"
    from eyecite import get_citations
    from eyecite.models import FullCaseCitation, FullLawCitation

    found = [c for c in get_citations(text) if isinstance(c, (FullCaseCitation, FullLawCitation))]
    if len(found) != 1:
        return None
    # A case citation's full span takes in the case name before it and the year after it.
    start, end = found[0].full_span() if isinstance(found[0], FullCaseCitation) else found[0].span()
    if not _AROUND.match(text[:start] + " " + text[end:]):
        return None
    return "statute" if isinstance(found[0], FullLawCitation) else "case"


def wrong_kind(text: str, statutes: bool) -> str | None:
    """One sentence when `text` is an exact citation of the kind this index does not hold (`statutes`: it holds
    statute sections; else court decisions), else None."""
    kind = cited_kind(text)
    shown = " ".join(text.split())
    if kind == "statute" and not statutes:
        return (f"“{shown}” cites a statute, and this index holds court decisions, not statutes: search a statute "
                "index for it, or type the proposition of law you want authority for.")
    if kind == "case" and statutes:
        return (f"“{shown}” cites a court decision, and this index holds statute sections, not cases: search a "
                "case index for it, or type the question you want a section for.")
    return None
