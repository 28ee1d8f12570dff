"""Strict NDCG and the outranks rate on propositions asked with both stances."""

from __future__ import annotations

import pytest

from citator.data import Qrels, Query
from citator.evaluate.stance_discrimination import paired_queries, stance_discrimination

QUERIES = [
    Query("p1:supported", "x", "supported", {"proposition_id": "p1"}),
    Query("p1:refuted", "x", "refuted", {"proposition_id": "p1"}),
    Query("p1:all", "x", "all", {"proposition_id": "p1"}),
    Query("p2:supported", "y", "supported", {"proposition_id": "p2"}),  # no refuted twin: not paired
]
QRELS = Qrels.from_dict({"p1:supported": {"old": 1}, "p1:refuted": {"new": 1}, "p1:all": {"old": 1, "new": 1},
                         "p2:supported": {"z": 1}})


def test_pairs_need_both_stances() -> None:
    assert [(s.query_id, r.query_id) for s, r in paired_queries(QUERIES)] == [("p1:supported", "p1:refuted")]


def test_perfect_and_swapped_rankings() -> None:
    good = stance_discrimination(QUERIES, QRELS, {"p1:supported": ["old", "new"], "p1:refuted": ["new", "old"]})
    assert good.queries == 2 and good.outranks_rate == 1.0
    assert good.strict_ndcg == {"supported": 1.0, "refuted": 1.0}
    # A stance-blind ranker that returns the same order for both stances wins exactly one of the two.
    blind = stance_discrimination(QUERIES, QRELS, {"p1:supported": ["old", "new"], "p1:refuted": ["old", "new"]})
    assert blind.outranks_rate == 0.5 and blind.outranks_by_stance == {"supported": 1.0, "refuted": 0.0}
    assert blind.strict_ndcg["refuted"] == pytest.approx(1 / 1.584962500721156)


def test_missing_both_is_not_a_win() -> None:
    none = stance_discrimination(QUERIES, QRELS, {"p1:supported": ["zz"], "p1:refuted": ["new"]})
    assert none.outranks_by_stance == {"supported": 0.0, "refuted": 1.0}


def test_a_document_of_both_stances_counts_for_neither_in_strict_ndcg() -> None:
    qrels = Qrels.from_dict({"p1:supported": {"old": 1, "both": 1}, "p1:refuted": {"new": 1, "both": 1}})
    result = stance_discrimination(QUERIES, qrels, {"p1:supported": ["both", "old"], "p1:refuted": ["both", "new"]})
    # Only "old" (supported) and "new" (refuted) are their stance's own: each sits second, so 1 / log2(3).
    assert result.strict_ndcg["supported"] == pytest.approx(1 / 1.584962500721156)
    assert result.strict_ndcg["refuted"] == pytest.approx(1 / 1.584962500721156)
    # Nor does it decide the order: the stance's own document outranks the other stance's.
    assert result.outranks_rate == 1.0
