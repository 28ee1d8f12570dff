"""citator.Reranker: a built-in strategy over a local LLM from Python, under the runner's token ledger."""

from __future__ import annotations

import pytest

import citator
from citator.errors import CitatorError

TEXTS = [f"Section {i}: a person who {w} must report it to the agency within {i} days."
         for i, w in enumerate(["sees abuse", "files taxes", "owns land", "drives", "teaches", "sells food",
                                "builds roads", "hunts deer", "runs a school", "treats patients", "fishes", "votes"])]


@pytest.mark.parametrize("strategy", ["first-token", "pointwise", "adaptive", "bm25"])
def test_every_candidate_comes_back_once_within_the_budget(tiny_llm, strategy: str) -> None:  # noqa: ANN001
    reranker = citator.Reranker(tiny_llm, strategy=strategy, budget=1024)
    candidates = [{"id": f"s{i}", "text": t, "score": 20.0 - i} for i, t in enumerate(TEXTS)]
    ranking = reranker.rank("who must report child abuse", candidates)
    assert sorted(ranking.ids) == sorted(c["id"] for c in candidates)
    assert 0 <= ranking.weighted_tokens <= 1024
    assert (ranking.calls == 0) == (strategy == "bm25")
    # The budget is per call: a second query starts afresh.
    assert reranker.rank("who must report child abuse", candidates).weighted_tokens == ranking.weighted_tokens


def test_plain_texts_are_numbered_and_pairs_keep_their_ids(tiny_llm) -> None:  # noqa: ANN001
    reranker = citator.Reranker(tiny_llm, strategy="bm25")
    assert reranker.rank("q", TEXTS[:3]).ids == ("0", "1", "2")
    assert reranker.rank("q", [("b", TEXTS[0]), ("a", TEXTS[1])]).ids == ("b", "a")


@pytest.mark.parametrize("candidates,message", [
    ([("a", "x"), ("a", "y")], "distinct"),
    ([("a", 1)], "candidate 0"),
    ([{"id": "a", "text": "x", "score": "high"}], "score must be a finite number"),
    ([{"id": "a", "text": "x", "score": float("nan")}], "score must be a finite number"),
    ([{"id": "a", "text": "x", "score": 10**400}], "score must be a finite number"),
    ([None], "candidate 0"),
    # A string or a mapping would pass for candidates one character or key at a time.
    ("hello", "candidates must be a list"),
    ({"nrs-1": "text one", "nrs-2": "text two"}, "candidates must be a list"),
    ([("a", "x \ud800")], "lone UTF-16 surrogate"),
])
def test_a_bad_candidate_is_one_clear_error(tiny_llm, candidates, message: str) -> None:  # noqa: ANN001
    with pytest.raises(CitatorError, match=message):
        citator.Reranker(tiny_llm, strategy="bm25").rank("q", candidates)


@pytest.mark.parametrize("budget", [1.5, 10**400, float("nan")])
def test_a_budget_that_is_no_whole_number_of_tokens_is_refused(tiny_llm, budget: float) -> None:  # noqa: ANN001
    with pytest.raises(CitatorError, match="weighted_tokens must be a"):
        citator.Reranker(tiny_llm, strategy="bm25", budget=budget)


@pytest.mark.parametrize("strategy", ["adaptive", "bm25", "first-token"])
def test_no_candidates_is_an_empty_ranking(tiny_llm, strategy: str) -> None:  # noqa: ANN001
    ranking = citator.Reranker(tiny_llm, strategy=strategy).rank("q", [])
    assert ranking.ids == () and ranking.weighted_tokens == 0 and ranking.calls == 0


def test_an_unknown_strategy_or_budget_or_model_is_refused(tiny_llm, tmp_path) -> None:  # noqa: ANN001
    with pytest.raises(CitatorError, match="strategy must be one of"):
        citator.Reranker(tiny_llm, strategy="my_strategy.py")
    with pytest.raises(CitatorError):
        citator.Reranker(tiny_llm, budget=0)
    with pytest.raises(CitatorError, match="not a model directory"):
        citator.Reranker(tmp_path)
    with pytest.raises(CitatorError, match="query"):
        citator.Reranker(tiny_llm, strategy="bm25").rank("  ", TEXTS)


@pytest.mark.parametrize("call,says", [
    (lambda: citator.Reranker(5), "model must be a path"),
    (lambda: citator.Reranker(None), "model must be a path"),
    (lambda: citator.statute_benchmark(5, "suite.jsonl", "out"), "corpus must be a path"),
    (lambda: citator.statute_benchmark("c.jsonl", "suite.jsonl", None), "out must be a path"),
    (lambda: citator.statute_benchmark("c.jsonl", "suite.jsonl", "out", labels=b"x"), "labels must be a path"),
])
def test_a_path_of_another_type_is_one_clear_error(call, says: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(CitatorError, match=says):
        call()
