"""Learned document vectors: the fit moves cited documents towards their queries; offsets travel by id or title."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from citator.stance.learn.doc_embedding import fit_document_deltas
from citator.stance.retrieve.doc_embedding import DocumentOffsets, base_document_vectors, save_deltas


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def test_base_vectors_are_normalised_passage_means() -> None:
    passages = np.array([[1, 0], [0, 1], [3, 4]], dtype=np.float32)
    base = base_document_vectors(passages, np.array([0, 2]))
    assert np.allclose(base, [[2**-0.5, 2**-0.5], [0.6, 0.8]])


def test_fit_ranks_each_training_query_s_document_first_and_beats_the_base() -> None:
    rng = np.random.default_rng(3)
    n_docs, dim = 40, 16
    base = _unit(rng.normal(size=(n_docs, dim))).astype(np.float32)
    # Queries about document d sit near a hidden "topic" of d that its base vector only partly shows.
    topic = _unit(base + 1.2 * rng.normal(size=(n_docs, dim)))
    docs = rng.integers(0, n_docs, size=400)
    queries = _unit(topic[docs] + 0.3 * rng.normal(size=(400, dim))).astype(np.float32)
    train, held = slice(0, 300), slice(300, 400)
    deltas, stats = fit_document_deltas(queries[train], [(int(d),) for d in docs[train]], base, steps=80,
                                        progress=False)
    learned = _unit(base + deltas)
    top1 = lambda vectors: float((np.argmax(queries[held] @ vectors.T, axis=1) == docs[held]).mean())  # noqa: E731
    assert stats["nll_last"] < stats["nll_first"]
    assert top1(learned) > top1(base) + 0.2  # it generalises to unseen queries about the same documents


def test_offsets_apply_by_id_then_unique_title_and_others_keep_their_base(tmp_path: Path) -> None:
    base = np.eye(3, dtype=np.float32)
    deltas = np.array([[5, 0, 0], [0, 0, 0], [0, 5, 0]], dtype=np.float32)
    save_deltas(tmp_path, ["a", "b", "c"], ["A v. B", "C v. D", "E v. F"], deltas)
    # The evaluator's corpus: "a" keeps its id, "c" was renamed (title matches), "z" is unknown to training.
    offsets = DocumentOffsets.load(tmp_path, 3)
    assert offsets is not None
    out = offsets.vectors(["z", "a", "c-new"], ["Y v. Z", "A v. B", "e v. f"], base)
    assert np.allclose(out[0], [1, 0, 0])  # no offset: the base vector
    assert np.allclose(out[1], _unit(np.array([5.0, 1, 0])))  # base [0,1,0] + offset of "a"
    assert np.allclose(out[2], _unit(np.array([0.0, 5, 1])))  # base [0,0,1] + offset of "c" (by title)
    assert DocumentOffsets.load(tmp_path / "none", 3) is None
