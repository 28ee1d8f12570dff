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
    def load(cls, directory: Path, mmap: bool = True, units: int | None = None) -> LexicalIndex:
        """Load a saved index; when `units` is given it must score exactly that many units. What bm25s raises on
        damaged files (any exception: it validates little) becomes an IndexDirError naming the folder."""
        import bm25s
        from bm25s.tokenization import Tokenizer

        from citator.errors import IndexDirError

        try:
            retriever = bm25s.BM25.load(str(directory), mmap=mmap)
            tokenizer = Tokenizer(stemmer=_stemmer(), stopwords="en")
            tokenizer.load_vocab(str(directory))
            tokenizer.load_stopwords(str(directory))
            index = cls(retriever, tokenizer)
            size = index.size
            scores = retriever.scores
            arrays = [np.asarray(scores[k]) for k in ("data", "indices", "indptr")]
        except Exception as exc:  # noqa: BLE001 - any failure to read is the same damage
            raise IndexDirError(f"{directory}: unreadable BM25 index ({type(exc).__name__}: {str(exc)[:120]}); "
                                "rebuild with build.sh") from None
        data, indices, indptr = arrays
        consistent = (
            indptr.ndim == 1 and len(indptr) >= 1 and len(data) == len(indices) == int(indptr[-1])
            and data.dtype.kind == "f" and indices.dtype.kind in "iu" and indptr.dtype.kind in "iu"
            and bool(np.isfinite(data).all()) and (len(indices) == 0 or (int(indices.min()) >= 0
                                                                         and int(indices.max()) < size))
            and bool((np.diff(indptr) >= 0).all()) and int(indptr[0]) == 0
        )
        if not consistent or (units is not None and size != units):
            raise IndexDirError(f"{directory}: BM25 arrays are inconsistent ({size} units"
                                f"{'' if units is None else f', expected {units}'}); rebuild with build.sh")
        return index

    def use_numba(self) -> bool:
        """Score with bm25s's numba kernel when numba is installed; True if it is now in use.

        Only for long-lived processes: the first call pays about 1 s of JIT compilation (measured on CaseFacts
        passages: numpy 0.09 s for 311 queries, numba 1.0 s on the first call and 0.05 s after), which a cold
        run.sh cannot afford, while the search server pays it once during warm-up.
        """
        import importlib.util

        if importlib.util.find_spec("numba") is None:
            return False
        self.retriever.activate_numba_scorer()
        return True

    @property
    def size(self) -> int:
        return int(self.retriever.scores["num_docs"])

    def stem_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each query matched by stem, so an unseen form of an indexed word still scores.

        bm25s's own query tokenizing keeps only word forms the index saw ("students" is dropped when only
        "student" was indexed); this keeps every word whose stem was indexed, and leaves the vocabulary untouched.
        """
        tok = self.tokenizer
        stop = frozenset(tok.stopwords or ())
        vocab = tok.stem_to_sid
        out = []
        for text in texts:
            stems = (tok.stemmer(w) for w in tok.splitter(text.lower() if tok.lower else text) if w not in stop)
            out.append([vocab[s] for s in stems if s in vocab])
        return out

    def score_ids(self, ids: Sequence[Sequence[int]]) -> np.ndarray:
        """float32 (n_queries, n_units) BM25 scores of queries given as token ids (a repeated id counts again)."""
        out = np.zeros((len(ids), self.size), dtype=np.float32)
        for i, query in enumerate(ids):
            if query:
                out[i] = self.retriever.get_scores_from_ids(list(query))
        return out

    def score_all(self, texts: Sequence[str]) -> np.ndarray:
        """float32 (n_queries, n_units) BM25 scores; query words match by stem."""
        return self.score_ids(self.stem_ids(texts))
