"""validate_results enforces the workload-1 output rules exactly."""

from __future__ import annotations

import math

from citator.data import Query, ResultLine, ScoredDoc, validate_results

CORPUS = {f"d{i}" for i in range(20)}
QUERIES = [Query("q1", "t", "supported"), Query("q2", "t", "all")]


def line(qid: str, ids: list[str], scores: list[float] | None = None) -> ResultLine:
    scores = scores if scores is not None else [float(10 - i) for i in range(len(ids))]
    return ResultLine(qid, tuple(ScoredDoc(d, s) for d, s in zip(ids, scores)))


TOP3 = ["d1", "d2", "d3"]


def test_valid_output_has_no_problems() -> None:
    results = [line("q1", TOP3), line("q2", TOP3, [1.0, 1.0, 1.0])]  # ties are allowed
    assert validate_results(results, CORPUS, QUERIES, 3) == []


def test_each_rule() -> None:
    cases = {
        "has 2 results, expected exactly 3": [line("q1", ["d1", "d2"]), line("q2", TOP3)],
        "duplicate doc ids": [line("q1", ["d1", "d1", "d2"]), line("q2", TOP3)],
        "unknown doc ids 'zz'": [line("q1", ["d1", "zz", "d2"]), line("q2", TOP3)],
        "non-finite score": [line("q1", TOP3, [1.0, math.nan, 0.0]), line("q2", TOP3)],
        "scores are not in non-increasing order": [line("q1", TOP3, [1.0, 2.0, 0.0]), line("q2", TOP3)],
        "query_id is not in the queries file": [line("q1", TOP3), line("q2", TOP3), line("q3", TOP3)],
        "second line for this query": [line("q1", TOP3), line("q1", TOP3), line("q2", TOP3)],
        "1 queries have no line, e.g. 'q2'": [line("q1", TOP3)],
    }
    for expected, results in cases.items():
        problems = validate_results(results, CORPUS, QUERIES, 3)
        assert len(problems) == 1 and expected in problems[0], (expected, problems)


def test_infinite_score_is_refused() -> None:
    problems = validate_results([line("q1", TOP3, [math.inf, 1.0, 0.0]), line("q2", TOP3)], CORPUS, QUERIES, 3)
    assert problems == ['line 1 (query "q1"): non-finite score']
