"""Statute structure for retrieval: the citations inside section texts, the defined terms they use and each section's
neighbours in its chapter."""

from __future__ import annotations

import re
from collections.abc import Sequence

from citator.data.citations import base_doc_id
from citator.data.statutes import StatuteSection

# "NRS 432B.220", "NRS 1.4653"; "§ 42-3205", "section 22-3211(b)"; and lists after one marker: "NRS 432B.220, 432B.230
# or 432B.340", "§§ 1-1001.16(o), and 1-1001.17(k)". A range ("NRS 1.425 to 1.4695, inclusive", "§§ 1-609.01 through
# 1-609.03") names a stretch of a chapter: its first section counts (where a stretch states its scope and
# definitions), its last does not.
_NRS_NUMBER = r"\d+[A-Z]?\.\d+[A-Za-z]?"
_DC_NUMBER = r"\d+[A-Za-z]?(?::\d+[A-Za-z]?)?-\d+[A-Za-z]?(?:\.\d+[A-Za-z]?)*(?:\([0-9A-Za-z]{1,4}\))*"
_SEPARATOR = r"(?:\s*,\s*(?:(?:and|or)\s+)?|\s+(?:and|or|to|through)\s+)"
_NRS = re.compile(rf"\bNRS\s+({_NRS_NUMBER}(?:{_SEPARATOR}{_NRS_NUMBER})*)")
_DC = re.compile(rf"(?:§+|\bsections?)\s*({_DC_NUMBER}(?:{_SEPARATOR}{_DC_NUMBER})*)")


def _listed(group: str, number: str) -> list[str]:
    """The numbers of one citation list, in order, without the last section of a range."""
    items = [(m.group(1) or "", m.group(2)) for m in re.finditer(rf"({_SEPARATOR})?({number})", group)]
    return [num for sep, num in items if not re.search(r"\b(?:to|through)\b", sep)]


def cited_doc_ids(text: str) -> list[str]:
    """The citations a section text makes, as doc_ids ("NRS 1.4653", "D.C. Code § 42-3205"), first mention order."""
    found = [f"NRS {n.upper()}" for g in _NRS.findall(text) for n in _listed(g, _NRS_NUMBER)]
    found += [f"D.C. Code § {re.sub(r'[(].*', '', n)}" for g in _DC.findall(text) for n in _listed(g, _DC_NUMBER)]
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


def cited_by(references: Sequence[tuple[int, ...]]) -> list[tuple[int, ...]]:
    """Per section, the sections whose texts cite it (cross_references read backwards), in corpus order."""
    out: list[list[int]] = [[] for _ in references]
    for i, targets in enumerate(references):
        for j in targets:
            out[j].append(i)
    return [tuple(c) for c in out]


def neighbours(sections: Sequence[StatuteSection], index: int, reach: int = 1) -> list[int]:
    """The sections within `reach` places of `index` in corpus order that share its chapter (nearest first)."""
    chapter = sections[index].chapter
    out = []
    for step in range(1, reach + 1):
        for j in (index - step, index + step):
            if 0 <= j < len(sections) and sections[j].chapter == chapter:
                out.append(j)
    return out


# A definition section says so in its heading ("“Central Registry” defined.", "Definition of when person has “reasonable
# cause to believe”", "Purpose; definitions.") and names its terms in quotes there, or, when the heading quotes none,
# as `“term” means` in its text.
_DEFINITION_HEADING = re.compile(r"\bdefin(?:ed|itions?)\b", re.IGNORECASE)
_QUOTED = re.compile(r"[“\"]([^“”\"]{2,80})[”\"]")
_MEANS = re.compile(r"[“\"]([^“”\"]{2,80})[”\"],?\s+(?:means|includes|has the meaning)")


def _normal(term: str) -> str:
    """A term as it is compared: one space between words, no closing punctuation (American style puts it inside the
    quotes: “as soon as reasonably practicable.”), an acronym ("PILOT", "IDEA") as written, any other in lower case."""
    t = " ".join(term.split()).rstrip(".,;:").strip()
    return t if t.isupper() else t.lower()


def defined_terms(section: StatuteSection) -> list[str]:
    """The terms `section` defines (see _normal), or [] when it is not a definition section."""
    if not _DEFINITION_HEADING.search(section.heading):
        return []
    terms = (_normal(t) for t in _QUOTED.findall(section.heading) or _MEANS.findall(section.text))
    return list(dict.fromkeys(t for t in terms if t))


def _uses(terms: Sequence[str], flags: int) -> re.Pattern[str]:
    """A pattern finding `terms` in a text: longest first, so "child welfare services" is found before "child"; words
    apart by any whitespace; a plural or verb ending allowed; never inside a longer word ("minor" not in "minority")."""
    alternatives = "|".join(r"\s+".join(map(re.escape, t.split())) for t in sorted(terms, key=lambda t: (-len(t), t)))
    return re.compile(rf"(?<!\w)({alternatives})(?:s|es|ed|ing)?(?!\w)", flags)


def _terms_used(text: str, words: re.Pattern[str] | None, acronyms: re.Pattern[str] | None) -> set[str]:
    found = {_normal(m).lower() for m in words.findall(text)} if words else set()
    return found | ({_normal(m) for m in acronyms.findall(text)} if acronyms else set())


def definitions_used(sections: Sequence[StatuteSection]) -> list[dict[int, float]]:
    """Per section, the definition sections of its chapter whose terms its text uses, each with a specificity.

    A term's specificity is the share of its chapter's sections whose text does *not* use it (the sections defining
    it are not users): a definition of a term every section uses ("child" in a chapter on child welfare) says nothing
    about one of them, while "reasonable cause to believe" marks the few sections whose meaning turns on it. A section
    using several of one definition section's terms counts the most specific; a section defining a term does not
    link to the other sections defining it. Acronyms match in capitals only ("PILOT", not "pilot").
    """
    by_chapter: dict[str, list[int]] = {}
    for i, s in enumerate(sections):
        by_chapter.setdefault(s.chapter, []).append(i)
    out: list[dict[int, float]] = [{} for _ in sections]
    for members in by_chapter.values():
        owner: dict[str, list[int]] = {}
        for i in members:
            for term in defined_terms(sections[i]):
                owner.setdefault(term, []).append(i)
        if not owner:
            continue
        words = [t for t in owner if not t.isupper()]
        acronyms = [t for t in owner if t.isupper()]
        word_pattern = _uses(words, re.IGNORECASE) if words else None
        acronym_pattern = _uses(acronyms, 0) if acronyms else None
        used = {i: sorted(t for t in _terms_used(sections[i].text, word_pattern, acronym_pattern)
                          if t in owner and i not in owner[t]) for i in members}
        users: dict[str, int] = {}
        for terms in used.values():
            for t in terms:
                users[t] = users.get(t, 0) + 1
        for i, terms in used.items():
            for t in terms:
                specificity = 1.0 - users[t] / len(members)
                for j in owner[t]:
                    if specificity > out[i].get(j, 0.0):
                        out[i][j] = specificity
    return out
