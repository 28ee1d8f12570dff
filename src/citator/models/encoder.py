"""The encoder seam: texts to L2-normalised vectors, with a per-stance query instruction where the model takes one."""

from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from citator.errors import ConfigError

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
# Every text is padded to its token count rounded up to this (see width_batches).
WIDTH_STEP = 32


def width_batches(lengths: Sequence[int], batch_size: int, max_length: int) -> list[tuple[list[int], int]]:
    """Batches of text indices (given each text's token count), each with the width its texts are padded to.

    A text is padded to its length rounded up to a multiple of WIDTH_STEP, whatever shares its batch, so its vector
    is the same bits alone, in any batch and in any shard: a query asked in a batch of 5 scores as in a batch of
    311, and the learned ranker, which magnifies a last-bit difference in a feature, answers the same. Grouping by
    width keeps padding small; texts keep their order within a width.
    """
    widths = [min(max_length, -(-n // WIDTH_STEP) * WIDTH_STEP) for n in lengths]
    out = []
    for width, group in itertools.groupby(sorted(range(len(widths)), key=lambda i: (widths[i], i)),
                                          key=widths.__getitem__):
        members = list(group)
        out += [(members[start:start + batch_size], width) for start in range(0, len(members), batch_size)]
    return out


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
