"""Build the treatment table of a corpus from the documents' own text.

For each sentence that speaks for the court (`voice`) and holds treatment language (`cues`), the cases it names
are found by reporter citation (`reporters`, eyecite) and by name (`matcher`), resolved to corpus documents
(`_resolve`), and each cue is linked to the case it governs. A row is kept only when its case resolves to exactly
one decision of the corpus: an ambiguous name ("Johnson v. United States", five records) without a citation or a
year to choose by is left out rather than guessed, and so is a case the corpus lacks.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from citator.data.records import Document
from citator.stance.treat.cues import CUES, ENDING, OBJECT, Cue, fits, governs, subject_of, turn
from citator.stance.treat.affected import Earlier, again
from citator.stance.treat import refer
from citator.stance.treat.matcher import CaseNames
from citator.stance.treat.names import WordCounts, tokenize
from citator.stance.treat.record import RED, TREATMENTS, Treatment
from citator.stance.treat.reporters import citation_index, citations_in
from citator.stance.treat.table import TreatmentTable
from citator.stance.treat.voice import court_sentences

_ANY_CUE = re.compile("|".join(f"(?:{c.pattern.pattern})" for c in CUES), re.I)
# Between cases that one cue governs together: "Booth v. Maryland and South Carolina v. Gathers", "Austin ... and
# portions of McConnell v. FEC".
# Also a title's closing abbreviation, "supra", a relative clause ("Roe v. Wade, which held ..., and Casey"), and
# the short name before a bare citation ("Booth, 482 U.S. 496, and Gathers, 490 U.S. 805").
_AND = re.compile(ENDING + r"\.?\s*(?:\([^()]{0,40}\))?\s*(?:,?\s*supra\b)?\s*(?:,\s*(?:which|that)\s+[^.;]{0,160}?)?"
                  r"(?:,\s*|\s+)(?:and\s+|or\s+|as\s+well\s+as\s+)?"
                  r"(?:(?:the\s+|those\s+|that\s+)?(?:portions?|parts?)\s+of\s+)?"
                  r"(?:the\s+)?(?:[A-Z][\w'’.-]*(?:\s+[A-Z][\w'’.-]*){0,3},\s+)?$", re.I)
# After a case name: its reporter citation or year, as in "Brown v. United States, 359 U.S. 41 (1959)".
_CITE_GAP = re.compile(ENDING + r"\.?[\s,]*\(?\s*$")
# A name followed by what a party has: "Nixon's claim", "the EPA's argument", "North Carolina's reading of".
_PARTY = re.compile(r"(?:['’]s?)?\s+(?:\w+\s+){0,2}?(?:arguments?|claims?|contentions?|objections?|motions?|requests?|"
                    r"positions?|assertions?|petitions?|appeals?|counsel|attorneys?|lawyers?|interpretation|reading|"
                    r"brief|suit|complaint|conviction|sentence)\b", re.I)
_YEAR_AFTER = re.compile(r"[\s,]*\((?:[^()]{0,30}\s)?(\d{4})\)")
_PRIORITY = {t: i for i, t in enumerate(TREATMENTS)}


@dataclass(frozen=True)
class _Mention:
    start: int
    end: int
    doc_ids: tuple[str, ...]
    found_by: str


@dataclass(frozen=True)
class _Corpus:
    names: CaseNames
    cited: dict[tuple[str, str, str], tuple[str, ...]]
    citation: dict[str, str]
    date: dict[str, str]


def extract(documents: Iterable[Document], citations: Mapping[str, str] | None = None,
            earlier: Earlier | None = None) -> TreatmentTable:
    """The treatment table of `documents`. A document's reporter citation comes from `citations` (doc_id ->
    "500 U.S. 565") or else its own `citation` key; its decision date, used to keep a case from citing a later
    one, from its `date` or `decided` key (ISO). Given the `earlier` corpus and its table, only the documents whose
    rows the change can alter (`affected.again`) are read again; the rest keep their earlier rows."""
    docs = list(documents)
    given = citations or {}
    words = WordCounts(d.text for d in docs)
    corpus = _corpus(docs, given, words)
    kept: tuple[Treatment, ...] = ()
    if earlier is not None:
        redo = again(docs, earlier, words, corpus.names, lambda d: _citation(d, given), _date)
        kept = tuple(r for r in earlier.table.rows if r.found_by != "user" and r.citing_doc_id not in redo)
        docs = [d for d in docs if d.doc_id in redo]
    rows: list[Treatment] = []
    for doc in docs:
        rows.extend(_document_rows(doc, corpus))
    # A decision that overrules or abrogates a case does not follow it: a sentence that recounts the old rule
    # ("Under Williamson County, the government did not need ...") is no reliance on it.
    red = {(r.citing_doc_id, r.cited_doc_id) for r in rows if r.treatment in RED}
    return TreatmentTable(kept + tuple(r for r in rows if not (r.treatment == "follows" and
                                                               (r.citing_doc_id, r.cited_doc_id) in red)))


def _citation(doc: Document, given: Mapping[str, str]) -> str | None:
    value = given.get(doc.doc_id)
    value = value if isinstance(value, str) else doc.extra.get("citation")
    return value if isinstance(value, str) else None


def _date(doc: Document) -> str | None:
    value = doc.extra.get("date", doc.extra.get("decided"))
    return value if isinstance(value, str) and re.fullmatch(r"\d{4}(?:-\d\d(?:-\d\d)?)?", value) else None


def _corpus(docs: list[Document], given: Mapping[str, str], words: WordCounts) -> _Corpus:
    citation = {d.doc_id: c for d in docs if (c := _citation(d, given)) is not None}
    date = {d.doc_id: v for d in docs if (v := _date(d)) is not None}
    names = CaseNames({d.doc_id: d.title for d in docs}, words.common(), words.justices())
    return _Corpus(names, citation_index(citation), citation, date)


def _document_rows(doc: Document, corpus: _Corpus) -> list[Treatment]:
    text = doc.text
    spans = court_sentences(text)
    cued = [i for i, (a, b) in enumerate(spans) if _ANY_CUE.search(text, a, b)]
    if not cued:
        return []
    hits = corpus.names.find(text, tokenize(text))
    rows: list[Treatment] = []
    for i in cued:
        a, b = spans[i]
        mentions = _mentions(doc, corpus, hits, a, b)
        # The sentence just before, for a reference to the case it names ("That decision is overruled."), read
        # only when a reference needs it.
        adjacent = i and not text[spans[i - 1][1]:a].strip()
        prior = functools.cache(lambda: _mentions(doc, corpus, hits, *spans[i - 1]) if adjacent else [])
        for mention, treatment in _links(text, a, b, mentions, prior, doc.title):
            # A case named in the sentence before (by a reference) makes both sentences the passage.
            start = spans[i - 1][0] if mention.start < a else a
            for cited in mention.doc_ids:
                rows.append(Treatment(doc.doc_id, cited, treatment, text[start:b], start, b, mention.found_by,
                                      text[mention.start:mention.end]))
    return rows


def _mentions(doc: Document, corpus: _Corpus, hits: list, a: int, b: int) -> list[_Mention]:
    """The cases named in sentence [a, b), each resolved to the corpus records of one decision (or dropped)."""
    text = doc.text
    cites = [(a + c.start, a + c.end, corpus.cited.get(c.key, ())) for c in citations_in(text[a:b])]
    out: list[_Mention] = []
    used: set[int] = set()
    for hit in (h for h in hits if a <= h.start and h.end <= b):
        possessive = text[hit.end - 2:hit.end] in ("'s", "’s") or text[hit.end:hit.end + 1] in ("'", "’")
        if (possessive and _PARTY.match(text, hit.end)) or (not hit.full and
                                                           corpus.names.is_party(text[hit.start:hit.end], doc.title)):
            continue  # "Osborn's arguments", or "Osborn" in Osborn v. Haley: a party, not a case
        start, end, ids, found_by = hit.start, hit.end, hit.doc_ids, "name"
        for k, (cs, ce, cited) in enumerate(cites):
            if cs >= end and fits(_CITE_GAP, text[end:cs]):
                used.add(k)
                end = ce
                if cited:
                    ids, found_by = cited, "citation"
                break
        year = _YEAR_AFTER.match(text, end)
        resolved = _resolve(doc.doc_id, ids, corpus, int(year.group(1)) if year else None)
        if resolved:
            out.append(_Mention(start, end, resolved, found_by))
    for k, (cs, ce, cited) in enumerate(cites):
        resolved = _resolve(doc.doc_id, cited, corpus, None)
        if k not in used and resolved:
            out.append(_Mention(cs, ce, resolved, "citation"))
    return sorted(out, key=lambda m: m.start)


def _resolve(citing: str, ids: tuple[str, ...], corpus: _Corpus, year: int | None) -> tuple[str, ...]:
    """The records `ids` narrowed to one decision: not the citing one, none decided after it, the year if the text
    gives one. Several records left that share one citation are one decision reported once; otherwise ()."""
    when, own = corpus.date.get(citing), corpus.citation.get(citing)
    # Not itself, nor a case decided with it under one report, nor a later case.
    left = [d for d in ids if d != citing and not (own and corpus.citation.get(d) == own)
            and not (when and corpus.date.get(d, "") > when)]
    if year is not None and len(left) > 1:
        left = [d for d in left if corpus.date.get(d, "")[:4] in (str(year), str(year - 1))] or left
    if len(left) > 1 and len({corpus.citation.get(d) for d in left}) == 1 and corpus.citation.get(left[0]):
        return tuple(left)
    return tuple(left) if len(left) == 1 else ()


def _links(text: str, a: int, b: int, mentions: list[_Mention], prior: Callable[[], list[_Mention]], title: str
           ) -> list[tuple[_Mention, str]]:
    """Each mention with the treatment its strongest cue in the sentence gives it (`prior`: the previous
    sentence's mentions, which a reference such as "that decision" may take)."""
    question = text[a:b].rstrip().endswith("?")  # "Did we overrule X?" is no act
    found = [(m, cue) for cue in CUES for m in cue.pattern.finditer(text, a, b)
             if not (question and cue.treatment in RED)]
    # A cue inside a longer one ("overturned" in "in effect overturned") is the longer one's.
    found = [(m, cue) for m, cue in found
             if not any(o is not m and o.start() <= m.start() and m.end() <= o.end() and o.end() - o.start() >
                        m.end() - m.start() for o, _ in found)]
    best: dict[int, str] = {}
    for m, cue in found:
        for k, treatment in _governed(text, (a, b), m, cue, mentions, title) or _referred(text, (a, b), m, cue,
                                                                                           mentions, prior, title):
            if k not in best or _PRIORITY[treatment] < _PRIORITY[best[k]]:
                best[k] = treatment
    # k < 0 is the previous sentence's mention -1 - k
    return [(mentions[k] if k >= 0 else prior()[-1 - k], t) for k, t in sorted(best.items())]


def _referred(text: str, sentence: tuple[int, int], m: re.Match[str], cue: Cue, mentions: list[_Mention],
              prior: Callable[[], list[_Mention]], title: str) -> list[tuple[int, str]]:
    """For a red cue whose case is a reference ("we abandon it", "both decisions are overruled"), the mentions it
    stands for (`refer.antecedents`), with what the cue says of them once read in its sentence (`turn`), where the
    act is the Court's own (`refer`'s rules). A predicate said of many things (`subject_only`: "it was wrong") takes
    no reference (nor does a question: `_links` reads no red cue there)."""
    a, b = sentence
    if cue.treatment not in RED or cue.subject_only:
        return []
    if cue.side == "after":
        ref = refer.OBJECT.match(text, m.end())
        clause = text[a:m.start()]
        if ref is None or any(x.end <= m.start() and fits(_ACTOR_GAP, text[x.end:m.start()]) for x in mentions):
            return []
        if not refer.asserted(clause) or not refer.court_acts(clause):
            return []  # "in order to overturn it", "Texas abandoned it", "the Court later overruled it"
        said = turn(cue, clause, m.group(), text[ref.end():b], rest=text[ref.end():b], title=title)
        at = m.start()
    else:
        w = max(a, m.start() - 300)
        ref = refer.SUBJECT.search(text, w, m.start())
        if ref is None:
            return []
        at = ref.start()
        if any(at <= x.start < m.start() for x in mentions) or not refer.opens_clause(text[a:at], m.group()):
            return []  # a case named in between is the cue's subject; "until it was overruled" is history
        said = turn(cue, ref.group(), m.group(), text[m.end():b], text[max(a, at - 120):at], title=title)
    if not said:
        return []
    return [(k, said) for k in refer.antecedents(ref, text, at, mentions, prior)]


# After an `after` cue, a noun that points back ("overturned the rule"), and after a case, the same noun naming
# what it held ("the Schwinn rule", "Lemon's test"): in "found the Schwinn rule outdated; therefore, the Court
# overturned the rule", the rule overturned is Schwinn's.
_BACK = re.compile(r"\s+(?:the|that|this|its)\s+"
                   r"(rule|test|doctrine|standard|holding|framework|exception|presumption)\b", re.I)


def _named_before(text: str, m: re.Match[str], mentions: list[_Mention]) -> int | None:
    """The mention (by index; all are of the cue's sentence) that the noun after cue `m` points back to, or None."""
    back = _BACK.match(text, m.end())
    if back is None:
        return None
    noun = back.group(1).lower()
    for k in range(len(mentions) - 1, -1, -1):
        x = mentions[k]
        if x.end <= m.start() and re.match(rf"(?:['’]s)?\s+{noun}\b", text[x.end:x.end + 30], re.I):
            return k
    return None


# Between a case and an `after` cue it is the subject of: "Chimel v. California (1969) overruled Rabinowitz".
# ... also with an aside or its rule between: "Terry v. Ohio, a 1968 decision, later overruled", "X's holding
# abandoned".
_ACTOR_GAP = re.compile(r"\s*(?:\([^()]{0,40}\))?\s*(?:,[^,;.]{0,80},\s*)?(?:['’]s\s+(?:\w+\s+){0,2}?)?"
                        r"(?:(?:\w+ly|later|then|also|itself)\s+)*")


def _governed(text: str, sentence: tuple[int, int], m: re.Match[str], cue: Cue, mentions: list[_Mention],
              title: str) -> list[tuple[int, str]]:
    """The mentions (by index) that cue match `m`, in the sentence text[a:b] of the decision titled `title`,
    governs, with what it says of them."""
    a, b = sentence
    if cue.side == "after":
        before = text[a:m.start()]
        if cue.treatment in RED and any(x.end <= m.start() and fits(_ACTOR_GAP, text[x.end:m.start()])
                                        for x in mentions):
            return []  # another decision's act: "Chimel v. California overruled ..."
        k = next((i for i, x in enumerate(mentions) if x.start >= m.end()), None)
        if k is None or not fits(OBJECT, text[m.end():mentions[k].start]):
            back = _named_before(text, m, mentions)
            said = None if back is None else turn(cue, before, m.group(), "", title=title)
            return [(back, said)] if back is not None and said else []
        ks = [k]
        while ks[-1] + 1 < len(mentions) and fits(_AND, text[mentions[ks[-1]].end:mentions[ks[-1] + 1].start]):
            ks.append(ks[-1] + 1)
        said = turn(cue, before, m.group(), text[m.end():mentions[k].start], rest=text[mentions[ks[-1]].end:b],
                    title=title)
    else:
        k = next((i for i in range(len(mentions) - 1, -1, -1) if mentions[i].end <= m.start()), None)
        if k is None:
            return []
        gap = text[mentions[k].end:m.start()]
        ks = [k]
        while ks[0] > 0 and fits(_AND, text[mentions[ks[0] - 1].end:mentions[ks[0]].start]):
            ks.insert(0, ks[0] - 1)
        lead = text[max(a, mentions[ks[0]].start - 120):mentions[ks[0]].start]
        if not subject_of(gap, lead) or not governs(cue, lead):
            return []
        said = turn(cue, gap, m.group(), text[m.end():b], lead, title=title)
    return [(k, said) for k in ks] if said else []
