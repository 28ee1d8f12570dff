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
from functools import lru_cache
from typing import NamedTuple

# One spelling for each word that case names abbreviate (Bluebook T6 style), and "united states" as "us".
_FOLD = {
    "association": "assn", "ass'n": "assn", "ass’n": "assn", "board": "bd", "commission": "commn",
    "comm'n": "commn", "comm’n": "commn", "commissioner": "commr", "company": "co", "corporation": "corp",
    "department": "dept", "dep't": "dept", "dep’t": "dept", "district": "dist", "education": "ed",
    "federal": "fed", "government": "govt", "incorporated": "inc", "international": "intl",
    "national": "natl", "county": "cty", "university": "univ", "usa": "us", "mount": "mt", "saint": "st",
    "authority": "auth", "brothers": "bros", "vs": "v", "versus": "v",
    # States as Bluebook T10 abbreviates them in case names ("Planned Parenthood of Southeastern Pa. v. Casey"); not
    # those most often everyday words in a name ("Me.", "Or.", "La.", "Miss.", "Del.", "Mo.", "Ind.").
    **{short: state for state, shorts in (
        ("alabama", "ala"), ("arizona", "ariz"), ("arkansas", "ark"), ("california", "cal calif"), ("colorado", "colo"),
        ("connecticut", "conn"), ("florida", "fla"), ("georgia", "ga"), ("illinois", "ill"), ("kansas", "kan kans"),
        ("kentucky", "ky"), ("maryland", "md"), ("massachusetts", "mass"), ("michigan", "mich"), ("minnesota", "minn"),
        ("montana", "mont"), ("nebraska", "neb"), ("nevada", "nev"), ("oklahoma", "okla"), ("pennsylvania", "pa"),
        ("tennessee", "tenn"), ("texas", "tex"), ("vermont", "vt"), ("virginia", "va"), ("washington", "wash"),
        ("wisconsin", "wis"), ("wyoming", "wyo"),
    ) for short in shorts.split()},
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
                       "supreme", "appeals", "writing", "held", "majority", "dissenting", "concurring",
                       "accordingly", "therefore", "hence", "consequently", "nevertheless", "nonetheless", "today",
                       "indeed", "likewise", "similarly", "ultimately", "now"})

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


class Token(NamedTuple):
    """A word of a text: its folded form, its characters [start, end), and whether it is written capitalised (a
    tuple, not a dataclass: a corpus's texts make millions of them, on every build and update)."""

    norm: str
    start: int
    end: int
    capital: bool


def tokenize(text: str) -> list[Token]:
    """The words of `text`, folded; initials run together ("U. S. A." is one word, "usa", folded to "us")."""
    out: list[Token] = []
    fold = _FOLD.get
    for m in _WORD.finditer(text):
        word = m.group()
        low = word.lower()
        if low.endswith(("'s", "’s")):
            low = low[:-2]  # "Apprendi's" is Apprendi
        start, end = m.span()
        if (len(word) == 1 and word.isupper() and out and out[-1].capital and len(out[-1].norm) <= 3
                and out[-1].norm.isalpha() and _only_initials(text[out[-1].start:start])):
            joined = out[-1].norm + low
            out[-1] = Token(fold(joined, joined), out[-1].start, end, True)
            continue
        out.append(Token(fold(low, low), start, end, word[0].isupper() or word[0].isdigit()))
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


@lru_cache(maxsize=1 << 16)  # asked of the citing document's title at every short name it holds
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


_JUSTICE = re.compile(r"\bJustices?\s+((?:[A-Z][\w'’.-]*\s+){0,3}[A-Z][\w'’-]+)")


class WordCounts:
    """How often a corpus writes each word capitalised and in lower case, and each surname after "Justice": what
    `common` and `justices` read. Counts rather than sets, so that an update can take a document's words out."""

    def __init__(self, texts: Iterable[str] = ()) -> None:
        self.low: Counter[str] = Counter()
        self.cap: Counter[str] = Counter()
        self.justice: Counter[str] = Counter()
        for text in texts:
            self.add(text)

    def add(self, text: str, times: int = 1) -> None:
        """Count `text`'s words `times` times more (-1: take a text out)."""
        for word, n in Counter(_WORD.findall(text)).items():
            (self.cap if word[0].isupper() else self.low)[word.lower()] += n * times
        for m in _JUSTICE.finditer(text):
            self.justice[m.group(1).split()[-1].lower()] += times

    def copy(self) -> WordCounts:
        out = WordCounts()
        out.low, out.cap, out.justice = self.low.copy(), self.cap.copy(), self.justice.copy()
        return out

    def common(self) -> frozenset[str]:
        """Words the texts write in lower case at least a quarter as often as capitalised: such a word is no safe
        one-word short name ("Stone" in "Harlan Fiske Stone" or "a stone")."""
        return frozenset({_FOLD.get(w, w) for w, n in self.low.items() if n > 0 and n * 4 >= self.cap[w]})

    def justices(self) -> frozenset[str]:
        """Surnames that follow "Justice" in the texts ("Justice Anthony M. Kennedy"): a bare "Roberts" is a judge
        far more often than Ohio v. Roberts."""
        return frozenset(w for w, n in self.justice.items() if n > 0)


def spellings(norm: str) -> frozenset[str]:
    """The lower-case words (as `_WORD` finds them) that `tokenize` may fold to `norm`: itself, its possessive,
    the words folded to it; for "us" also "united" (of "United States")."""
    out = {norm} | {k for k, v in _FOLD.items() if v == norm}
    if norm == "us":
        out.add("united")
    return frozenset(out | {w + s for w in out for s in ("'s", "’s")})


_INITIALS = re.compile(r"(?<![^\W_])[A-Z](?:[.\s]+[A-Z](?![^\W_]))+")


def written_words(text: str) -> set[str]:
    """Every word of `text` in lower case as `_WORD` finds it, the words `tokenize` makes of its runs of initials
    ("F. E. C." is "fec"), and the name a word glued to the next one may hold (`unglued`): each token the matcher
    reads in `text` is one of them or folds from one (`spellings`)."""
    out = {w.lower() for w in set(_WORD.findall(text))}
    for m in _INITIALS.finditer(text):
        out.update(t.norm for t in tokenize(m.group()))
    out.update(cut[0] for w in list(out) if (cut := unglued(w)) is not None)
    return out


# Text taken from web pages loses the space after a link ("overruled Michigan v. Jacksonwhich held"): the words that
# most often follow a case name, each of three letters or more, so that a name's own ending ("Martin", "Thomas") is
# never read as one.
_GLUED = re.compile(r"(?<=[a-z])(which|whose|who|that|and|was|were|held|had|has|the|where|when|because|but)$")


def unglued(word: str) -> tuple[str, str] | None:
    """`word` (lower case) cut into a name of four letters or more and the word glued to it, or None. Whether the
    first part is a name is the matcher's to say."""
    m = _GLUED.search(word)
    return (word[:m.start()], m.group(1)) if m and m.start() >= 4 else None


def is_breaker(token: Token) -> bool:
    """A capitalised word that ends a short name's run ("the Booth Court", "Justice Thomas", "Applying Bruton")."""
    return token.norm in _BREAKERS
