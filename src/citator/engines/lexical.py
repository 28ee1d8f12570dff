"""BM25 over title + text with bm25s (PyStemmer English stemming, English stopwords), saved for mmap loading.

A shard of a larger index scores with the statistics of the whole corpus (`CorpusStats`: document frequencies,
unit count, total length), so its BM25 scores are the ones one index over everything gives.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np


def _stemmer() -> Any:  # a Stemmer.Stemmer (PyStemmer ships no types)
    import Stemmer

    return Stemmer.Stemmer("english")


@dataclass(frozen=True)
class CorpusStats:
    """What BM25's idf and length normalisation read of a corpus: per stem, how many units hold it; the number of
    units; their total length in tokens. Shards' stats add up to the corpus's."""

    doc_freqs: dict[str, int]
    n_units: int
    total_length: int

    @classmethod
    def total(cls, parts: Iterable[CorpusStats]) -> CorpusStats:
        freqs: Counter[str] = Counter()
        n_units = total_length = 0
        for part in parts:
            freqs.update(part.doc_freqs)
            n_units += part.n_units
            total_length += part.total_length
        return cls(dict(freqs), n_units, total_length)


@dataclass(frozen=True)
class Tokenized:
    """Texts as bm25s token ids, with the tokenizer whose vocabulary (stem -> id) they use."""

    tokenizer: Any
    ids: list[list[int]]

    def stems(self) -> dict[int, str]:
        """Token id -> the stem it stands for."""
        return {i: stem for stem, i in self.tokenizer.get_vocab_dict().items()}

    def stats(self) -> CorpusStats:
        stem_of = self.stems()
        freqs = Counter(stem_of[i] for doc in self.ids for i in set(doc))
        return CorpusStats(dict(freqs), len(self.ids), sum(len(doc) for doc in self.ids))


def _mean_length(stats: CorpusStats) -> np.float64:
    """The corpus's mean unit length as bm25s computes it (a numpy float64: NumPy's promotion rules then score in
    float64 as bm25s's own build does, where a Python float would score in float32)."""
    return np.float64(stats.total_length) / np.float64(max(stats.n_units, 1))


def _corpus_wide_bm25(stats: CorpusStats, stem_of: dict[int, str], **params: Any) -> Any:  # a bm25s.BM25
    """A bm25s BM25 whose idf and average length are the corpus's (`stats`), not those of the units it indexes;
    `stem_of` names the stem of each token id it will be given.

    bm25s offers `build_index_from_ids` to be overridden for this; the scores themselves are bm25s's own functions.
    """
    import bm25s
    import scipy.sparse as sp
    from bm25s.scoring import (_build_idf_array, _build_scores_and_indices_for_matrix, _calculate_doc_freqs,
                               _select_idf_scorer)

    class CorpusWideBM25(bm25s.BM25):
        def build_index_from_ids(self, unique_token_ids: Any, corpus_token_ids: Any, show_progress: bool = True,
                                 leave_progress: bool = False) -> dict[str, Any]:
            self.nonoccurrence_array = None  # lucene BM25 has none (bm25s sets it here for BM25L and BM25+)
            local = _calculate_doc_freqs(corpus_token_ids, unique_token_ids, show_progress=False)
            wide = {token: stats.doc_freqs.get(stem_of[token], 0) for token in unique_token_ids}
            idf = _build_idf_array(wide, n_docs=stats.n_units, compute_idf_fn=_select_idf_scorer(self.idf_method),
                                   dtype=self.dtype)
            scores, docs, vocab = _build_scores_and_indices_for_matrix(
                corpus_token_ids=corpus_token_ids, idf_array=idf, avg_doc_len=_mean_length(stats),
                doc_frequencies=local, k1=self.k1, b=self.b, delta=self.delta, nonoccurrence_array=None,
                method=self.method, dtype=self.dtype, int_dtype=self.int_dtype, show_progress=False)
            shape = (len(corpus_token_ids), len(unique_token_ids))
            if self.csc_backend == "numpy":
                data, indices, indptr = self._np_csc(data=scores, rows=docs, cols=vocab, shape=shape)
            else:
                matrix = sp.csc_matrix((scores, (docs, vocab)), shape=shape, dtype=self.dtype)
                data, indices, indptr = matrix.data, matrix.indices, matrix.indptr
            return {"data": data.astype(self.dtype), "indices": indices, "indptr": indptr,
                    "num_docs": len(corpus_token_ids)}

    return CorpusWideBM25(**params)


class LexicalIndex:
    """A bm25s index plus its tokenizer vocabulary; scores every indexed unit for a query."""

    def __init__(self, retriever: Any, tokenizer: Any) -> None:  # bm25s's BM25 and Tokenizer (bm25s ships no types)
        self.retriever = retriever
        self.tokenizer = tokenizer

    @staticmethod
    def tokenize(texts: Sequence[str], progress: bool = False) -> Tokenized:
        from bm25s.tokenization import Tokenizer

        tokenizer = Tokenizer(stemmer=_stemmer(), stopwords="en")
        return Tokenized(tokenizer, tokenizer.tokenize(list(texts), update_vocab=True, show_progress=progress,
                                                       return_as="ids"))

    @classmethod
    def build(cls, texts: Sequence[str] | Tokenized, k1: float = 0.9, b: float = 0.4, progress: bool = False,
              stats: CorpusStats | None = None) -> LexicalIndex:
        """BM25 over `texts` (or their `tokenize`); with `stats`, scored with those corpus-wide statistics."""
        import bm25s

        tokens = texts if isinstance(texts, Tokenized) else cls.tokenize(texts, progress)
        if stats is None:
            retriever = bm25s.BM25(k1=k1, b=b, method="lucene")
        else:
            retriever = _corpus_wide_bm25(stats, tokens.stems(), k1=k1, b=b, method="lucene")
        retriever.index(tokens.tokenizer.to_tokenized_tuple(tokens.ids), show_progress=progress)
        return cls(retriever, tokens.tokenizer)

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
            stopwords = tokenizer.stopwords  # read back as any JSON: used only at the first query
            if isinstance(stopwords, (str, bytes)) or not all(isinstance(w, str) for w in stopwords):
                raise TypeError("the stopwords are not a list of words")
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
        if units is not None and size != units:
            raise IndexDirError(f"{directory}: a BM25 index of {size} units, expected {units}; rebuild with build.sh")
        if not consistent:
            raise IndexDirError(f"{directory}: BM25 arrays are inconsistent (their sizes, types or values do not "
                                "fit together); rebuild with build.sh")
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

    def term_key(self) -> Callable[[str], str | None]:
        """A word's key as this index matches it (its stem), or None for a word it never matches (a stopword)."""
        return term_key(self.tokenizer)

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


def term_key(tokenizer: Any = None) -> Callable[[str], str | None]:
    """A word's key under `tokenizer` (default: the one every index is built with): its stem, None for a
    stopword."""
    if tokenizer is None:
        from bm25s.tokenization import Tokenizer

        tokenizer = Tokenizer(stemmer=_stemmer(), stopwords="en")
    stop, stem, lower = frozenset(tokenizer.stopwords or ()), tokenizer.stemmer, bool(tokenizer.lower)

    def key(word: str) -> str | None:
        word = word.lower() if lower else word
        return None if word in stop else stem(word)

    return key
