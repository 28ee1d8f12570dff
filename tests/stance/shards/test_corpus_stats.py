"""A shard's BM25 with the corpus's statistics scores as one index over the whole corpus does, to the bit; a
document's or a query's vector is the same bits whatever shares its encoding batch."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from citator import SAMPLE
from citator.engines.lexical import CorpusStats, LexicalIndex


def _texts() -> list[str]:
    docs = [json.loads(line) for line in (SAMPLE / "corpus.jsonl").open()]
    return [f"{d['title']}\n{d['text']}" for d in docs]


def _queries() -> list[str]:
    return [json.loads(line)["text"] for line in (SAMPLE / "queries.jsonl").open()][:60]


@pytest.mark.parametrize("cuts", [[0, 1, 300], [0, 100, 170, 300], [0, 150, 299, 300]])
def test_shards_with_corpus_stats_score_as_the_whole(cuts: list[int]) -> None:
    texts = _texts()
    whole = LexicalIndex.build(texts).score_all(_queries())
    parts = [LexicalIndex.tokenize(texts[a:b]) for a, b in zip(cuts, cuts[1:])]
    stats = CorpusStats.total(part.stats() for part in parts)
    assert stats.n_units == len(texts)
    sharded = np.concatenate([LexicalIndex.build(part, stats=stats).score_all(_queries()) for part in parts], axis=1)
    assert np.array_equal(whole, sharded)


def test_a_shard_with_its_own_stats_would_score_otherwise() -> None:
    # The check above can fail: without the corpus's statistics a shard's idf is its own.
    texts = _texts()
    whole = LexicalIndex.build(texts).score_all(_queries())
    alone = LexicalIndex.build(texts[:100]).score_all(_queries())
    assert not np.allclose(whole[:, :100], alone)


def test_stats_add_up_over_parts() -> None:
    texts = _texts()
    one = LexicalIndex.tokenize(texts).stats()
    two = CorpusStats.total([LexicalIndex.tokenize(texts[:120]).stats(), LexicalIndex.tokenize(texts[120:]).stats()])
    assert one == two


@pytest.mark.slow
def test_a_documents_vector_does_not_depend_on_its_batch(minilm_dir: Path) -> None:
    from citator.models.load import load_encoder
    from citator.engines.passages import PassageSpec, passage_layout

    docs = [json.loads(line) for line in (SAMPLE / "corpus.jsonl").open()][:40]
    passages, _ = passage_layout([d["title"] for d in docs], [d["text"] for d in docs], PassageSpec())
    encoder = load_encoder(minilm_dir)
    together = encoder.encode_documents(passages)
    split = np.concatenate([encoder.encode_documents(passages[:37]), encoder.encode_documents(passages[37:])])
    alone = np.stack([encoder.encode_documents([p])[0] for p in passages[::9]])
    # Equal to the bit under MKL_CBWR=AUTO,STRICT, which `import citator` sets; without it an Intel CPU may round by
    # a buffer's alignment (1.3e-7 measured on a Xeon), and float16 storage can turn that into a 3e-5 step.
    assert float(np.abs(together - split).max()) <= 1e-6
    assert float(np.abs(together[::9] - alone).max()) <= 1e-6


@pytest.mark.parametrize(("given", "expected"), [(None, "AUTO,STRICT"), ("COMPATIBLE", "COMPATIBLE")])
def test_citator_asks_mkl_to_round_alike_unless_told_otherwise(given: str | None, expected: str) -> None:
    """Users get the strict rounding the parity tests run under, before anything loads torch; their own choice stands."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "MKL_CBWR"} | ({"MKL_CBWR": given} if given else {})
    out = subprocess.run([sys.executable, "-c", "import os, citator; print(os.environ['MKL_CBWR'])"], env=env,
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == expected


@pytest.mark.slow
def test_a_querys_vector_does_not_depend_on_its_batch(minilm_dir: Path, tmp_path: Path) -> None:
    # Searches cut their queries into batches (a sharded search as one index does, a service by its callers'
    # requests): each query is padded to its own width, so its vector is the same alone or among any others, in
    # torch and in the ONNX graph cold searches use.
    from citator.models.load import load_encoder
    from citator.models.onnx_encoder import OnnxEncoder, export_onnx

    texts = _queries()
    stances = ["supported", "refuted", "all"] * 20
    export_onnx(minilm_dir, tmp_path / "q.onnx")
    for encoder in (load_encoder(minilm_dir), OnnxEncoder(minilm_dir, tmp_path / "q.onnx")):
        together = encoder.encode_queries(texts, stances)
        fives = np.concatenate([encoder.encode_queries(texts[i:i + 5], stances[i:i + 5], batch_size=5)
                                for i in range(0, 60, 5)])
        alone = np.stack([encoder.encode_queries([t], [s])[0] for t, s in zip(texts[::7], stances[::7])])
        assert np.array_equal(together, fives) and np.array_equal(together[::7], alone), type(encoder).__name__
