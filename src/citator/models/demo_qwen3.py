"""A machinery-only Qwen3: random weights and the real Qwen3 tokenizer, made from a seed when asked.

citator downloads no model, yet reranking, the local statute grader and a Qwen3 embedding encoder each need a Qwen3
directory. This one lets every such path run anywhere: its token counts and chat template are Qwen3's own (the
tokenizer ships in `qwen3-tokenizer/`, Apache-2.0), its weights are noise, so its rankings mean nothing. It says
so where it lives (`config.json`'s `citator_machinery_only`, a README.md) and wherever citator loads it
(`machinery_only`). Nothing of it is committed: the same seed and torch make the same weights.
"""

from __future__ import annotations

import gzip
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from citator.data.atomic import check_output, output_dir
from citator.errors import OutputError

TOKENIZER = Path(__file__).parent / "qwen3-tokenizer"
KINDS = ("causal", "embedding")
# The key in config.json that marks the model, and what it says.
MARK = "citator_machinery_only"
NOTE = ("random weights made by `citator demo-model` from seed {seed}, with the real Qwen3 tokenizer: it runs every "
        "Qwen3 path but knows nothing, so its scores and rankings mean nothing")


def unpack_tokenizer(target: Path) -> Path:
    """Copy the shipped Qwen3 tokenizer into `target`, tokenizer.json decompressed as the libraries read it."""
    target.mkdir(parents=True, exist_ok=True)
    for f in TOKENIZER.iterdir():
        if f.name == "tokenizer.json.gz":
            with gzip.open(f, "rb") as src, (target / "tokenizer.json").open("wb") as dst:
                shutil.copyfileobj(src, dst)
        elif f.suffix == ".json":
            shutil.copy(f, target / f.name)
    return target


def _token_id(tokenizer: Any, token: str) -> int:
    found = tokenizer.convert_tokens_to_ids(token)
    if not isinstance(found, int):
        raise ValueError(f"the vendored tokenizer has no single id for {token!r}")
    return found


def build(target: Path, kind: str = "causal", seed: int = 0) -> Path:
    """Save a tiny random Qwen3 (`kind`: a causal LM, or the bare model an embedding encoder pools) with the real
    tokenizer into `target`, a folder of its own. Two layers of width 32: built and loaded in seconds."""
    import torch
    from transformers import AutoTokenizer, Qwen3Config, Qwen3ForCausalLM, Qwen3Model
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # a save of seconds: the command says what it wrote
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    unpack_tokenizer(target)
    tokenizer = AutoTokenizer.from_pretrained(target, local_files_only=True)
    marks: dict[str, Any] = {MARK: NOTE.format(seed=seed)}  # what the folder is, kept in its config.json
    config = Qwen3Config(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=8, max_position_embeddings=32768, tie_word_embeddings=True,
        bos_token_id=_token_id(tokenizer, "<|endoftext|>"), eos_token_id=_token_id(tokenizer, "<|im_end|>"),
        pad_token_id=_token_id(tokenizer, "<|endoftext|>"), **marks,
    )
    torch.manual_seed(seed)
    model = Qwen3ForCausalLM(config) if kind == "causal" else Qwen3Model(config)
    model.save_pretrained(target)
    if kind == "embedding":
        tokenizer.padding_side = "left"  # the last token is the one pooled
    tokenizer.save_pretrained(target)
    (target / "README.md").write_text(f"# Not a model\n\nA machinery-only Qwen3 ({kind}): {NOTE.format(seed=seed)}.\n")
    return target


def machinery_only(model_dir: str | Path) -> str | None:
    """What a machinery-only model says of itself, or None for any other folder."""
    from citator.models.directory import read_config

    try:
        note = read_config(Path(model_dir)).get(MARK)
    except Exception:  # noqa: BLE001 - not a model at all: whoever loads it says so
        return None
    return note if isinstance(note, str) else None


def write(out: str | Path, kind: str = "causal", seed: int = 0) -> Path:
    """Build the model into `out`: a new or empty folder, or one this function wrote before (replaced file by file,
    each file by rename, as the output rule asks). A folder holding anything else is refused: `--out` pointed at a
    real model must not lose it."""
    target = output_dir(out, make=False)
    if target.exists() and any(target.iterdir()) and machinery_only(target) is None:
        raise OutputError(f"{target}: holds files and is no machinery-only model written by citator demo-model; "
                          "give a new or empty folder")
    target = output_dir(target)
    work = Path(tempfile.mkdtemp(prefix=".demo-model-", dir=target))  # beside its files: each move is a rename
    try:
        build(work, kind, seed)
        umask = os.umask(0)
        os.umask(umask)
        for f in sorted(work.iterdir()):
            f.chmod(0o666 & ~umask)  # as any file the user makes (the libraries write some through private temp files)
            os.replace(f, check_output(target / f.name))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target
