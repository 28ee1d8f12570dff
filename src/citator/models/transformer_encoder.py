"""Encoder backend over a local transformers directory with sentence-transformers-style pooling.

It reads the directory's own pooling config (mean, CLS or last token) but does not import
sentence-transformers, whose import alone costs seconds that run.sh cannot spare.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from citator.models.content_tokens import content_vocabulary
from citator.models.directory import read_config
from citator.models.progress import bar
from citator.models.encoder import (QUERY_BATCH, Encoder, TokenStates, encode_each_once, pad_token_states,
                                    width_batches)

if TYPE_CHECKING:  # torch is imported where it runs: reading this module costs nothing
    import torch
    from transformers import BatchEncoding

QUERY_FORMAT_FILE = "citator_query_format.json"


def read_pooling(model_dir: Path) -> tuple[str, int | None]:
    """(pooling mode, max_seq_length) from a sentence-transformers directory; mean pooling if none is stated."""
    mode = "mean"
    pooling = model_dir / "1_Pooling" / "config.json"
    if pooling.is_file():
        cfg = read_config(model_dir / "1_Pooling")
        if cfg.get("pooling_mode_cls_token"):
            mode = "cls"
        elif cfg.get("pooling_mode_lasttoken"):
            mode = "last"
    max_len = None
    st = model_dir / "sentence_bert_config.json"
    if st.is_file():
        max_len = read_config(model_dir, "sentence_bert_config.json").get("max_seq_length")
    return mode, max_len


def read_query_prefixes(model_dir: Path) -> dict[str, str]:
    """Per-stance query prefixes a fine-tuned directory carries (written by `citator train`); none otherwise."""
    extra = model_dir / QUERY_FORMAT_FILE
    return read_config(model_dir, QUERY_FORMAT_FILE)["query_prefixes"] if extra.is_file() else {}


class TransformerEncoder(Encoder):
    """Symmetric encoder: queries are plain text; subclasses may format queries (e.g. with an instruction)."""

    padding_side = "right"
    # Whether queries carry the model's own instruction (Qwen3-Embedding): learned prefixes then do not apply.
    instructed = False

    def __init__(self, model_dir: str | Path, device: str | None = None, pooling: str | None = None,
                 max_length: int | None = None) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        model_dir = Path(model_dir)
        mode, st_max = read_pooling(model_dir)
        self.pooling = pooling or mode
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        dtype = torch.bfloat16 if self.device.startswith("cuda") else torch.float32
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True, padding_side=self.padding_side)
        self.model = AutoModel.from_pretrained(model_dir, local_files_only=True, dtype=dtype).to(self.device).eval()
        self.max_length = max_length or st_max or 512
        self.model_id = f"{self.model.config.model_type}:{model_dir.name}"
        self.dim = int(self.model.config.hidden_size)
        self.query_prefixes = read_query_prefixes(model_dir)
        self._content: np.ndarray | None = None
        # A fast tokenizer's call sets truncation and padding on the one Rust tokenizer it shares: two threads
        # encoding at once (a served index) could cut one's query to the other's width. One call at a time.
        self._tokenizing = threading.Lock()

    def _tokenize(self, texts: list[str], **options: Any) -> BatchEncoding:
        with self._tokenizing:
            return self.tokenizer(texts, **options)

    def _forward(self, batch: BatchEncoding) -> torch.Tensor:
        """The model's last hidden states, float32."""
        import torch

        with torch.inference_mode():
            return self.model(**batch).last_hidden_state.float()

    def _batches(self, texts: Sequence[str], batch_size: int) -> list[tuple[list[int], int]]:
        """(indices of a batch's texts, the width they are padded to): see width_batches."""
        if not texts:
            return []
        lengths = [len(ids) for ids in self._tokenize(list(texts), truncation=True,
                                                        max_length=self.max_length)["input_ids"]]
        return width_batches(lengths, batch_size, self.max_length)

    def query_prefix(self, stance: str) -> str:
        """What format_query puts before a query's text."""
        return self.query_prefixes.get(stance, "")

    def format_query(self, text: str, stance: str) -> str:
        return self.query_prefix(stance) + text

    def format_document(self, text: str) -> str:
        return text

    def pool(self, hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """A batch's vectors, before normalisation, from its last hidden states and attention mask: as the encoder
        pools them, which fine-tuning pools through too."""
        if self.pooling == "cls":
            return hidden[:, 0]
        if self.pooling == "last":
            if self.padding_side == "left":
                return hidden[:, -1]
            last = mask.sum(dim=1) - 1
            return hidden[range(hidden.shape[0]), last]
        weights = mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)

    def _encode(self, texts: Sequence[str], batch_size: int, progress: bool = False) -> np.ndarray:
        import torch.nn.functional as F

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)  # rows in the original order
        for idx, width in bar(self._batches(texts, batch_size), desc="encode", show=progress):
            batch = self._tokenize([texts[i] for i in idx], truncation=True, return_tensors="pt",
                                   padding="max_length", max_length=width).to(self.device)
            hidden = self._forward(batch)
            pooled = F.normalize(self.pool(hidden, batch["attention_mask"]), p=2, dim=-1)
            out[idx] = pooled.cpu().numpy()
        return out

    def _encode_with_tokens(self, texts: Sequence[str], skip_chars: Sequence[int], batch_size: int,
                            progress: bool = False) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
        """Pooled vectors, and per text the unit-length states and ids of its tokens, leaving out padding and the
        tokens that start within its first `skip_chars[i]` characters (a prefix). One forward pass gives both."""
        import torch.nn.functional as F

        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        states: list[np.ndarray] = [np.zeros((0, self.dim), dtype=np.float32)] * len(texts)
        ids: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * len(texts)
        for idx, width in bar(self._batches(texts, batch_size), desc="encode", show=progress):
            batch = self._tokenize([texts[i] for i in idx], truncation=True, return_tensors="pt",
                                   return_offsets_mapping=True, padding="max_length", max_length=width)
            offsets = batch.pop("offset_mapping").numpy()
            batch = batch.to(self.device)
            hidden = self._forward(batch)
            mask = batch["attention_mask"]
            vectors[idx] = F.normalize(self.pool(hidden, mask), p=2, dim=-1).cpu().numpy()
            unit = F.normalize(hidden, p=2, dim=-1).cpu().numpy()
            mask_np, batch_ids = mask.cpu().numpy().astype(bool), batch["input_ids"].cpu().numpy()
            for row, i in enumerate(idx):
                # A token that starts within the prefix is the prefix's (one that straddles into the text too).
                keep = mask_np[row] & ~(offsets[row, :, 0] < skip_chars[i])
                states[i], ids[i] = unit[row, keep], batch_ids[row, keep]
        return vectors, states, ids

    def encode_queries_with_tokens(self, texts: Sequence[str], stances: Sequence[str],
                                   batch_size: int = QUERY_BATCH) -> tuple[np.ndarray, TokenStates]:
        formatted = [self.format_query(t, s) for t, s in zip(texts, stances)]
        skip = [len(self.query_prefix(s)) for s in stances]
        vectors, states, ids = self._encode_with_tokens(formatted, skip, batch_size)
        content = self.content_vocabulary()
        return vectors, pad_token_states([s[content[i]] for s, i in zip(states, ids)], self.dim)

    def encode_documents_with_tokens(self, texts: Sequence[str], batch_size: int = 32, progress: bool = False
                                     ) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
        vectors, states, ids = self._encode_with_tokens([self.format_document(t) for t in texts], [0] * len(texts),
                                                        batch_size, progress)
        content = self.content_vocabulary()
        return (vectors, [s[content[i]].astype(np.float16) for s, i in zip(states, ids)],
                [i[content[i]] for i in ids])

    def content_vocabulary(self) -> np.ndarray:
        """Per token id: True for a content token (not special, not punctuation only, not an English stopword)."""
        if self._content is None:
            self._content = content_vocabulary(self.tokenizer.convert_ids_to_tokens(list(range(len(self.tokenizer)))),
                                               set(self.tokenizer.all_special_tokens))
        return self._content

    def encode_documents(self, texts: Sequence[str], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        return self._encode([self.format_document(t) for t in texts], batch_size, progress)

    def encode_queries(self, texts: Sequence[str], stances: Sequence[str], batch_size: int = QUERY_BATCH
                       ) -> np.ndarray:
        formatted = [self.format_query(t, s) for t, s in zip(texts, stances)]
        return encode_each_once(formatted, lambda unique: self._encode(unique, batch_size))
