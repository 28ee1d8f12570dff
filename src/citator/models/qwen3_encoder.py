"""Encoder backend for Qwen3-Embedding-style directories: instruction on the query side, last-token pooling."""

from __future__ import annotations

from pathlib import Path

from citator.models.transformer_encoder import TransformerEncoder

EOS = "<|endoftext|>"

# Task texts for instruction-following embedders (Qwen3-Embedding): "Instruct: {task}\nQuery:{text}".
STANCE_TASKS = {
    "supported": "Given a legal proposition, retrieve court decisions that support it",
    "refuted": "Given a legal proposition, retrieve court decisions that refute or contradict it",
    "all": "Given a legal proposition, retrieve court decisions that support or refute it",
}


def query_with_instruction(text: str, stance: str) -> str:
    """The Qwen3-Embedding query format: `Instruct: {task}\\nQuery:{text}`."""
    return f"Instruct: {STANCE_TASKS[stance]}\nQuery:{text}"


class Qwen3Encoder(TransformerEncoder):
    """Left padding, last-token pooling, L2 normalisation; bf16 on GPU, fp32 on CPU."""

    padding_side = "left"
    instructed = True

    def __init__(self, model_dir: str | Path, device: str | None = None, max_length: int = 512) -> None:
        super().__init__(model_dir, device=device, pooling="last", max_length=max_length)
        self.model_id = f"qwen3-embedding:{Path(model_dir).name}"
        # Qwen3-Embedding pools the hidden state of a closing <|endoftext|>; older tokenizer files do not add it.
        eos_id = self.tokenizer.convert_tokens_to_ids(EOS)
        self._suffix = "" if self.tokenizer("a")["input_ids"][-1] == eos_id else EOS

    def query_prefix(self, stance: str) -> str:
        return query_with_instruction("", stance)

    def format_query(self, text: str, stance: str) -> str:
        return query_with_instruction(text, stance) + self._suffix

    def format_document(self, text: str) -> str:
        return text + self._suffix
