"""BM25 over title + text with bm25s (PyStemmer English stemming, English stopwords), saved for mmap loading."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np


def _stemmer():  # type: ignore[no-untyped-def]
    import Stemmer

    return Stemmer.Stemmer("english")


class LexicalIndex:
    """A bm25s index plus its tokenizer vocabulary; scores every indexed unit for a query."""

    def __init__(self, retriever, tokenizer) -> None:  # type: ignore[no-untyped-def]
        self.retriever = retriever
        self.tokenizer = tokenizer

    @classmethod
    def build(cls, texts: Sequence[str], k1: float = 0.9, b: float = 0.4, progress: bool = False) -> LexicalIndex:
        import bm25s
        from bm25s.tokenization import Tokenizer

        tokenizer = Tokenizer(stemmer=_stemmer(), stopwords="en")
        ids = tokenizer.tokenize(list(texts), update_vocab=True, show_progress=progress, return_as="ids")
        retriever = bm25s.BM25(k1=k1, b=b, method="lucene")
        retriever.index(tokenizer.to_tokenized_tuple(ids), show_progress=progress)
        return cls(retriever, tokenizer)

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.retriever.save(str(directory))
        self.tokenizer.save_vocab(str(directory))
        self.tokenizer.save_stopwords(str(directory))

    @classmethod
    def load(cls, directory: Path, mmap: bool = True) -> LexicalIndex:
        import bm25s
        from bm25s.tokenization import Tokenizer

        retriever = bm25s.BM25.load(str(directory), mmap=mmap)
        tokenizer = Tokenizer(stemmer=_stemmer(), stopwords="en")
        tokenizer.load_vocab(str(directory))
        tokenizer.load_stopwords(str(directory))
        return cls(retriever, tokenizer)

    @property
    def size(self) -> int:
        return int(self.retriever.scores["num_docs"])

    def query_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each query; words the index never saw are dropped (they cannot score)."""
        return self.tokenizer.tokenize(list(texts), update_vocab="never", show_progress=False, return_as="ids")

    def score_all(self, texts: Sequence[str]) -> np.ndarray:
        """float32 (n_queries, n_units) BM25 scores."""
        out = np.zeros((len(texts), self.size), dtype=np.float32)
        for i, ids in enumerate(self.query_ids(texts)):
            if ids:
                out[i] = self.retriever.get_scores_from_ids(ids)
        return out
