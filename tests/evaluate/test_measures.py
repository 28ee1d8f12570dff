"""Hand-checked metric values, metric names and the spec's reward normalisations."""

from __future__ import annotations

import math

import pytest

from citator.data import Qrels
from citator.errors import CitatorError
from citator.evaluate import evaluate, ndcg, parse_measure, reward, reward_between
from citator.evaluate.reward import RERANK_BASELINE, RERANK_UPPER, STANCE_BASELINE


def test_binary_ndcg_by_hand() -> None:
    # relevant at ranks 2 and 4 of 3 relevant: DCG = 1/log2(3) + 1/log2(5); IDCG = 1 + 1/log2(3) + 1/2
    got = ndcg(["x", "a", "y", "b"], {"a": 1, "b": 1, "c": 1}, 10)
    assert got == pytest.approx((1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3) + 0.5))


def test_graded_ndcg_ideal_comes_from_all_judgments() -> None:
    # The grade-3 document was never retrieved, yet it sets the ideal.
    got = ndcg(["b"], {"a": 3, "b": 1}, 10)
    assert got == pytest.approx(1 / (3 + 1 / math.log2(3)))


def test_no_relevant_scores_zero_and_stays_in_the_mean() -> None:
    qrels = Qrels.from_dict({"q1": {"a": 1}, "q2": {"b": 0}})
    assert evaluate(qrels, {"q1": ["a"], "q2": ["b"]}, ["ndcg@10"]) == {"ndcg@10": 0.5}


def test_missing_ranking_scores_zero() -> None:
    qrels = Qrels.from_dict({"q1": {"a": 1}, "q2": {"b": 1}})
    assert evaluate(qrels, {"q1": ["a"]}, ["hit@1", "rr", "p@1", "recall@1"]) == {
        "hit@1": 0.5, "rr": 0.5, "p@1": 0.5, "recall@1": 0.5
    }


@pytest.mark.parametrize("qrels,query_ids,says", [
    ({}, None, "the qrels judge no query"), (Qrels.from_dict({}), None, "the qrels judge no query"),
    ({"q1": {"a": 1}}, [], "query_ids is empty"),
])
def test_a_mean_over_zero_queries_is_refused(qrels: object, query_ids: list[str] | None, says: str) -> None:
    """No queries is no score: 0.0 would read as a measured one."""
    with pytest.raises(CitatorError, match=f"no queries to evaluate \\({says}\\)"):
        evaluate(qrels, {}, ["ndcg@10"], query_ids)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", ["ndcg", "map@10", "ndcg@0", "p@x"])
def test_bad_metric_names(bad: str) -> None:
    with pytest.raises(CitatorError):
        parse_measure(bad)


def test_metric_names_are_lower_case() -> None:
    assert parse_measure("NDCG@10").name == "ndcg@10"
    assert parse_measure("rr").name == "rr"


def test_rewards() -> None:
    assert reward(STANCE_BASELINE) == 0.0
    assert reward(1.0) == 1.0
    assert reward(0.1) == 0.0
    assert reward(0.78) == pytest.approx((0.78 - 0.5610484855098774) / (1 - 0.5610484855098774))
    assert reward_between(RERANK_UPPER) == pytest.approx(1.0)
    assert reward_between(RERANK_BASELINE) == 0.0
    assert reward_between(0.6) == pytest.approx((0.6 - 0.49536006501146507) / (0.8707005096559685 - 0.49536006501146507))
