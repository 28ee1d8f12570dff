"""The query side of a search in onnxruntime: no torch, no transformers, so a cold run.sh starts in a fraction of
the time.

Importing torch and transformers' BERT costs a cold process about 5 s; onnxruntime loads in a fraction of a second
and runs the same graph. `export_onnx` writes a model directory's encoder as an ONNX graph (last-layer states of
every token) when an index is built; `OnnxEncoder` reads that graph with the directory's tokenizer, pooling config
and citator's query prefixes, and gives the same vectors and token states as `TransformerEncoder` (tested to 1e-5).
Building an index keeps the torch backend (GPU, long documents).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from citator.errors import ConfigError
from citator.models.content_tokens import content_vocabulary
from citator.models.directory import loading, read_config
from citator.models.encoder import (QUERY_BATCH, Encoder, TokenStates, encode_each_once, pad_token_states,
                                    width_batches)
from citator.models.transformer_encoder import read_pooling, read_query_prefixes

if TYPE_CHECKING:
    from tokenizers import Encoding

SUPPORTED_TYPES = ("bert",)
# onnxruntime's POSIX builds carry telemetry that writes a device id under the user's cache and may send events;
# citator runs offline and leaves no trace, so it is off unless the user has set the variable themselves. It must
# be in the environment before onnxruntime starts (scripts/env.sh sets it for build.sh and run.sh as well).
TELEMETRY_OFF = {"ORT_DISABLE_TELEMETRY": "1"}


def telemetry_off() -> None:
    """Put TELEMETRY_OFF in the environment (where the user has not set it); call before importing onnxruntime."""
    for name, value in TELEMETRY_OFF.items():
        os.environ.setdefault(name, value)
# The opset the graph is written in: onnxruntime runs every opset up to its own release's.
OPSET = 17


def supports(model_dir: Path) -> bool:
    """True for an encoder directory this backend runs exactly: a BERT-family model with mean or CLS pooling and a
    tokenizer.json (the fast tokenizer onnxruntime's caller needs without transformers)."""
    try:
        cfg = read_config(model_dir)
        pooling = read_pooling(model_dir)[0]
    except ConfigError:
        return False
    return (cfg.get("model_type") in SUPPORTED_TYPES and (model_dir / "tokenizer.json").is_file()
            and pooling in ("mean", "cls"))


def export_onnx(model_dir: Path, out: Path) -> None:
    """Write `model_dir`'s encoder to `out` as an ONNX graph: (input_ids, attention_mask) -> last-layer states,
    batch and length dynamic. Runs torch once, at build time."""
    import warnings

    import torch
    from transformers import AutoModel

    with loading(model_dir):
        model = AutoModel.from_pretrained(model_dir, local_files_only=True).eval()

    class States(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            return self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    ids = torch.ones((2, 8), dtype=torch.int64)
    mask = torch.ones((2, 8), dtype=torch.int64)
    mask[1, 5:] = 0  # traced with padding, so the mask's path is in the graph
    dynamic = {"input_ids": {0: "batch", 1: "length"}, "attention_mask": {0: "batch", 1: "length"},
               "states": {0: "batch", 1: "length"}}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation and tracer notes
        torch.onnx.export(States(), (ids, mask), str(out), input_names=["input_ids", "attention_mask"],
                          output_names=["states"], dynamic_axes=dynamic, opset_version=OPSET, dynamo=False)


class OnnxEncoder(Encoder):
    """Query encoding through an exported graph; `model_dir` gives the tokenizer, pooling and query prefixes."""

    def __init__(self, model_dir: str | Path, graph: str | Path, max_length: int | None = None) -> None:
        telemetry_off()
        import onnxruntime as ort
        from tokenizers import Tokenizer

        model_dir = Path(model_dir)
        if not supports(model_dir):
            raise ConfigError(f"{model_dir}: not an encoder directory the onnx backend can run")
        cfg = read_config(model_dir)
        self.pooling, st_max = read_pooling(model_dir)
        self.max_length = min(max_length or st_max or 512, int(cfg.get("max_position_embeddings", 512)))
        self.model_id = f"{cfg['model_type']}:{model_dir.name}"
        self.dim = int(cfg["hidden_size"])
        self.query_prefixes = read_query_prefixes(model_dir)
        self._content: np.ndarray | None = None
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.max_length)
        options = ort.SessionOptions()
        options.log_severity_level = 3  # warnings about unused initialisers are not the user's business
        try:
            self.session = ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own classes for unreadable or invalid graphs
            raise ConfigError(f"{graph}: not a readable ONNX graph ({str(exc).splitlines()[0][:200]})") from None

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Hidden states of the real tokens only, (n_tokens, dim) in row-major (sequence, position) order."""
        states = self.session.run(["states"], {"input_ids": ids, "attention_mask": mask.astype(np.int64)})[0]
        return np.ascontiguousarray(states.reshape(-1, self.dim)[mask.reshape(-1) > 0], dtype=np.float32)

    def query_prefix(self, stance: str) -> str:
        return self.query_prefixes.get(stance, "")

    def format_query(self, text: str, stance: str) -> str:
        return self.query_prefix(stance) + text

    def _encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        return self._encode_encodings(self.tokenizer.encode_batch(list(texts)), batch_size)[0]

    def _encode_encodings(self, encodings: Sequence[Encoding], batch_size: int, keep_states: bool = False
                          ) -> tuple[np.ndarray, list[np.ndarray]]:
        """Pooled unit vectors and, with `keep_states`, each text's last-layer states (n_tokens, dim)."""
        out = np.zeros((len(encodings), self.dim), dtype=np.float32)
        states: list[np.ndarray] = [np.zeros((0, self.dim), dtype=np.float32)] * len(encodings)
        # Padded as TransformerEncoder pads, so a text's vector does not depend on its batch; rows restored by index.
        for idx, width in width_batches([len(e.ids) for e in encodings], batch_size, self.max_length):
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.float32)
            for row, i in enumerate(idx):
                ids[row, : len(encodings[i].ids)] = encodings[i].ids
                mask[row, : len(encodings[i].ids)] = 1.0
            hidden = self._forward(ids, mask)
            lengths = mask.sum(1).astype(np.int64)
            first = np.concatenate([[0], np.cumsum(lengths)[:-1]])
            if self.pooling == "cls":
                pooled = hidden[first]
            else:
                pooled = np.add.reduceat(hidden, first, axis=0) / lengths[:, None]
            out[idx] = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            if keep_states:
                for i, part in zip(idx, np.split(hidden, first[1:])):
                    states[i] = part
        return out, states

    def encode_queries_with_tokens(self, texts: Sequence[str], stances: Sequence[str],
                                   batch_size: int = QUERY_BATCH) -> tuple[np.ndarray, TokenStates]:
        formatted = [self.format_query(t, s) for t, s in zip(texts, stances)]
        encodings = self.tokenizer.encode_batch(formatted)
        vectors, states = self._encode_encodings(encodings, batch_size, keep_states=True)
        content = self.content_vocabulary()
        kept = []
        for e, h, stance in zip(encodings, states, stances):
            starts = np.array([start for start, _ in e.offsets], dtype=np.int64)
            # As the torch backend: a token that starts within the prefix is the prefix's.
            keep = content[np.array(e.ids, dtype=np.int64)] & ~(starts < len(self.query_prefix(stance)))
            part = h[keep]
            kept.append(part / np.maximum(np.linalg.norm(part, axis=1, keepdims=True), 1e-12))
        return vectors, pad_token_states(kept, self.dim)

    def content_vocabulary(self) -> np.ndarray:
        """Per token id: True for a content token (not special, not punctuation only, not an English stopword)."""
        if self._content is None:
            vocab = [self.tokenizer.id_to_token(i) or "" for i in range(self.tokenizer.get_vocab_size())]
            special = {t.content for t in self.tokenizer.get_added_tokens_decoder().values() if t.special}
            self._content = content_vocabulary(vocab, special)
        return self._content

    def encode_documents(self, texts: Sequence[str], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        return self._encode(list(texts), batch_size)

    def encode_queries(self, texts: Sequence[str], stances: Sequence[str], batch_size: int = QUERY_BATCH
                       ) -> np.ndarray:
        formatted = [self.format_query(t, s) for t, s in zip(texts, stances)]
        return encode_each_once(formatted, lambda unique: self._encode(unique, batch_size))
