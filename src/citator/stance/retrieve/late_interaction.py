"""Late interaction (ColBERT's MaxSim) between the query's and a candidate document's content tokens.

Every content token of the query (no prefix, special, punctuation or stopword tokens) finds its most similar
content token of the document; the score is the mean of those best cosines. The document side is the base
encoder's last layer over the index's passages, computed once when the index is built; the query side is the
fine-tuned query encoder's last layer, from the same forward pass that gives the query vector. Neither side is
trained for it: it reads token-level evidence (which words of the claim the summary actually states) that the
pooled vectors blur. On CaseFacts it is the strongest single addition to the learned fusion (LambdaMART's dev
NDCG@10 in `citator train` 0.522 -> 0.558, scoring the interpolation's top 100 candidates; BENCHMARKS.md).

Scoring is exact and costs about (query tokens x candidate tokens x dim) per pair, so it runs on candidates only.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from citator.data.atomic import save_npy_atomic
from citator.models.encoder import Encoder, TokenStates
from citator.stance.retrieve.layout import LATE_OFFSETS, LATE_SCALES, LATE_TOKENS

SIGNAL = "maxsim"
# Most bytes of gathered query tokens that maxsim holds at once (one block of documents).
BLOCK_BYTES = 256 << 20
# Candidates scored per query: the learned ranker's own candidates (CaseFacts out-of-fold train NDCG@10 of the
# learned fusion, content tokens on both sides: 0.5014 scoring the top 70, 0.5068 the top 100).
DEPTH = 100
# A store's files (in an index's data folder, or a folder of base passages kept by a PassageStore).
TOKENS, SCALES, OFFSETS = LATE_TOKENS, LATE_SCALES, LATE_OFFSETS


@dataclass(frozen=True)
class TokenStore:
    """All documents' content-token states, int8 (n_tokens, dim) with one float32 scale per token (a token's state
    is tokens[t] * scales[t]); document d's rows are offsets[d]:offsets[d + 1].

    int8 rather than float16: half the bytes, and numpy widens int8 to float32 several times faster than float16
    (whose conversion took 2 of the 2.5 s that scoring 311 CaseFacts queries' top 100 cost); symmetric per-token
    quantisation of unit vectors moves a cosine by about 1e-3.
    """

    tokens: np.ndarray
    scales: np.ndarray
    offsets: np.ndarray

    @classmethod
    def from_passages(cls, passage_tokens: Sequence[np.ndarray], passage_ids: Sequence[np.ndarray],
                      starts: np.ndarray, dim: int) -> TokenStore:
        """Documents' tokens from their passages' content tokens (states and token ids, in passage order; a
        document's passages are contiguous, starting at `starts`), keeping each token id once per document (its
        first occurrence).

        MaxSim reads only a document's best match for each query token, and the same word's states within one
        document are close: on CaseFacts keeping the first occurrence kept 49% of the content tokens (half the
        scoring time) and measured the same (out-of-fold train NDCG@10 of the learned fusion 0.5079 vs 0.5068,
        dev 0.5600 vs 0.5689), where scoring the top 70 instead of 100 lost (0.5014, dev 0.5550).
        """
        lengths = np.array([len(t) for t in passage_tokens], dtype=np.int64)
        n_docs = len(starts)
        doc_of_passage = np.repeat(np.arange(n_docs), np.diff(np.append(starts, len(passage_tokens))))
        doc_of_token = np.repeat(doc_of_passage, lengths)
        ids = np.concatenate(passage_ids).astype(np.int64) if len(passage_ids) else np.zeros(0, dtype=np.int64)
        # First occurrence of each (document, id), in the original order; tokens stay grouped by document.
        _, first = np.unique(doc_of_token * (int(ids.max(initial=0)) + 1) + ids, return_index=True)
        keep = np.sort(first)
        offsets = np.searchsorted(doc_of_token[keep], np.arange(n_docs + 1))
        states = np.concatenate(passage_tokens) if len(passage_tokens) else np.zeros((0, dim))
        tokens, scales = quantise(states, keep)
        return cls(tokens, scales, offsets)

    @classmethod
    def encode(cls, encoder: Encoder, passages: Sequence[str], starts: np.ndarray, progress: bool = False,
               docs_per_chunk: int = 256) -> tuple[np.ndarray, TokenStore]:
        """The passages' vectors and their documents' token store, from one forward pass of `encoder`.

        Documents are encoded `docs_per_chunk` at a time and each chunk is quantised before the next is encoded, so
        only one chunk's float states are ever held: building CaseFacts' store (8,107 passages) peaked at 5.1 GB of
        resident memory in one pass and at 1.8 GB in chunks, with the same tokens."""
        from citator.models.progress import bar as progress_bar

        bounds = np.append(np.asarray(starts, dtype=np.int64), len(passages))
        vectors: list[np.ndarray] = []
        parts: list[TokenStore] = []
        with progress_bar(total=len(passages), desc="passage tokens", show=progress) as bar:
            for lo in range(0, len(starts), docs_per_chunk):
                hi = min(lo + docs_per_chunk, len(starts))
                first, last = int(bounds[lo]), int(bounds[hi])
                v, states, ids = encoder.encode_documents_with_tokens(list(passages[first:last]))
                vectors.append(v)
                parts.append(cls.from_passages(states, ids, bounds[lo:hi] - first, encoder.dim))
                bar.update(last - first)
        if not parts:
            return np.zeros((0, encoder.dim), dtype=np.float32), cls.from_passages([], [], starts, encoder.dim)
        return np.concatenate(vectors), cls.concatenate(parts)

    @classmethod
    def concatenate(cls, parts: Sequence[TokenStore]) -> TokenStore:
        """The stores of consecutive runs of documents as one store."""
        ends = np.cumsum([0] + [int(p.offsets[-1]) for p in parts[:-1]])
        offsets = np.concatenate([[0]] + [p.offsets[1:] + end for p, end in zip(parts, ends)])
        return cls(np.concatenate([p.tokens for p in parts]), np.concatenate([p.scales for p in parts]),
                   offsets.astype(np.int64))

    def save(self, directory: Path) -> None:
        # One file at a time, atomically, offsets last: a store cut short is not present().
        save_npy_atomic(directory / TOKENS, self.tokens)
        save_npy_atomic(directory / SCALES, self.scales)
        save_npy_atomic(directory / OFFSETS, self.offsets)

    @classmethod
    def load(cls, directory: Path) -> TokenStore:
        # Memory-mapped: a cold run.sh reads only its candidates' rows.
        return cls(np.load(directory / TOKENS, mmap_mode="r"), np.load(directory / SCALES),
                   np.load(directory / OFFSETS))

    @staticmethod
    def present(directory: Path) -> bool:
        return all((directory / name).is_file() for name in (TOKENS, SCALES, OFFSETS))

    def document(self, d: int) -> np.ndarray:
        """Document d's token states, float32 (n_tokens, dim)."""
        lo, hi = self.offsets[d], self.offsets[d + 1]
        return self.tokens[lo:hi].astype(np.float32) * self.scales[lo:hi, None]


def reads_late_interaction(features: Sequence[str]) -> bool:
    """Whether a ranker with these feature names scores late interaction (and so needs the document tokens)."""
    return any(f.startswith(f"{SIGNAL}:") for f in features)


def quantise(states: np.ndarray, rows: np.ndarray | None = None, chunk: int = 65536) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 per row (of `states`, or of its `rows`): int8 states and float32 scales with
    states ~= int8 * scale, |int8| <= 127."""
    rows = np.arange(len(states)) if rows is None else rows
    tokens = np.empty((len(rows), states.shape[1]), dtype=np.int8)
    scales = np.empty(len(rows), dtype=np.float32)
    for lo in range(0, len(rows), chunk):  # in chunks: a corpus's float32 copy would double the peak memory
        part = np.asarray(states[rows[lo : lo + chunk]], dtype=np.float32)
        scale = np.abs(part).max(axis=1, initial=0.0) / 127.0
        scale[scale == 0] = 1.0
        tokens[lo : lo + chunk] = np.rint(part / scale[:, None]).astype(np.int8)
        scales[lo : lo + chunk] = scale
    return tokens, scales


@functools.cache
def _cpu_has_vnni() -> bool:
    """Whether the CPU has AVX-512 VNNI, without which torch's CPU int8 product is a scalar loop (Linux flags)."""
    try:
        return "avx512_vnni" in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").split()
    except OSError:
        return False


def int8_products(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """left @ right.T of two int8 matrices, exactly, as float32 (|entries| <= 127).

    torch's int8 kernel where this process has loaded torch already (the search server, training) and the CPU has
    AVX-512 VNNI: 5x faster than float32 BLAS here. Otherwise (a cold run.sh, which must not pay torch's import, or
    a CPU without VNNI) numpy's float32 product of the same integers, whose partial sums stay exact below 2**24
    (dim <= 1040; float64 beyond): both give the same numbers, so warm and cold searches agree.
    """
    torch = sys.modules.get("torch")
    if torch is not None and _cpu_has_vnni():
        # torch wants writable memory: a memory-mapped store's rows are copied (a document's: tens of kB).
        left, right = (a if a.flags.writeable and a.flags.c_contiguous else np.array(a) for a in (left, right))
        return torch._int_mm(torch.from_numpy(left), torch.from_numpy(right).T).numpy().astype(np.float32)
    if left.shape[1] * 127 * 127 < 2**24:
        return (left.astype(np.float32) @ right.astype(np.float32).T).astype(np.float32)
    return (left.astype(np.float64) @ right.astype(np.float64).T).astype(np.float32)


def maxsim(queries: TokenStates, candidates: np.ndarray, store: TokenStore) -> np.ndarray:
    """(n_queries, n_candidates): mean over each query's content tokens of its best cosine with the candidate's.

    Both sides are int8 with a scale per token (the query's quantised here, as the store's were), so each product
    is exact integer arithmetic (int8_products) and a cosine moves by about 1e-3 from the float states'. Pairs are
    grouped by document, so each document's tokens are read once per batch and scored against all the queries that
    have it as a candidate in one product. A query or document with no content token scores 0.
    """
    n_tokens = queries.mask.sum(axis=1)
    # The queries' content tokens packed query after query (no padding rows to multiply: CaseFacts queries have
    # 16 content tokens on average but the longest 34), query i's at starts[i]:starts[i] + n_tokens[i].
    packed, packed_scales = quantise(queries.states[queries.mask])
    starts = np.concatenate([[0], np.cumsum(n_tokens)[:-1]]).astype(np.int64)
    out = np.zeros(candidates.shape, dtype=np.float32)
    n_cand = candidates.shape[1] if candidates.ndim == 2 else 0
    flat = candidates.ravel()
    live = np.flatnonzero(np.repeat(n_tokens > 0, n_cand))  # pairs whose query has a content token
    order = live[np.argsort(flat[live], kind="stable")]
    if not len(order):
        return out
    # Every pair's query tokens gathered in document order, a block of documents at a time (at most BLOCK_BYTES of
    # tokens, or one document): a document's products then read one contiguous slice of the block (per-document
    # gathers and index arithmetic cost more than the int8 products), and memory stays bounded when training
    # scores thousands of queries at once.
    rows = order // n_cand  # each pair's query
    lengths = n_tokens[rows]
    pair_starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    rows_of_tokens = np.arange(lengths.sum()) + np.repeat(starts[rows] - pair_starts, lengths)
    best = np.zeros(len(rows_of_tokens), dtype=np.float32)
    first_pairs = np.concatenate([[0], np.flatnonzero(np.diff(flat[order])) + 1])
    bounds = np.append(pair_starts[first_pairs], len(rows_of_tokens))  # each document's slice of the tokens
    docs = flat[order[first_pairs]]
    block_rows = max(1, BLOCK_BYTES // max(packed.shape[1], 1))

    def score(groups: Sequence[int], left: np.ndarray, base: int) -> None:
        for g in groups:
            lo, hi = store.offsets[docs[g]], store.offsets[docs[g] + 1]
            if hi > lo:  # one 2-D product per document; its tokens' scales apply to the product
                sims = int8_products(left[bounds[g] - base : bounds[g + 1] - base], store.tokens[lo:hi])
                best[bounds[g] : bounds[g + 1]] = (sims * store.scales[lo:hi]).max(axis=1)

    # numpy and torch release the GIL in their products, reductions and casts: documents split over threads use
    # every core. BLAS runs single-threaded meanwhile (its own threads would contend with ours: 311 CaseFacts
    # queries' top 100 took 1.01 s on one thread with threaded BLAS, 1.21 s on two, 0.77 s on two with BLAS on one,
    # in float32 before the int8 products; torch's own threads measured the same at 1 or 2 in the int8 products).
    workers = min(os.cpu_count() or 1, 8) if len(docs) > 64 else 1
    with threadpool_limits(1, user_api="blas"), ThreadPoolExecutor(workers) as pool:
        g0 = 0
        while g0 < len(docs):
            # The documents whose tokens end within block_rows of g0's start (bounds has one entry per document
            # and a last one, so this stays <= len(docs)), or g0 alone.
            g1 = max(g0 + 1, int(np.searchsorted(bounds, bounds[g0] + block_rows, side="right")) - 1)
            left, base = packed[rows_of_tokens[bounds[g0] : bounds[g1]]], int(bounds[g0])
            list(pool.map(lambda part: score(part, left, base), [range(g0 + i, g1, workers) for i in range(workers)]))
            g0 = g1
    # The query's scale after the max, which it does not change; a document without tokens leaves its pairs at 0.
    out.ravel()[order] = np.add.reduceat(best * packed_scales[rows_of_tokens], pair_starts) / lengths
    return out
