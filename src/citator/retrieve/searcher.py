"""Stance-aware search over an index directory: signals per document, then fusion, then top-k."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from citator.data.records import Query, ResultLine, ScoredDoc
from citator.retrieve.config import RetrievalConfig
from citator.retrieve.dense import DenseIndex
from citator.retrieve.fusion import interpolate, rrf, top_k
from citator.retrieve.index_dir import Manifest, read_manifest
from citator.retrieve.lexical import LexicalIndex
from citator.retrieve.passages import max_per_document

# A signal maps a batch of queries to a (n_queries, n_docs) score matrix. Learned components add their own.
Signal = Callable[[Sequence[Query]], np.ndarray]


class StanceSearcher:
    """Holds the index (mmap) and the encoder in memory; answers batches of queries."""

    def __init__(self, index_dir: str | Path, encoder_path: str | Path | None = None) -> None:
        from citator.models.encoder import load_encoder

        self.index_dir = Path(index_dir).absolute()
        self.manifest: Manifest = read_manifest(self.index_dir)
        self.config: RetrievalConfig = self.manifest.config
        path = self.manifest.path
        self.doc_ids: list[str] = json.loads(path(self.index_dir, "doc_ids.json").read_text(encoding="utf-8"))
        self.passage_starts = np.load(path(self.index_dir, "passage_starts.npy"))
        self.lexical_doc = LexicalIndex.load(path(self.index_dir, "lexical_doc"))
        self.lexical_passage = LexicalIndex.load(path(self.index_dir, "lexical_passage"))
        self.dense = DenseIndex.load(path(self.index_dir, "dense.npy"))
        self.encoder = load_encoder(encoder_path or self.manifest.encoder_path)
        self.signals: dict[str, Signal] = {
            "bm25": lambda qs: self.lexical_doc.score_all([q.text for q in qs]),
            "bm25_maxp": lambda qs: max_per_document(self.lexical_passage.score_all([q.text for q in qs]), self.passage_starts),
            "dense": self._dense,
        }

    def _dense(self, queries: Sequence[Query]) -> np.ndarray:
        vectors = self.encoder.encode_queries([q.text for q in queries], [q.stance for q in queries])
        return max_per_document(self.dense.score_all(vectors), self.passage_starts)

    def signal_matrices(self, queries: Sequence[Query], names: Sequence[str]) -> dict[str, np.ndarray]:
        return {name: self.signals[name](queries) for name in names}

    def fuse(self, signals: Mapping[str, np.ndarray], config: RetrievalConfig | None = None) -> np.ndarray:
        config = config or self.config
        if config.fusion == "rrf":
            return rrf(signals, config.weights, config.rrf_k)
        return interpolate(signals, config.weights, config.norm_depth)

    def search(self, queries: Sequence[Query], k: int = 10, batch_size: int = 256) -> list[ResultLine]:
        """Top-k distinct known documents per query with finite, non-increasing scores."""
        names = [n for n, w in self.config.weights.items() if w]
        out: list[ResultLine] = []
        for start in range(0, len(queries), batch_size):
            batch = queries[start : start + batch_size]
            fused = self.fuse(self.signal_matrices(batch, names))
            fused = np.nan_to_num(fused, nan=0.0, posinf=0.0, neginf=0.0)
            idx, scores = top_k(fused, k)
            for q, row_idx, row_scores in zip(batch, idx, scores):
                out.append(ResultLine(q.query_id, tuple(ScoredDoc(self.doc_ids[i], float(s)) for i, s in zip(row_idx, row_scores))))
        return out
