"""Our metrics equal trec_eval's (via pytrec_eval) on tie-free runs, and follow array order with ties."""

from __future__ import annotations

import random

import pytest

from citator.data import Qrels
from citator.evaluate import per_query

pytrec_eval = pytest.importorskip("pytrec_eval")

OURS_TO_TREC = {
    "ndcg@5": "ndcg_cut_5", "ndcg@10": "ndcg_cut_10", "ndcg@100": "ndcg_cut_100",
    "rr": "recip_rank",
    "p@5": "P_5", "p@10": "P_10", "p@100": "P_100",
    "recall@5": "recall_5", "recall@10": "recall_10", "recall@100": "recall_100",
}


def _random_case(rng: random.Random, n_queries: int = 60, graded: bool = True):  # type: ignore[no-untyped-def]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_queries):
        qid = f"q{q}"
        pool = [f"d{i}" for i in range(rng.randint(5, 150))]
        judged = rng.sample(pool, rng.randint(1, len(pool)))
        grades = {d: (rng.randint(0, 3) if graded else rng.randint(0, 1)) for d in judged}
        if not any(grades.values()):
            grades[judged[0]] = 1  # trec_eval skips queries with nothing relevant; keep every query comparable
        qrels[qid] = grades
        retrieved = rng.sample(pool, rng.randint(1, len(pool)))
        scores = rng.sample(range(1, 10_000), len(retrieved))  # distinct: no ties
        run[qid] = {d: float(s) for d, s in zip(retrieved, scores)}
    return qrels, run


@pytest.mark.parametrize("seed,graded", [(1, True), (2, False), (3, True)])
def test_every_metric_matches_trec_eval(seed: int, graded: bool) -> None:
    qrels, run = _random_case(random.Random(seed), graded=graded)
    trec = pytrec_eval.RelevanceEvaluator(qrels, set(OURS_TO_TREC.values()) | {"ndcg_cut", "P", "recall"})
    theirs = trec.evaluate(run)
    ranked = {q: sorted(docs, key=docs.__getitem__, reverse=True) for q, docs in run.items()}
    ours = per_query(Qrels.from_dict(qrels), ranked, OURS_TO_TREC)
    for name, trec_name in OURS_TO_TREC.items():
        for qid in qrels:
            assert ours[name][qid] == pytest.approx(theirs[qid][trec_name], abs=1e-9), (name, qid)


def test_with_ties_we_follow_array_order_and_trec_eval_does_not() -> None:
    # Two documents tie on score. The run lists the relevant one second; trec_eval breaks score ties by
    # doc id (descending), which puts "b" first. We keep array position as the rank, as the spec says.
    qrels = {"q": {"a": 1}}
    run_scores = {"q": {"b": 1.0, "a": 1.0}}
    array_order = {"q": ["b", "a"]}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run_scores)["q"]["recip_rank"]
    ours = per_query(Qrels.from_dict(qrels), array_order, ["rr"])["rr"]["q"]
    assert ours == 0.5
    reversed_order = per_query(Qrels.from_dict(qrels), {"q": ["a", "b"]}, ["rr"])["rr"]["q"]
    assert reversed_order == 1.0
    assert theirs == 0.5  # trec_eval: "b" > "a" in its tie-break, so it ranks "b" first here ...
    theirs_swapped = pytrec_eval.RelevanceEvaluator({"q": {"b": 1}}, {"recip_rank"}).evaluate(run_scores)["q"]["recip_rank"]
    ours_swapped = per_query(Qrels.from_dict({"q": {"b": 1}}), {"q": ["a", "b"]}, ["rr"])["rr"]["q"]
    # ... and whatever array order the run gave, trec_eval still ranks "b" first; we rank "a" first.
    assert theirs_swapped == 1.0 and ours_swapped == 0.5
