"""Keyword retrieval for the statute benchmark: BM25 (LexicalIndex, English stemmer and stopwords) over heading + text."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from citator.data.statutes import StatuteSection
from citator.engines.lexical import LexicalIndex

RETRIEVAL_VERSION = "bm25s-okapi-k1.5-b0.75-en-stem-v1"
_TOKEN = re.compile(r"(?u)\b\w\w+\b")
K1, B = 1.5, 0.75


@dataclass(frozen=True)
class Hit:
    """One retrieved section: its corpus index, 1-based rank and score."""

    index: int
    rank: int
    score: float


class Analyzer:
    """Lower-case word tokens, English stopwords removed, Snowball English stems (as LexicalIndex tokenizes)."""

    def __init__(self) -> None:
        import Stemmer
        from bm25s.stopwords import STOPWORDS_EN

        self._stem = Stemmer.Stemmer("english").stemWord
        self._stop = frozenset(STOPWORDS_EN)

    def terms(self, text: str) -> list[str]:
        return [self._stem(t) for t in _TOKEN.findall(text.lower()) if t not in self._stop]


def section_text(section: StatuteSection) -> str:
    """The text keyword search sees: heading then body."""
    return f"{section.heading}\n{section.text}"


class KeywordIndex:
    """An in-memory BM25 index over sections; ties break by corpus order so rankings are deterministic."""

    version = RETRIEVAL_VERSION

    def __init__(self, sections: Sequence[StatuteSection]) -> None:
        self.sections = list(sections)
        self.analyzer = Analyzer()
        self._bm25 = LexicalIndex.build([section_text(s) for s in self.sections], k1=K1, b=B)
        docs = [self.analyzer.terms(section_text(s)) for s in self.sections]
        self._doc_terms = [frozenset(d) for d in docs]
        df: Counter[str] = Counter()
        for terms in self._doc_terms:
            df.update(terms)
        n = len(docs)
        self._idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}

    def idf(self, term: str) -> float:
        return self._idf.get(term, 0.0)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every section for `query` (zeros when no query term is in the vocabulary)."""
        # By stem, as the analyzer matches: a word form the corpus lacks still finds its stem.
        return self._bm25.score_ids(self._bm25.stem_ids([query]))[0].astype(np.float64)

    def search(self, query: str, k: int) -> list[Hit]:
        """Top `k` sections by score, ties (including all-zero) in corpus order."""
        scores = self.scores(query)
        order = np.lexsort((np.arange(len(scores)), -scores))[:k]
        return [Hit(int(i), r + 1, float(scores[i])) for r, i in enumerate(order)]

    def all_terms(self, query: str, k: int) -> tuple[list[int], bool]:
        """Secondary baseline: sections holding every query term, corpus order; else most terms matched.

        Returns (indexes, fell_back); fell_back is True when fewer than `k` sections hold every term and
        the rest were filled by the broader coordination-level match (most distinct terms first).
        """
        terms = frozenset(self.analyzer.terms(query))
        if not terms:
            return list(range(min(k, len(self.sections)))), True
        matched = np.array([len(terms & d) for d in self._doc_terms])
        order = np.lexsort((np.arange(len(matched)), -matched))[:k]
        full = int((matched == len(terms)).sum())
        return [int(i) for i in order], full < k
