"""Case names: normalised tokens, and a dictionary of the corpus's case names (titles) to find them in text.

A case is named in many spellings: "Board of Education v. Allen" for the title "Board of Ed. of Central School
Dist. No. 1 v. Allen", "Teague v Lane", "Johnson v. US", "Comm'n" for "Commission". Names are compared as tokens
(lower case, abbreviations folded to one form: `_FOLD`), and a name in the text matches a title when each party's
tokens in the text are tokens of that party in the title and begin with the same word. Short names ("Miranda",
"the Booth Court", "Metro Broadcasting") are a party's leading words; a one-word short name is taken only when
it is no common word (the corpus itself writes it in lower case rarely) and no justice's name.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

# One spelling for each word that case names abbreviate (Bluebook T6 style), and "united states" as "us".
_FOLD = {
    "association": "assn", "ass'n": "assn", "ass’n": "assn", "board": "bd", "commission": "commn",
    "comm'n": "commn", "comm’n": "commn", "commissioner": "commr", "company": "co", "corporation": "corp",
    "department": "dept", "dep't": "dept", "dep’t": "dept", "district": "dist", "education": "ed",
    "federal": "fed", "government": "govt", "incorporated": "inc", "international": "intl",
    "national": "natl", "county": "cty", "university": "univ", "usa": "us", "mount": "mt", "saint": "st",
    "authority": "auth", "brothers": "bros", "okla": "oklahoma", "vs": "v", "versus": "v",
}
# Words that join a name's parts and say nothing about which case it is.
_JOINERS = frozenset({"of", "the", "and", "for", "in", "on", "at", "by", "to", "a", "an", "ex", "rel", "et", "al"})
# Corporate endings, left out of a party's words ("Grutter v. Bollinger" and "..., Inc." alike).
_ENDINGS = frozenset({"inc", "co", "corp", "ltd", "llc", "lp", "plc", "na"})
# Parties that name a government: never a short name ("Arizona" is no case).
_GOVERNMENTS = frozenset("""us alabama alaska arizona arkansas california colorado connecticut delaware florida georgia
hawaii idaho illinois indiana iowa kansas kentucky louisiana maine maryland massachusetts michigan minnesota
mississippi missouri montana nebraska nevada new hampshire jersey mexico york north carolina dakota ohio oklahoma
oregon pennsylvania rhode island south tennessee texas utah vermont virginia washington west wisconsin wyoming
people state states commonwealth city cty town village dist columbia territory puerto rico""".split())
# A capitalised word in a run that is no part of a case name ("the Booth Court", "Justice Thomas").
_BREAKERS = frozenset({"court", "courts", "justice", "justices", "chief", "judge", "congress", "amendment", "clause",
                       "act", "circuit", "constitution", "conclusion", "question", "facts", "yes", "no", "however",
                       "although", "because", "while", "when", "under", "after", "before", "since", "in", "on",
                       "the", "this", "that", "these", "those", "its", "his", "her", "their", "a", "an", "but",
                       "and", "also", "instead", "relying", "applying", "overruling", "reaffirming", "following",
                       "citing", "unlike", "as", "with", "by", "for", "of", "to", "at", "so", "then", "thus",
                       "here", "there", "finally", "further", "additionally", "moreover", "rather", "if",
                       "supreme", "appeals", "writing", "held", "majority", "dissenting", "concurring"})

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


@dataclass(frozen=True)
class Token:
    """A word of a text: its folded form, its characters [start, end), and whether it is written capitalised."""

    norm: str
    start: int
    end: int
    capital: bool


def tokenize(text: str) -> list[Token]:
    """The words of `text`, folded; initials run together ("U. S. A." is one word, "usa", folded to "us")."""
    out: list[Token] = []
    for m in _WORD.finditer(text):
        word = m.group()
        low = re.sub(r"['’]s$", "", word.lower())  # "Apprendi's" is Apprendi
        if (len(word) == 1 and word.isupper() and out and out[-1].capital and len(out[-1].norm) <= 3
                and out[-1].norm.isalpha() and _only_initials(text[out[-1].start:m.start()])):
            joined = out[-1].norm + low
            out[-1] = Token(_FOLD.get(joined, joined), out[-1].start, m.end(), True)
            continue
        out.append(Token(_FOLD.get(low, low), m.start(), m.end(), word[0].isupper() or word[0].isdigit()))
    _fold_united_states(out)
    return out


def _only_initials(between: str) -> bool:
    return all(len(part) == 1 and part.isupper() for part in re.findall(r"[A-Za-z]+", between)) and \
        set(re.sub(r"[A-Za-z]", "", between)) <= {".", " "}


def _fold_united_states(tokens: list[Token]) -> None:
    i = 0
    while i + 1 < len(tokens):
        if tokens[i].norm == "united" and tokens[i + 1].norm == "states":
            tokens[i:i + 2] = [Token("us", tokens[i].start, tokens[i + 1].end, True)]
        i += 1


def content(words: Iterable[str]) -> tuple[str, ...]:
    """The words that tell one case from another (joiners and corporate endings left out)."""
    return tuple(w for w in words if w not in _JOINERS and w not in _ENDINGS)


def parties(title: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """A title's two parties as content words, or None when the title has no " v. " (e.g. "In re Gault")."""
    words = [t.norm for t in tokenize(title)]
    if "v" not in words:
        return None
    at = words.index("v")
    left, right = content(words[:at]), content(words[at + 1:])
    return (left, right) if left and right else None


def is_government(party: tuple[str, ...]) -> bool:
    """Whether a party is a government (the United States, a state, a city): never a case's short name."""
    return bool(party) and all(w in _GOVERNMENTS for w in party)


def common_words(texts: Iterable[str]) -> frozenset[str]:
    """Words the texts write in lower case at least a quarter as often as capitalised: such a word is no safe
    one-word short name ("Stone" in "Harlan Fiske Stone" or "a stone")."""
    low: Counter[str] = Counter()
    cap: Counter[str] = Counter()
    for text in texts:
        for m in _WORD.finditer(text):
            word = m.group()
            (cap if word[0].isupper() else low)[word.lower()] += 1
    folded = {_FOLD.get(w, w) for w, n in low.items() if n * 4 >= cap[w]}
    return frozenset(folded)


def justice_names(texts: Iterable[str]) -> frozenset[str]:
    """Surnames that follow "Justice" in the texts ("Justice Anthony M. Kennedy"): a bare "Roberts" is a judge far
    more often than Ohio v. Roberts."""
    found: set[str] = set()
    for text in texts:
        for m in re.finditer(r"\bJustices?\s+((?:[A-Z][\w'’.-]*\s+){0,3}[A-Z][\w'’-]+)", text):
            found.add(m.group(1).split()[-1].lower())
    return frozenset(found)


def is_breaker(token: Token) -> bool:
    """A capitalised word that ends a short name's run ("the Booth Court", "Justice Thomas", "Applying Bruton")."""
    return token.norm in _BREAKERS
