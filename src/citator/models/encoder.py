"""The encoder seam: texts to L2-normalised vectors, with a per-stance query instruction where the model takes one."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from citator.errors import ConfigError

# Task texts for instruction-following embedders (Qwen3-Embedding): "Instruct: {task}\nQuery:{text}".
STANCE_TASKS = {
    "supported": "Given a legal proposition, retrieve court decisions that support it",
    "refuted": "Given a legal proposition, retrieve court decisions that refute or contradict it",
    "all": "Given a legal proposition, retrieve court decisions that support or refute it",
}


@dataclass(frozen=True)
class TokenStates:
    """Unit-length last-layer states of each text's tokens, padded: `states` (n, width, dim), `mask` (n, width)."""

    states: np.ndarray
    mask: np.ndarray

    def rows(self, index: Sequence[int] | np.ndarray) -> TokenStates:
        return TokenStates(self.states[index], self.mask[index])


# Queries per forward pass: 311 CaseFacts queries (fine-tuned MiniLM, torch, 2 cores) encoded in 1.16 s in batches
# of 32 against 1.30 s in 64s and 1.34 s in 128s; padding only, the vectors are the same.
QUERY_BATCH = 32


class Encoder(ABC):
    """Encodes queries (with stance) and documents into the same normalised vector space."""

    model_id: str
    dim: int

    def encode_queries_with_tokens(self, texts: Sequence[str], stances: Sequence[str],
                                   batch_size: int = QUERY_BATCH) -> tuple[np.ndarray, TokenStates]:
        """The query vectors and, from the same forward pass, the states of each query's content tokens (those of
        its own text: no instruction or stance prefix, no special, punctuation or stopword tokens): the query side
        of late interaction."""
        raise ConfigError(f"{self.model_id}: this encoder backend gives no token states")

    def encode_documents_with_tokens(self, texts: Sequence[str], batch_size: int = 32, progress: bool = False
                                     ) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
        """The document vectors and, from the same forward pass, each text's content-token states (float16) and
        their token ids."""
        raise ConfigError(f"{self.model_id}: this encoder backend gives no token states")

    @abstractmethod
    def encode_documents(self, texts: Sequence[str], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        """float32 array (n, dim), rows of unit length."""

    @abstractmethod
    def encode_queries(self, texts: Sequence[str], stances: Sequence[str], batch_size: int = QUERY_BATCH
                       ) -> np.ndarray:
        """float32 array (n, dim), rows of unit length; the stance may shape the query side."""


# Lucene's English stop set (the one bm25s and our BM25 use): dropped from the document side of late interaction,
# with special and punctuation-only tokens. On CaseFacts that keeps 61% of the tokens and scored better than all of
# them (out-of-fold train NDCG@10 of the learned fusion 0.4990 vs 0.4912).
STOPWORDS = frozenset(("a an and are as at be but by for if in into is it no not of on or such that the their then "
                       "there these they this to was will with").split())


def content_vocabulary(tokens: Sequence[str], special: set[str]) -> np.ndarray:
    """Per vocabulary entry: True unless it is a special token, punctuation only or a whole-word stopword
    (a WordPiece "##" continuation is never one; byte-level BPE's "Ġ" / SentencePiece's "▁" word markers are ignored)."""
    def content(token: str) -> bool:
        word = token.lstrip("\u0120\u2581").lower()
        return (token not in special and any(c.isalnum() for c in word)
                and (token.startswith("##") or word not in STOPWORDS))

    return np.array([content(t) for t in tokens], dtype=bool)


def pad_token_states(states: Sequence[np.ndarray], dim: int) -> TokenStates:
    """Per-text (n_tokens, dim) arrays as one zero-padded TokenStates."""
    width = max((len(s) for s in states), default=0)
    padded = np.zeros((len(states), width, dim), dtype=np.float32)
    mask = np.zeros((len(states), width), dtype=bool)
    for i, s in enumerate(states):
        padded[i, : len(s)] = s
        mask[i, : len(s)] = True
    return TokenStates(padded, mask)


def encode_each_once(formatted: Sequence[str], encode: Callable[[list[str]], np.ndarray]) -> np.ndarray:
    """`encode` applied to the distinct strings only, rows returned in the order of `formatted`.

    Query files repeat a proposition once per stance: identical formatted strings are encoded once.
    """
    unique = list(dict.fromkeys(formatted))
    vectors = encode(unique)
    row = {text: i for i, text in enumerate(unique)}
    return vectors[[row[f] for f in formatted]] if formatted else vectors
