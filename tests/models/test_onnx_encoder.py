"""The ONNX query encoder of cold searches: the same vectors and token states as torch, and only where it is exact."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from citator.errors import ConfigError
from citator.models.load import load_query_encoder
from citator.models.onnx_encoder import OnnxEncoder, export_onnx, supports
from citator.models.transformer_encoder import QUERY_FORMAT_FILE, TransformerEncoder

QUERIES = ["States may not ban the sale of contraceptives.", "A warrant is needed to search a phone.", "x"]
STANCES = ["supported", "refuted", "all"]


@pytest.fixture(scope="module")
def prefixed_model(minilm_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A directory with per-stance prefixes, as `citator train` writes it, and its exported graph."""
    model = tmp_path_factory.mktemp("onnx") / "model"
    shutil.copytree(minilm_dir, model)
    (model / QUERY_FORMAT_FILE).write_text(json.dumps({"query_prefixes": {"supported": "support: ", "refuted": "refute: "}}))
    graph = model.parent / "model.onnx"
    export_onnx(model, graph)
    return model, graph


def test_same_vectors_and_tokens_as_torch(prefixed_model: tuple[Path, Path]) -> None:
    model, graph = prefixed_model
    fast, slow = OnnxEncoder(model, graph), TransformerEncoder(model, device="cpu")
    assert fast.model_id == slow.model_id and fast.dim == slow.dim
    queries = fast.encode_queries(QUERIES, STANCES)
    assert np.abs(queries - slow.encode_queries(QUERIES, STANCES)).max() < 1e-5
    assert not np.allclose(queries[0], fast.encode_queries(QUERIES[:1], ["all"])[0])  # the prefix is applied
    # Batches of mixed lengths (padding inside the graph), one at a time, and truncation at the model's limit.
    documents = ["word " * 600 + "tail", "short", "Facts of the case: " + "a b c " * 40]
    assert np.abs(fast.encode_documents(documents, batch_size=3) - slow.encode_documents(documents)).max() < 1e-5
    assert np.abs(fast.encode_documents(documents, batch_size=1) - slow.encode_documents(documents)).max() < 1e-5
    fast_v, fast_t = fast.encode_queries_with_tokens(QUERIES, STANCES)
    slow_v, slow_t = slow.encode_queries_with_tokens(QUERIES, STANCES)
    assert np.array_equal(fast_t.mask, slow_t.mask)
    assert np.abs(fast_t.states - slow_t.states).max() < 1e-5 and np.abs(fast_v - slow_v).max() < 1e-5


def test_cls_pooling(prefixed_model: tuple[Path, Path], tmp_path: Path) -> None:
    model, graph = prefixed_model
    cls = tmp_path / "cls"
    shutil.copytree(model, cls)
    (cls / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": True}))
    assert np.abs(OnnxEncoder(cls, graph).encode_queries(QUERIES, STANCES)
                  - TransformerEncoder(cls, device="cpu").encode_queries(QUERIES, STANCES)).max() < 1e-5


def test_only_exact_directories_get_it(prefixed_model: tuple[Path, Path], minilm_dir: Path,
                                       tiny_qwen3_embedding_dir: Path, tmp_path: Path) -> None:
    model, graph = prefixed_model
    assert supports(minilm_dir) and not supports(tiny_qwen3_embedding_dir)
    assert type(load_query_encoder(model, cold=True, graph=graph)).__name__ == "OnnxEncoder"
    assert type(load_query_encoder(model, cold=True)).__name__ == "TransformerEncoder"  # no graph: torch
    assert type(load_query_encoder(model, graph=graph)).__name__ == "TransformerEncoder"  # a server keeps torch
    assert type(load_query_encoder(tiny_qwen3_embedding_dir, cold=True, graph=graph)).__name__ == "Qwen3Encoder"
    no_fast_tokenizer = tmp_path / "m"
    shutil.copytree(minilm_dir, no_fast_tokenizer)
    (no_fast_tokenizer / "tokenizer.json").unlink()
    assert not supports(no_fast_tokenizer)
    with pytest.raises(ConfigError, match="onnx backend"):
        OnnxEncoder(tiny_qwen3_embedding_dir, graph)


def test_a_damaged_graph_is_one_clear_error(prefixed_model: tuple[Path, Path], tmp_path: Path) -> None:
    model, graph = prefixed_model
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(graph.read_bytes()[: 4096])
    with pytest.raises(ConfigError, match="not a readable ONNX graph"):
        OnnxEncoder(model, bad)


def test_onnxruntime_leaves_nothing_in_the_users_home(prefixed_model: tuple[Path, Path], tmp_path: Path) -> None:
    # onnxruntime's telemetry would write a device id under the cache; citator turns it off before onnxruntime starts.
    import os
    import subprocess
    import sys

    model, graph = prefixed_model
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORT_", "XDG_"))}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"))
    code = ("import sys; from citator.models.onnx_encoder import OnnxEncoder; "
            "print(OnnxEncoder(sys.argv[1], sys.argv[2]).encode_queries(['a warrant'], ['all']).shape)")
    done = subprocess.run([sys.executable, "-c", code, str(model), str(graph)], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "(1, 384)" and "telemetry" not in done.stderr
    assert [p for p in home.rglob("*")] == []
