"""Training examples for the query encoder: positives, opposite-stance hard negatives, redundant `all` queries."""

from __future__ import annotations

from citator.data import Qrels, Query
from citator.stance.learn.finetune import QueryExample
from citator.stance.learn.pairs import QUERY_PREFIXES, opposite_stance_docs, query_examples

QUERIES = [
    Query("p1:supported", "x", "supported", {"proposition_id": "p1"}),
    Query("p1:refuted", "x", "refuted", {"proposition_id": "p1"}),
    Query("p1:all", "x", "all", {"proposition_id": "p1"}),  # the union of both stances: kept
    Query("p2:supported", "y", "supported", {"proposition_id": "p2"}),
    Query("p2:all", "y", "all", {"proposition_id": "p2"}),  # repeats p2:supported with its documents: dropped
    Query("p3:refuted", "w", "refuted", {"proposition_id": "p3"}),  # its only document is not in the corpus
]
QRELS = Qrels.from_dict({"p1:supported": {"old": 1, "both": 1}, "p1:refuted": {"new": 1, "both": 1},
                         "p1:all": {"old": 1, "new": 1, "both": 1}, "p2:supported": {"z": 1}, "p2:all": {"z": 1},
                         "p3:refuted": {"gone": 1}})


def test_opposite_stance_documents_are_the_other_stances_own() -> None:
    assert opposite_stance_docs(QUERIES, QRELS) == {"p1:supported": frozenset({"new"}),
                                                   "p1:refuted": frozenset({"old"})}


def test_query_examples_carry_positives_and_hard_negatives_by_corpus_index() -> None:
    examples = query_examples(QUERIES, QRELS, ["old", "new", "z", "both"])
    assert examples == [
        QueryExample("x", "supported", (0, 3), (1,)),
        QueryExample("x", "refuted", (1, 3), (0,)),
        QueryExample("x", "all", (0, 1, 3), ()),
        QueryExample("y", "supported", (2,), ()),
    ]


def test_each_stance_has_its_own_instruction() -> None:
    assert set(QUERY_PREFIXES) == {"supported", "refuted", "all"}
    assert len(set(QUERY_PREFIXES.values())) == 3
