"""The dictionary matcher: where a text names a case of the corpus, by its full name or a short one.

Full names are found at each " v. " of the text: the capitalised words on either side are compared with the
titles indexed under their parties' first words (`names`), and the longest agreeing stretch wins. A title without
" v. " ("In re Gault") is found as its run of words. Short names are runs of capitalised words that are a party's
leading words; a document that names a case in full may then call it by any word of a party ("Roberts" after
"Ohio v. Roberts"), which outranks the corpus-wide short names. A hit lists every title it fits: telling same-named
cases apart (by year, citation, date) is the resolver's work, not the matcher's.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass

from citator.stance.treat.names import Token, content, is_breaker, is_government, parties, tokenize, unglued

# What may stand between two words of one name: spaces, stops, commas, ampersands, apostrophes, hyphens.
_NAME_GAP = re.compile(r"[\s.,&'’\-]*")
_MAX_RUN = 14
# Words that make the capitalised words before them something other than a case.
_NOT_AFTER_A_NAME = frozenset({"amendment", "amendments", "circuit", "clause", "act", "code", "county", "state",
                               "states", "district", "court", "courts", "department", "dept", "city"})


@dataclass(frozen=True)
class NameHit:
    """Characters [start, end) of a text that name one of `doc_ids`; `full` when by the whole name."""

    start: int
    end: int
    doc_ids: tuple[str, ...]
    full: bool


class CaseNames:
    """The corpus's case names, indexed for matching (built once per corpus)."""

    def __init__(self, titles: Mapping[str, str], common: frozenset[str] = frozenset(),
                 justices: frozenset[str] = frozenset()) -> None:
        """`titles`: doc_id -> title. `common`: words no one-word short name may be; `justices`: surnames that are
        judges' (names.WordCounts of the corpus's texts)."""
        # Same-named titles share one entry (a corpus may hold a name many times): a name is compared once.
        self._pairs: dict[tuple[str, str], dict[tuple[frozenset[str], frozenset[str]], list[str]]] = {}
        self._plain: dict[str, dict[tuple[str, ...], list[str]]] = {}
        self._short: dict[tuple[str, ...], set[str]] = {}
        self._words: dict[str, frozenset[str]] = {}
        self._party_words: set[str] = set()  # every word of every title's parties
        for doc_id, title in titles.items():
            self._add(doc_id, title)
        self.common, self.justices = common, justices

    def _add(self, doc_id: str, title: str) -> None:
        split = parties(title)
        if split is None:
            words = content(t.norm for t in tokenize(title))
            if words:
                self._plain.setdefault(words[0], {}).setdefault(words, []).append(doc_id)
                named = _named(words)
                if named:
                    self._short.setdefault(named, set()).add(doc_id)
                self._words[doc_id] = frozenset(named)
                self._party_words.update(words)
            return
        left, right = split
        self._party_words.update(left + right)
        # A party of several words may go by its initials: "McConnell v. FEC", "NLRB v. Jones & Laughlin".
        for said_left in {left, _initials(left)}:
            for said_right in {right, _initials(right)}:
                names = self._pairs.setdefault((said_left[0], said_right[0]), {})
                names.setdefault((frozenset(said_left), frozenset(said_right)), []).append(doc_id)
        own: set[str] = set()
        for party in (left, right):
            if not is_government(party):
                for size in _short_sizes(party):
                    self._short.setdefault(party[:size], set()).add(doc_id)
                own.update(w for w in party if not w.isdigit() and len(w) > 2)
        self._words[doc_id] = frozenset(own)

    def names_alone(self, word: str) -> bool:
        """Whether `word` alone is a short name of some case (unless common or a justice's)."""
        return (word,) in self._short

    @staticmethod
    def needed_words(title: str) -> tuple[frozenset[str], ...]:
        """Sets of token norms, read off the keys `_add` files `title` under: a text in which `find` names the title
        holds every word of one set at least. A full name needs both parties' first words (or initials), a short
        name its party's leading words, a title without " v. " all of its words."""
        split = parties(title)
        if split is None:
            words = content(t.norm for t in tokenize(title))
            return (frozenset(_named(words) or words),) if words else ()
        left, right = split
        out = {frozenset({a[0], b[0]}) for a in {left, _initials(left)} for b in {right, _initials(right)}}
        for party in (left, right):
            if not is_government(party):
                out.add(frozenset(party[:min(_short_sizes(party))]))
        return tuple(out)

    def find(self, text: str, tokens: list[Token] | None = None) -> list[NameHit]:
        """Every case name in `text`, in text order: full names, then short names where no full name is."""
        tokens = self._unglue(text, tokenize(text) if tokens is None else tokens)
        hits = self._full_names(text, tokens)
        starts = [t.start for t in tokens]
        taken = {i for h in hits for i in range(bisect_left(starts, h.start), bisect_left(starts, h.end))}
        for i, tok in enumerate(tokens):  # a name around " v. " that is no corpus title is still no short name
            if tok.norm == "v" and text[tok.start] == "v":
                taken.update(range(_reach(text, tokens, i, -1), _reach(text, tokens, i, +1)))
        anchored = {d for h in hits if len(h.doc_ids) == 1 for d in h.doc_ids}
        local_justices = {m.group(1).lower() for m in re.finditer(r"\bJustices?\s+(?:[A-Z][\w.'’-]*\s+){0,3}"
                                                                    r"([A-Z][\w'’-]+)", text)}
        for run in _runs(text, tokens, taken):
            if run[1] < len(tokens) and tokens[run[1]].norm in _NOT_AFTER_A_NAME:
                continue  # "Sixth Amendment", "Ninth Circuit": no case
            if _names_a_law(tokens, run[1]) or (run[1] - run[0] == 1 and _ACRONYM.fullmatch(
                    text[tokens[run[0]].start:tokens[run[0]].end])):
                continue  # "Americans with Disabilities Act", "the ADA", "the FAA": a statute or an agency
            hit = self._short_name(tokens, run, anchored, local_justices)
            if hit is not None:
                hits.append(hit)
        return sorted(hits, key=lambda h: h.start)

    def _unglue(self, text: str, tokens: list[Token]) -> list[Token]:
        """`tokens` with each capitalised word that is no party's word but a party's word glued to a lower-case
        word ("Jacksonwhich") cut in two, as if the space were there."""
        out: list[Token] = []
        for tok in tokens:
            cut = None
            if tok.capital and tok.norm not in self._party_words and tok.end - tok.start == len(tok.norm) \
                    and text[tok.start:tok.end].lower() == tok.norm:
                cut = unglued(tok.norm)
            if cut is None or cut[0] not in self._party_words or not text[tok.start + len(cut[0])].islower():
                out.append(tok)
                continue
            middle = tok.start + len(cut[0])
            out += [Token(cut[0], tok.start, middle, True), Token(cut[1], middle, tok.end, False)]
        return out

    def is_party(self, name: str, title: str) -> bool:
        """Whether a short `name` is a party of the case `title` (the citing case's own parties are no citation)."""
        split = parties(title)
        words = content(t.norm for t in tokenize(name))
        if split is None or not words:
            return False
        return set(words) <= set(split[0]) | set(split[1])

    def _full_names(self, text: str, tokens: list[Token]) -> list[NameHit]:
        hits: list[NameHit] = []
        for i, tok in enumerate(tokens):
            if tok.norm == "v" and text[tok.start] == "v" and 0 < i < len(tokens) - 1:
                hit = self._at_v(text, tokens, i)
                if hit is not None:
                    hits.append(hit)
        hits.extend(self._plain_titles(tokens))
        return hits

    def _at_v(self, text: str, tokens: list[Token], i: int) -> NameHit | None:
        left = _reach(text, tokens, i, -1)
        right = _reach(text, tokens, i, +1)
        best: tuple[int, int, int, list[str]] = (0, 0, 0, [])
        for j in range(left, i):
            said_left = content(t.norm for t in tokens[j:i])
            if not said_left or not tokens[j].capital or said_left[0] != tokens[j].norm:
                continue
            for e in range(right, i + 1, -1):
                if not tokens[e - 1].capital or not content([tokens[e - 1].norm]):
                    continue  # a name ends on a word of its own, not on "and" or "the"
                said_right = content(t.norm for t in tokens[i + 1:e])
                if not said_right:
                    continue
                for (title_left, title_right), doc_ids in self._pairs.get((said_left[0], said_right[0]), {}).items():
                    if title_left.issuperset(said_left) and title_right.issuperset(said_right):
                        score = len(said_left) + len(said_right)
                        if score > best[0]:
                            best = (score, tokens[j].start, tokens[e - 1].end, list(doc_ids))
                        elif score == best[0] and (tokens[j].start, tokens[e - 1].end) == best[1:3]:
                            best[3].extend(doc_ids)
        return NameHit(best[1], best[2], tuple(best[3]), True) if best[3] else None

    def _plain_titles(self, tokens: list[Token]) -> list[NameHit]:
        """Titles without " v. " ("In re Gault"), each found where a capitalised word begins its run of words; a
        title that several records share is one hit naming all of them."""
        hits = []
        words = [t for t in tokens if content([t.norm])]
        norms = [t.norm for t in words]
        for n, tok in enumerate(words):
            titles = self._plain.get(tok.norm) if tok.capital else None
            for title, doc_ids in (titles or {}).items():
                if tuple(norms[n:n + len(title)]) == title:
                    hits.append(NameHit(tok.start, words[n + len(title) - 1].end, tuple(doc_ids), True))
        return hits

    def _short_name(self, tokens: list[Token], run: tuple[int, int], anchored: set[str],
                    local_justices: set[str]) -> NameHit | None:
        a, b = run
        words = content(t.norm for t in tokens[a:b])
        if not words or is_government(words):
            return None  # "North Carolina's argument": a party, not a case
        whole = b - a == 1 or len(words) > 1
        if len(words) == 1 and words[0] in local_justices:
            return None
        mine = tuple(d for d in anchored if set(words) <= self._words.get(d, frozenset()))
        if mine and (len(words) > 1 or whole):
            return NameHit(tokens[a].start, tokens[b - 1].end, mine, False)
        ids = self._short.get(words)
        if not ids or (len(words) == 1 and (words[0] in self.common or words[0] in self.justices)):
            return None
        return NameHit(tokens[a].start, tokens[b - 1].end, tuple(sorted(ids)), False)


# A word in capitals is an agency's or a statute's initials ("ADA", "FAA", "ICC's"), not a case's short name.
_ACRONYM = re.compile(r"[A-Z][A-Z0-9&]+(?:['’]s)?")
# Between a name's first word and the law it begins: "Americans [with Disabilities] Act".
_IN_A_LAW = frozenset({"with", "of", "for", "on", "to", "in"})
_LAWS = frozenset({"act", "acts", "code", "amendment", "amendments", "clause", "rules"})


def _names_a_law(tokens: list[Token], after: int) -> bool:
    """Whether the words from token `after` on finish a statute's name ("with Disabilities Act")."""
    for tok in tokens[after:after + 6]:
        if tok.norm in _LAWS and tok.capital:
            return True
        if not (tok.capital or (tok.norm in _IN_A_LAW and not tok.capital)):
            return False  # "Chevron and the ... Act", "Booth in the Eighth Amendment context": the name stands
    return False


def _named(words: tuple[str, ...]) -> tuple[str, ...]:
    """A title without " v. "'s words that name it short ("Gault" of "In re Gault")."""
    return tuple(w for w in words if w not in ("re", "parte", "ex", "cases", "case"))


def _short_sizes(party: tuple[str, ...]) -> tuple[int, ...]:
    """How many of a party's leading words name its case short. One word only for a short party ("Miranda",
    "Booth"): "Kansas" is not Kansas City Power & Light, "Sixth" not Sixth Judicial District Court."""
    return (1, 2, len(party)) if len(party) <= 2 and not is_government(party[:1]) else (2, len(party))


def _initials(party: tuple[str, ...]) -> tuple[str, ...]:
    words = [w for w in party if w.isalpha()]
    return ("".join(w[0] for w in words),) if 2 <= len(words) <= 6 else party


def _reach(text: str, tokens: list[Token], i: int, step: int) -> int:
    """How far a name's words run from the " v. " at token i (exclusive end to the right, first index to the left):
    capitalised words, and joiners between them, with nothing but name punctuation between."""
    at = i
    for _ in range(_MAX_RUN):
        nxt = at + step
        if not 0 <= nxt < len(tokens):
            break
        a, b = (tokens[nxt], tokens[at]) if step < 0 else (tokens[at], tokens[nxt])
        if not _NAME_GAP.fullmatch(text[a.end:b.start]):
            break
        if not (tokens[nxt].capital or (tokens[nxt].norm in ("of", "the", "and", "for", "ex", "rel", "de", "la")
                                        and not tokens[nxt].capital)):
            break
        at = nxt
    return at if step < 0 else at + 1


def _runs(text: str, tokens: list[Token], taken: set[int]) -> list[tuple[int, int]]:
    """Runs [a, b) of capitalised words (no breakers, not inside a full name), joined by name punctuation."""
    runs: list[tuple[int, int]] = []
    start = None
    for k, tok in enumerate(tokens):
        inside = tok.capital and not is_breaker(tok) and k not in taken and tok.norm != "v"
        joined = start is not None and _NAME_GAP.fullmatch(text[tokens[k - 1].end:tok.start]) is not None
        if inside and start is not None and joined:
            continue
        if start is not None:
            runs.append((start, k))
        start = k if inside else None
    if start is not None:
        runs.append((start, len(tokens)))
    return runs
