"""`citator.evaluate` takes the shapes ranx and ir_measures users bring, and agrees with ir_measures on them."""

from __future__ import annotations

import random

import pytest

import citator
from citator.data import Qrels
from citator.errors import CitatorError, RunError, ShapeError

ir_measures = pytest.importorskip("ir_measures")

THEIRS = {"ndcg@10": "nDCG@10", "rr": "RR", "p@5": "P@5", "recall@10": "R@10"}


def _case(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Graded judgments and a score run with many ties (scores drawn from five values)."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(40):
        pool = [f"d{i}" for i in range(rng.randint(3, 40))]
        grades = {d: rng.randint(0, 3) for d in rng.sample(pool, rng.randint(1, len(pool)))}
        grades[next(iter(grades))] = max(1, grades[next(iter(grades))])  # trec_eval skips a query with no relevant
        qrels[f"q{q}"] = grades
        run[f"q{q}"] = {d: rng.choice([0.5, 1.0, 2.0, -1.0, 3.25]) for d in rng.sample(pool, rng.randint(1, len(pool)))}
    return qrels, run


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_plain_dicts_and_score_runs_match_ir_measures_ties_included(seed: int) -> None:
    qrels, run = _case(seed)
    ours = citator.evaluate(qrels, run, list(THEIRS))
    theirs = ir_measures.calc_aggregate([ir_measures.parse_measure(m) for m in THEIRS.values()], qrels, run)
    for name, their_name in THEIRS.items():
        assert ours[name] == pytest.approx(theirs[ir_measures.parse_measure(their_name)], abs=1e-9), name


def test_a_ranked_list_is_ranked_by_position_and_equals_its_score_run() -> None:
    qrels = {"q": {"a": 1, "c": 2}}
    assert citator.evaluate(qrels, {"q": ["b", "a"]}, "rr") == {"rr": 0.5}
    assert citator.evaluate(qrels, {"q": ("a", "b")}, "rr") == {"rr": 1.0}
    scored = {"q": {"b": 3.0, "a": 2.0, "c": 1.0}}
    listed = {"q": ["b", "a", "c"]}
    assert citator.evaluate(qrels, scored, ["ndcg@10", "p@2"]) == citator.evaluate(Qrels.from_dict(qrels), listed,
                                                                                  ["ndcg@10", "p@2"])


def test_a_score_tie_is_broken_by_doc_id_descending_as_trec_eval_does() -> None:
    qrels = {"q": {"a": 1}}
    assert citator.evaluate(qrels, {"q": {"a": 1.0, "b": 1.0}}, "rr") == {"rr": 0.5}
    assert citator.evaluate({"q": {"b": 1}}, {"q": {"b": 1.0, "a": 1.0}}, "rr") == {"rr": 1.0}


@pytest.mark.parametrize("qrels,run,where", [
    ([("q", "a", 1)], {"q": ["a"]}, "qrels: expected"),
    ({"q": ["a"]}, {"q": ["a"]}, 'qrels, query "q": expected'),
    ({"q": {"a": 1.5}}, {"q": ["a"]}, 'doc "a": grade must be an integer'),
    ({"q": {"a": True}}, {"q": ["a"]}, "grade must be an integer"),
    ({1: {"a": 1}}, {"q": ["a"]}, "query id must be a string"),
    ({"q": {"a": 1}}, [["a"]], "run: expected"),
    ({"q": {"a": 1}}, {"q": "a"}, 'run, query "q": expected a list'),
    ({"q": {"a": 1}}, {"q": {"a": float("nan")}}, "score must be a finite number"),
    ({"q": {"a": 1}}, {"q": {"a": "high"}}, "score must be a finite number"),
    ({"q": {"a": 1}}, {"q": [1, 2]}, "doc id must be a string"),
])
def test_a_wrong_shape_is_one_clear_error(qrels, run, where: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ShapeError, match=where):
        citator.evaluate(qrels, run, ["ndcg@10"])


def test_a_listed_duplicate_is_refused_not_scored() -> None:
    with pytest.raises(RunError, match="twice|more than once|duplicate"):
        citator.evaluate({"q": {"a": 1}}, {"q": ["a", "a"]}, ["ndcg@10"])


@pytest.mark.parametrize("kwargs,message", [
    ({"measures": ["rr"], "query_ids": "q1"}, "query_ids must be a list"),  # would score queries "q" and "1"
    ({"measures": ["rr"], "query_ids": [None]}, "query_ids must be a list"),
    ({"measures": None}, "measures must be"),
    ({"measures": [b"rr"]}, "a metric name is text"),
    ({"measures": ["ndcg@" + "9" * 5000]}, "unknown metric"),
    ({"measures": ["ndcg@10\n\x1b[31m"]}, "unknown metric"),
])
def test_arguments_of_another_kind_are_one_clear_error(kwargs: dict, message: str) -> None:
    with pytest.raises(CitatorError, match=message) as caught:
        citator.evaluate({"q1": {"d1": 1}}, {"q1": ["d1"]}, **kwargs)
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 200


@pytest.mark.parametrize("qrels,run", [({"q1": {"d1": 10**400}}, {"q1": ["d1"]}),
                                       ({"q1": {"d1": 1}}, {"q1": {"d1": 10**400}})])
def test_numbers_past_a_floats_range_are_refused(qrels: dict, run: dict) -> None:
    with pytest.raises(ShapeError, match="must be"):
        citator.evaluate(qrels, run, ["ndcg@10"])
