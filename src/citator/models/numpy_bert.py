"""A BERT-family encoder in numpy: no torch, no transformers, so a cold run.sh starts in a fraction of the time.

Importing torch and transformers' BERT costs a cold process about 5 s; encoding a few hundred short queries with
MiniLM costs about 1 s either way (both are BLAS matrix products). This backend reads the same directory
(`config.json`, `model.safetensors`, `tokenizer.json`, the sentence-transformers pooling config and citator's
query prefixes) and gives the same vectors as `TransformerEncoder` (tested to 1e-5).
It serves the query side of a search; building an index keeps the torch backend (GPU, long documents).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from citator.errors import ConfigError
from citator.models.encoder import (
    QUERY_BATCH,
    Encoder,
    TokenStates,
    content_vocabulary,
    encode_each_once,
    pad_token_states,
)
from citator.models.transformer_encoder import read_pooling, read_query_prefixes

SUPPORTED_TYPES = ("bert",)


def supports(model_dir: Path) -> bool:
    """True for a BERT directory this backend can run exactly (absolute positions, GELU, safetensors, tokenizer.json)."""
    try:
        cfg = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (cfg.get("model_type") in SUPPORTED_TYPES and cfg.get("hidden_act") == "gelu"
            and cfg.get("position_embedding_type", "absolute") == "absolute"
            and (model_dir / "model.safetensors").is_file() and (model_dir / "tokenizer.json").is_file()
            and read_pooling(model_dir)[0] in ("mean", "cls"))


class NumpyBertEncoder(Encoder):
    def __init__(self, model_dir: str | Path, max_length: int | None = None) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        model_dir = Path(model_dir)
        if not supports(model_dir):
            raise ConfigError(f"{model_dir}: not a BERT directory the numpy backend can run")
        cfg = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
        self.pooling, st_max = read_pooling(model_dir)
        self.max_length = min(max_length or st_max or 512, int(cfg.get("max_position_embeddings", 512)))
        self.model_id = f"{cfg['model_type']}:{model_dir.name}"
        self.dim = int(cfg["hidden_size"])
        self.heads = int(cfg["num_attention_heads"])
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        self.query_prefixes = read_query_prefixes(model_dir)
        self._content: np.ndarray | None = None
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.max_length)
        weights = load_file(model_dir / "model.safetensors")
        prefix = "bert." if "bert.embeddings.word_embeddings.weight" in weights else ""
        w = lambda name: np.ascontiguousarray(weights[prefix + name], dtype=np.float32)  # noqa: E731
        self.word = w("embeddings.word_embeddings.weight")
        self.position = w("embeddings.position_embeddings.weight")
        self.token_type = w("embeddings.token_type_embeddings.weight")
        self.embed_norm = (w("embeddings.LayerNorm.weight"), w("embeddings.LayerNorm.bias"))
        self.layers = []
        for i in range(int(cfg["num_hidden_layers"])):
            p = f"encoder.layer.{i}."
            # Query, key and value in one product; every matrix stored transposed, (in, out), for x @ W.
            qkv = np.concatenate([w(p + f"attention.self.{n}.weight") for n in ("query", "key", "value")]).T
            qkv_bias = np.concatenate([w(p + f"attention.self.{n}.bias") for n in ("query", "key", "value")])
            self.layers.append((
                np.ascontiguousarray(qkv), qkv_bias,
                np.ascontiguousarray(w(p + "attention.output.dense.weight").T), w(p + "attention.output.dense.bias"),
                (w(p + "attention.output.LayerNorm.weight"), w(p + "attention.output.LayerNorm.bias")),
                np.ascontiguousarray(w(p + "intermediate.dense.weight").T), w(p + "intermediate.dense.bias"),
                np.ascontiguousarray(w(p + "output.dense.weight").T), w(p + "output.dense.bias"),
                (w(p + "output.LayerNorm.weight"), w(p + "output.LayerNorm.bias")),
            ))

    def query_prefix(self, stance: str) -> str:
        return self.query_prefixes.get(stance, "")

    def format_query(self, text: str, stance: str) -> str:
        return self.query_prefix(stance) + text

    def _layer_norm(self, x: np.ndarray, params: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.eps) * params[0] + params[1]

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Hidden states of the real tokens only, (n_tokens, dim) in row-major (sequence, position) order.

        Dense layers, norms and GELU run on the real tokens alone (padding is only materialised for attention),
        and every product is 2-D: numpy hands 2-D products to BLAS but loops over a 3-D operand itself.
        """
        b, n = ids.shape
        real = mask.reshape(-1) > 0
        positions = np.broadcast_to(np.arange(n), (b, n)).reshape(-1)[real]
        h = self._layer_norm(self.word[ids.reshape(-1)[real]] + self.position[positions] + self.token_type[0],
                             self.embed_norm)
        head_dim = self.dim // self.heads
        bias = np.where(mask[:, None, None, :] > 0, 0.0, np.finfo(np.float32).min).astype(np.float32)
        padded = np.zeros((b * n, 3 * self.dim), dtype=np.float32)
        for qkv, qkv_b, out_w, out_b, norm1, up_w, up_b, down_w, down_b, norm2 in self.layers:
            padded[real] = h @ qkv + qkv_b
            # (b, n, 3, heads, head_dim) -> contiguous (3, b, heads, n, head_dim) for batched BLAS products.
            q, k, v = np.ascontiguousarray(padded.reshape(b, n, 3, self.heads, head_dim).transpose(2, 0, 3, 1, 4))
            scores = q @ np.ascontiguousarray(k.transpose(0, 1, 3, 2)) * np.float32(1.0 / math.sqrt(head_dim)) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(b * n, self.dim)[real]
            h = self._layer_norm(h + context @ out_w + out_b, norm1)
            up = h @ up_w + up_b
            up *= 0.5 * (1.0 + _erf(up * np.float32(1.0 / math.sqrt(2.0))))
            h = self._layer_norm(h + up @ down_w + down_b, norm2)
        return h

    def _encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        return self._encode_encodings(self.tokenizer.encode_batch(list(texts)), batch_size)[0]

    def _encode_encodings(self, encodings, batch_size: int, keep_states: bool = False  # type: ignore[no-untyped-def]
                          ) -> tuple[np.ndarray, list[np.ndarray]]:
        """Pooled unit vectors and, with `keep_states`, each text's last-layer states (n_tokens, dim)."""
        out = np.zeros((len(encodings), self.dim), dtype=np.float32)
        states: list[np.ndarray] = [np.zeros((0, self.dim), dtype=np.float32)] * len(encodings)
        # Sorting by length keeps padding small; the original order is restored by indexing.
        order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            width = max(len(encodings[i].ids) for i in idx)
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


# Abramowitz & Stegun 7.1.26: |error| < 1.5e-7, about float32's resolution, in vectorised numpy passes (scipy's erf
# is a scalar loop, and the slowest step of the whole forward pass).
_P = np.float32(0.3275911)
_A = [np.float32(a) for a in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)]


def _erf(x: np.ndarray) -> np.ndarray:
    ax = np.abs(x)
    t = 1.0 / (1.0 + _P * ax)
    poly = _A[0] * t
    for a in _A[1:]:
        poly += a
        poly *= t
    ax *= ax
    np.negative(ax, out=ax)
    np.exp(ax, out=ax)
    poly *= ax
    np.subtract(1.0, poly, out=poly)
    return np.copysign(poly, x, out=poly)
