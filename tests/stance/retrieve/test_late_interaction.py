"""Late interaction (MaxSim) over a document token store: exact, grouped by document, and stored by document."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from citator.models.encoder import TokenStates, pad_token_states
from citator.stance.retrieve import late_interaction
from citator.stance.retrieve.late_interaction import TokenStore, int8_products, maxsim, quantise


def unit(a: np.ndarray) -> np.ndarray:
    return a / np.linalg.norm(a, axis=-1, keepdims=True)


def distinct_ids(passages: list[np.ndarray]) -> list[np.ndarray]:
    return list(np.split(np.arange(sum(map(len, passages))), np.cumsum([len(p) for p in passages])[:-1]))


def test_store_groups_a_document_s_passages_and_round_trips(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    passages = [unit(rng.normal(size=(n, 4))).astype(np.float16) for n in (2, 3, 0, 1)]
    store = TokenStore.from_passages(passages, distinct_ids(passages), np.array([0, 2, 3]), 4)  # docs: 0-1, 2, 3
    assert store.offsets.tolist() == [0, 5, 5, 6]
    # int8 with one scale per token: within half a quantisation step of the float16 states.
    assert store.tokens.dtype == np.int8 and len(store.scales) == 6
    assert np.abs(store.document(0) - np.concatenate(passages[:2]).astype(np.float32)).max() <= 0.5 / 127 + 1e-6
    assert len(store.document(1)) == 0
    store.save(tmp_path)
    loaded = TokenStore.load(tmp_path)
    assert TokenStore.present(tmp_path) and isinstance(loaded.tokens, np.memmap)
    assert not TokenStore.present(tmp_path / "elsewhere")
    assert np.array_equal(loaded.document(2), store.document(2))


def test_a_token_id_is_kept_once_per_document_at_its_first_occurrence() -> None:
    rng = np.random.default_rng(4)
    passages = [unit(rng.normal(size=(n, 4))).astype(np.float16) for n in (3, 2, 2)]
    # Document 0 = passages 0-1 (ids 7 and 8 repeat across the overlap, 9 within passage 0); document 1 = passage
    # 2, whose id 7 is its own first occurrence.
    ids = [np.array([7, 9, 9]), np.array([7, 8]), np.array([8, 7])]
    store = TokenStore.from_passages(passages, ids, np.array([0, 2]), 4)
    assert store.offsets.tolist() == [0, 3, 5]
    want = np.concatenate([passages[0][:2], passages[1][1:], passages[2]]).astype(np.float32)
    assert np.abs(np.concatenate([store.document(0), store.document(1)]) - want).max() <= 0.5 / 127 + 1e-6


@pytest.fixture(params=["torch", "numpy"])
def int8_backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """maxsim's products through torch's kernel (torch loaded) or numpy's (a cold run.sh, torch never imported)."""
    if request.param == "torch":
        import torch  # noqa: F401
    else:
        monkeypatch.delitem(sys.modules, "torch", raising=False)
    return str(request.param)


def test_maxsim_is_the_mean_best_cosine_of_each_query_token(int8_backend: str) -> None:
    rng = np.random.default_rng(1)
    docs = [unit(rng.normal(size=(n, 8))) for n in (5, 1, 0, 7)]
    store = TokenStore.from_passages([d.astype(np.float16) for d in docs], distinct_ids(docs), np.arange(4), 8)
    queries = pad_token_states([unit(rng.normal(size=(n, 8))) for n in (3, 1, 0)], 8)
    candidates = np.array([[3, 0, 2], [0, 1, 3], [1, 0, 3]])  # documents shared between queries, one empty
    got = maxsim(queries, candidates, store)
    for i, row in enumerate(candidates):
        q = queries.states[i][queries.mask[i]]
        tokens, scales = quantise(q)
        q_int8 = tokens.astype(np.float32) * scales[:, None]
        for j, d in enumerate(row):
            if not len(q) or not len(docs[d]):
                assert got[i, j] == 0.0
                continue
            # Exact on the quantised states of both sides, and within a quantisation step of the original ones.
            assert abs(got[i, j] - float((q_int8 @ store.document(d).T).max(axis=1).mean())) < 1e-5
            assert abs(got[i, j] - float((q @ docs[d].T).max(axis=1).mean())) < 1e-2


@pytest.mark.parametrize("dim", [8, 384, 1024, 2048])
def test_int8_products_are_exact_with_torch_loaded_or_not(dim: int, monkeypatch: pytest.MonkeyPatch) -> None:
    import torch  # noqa: F401 - loaded: int8_products takes torch's kernel

    rng = np.random.default_rng(dim)
    left = rng.integers(-127, 128, size=(37, dim)).astype(np.int8)
    right = rng.integers(-127, 128, size=(11, dim)).astype(np.int8)
    right[0] = left[0] = 127  # the largest sum a row can reach: 127 * 127 * dim
    exact = left.astype(np.int64) @ right.astype(np.int64).T
    with_torch = int8_products(left, right)
    monkeypatch.delitem(sys.modules, "torch")  # as in a cold run.sh, which never imports torch
    without = int8_products(left, right)
    assert with_torch.dtype == without.dtype == np.float32
    assert np.array_equal(with_torch, without)
    # Exact where float32 holds the integer (below 2**24); beyond, both round the same exact sum once.
    assert np.array_equal(with_torch, exact.astype(np.float32))


def test_a_query_whose_words_a_document_contains_scores_one() -> None:
    rng = np.random.default_rng(2)
    words = unit(rng.normal(size=(6, 16)))
    passages = [words[:4].astype(np.float16), words[4:].astype(np.float16)]
    store = TokenStore.from_passages(passages, distinct_ids(passages), np.array([0, 1]), 16)
    query = TokenStates(words[None, [1, 3]].astype(np.float32), np.ones((1, 2), dtype=bool))
    score = maxsim(query, np.array([[0, 1]]), store)[0]
    # Both sides int8: a word's quantised state has a norm within about a quantisation step (1/127 of its largest
    # entry, ~0.5 at 16 dimensions) of 1.
    assert abs(score[0] - 1.0) < 4e-3 and score[1] < 0.9


def test_many_documents_scored_on_threads_match_one_by_one(int8_backend: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    docs = [unit(rng.normal(size=(int(n), 8))).astype(np.float16) for n in rng.integers(0, 12, size=300)]
    store = TokenStore.from_passages(docs, distinct_ids(docs), np.arange(len(docs)), 8)
    queries = pad_token_states([unit(rng.normal(size=(int(n), 8))) for n in rng.integers(1, 6, size=20)], 8)
    candidates = np.stack([rng.choice(len(docs), 100, replace=False) for _ in range(20)])
    together = maxsim(queries, candidates, store)  # > 64 documents: split over threads
    one_by_one = np.stack([np.concatenate([maxsim(queries.rows([i]), candidates[i : i + 1, j : j + 1], store)[0]
                                           for j in range(100)]) for i in range(20)])
    assert np.abs(together - one_by_one).max() < 1e-6
    # Blocks of a few documents' tokens at a time (one document when it alone is larger) give the same numbers.
    monkeypatch.setattr(late_interaction, "BLOCK_BYTES", 40)
    assert np.array_equal(maxsim(queries, candidates, store), together)


def test_a_memory_mapped_store_scores_as_the_one_in_memory(int8_backend: str, tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    docs = [unit(rng.normal(size=(int(n), 8))).astype(np.float16) for n in rng.integers(1, 9, size=80)]
    store = TokenStore.from_passages(docs, distinct_ids(docs), np.arange(len(docs)), 8)
    store.save(tmp_path)
    queries = pad_token_states([unit(rng.normal(size=(int(n), 8))) for n in rng.integers(1, 6, size=9)], 8)
    candidates = np.stack([rng.choice(len(docs), 70, replace=False) for _ in range(9)])
    assert np.array_equal(maxsim(queries, candidates, TokenStore.load(tmp_path)), maxsim(queries, candidates, store))


def test_encoding_in_chunks_of_documents_gives_the_store_of_one_pass(minilm_dir: Path) -> None:
    from citator.models.transformer_encoder import TransformerEncoder

    encoder = TransformerEncoder(minilm_dir, device="cpu")
    passages = ["The court held the search unlawful.", "A warrant was required.", "Congress may regulate commerce.",
                "Fraud is not protected speech; the court said so twice.", "", "Miranda warnings protect suspects."]
    starts = np.array([0, 2, 3, 4])  # four documents: passages 0-1, 2, 3, 4-5 (one passage empty)
    whole_vectors, whole = TokenStore.encode(encoder, passages, starts, docs_per_chunk=100)
    vectors, chunked = TokenStore.encode(encoder, passages, starts, docs_per_chunk=1)
    assert np.array_equal(chunked.offsets, whole.offsets) and chunked.offsets[-1] > 0
    np.testing.assert_allclose(vectors, whole_vectors, atol=1e-5)
    for d in range(len(starts)):
        np.testing.assert_allclose(chunked.document(d), whole.document(d), atol=2e-2)
    # Each document's rows are its own: document 2's tokens are those of its single passage alone.
    alone = TokenStore.encode(encoder, passages[3:4], np.array([0]))[1]
    np.testing.assert_allclose(chunked.document(2), alone.document(0), atol=2e-2)
