"""Token states for late interaction: the same forward pass as the vectors, content tokens only, both backends."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

from citator.models.content_tokens import STOPWORDS, content_vocabulary
from citator.models.encoder import pad_token_states
from citator.models.onnx_encoder import OnnxEncoder, export_onnx
from citator.models.transformer_encoder import QUERY_FORMAT_FILE, TransformerEncoder

QUERIES = ["The First Amendment does not protect fraud, e.g. false claims.", "A warrant is needed to search a phone.", "the"]
STANCES = ["supported", "refuted", "all"]


def prefixed(minilm_dir: Path, tmp_path: Path) -> Path:
    model = tmp_path / "model"
    shutil.copytree(minilm_dir, model)
    (model / QUERY_FORMAT_FILE).write_text(json.dumps({"query_prefixes": {"supported": "find support for: ",
                                                                          "refuted": "find refutations: "}}))
    return model


def content_words(encoder: TransformerEncoder, text: str) -> list[str]:
    ids = encoder.tokenizer(text, add_special_tokens=False)["input_ids"]
    return [t for t, i in zip(encoder.tokenizer.convert_ids_to_tokens(ids), ids) if encoder.content_vocabulary()[i]]


def test_content_vocabulary_drops_specials_punctuation_and_whole_word_stopwords() -> None:
    tokens = ["[CLS]", "the", "Ġthe", "The", ",", "...", "court", "##s", "##the", "Ġwarrant", "not", "2019"]
    keep = content_vocabulary(tokens, {"[CLS]"}).tolist()
    assert keep == [False, False, False, False, False, False, True, True, True, True, False, True]
    assert "not" in STOPWORDS and "court" not in STOPWORDS


def test_query_tokens_are_the_text_s_content_tokens_from_the_same_pass(minilm_dir: Path, tmp_path: Path) -> None:
    encoder = TransformerEncoder(prefixed(minilm_dir, tmp_path), device="cpu")
    vectors, tokens = encoder.encode_queries_with_tokens(QUERIES, STANCES)
    assert np.abs(vectors - encoder.encode_queries(QUERIES, STANCES)).max() < 1e-6
    # The prefix ("find support for: " has content words), specials, punctuation and stopwords are left out.
    assert tokens.mask.sum(axis=1).tolist() == [len(content_words(encoder, q)) for q in QUERIES]
    assert tokens.mask[2].sum() == 0 and tokens.states.shape[2] == encoder.dim
    norms = np.linalg.norm(tokens.states[tokens.mask], axis=1)
    assert np.allclose(norms, 1.0, atol=1e-5) and not tokens.states[~tokens.mask].any()
    # Each state is the token's own, in context: the same word in another query has another state.
    _, alone = encoder.encode_queries_with_tokens(["warrant"], ["all"])
    assert not np.allclose(alone.states[0, 0], tokens.states[1, 1])


def test_onnx_backend_gives_the_same_token_states(minilm_dir: Path, tmp_path: Path) -> None:
    model = prefixed(minilm_dir, tmp_path)
    export_onnx(model, tmp_path / "model.onnx")
    torch_v, torch_t = TransformerEncoder(model, device="cpu").encode_queries_with_tokens(QUERIES, STANCES)
    onnx_v, onnx_t = OnnxEncoder(model, tmp_path / "model.onnx").encode_queries_with_tokens(QUERIES, STANCES)
    assert np.array_equal(torch_t.mask, onnx_t.mask)
    assert np.abs(torch_t.states - onnx_t.states).max() < 1e-5 and np.abs(torch_v - onnx_v).max() < 1e-5


def test_document_tokens_are_content_tokens_in_float16(minilm_dir: Path) -> None:
    encoder = TransformerEncoder(minilm_dir, device="cpu")
    docs = ["Facts of the case: the police searched a car, without a warrant.", "word " * 400, "of the"]
    vectors, tokens, ids = encoder.encode_documents_with_tokens(docs, batch_size=2)
    assert np.abs(vectors - encoder.encode_documents(docs)).max() < 1e-6
    assert len(tokens[0]) == len(content_words(encoder, docs[0])) == 7
    assert len(tokens[1]) == encoder.max_length - 2 and len(tokens[2]) == 0  # truncated like the vector; all stopwords
    assert all(t.dtype == np.float16 for t in tokens)
    assert [len(i) for i in ids] == [len(t) for t in tokens]
    assert encoder.tokenizer.convert_ids_to_tokens(ids[0].tolist())[:3] == ["facts", "case", "police"]
    assert set(ids[1].tolist()) == set(encoder.tokenizer("word", add_special_tokens=False)["input_ids"])


def test_qwen3_query_tokens_leave_the_instruction_out(tiny_qwen3_embedding_dir: Path) -> None:
    from citator.models.qwen3_encoder import Qwen3Encoder

    encoder = Qwen3Encoder(tiny_qwen3_embedding_dir, device="cpu")
    vectors, tokens = encoder.encode_queries_with_tokens(QUERIES[:2], STANCES[:2])
    assert np.abs(vectors - encoder.encode_queries(QUERIES[:2], STANCES[:2])).max() < 1e-5
    assert tokens.mask.sum(axis=1).tolist() == [len(content_words(encoder, q)) for q in QUERIES[:2]]


def test_pad_token_states() -> None:
    padded = pad_token_states([np.ones((2, 3)), np.zeros((0, 3)), np.full((1, 3), 2.0)], 3)
    assert padded.states.shape == (3, 2, 3) and padded.mask.tolist() == [[True, True], [False, False], [True, False]]
    assert padded.rows([2]).states[0, 0].tolist() == [2.0, 2.0, 2.0]


def test_no_queries_give_empty_vectors_and_token_states(minilm_dir: Path) -> None:
    encoder = TransformerEncoder(minilm_dir, device="cpu")
    vectors, tokens = encoder.encode_queries_with_tokens([], [])
    assert vectors.shape == (0, encoder.dim) and tokens.states.shape[0] == 0
    assert encoder.encode_queries([], []).shape == (0, encoder.dim)


def test_queries_sorted_by_token_count_keep_their_order(minilm_dir: Path) -> None:
    encoder = TransformerEncoder(minilm_dir, device="cpu")
    # Character and token order disagree: a long word is many characters but few tokens.
    texts = ["a b c d e f g h i j k l", "incomprehensibilities", "the court", "x"]
    together = encoder.encode_queries(texts, ["all"] * 4, batch_size=2)
    alone = np.concatenate([encoder.encode_queries([t], ["all"], batch_size=1) for t in texts])
    assert np.array_equal(together, alone)
