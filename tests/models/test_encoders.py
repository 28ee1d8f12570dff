"""The Qwen3 path (instruction, left padding, last-token pooling) and the MiniLM default."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from citator.models.qwen3_encoder import STANCE_TASKS

from citator.models.load import load_encoder
from citator.models.qwen3_encoder import Qwen3Encoder, query_with_instruction


def test_instruction_format() -> None:
    assert query_with_instruction("States may not ban X.", "refuted") == (
        f"Instruct: {STANCE_TASKS['refuted']}\nQuery:States may not ban X."
    )


def test_qwen3_directory_gets_the_qwen3_backend(tiny_qwen3_embedding_dir: Path) -> None:
    enc = load_encoder(tiny_qwen3_embedding_dir)
    assert isinstance(enc, Qwen3Encoder)
    assert enc.tokenizer.padding_side == "left" and enc.pooling == "last"
    assert enc.format_query("p", "all").endswith("<|endoftext|>")


def test_qwen3_left_padding_and_last_token_pooling(tiny_qwen3_embedding_dir: Path) -> None:
    import torch

    enc = load_encoder(tiny_qwen3_embedding_dir)
    texts = ["a short one", "a considerably longer proposition about the Fourth Amendment and warrants"]
    batched = enc.encode_queries(texts, ["supported", "refuted"], batch_size=2)
    assert np.allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-5)
    # Each text alone (no padding at all): the last hidden state of its final token, normalised.
    for row, (text, stance) in zip(batched, zip(texts, ["supported", "refuted"])):
        ids = enc.tokenizer(enc.format_query(text, stance), return_tensors="pt")
        assert ids["input_ids"][0, -1].item() == enc.tokenizer.convert_tokens_to_ids("<|endoftext|>")
        with torch.inference_mode():
            hidden = enc.model(**ids).last_hidden_state[0, -1]
        alone = (hidden / hidden.norm()).numpy()
        assert np.allclose(row, alone, atol=1e-4)
    # The stance changes the query vector: the instruction really reaches the model.
    s, r = enc.encode_queries([texts[0], texts[0]], ["supported", "refuted"])
    assert not np.allclose(s, r)


@pytest.mark.slow
def test_minilm_matches_sentence_transformers(minilm_dir: Path) -> None:
    from sentence_transformers import SentenceTransformer

    ours = load_encoder(minilm_dir)
    assert ours.dim == 384 and ours.pooling == "mean" and ours.max_length == 256
    texts = ["Police need a warrant to search a cell phone.", "long " * 400, "x"]
    theirs = SentenceTransformer(str(minilm_dir), device="cpu").encode(texts, normalize_embeddings=True)
    assert np.allclose(ours.encode_documents(texts), theirs, atol=1e-5)
    # MiniLM takes no instruction: stance does not change the query vector.
    a, b = ours.encode_queries(["same text", "same text"], ["supported", "refuted"])
    assert np.allclose(a, b)


def test_model_fingerprint_reads_the_files_not_the_folder_name_and_follows_links(tmp_path: Path) -> None:
    import json
    import shutil

    from citator.models.fingerprint import model_fingerprint

    from citator.models.load import default_encoder_path

    real = default_encoder_path()
    linked = tmp_path / "model"
    linked.mkdir()
    for f in real.iterdir():
        if f.name != "1_Pooling":
            (linked / f.name).symlink_to(f)
    pooling = tmp_path / "pooling"
    shutil.copytree(real / "1_Pooling", pooling)
    (linked / "1_Pooling").symlink_to(pooling, target_is_directory=True)
    (linked / "loop").symlink_to(linked, target_is_directory=True)  # a cycle is walked once
    assert model_fingerprint(linked) == model_fingerprint(real)
    config = json.loads((pooling / "config.json").read_text())
    config["pooling_mode_mean_tokens"], config["pooling_mode_cls_token"] = False, True
    (pooling / "config.json").write_text(json.dumps(config))
    assert model_fingerprint(linked) != model_fingerprint(real)
    (linked / "README.md").unlink()  # documentation does not count
    (linked / "NOTES.md").write_text("x")
    assert model_fingerprint(linked) == model_fingerprint(linked.resolve())
