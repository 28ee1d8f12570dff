"""Evidence passages: where a passage lies in its document's text, and which of its words the query matched.

Pure functions over text. Passages are the index's word windows (engines/passages.py): the same words, found
here by their character positions so that a page can show the passage in place within the document.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from citator.engines.passages import PassageSpec

# What str.split() splits on: runs of characters that are not whitespace are the words passages are cut from.
_WORD = re.compile(r"\S+")
# A matchable term: what BM25's tokenizer keeps (bm25s's default token pattern, two word characters or more).
_TERM = re.compile(r"(?u)\b\w\w+\b")


@dataclass(frozen=True)
class Span:
    """Characters [start, end) of some text."""

    start: int
    end: int


def passage_spans(text: str, spec: PassageSpec) -> list[Span]:
    """The character span, in `text`, of each passage `split_passages` cuts from it (title prefix aside)."""
    words = [m.span() for m in _WORD.finditer(text)]
    if len(words) <= spec.words:
        return [Span(words[0][0], words[-1][1]) if words else Span(0, 0)]
    step = max(1, spec.words - spec.overlap)
    out = []
    for start in range(0, len(words), step):
        last = min(start + spec.words, len(words)) - 1
        out.append(Span(words[start][0], words[last][1]))
        if start + spec.words >= len(words):
            break
    return out


def term_keys(text: str, key: Callable[[str], str | None]) -> set[str]:
    """The keys (e.g. stems) of a query's terms; `key` returns None for a term that never matches (a stopword)."""
    return {k for m in _TERM.finditer(text) if (k := key(m.group())) is not None}


def highlight_key(key: Callable[[str], str | None]) -> Callable[[str], str | None]:
    """`key`, less the words a reader never needs marked: BM25 drops only a short list of stopwords ("the", "of"),
    and a passage marked at every "when" and "have" hides the words that matched. The longer list is bm25s's own
    (NLTK's English list). Only marks change: what the search scores is the index's own `key`."""
    from bm25s.stopwords import STOPWORDS_EN_PLUS

    stop = frozenset(STOPWORDS_EN_PLUS)

    def marked(word: str) -> str | None:
        return None if word.lower() in stop else key(word)

    return marked


def matched_terms(text: str, keys: set[str], key: Callable[[str], str | None]) -> list[Span]:
    """Spans of the words of `text` whose key is one of the query's `keys`, in order."""
    return [Span(*m.span()) for m in _TERM.finditer(text) if key(m.group()) in keys]


def split_marked(text: str, marks: Iterable[Span]) -> list[tuple[str, bool]]:
    """`text` as (piece, marked) runs, for renderers: the marks must be sorted and disjoint."""
    out: list[tuple[str, bool]] = []
    at = 0
    for span in marks:
        if span.start > at:
            out.append((text[at:span.start], False))
        out.append((text[span.start:span.end], True))
        at = span.end
    if at < len(text):
        out.append((text[at:], False))
    return out
