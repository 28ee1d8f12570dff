"""The numpy BERT backend of cold searches: the same vectors as the torch backend, and only where it is exact."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from citator.models.load import load_query_encoder
from citator.models.numpy_bert import NumpyBertEncoder, _erf, supports
from citator.models.transformer_encoder import QUERY_FORMAT_FILE, TransformerEncoder

QUERIES = ["States may not ban the sale of contraceptives.", "A warrant is needed to search a phone.", "x"]
STANCES = ["supported", "refuted", "all"]


def test_erf_matches_scipy_to_float32_resolution() -> None:
    from scipy.special import erf

    x = np.linspace(-9, 9, 100_001, dtype=np.float32)
    assert np.abs(_erf(x) - erf(x.astype(np.float64))).max() < 1e-6


def test_same_vectors_as_torch_with_prefixes_and_truncation(minilm_dir: Path, tmp_path: Path) -> None:
    # A directory with per-stance prefixes, as `citator train` writes it, and the CLS variant of the pooling.
    model = tmp_path / "model"
    shutil.copytree(minilm_dir, model)
    (model / QUERY_FORMAT_FILE).write_text(json.dumps({"query_prefixes": {"supported": "support: ", "refuted": "refute: "}}))
    fast, slow = NumpyBertEncoder(model), TransformerEncoder(model, device="cpu")
    assert fast.model_id == slow.model_id and fast.dim == slow.dim
    queries = fast.encode_queries(QUERIES, STANCES)
    assert np.abs(queries - slow.encode_queries(QUERIES, STANCES)).max() < 1e-5
    assert not np.allclose(queries[0], fast.encode_queries(QUERIES[:1], ["all"])[0])  # the prefix is applied
    documents = ["word " * 600 + "tail", "short", "Facts of the case: " + "a b c " * 40]
    assert np.abs(fast.encode_documents(documents) - slow.encode_documents(documents)).max() < 1e-5
    cls = tmp_path / "cls"
    shutil.copytree(model, cls)
    (cls / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": True}))
    assert np.abs(NumpyBertEncoder(cls).encode_queries(QUERIES, STANCES)
                  - TransformerEncoder(cls, device="cpu").encode_queries(QUERIES, STANCES)).max() < 1e-5


def test_only_exact_directories_get_it(minilm_dir: Path, tiny_qwen3_embedding_dir: Path, tmp_path: Path) -> None:
    assert supports(minilm_dir) and not supports(tiny_qwen3_embedding_dir)
    assert type(load_query_encoder(minilm_dir, cold=True)).__name__ == "NumpyBertEncoder"
    assert type(load_query_encoder(minilm_dir)).__name__ == "TransformerEncoder"  # a server keeps torch
    assert type(load_query_encoder(tiny_qwen3_embedding_dir, cold=True)).__name__ == "Qwen3Encoder"
    no_fast_tokenizer = tmp_path / "m"
    shutil.copytree(minilm_dir, no_fast_tokenizer)
    (no_fast_tokenizer / "tokenizer.json").unlink()
    assert not supports(no_fast_tokenizer)
    assert type(load_query_encoder(no_fast_tokenizer, cold=True)).__name__ == "TransformerEncoder"
    with pytest.raises(Exception, match="numpy backend"):
        NumpyBertEncoder(tiny_qwen3_embedding_dir)
