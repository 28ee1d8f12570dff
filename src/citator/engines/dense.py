"""Exact inner-product search over stored unit vectors (numpy; faiss-cpu beyond ~1M vectors)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from citator.data.atomic import save_npy_atomic

if TYPE_CHECKING:  # faiss is imported where a large index first searches (the optional extra `faiss`)
    import faiss

FAISS_THRESHOLD = 1_000_000


def exact_inner(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """float32 `a @ b.T`, summed in float64: the same bits whatever shape the product has.

    BLAS chooses its kernel by the product's shape (one for a single row, one for small products, one for large),
    and each sums in its own order, so in float32 a score's last bits depend on the batch a query is asked in and on
    the shard that holds the document; the learned ranker, normalising over a few close scores, magnifies that past
    1e-5. A product of two float32 numbers is exact in float64 and a float64 sum of a few hundred of them is off by
    about 1e-16, so rounded to float32 it is the same in any shape (it could differ only within 1e-16 of a rounding
    boundary). Where one operand is reused, keep it in float64 (DenseIndex does) rather than convert it per call.
    """
    return (np.asarray(a, dtype=np.float64) @ np.asarray(b, dtype=np.float64).T).astype(np.float32)


def normalise_rows(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length; all-zero rows stay zero."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


class DenseIndex:
    """Unit vectors as a .npy file (float16 on disk to halve the size; scored by exact_inner)."""

    def __init__(self, vectors: np.ndarray) -> None:
        self.vectors = vectors
        self._faiss: faiss.IndexFlatIP | None = None  # built on the first search of a large index
        # The float64 copy scoring reads, made on the first search and kept: a long-lived server would otherwise
        # convert every stored vector again for each batch (most of a warm brief's dense scoring).
        self._scored: np.ndarray | None = None

    def save(self, path: Path, dtype: str = "float16") -> None:
        save_npy_atomic(path, self.vectors.astype(dtype))

    @classmethod
    def load(cls, path: Path, mmap: bool = True) -> DenseIndex:
        return cls(np.load(path, mmap_mode="r" if mmap else None))

    @property
    def size(self) -> int:
        return int(self.vectors.shape[0])

    def score_all(self, queries: np.ndarray) -> np.ndarray:
        """float32 (n_queries, n_vectors) inner products, as exact_inner gives them."""
        if self._scored is None:
            self._scored = np.asarray(self.vectors, dtype=np.float64)
        return exact_inner(queries, self._scored)

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (indices, scores) per query; faiss IndexFlatIP for very large indexes."""
        if self.size > FAISS_THRESHOLD:
            import faiss

            if self._faiss is None:
                self._faiss = faiss.IndexFlatIP(self.vectors.shape[1])
                self._faiss.add(np.ascontiguousarray(self.vectors, dtype=np.float32))
            scores, idx = self._faiss.search(np.ascontiguousarray(queries, dtype=np.float32), k)
            return idx, scores
        from citator.engines.fusion import top_k

        return top_k(self.score_all(queries), k)
