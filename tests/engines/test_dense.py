"""Exact inner products: a score is the same bits whatever shares its product (queries in the batch, documents in
the shard), so an answer does not depend on how a search was cut."""

from __future__ import annotations

import numpy as np

from citator.engines.dense import DenseIndex, exact_inner, normalise_rows
from citator.stance.retrieve.ranker import LinearRanker


def _unit(rows: int, seed: int) -> np.ndarray:
    return normalise_rows(np.random.default_rng(seed).standard_normal((rows, 384)).astype(np.float32))


def test_exact_inner_is_the_same_bits_in_any_shape() -> None:
    passages, queries = _unit(700, 1), _unit(37, 2)
    whole = exact_inner(queries, passages)
    assert whole.dtype == np.float32 and whole.shape == (37, 700)
    # One query at a time (BLAS's matrix-vector kernel), small batches, and passages cut as shards would cut them.
    assert np.array_equal(whole, np.concatenate([exact_inner(queries[i:i + 1], passages) for i in range(37)]))
    assert np.array_equal(whole, np.concatenate([exact_inner(queries[i:i + 5], passages) for i in range(0, 37, 5)]))
    for cuts in ([0, 1, 700], [0, 233, 466, 700], [0, 699, 700]):
        shards = [exact_inner(queries, passages[a:b]) for a, b in zip(cuts, cuts[1:])]
        assert np.array_equal(whole, np.concatenate(shards, axis=1))
    # And it is the float32 product's value, to float32 rounding.
    np.testing.assert_allclose(whole, queries @ passages.T, atol=1e-6)


def test_a_dense_index_scores_exactly_from_its_float16_vectors() -> None:
    stored = _unit(300, 3).astype(np.float16)
    queries = _unit(4, 4)
    index = DenseIndex(stored)
    scores = index.score_all(queries)
    assert np.array_equal(scores, exact_inner(queries, stored.astype(np.float32)))
    assert np.array_equal(scores[1:2], DenseIndex(stored[:]).score_all(queries[1:2]))
    idx, top = index.search(queries, 5)
    assert np.array_equal(top, np.take_along_axis(scores, idx, axis=1))


def test_a_linear_rankers_logit_does_not_depend_on_the_other_rows() -> None:
    rng = np.random.default_rng(5)
    names = ("a", "b", "c")
    ranker = LinearRanker(names, (0.1, 0.2, 0.3), (1.5, 0.5, 2.0), tuple(rng.standard_normal(3)), 0.25)
    x = rng.standard_normal((50, 3)).astype(np.float32)
    together = ranker.score(names, x)
    assert together.dtype == np.float32
    assert np.array_equal(together, np.concatenate([ranker.score(names, x[i:i + 1]) for i in range(50)]))
