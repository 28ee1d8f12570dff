"""Human-label metrics: computed only where fully judged; unknown, stale, draft and disagreement are never 0."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from citator.evaluate.human_labels import (
    DISAGREE,
    DRAFT,
    FEWER_THAN_K,
    NOT_IN_RANKING,
    NOT_JUDGED,
    NOTHING_RELEVANT,
    OUTSIDE_POOL,
    STALE,
    UNKNOWN,
    DocGrade,
    Judgment,
    Outcome,
    judged_outcomes,
    judged_precision,
    pooled_ndcg,
    resolve,
    summarise,
)

POOL = [f"d{i}" for i in range(1, 9)]


def _grades(values: dict[str, int | str]) -> dict[str, DocGrade]:
    return {d: DocGrade(v) if isinstance(v, int) else DocGrade(None, v) for d, v in values.items()}


@pytest.mark.parametrize(
    ("judgments", "expected"),
    [
        ([Judgment("a", 2, True, False)], DocGrade(2)),
        ([Judgment("a", 2, True, False), Judgment("b", 2, True, False)], DocGrade(2)),
        ([Judgment("a", 2, True, False), Judgment("b", 3, True, False)], DocGrade(2)),
        ([Judgment("a", 3, True, False), Judgment("b", 1, True, False), Judgment("c", 3, True, False)], DocGrade(3)),
        ([Judgment("a", None, True, False)], DocGrade(None, UNKNOWN)),
        ([Judgment("a", None, True, False), Judgment("b", 1, True, False)], DocGrade(1)),
        ([Judgment("a", 3, True, True)], DocGrade(None, STALE)),
        ([Judgment("a", 3, True, True), Judgment("b", 0, True, False)], DocGrade(0)),
        ([Judgment("a", 3, False, False)], DocGrade(None, DRAFT)),
        ([Judgment("a", 3, False, False), Judgment("b", 1, True, True)], DocGrade(None, STALE)),
        ([], DocGrade(None, NOT_JUDGED)),
    ],
)
def test_resolve_uses_only_complete_fresh_known_grades(judgments: list[Judgment], expected: DocGrade) -> None:
    assert resolve(judgments) == expected


def test_the_agree_rule_gives_no_grade_when_reviewers_differ() -> None:
    judgments = [Judgment("a", 2, True, False), Judgment("b", 3, True, False)]
    assert resolve(judgments, "agree") == DocGrade(None, DISAGREE)
    assert resolve(judgments[:1] * 2, "agree") == DocGrade(2)
    with pytest.raises(ValueError):
        resolve(judgments, "mean")


def test_precision_when_all_five_are_judged() -> None:
    grades = _grades({"d1": 3, "d2": 0, "d3": 2, "d4": 1, "d5": 2, "d6": NOT_JUDGED})
    assert judged_precision(POOL, grades) == Outcome(3 / 5)
    assert judged_precision(POOL, grades, min_grade=1) == Outcome(4 / 5)


@pytest.mark.parametrize("reason", [UNKNOWN, STALE, DRAFT, DISAGREE, NOT_JUDGED])
def test_precision_is_not_computed_if_any_of_the_five_lacks_a_grade(reason: str) -> None:
    grades = _grades({"d1": 3, "d2": 0, "d3": 2, "d4": 1, "d5": reason})
    assert judged_precision(POOL, grades) == Outcome(None, reason)


def test_unknown_is_not_read_as_zero() -> None:
    as_unknown = _grades({"d1": 2, "d2": 2, "d3": 2, "d4": 2, "d5": UNKNOWN})
    as_zero = _grades({"d1": 2, "d2": 2, "d3": 2, "d4": 2, "d5": 0})
    assert judged_precision(POOL, as_unknown).value is None
    assert judged_precision(POOL, as_zero).value == pytest.approx(0.8)
    assert judged_precision(POOL, {}) == Outcome(None, NOT_JUDGED)


def test_precision_needs_five_results() -> None:
    assert judged_precision(POOL[:4], _grades(dict.fromkeys(POOL, 2))) == Outcome(None, FEWER_THAN_K)


def test_the_most_telling_reason_is_reported() -> None:
    grades = _grades({"d1": NOT_JUDGED, "d2": STALE, "d3": 2, "d4": UNKNOWN, "d5": 2})
    assert judged_precision(POOL, grades).reason == STALE


def test_pooled_ndcg_needs_every_pool_member_and_takes_the_ideal_from_the_pool() -> None:
    full = {d: 0 for d in POOL} | {"d2": 1, "d8": 3}  # the best document sits outside the top five
    ranking = POOL
    dcg = 1 / math.log2(3)
    ideal = 3 / math.log2(2) + 1 / math.log2(3)
    assert pooled_ndcg(ranking, POOL, _grades(full)).value == pytest.approx(dcg / ideal)
    # Everything in the top five judged is not enough: d8 (position 8) is unjudged.
    partial = _grades(full | {"d8": NOT_JUDGED})
    assert pooled_ndcg(ranking, POOL, partial) == Outcome(None, NOT_JUDGED)
    assert pooled_ndcg(ranking, POOL, _grades(full | {"d7": UNKNOWN})) == Outcome(None, UNKNOWN)


def test_pooled_ndcg_edge_cases() -> None:
    zeros = _grades(dict.fromkeys(POOL, 0))
    assert pooled_ndcg(POOL, POOL, zeros) == Outcome(None, NOTHING_RELEVANT)
    some = _grades(dict.fromkeys(POOL, 1))
    assert pooled_ndcg(["x", *POOL], POOL, some) == Outcome(None, OUTSIDE_POOL)
    assert pooled_ndcg(POOL[:3], POOL, some).value == pytest.approx(
        sum(1 / math.log2(i + 2) for i in range(3)) / sum(1 / math.log2(i + 2) for i in range(5))
    )


def test_pooled_ndcg_matches_trec_eval_on_fully_judged_pools() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = random.Random(7)
    for q in range(30):
        pool = [f"d{i}" for i in range(rng.randint(5, 30))]
        grades = {d: rng.randint(0, 3) for d in pool}
        grades[pool[-1]] = max(grades[pool[-1]], 1)
        ranking = rng.sample(pool, len(pool))
        run = {d: float(len(ranking) - i) for i, d in enumerate(ranking)}
        trec = pytrec_eval.RelevanceEvaluator({"q": grades}, {"ndcg_cut_5"}).evaluate({"q": run})["q"]["ndcg_cut_5"]
        ours = pooled_ndcg(ranking, pool, _grades(grades)).value
        assert ours == pytest.approx(trec, abs=1e-9), q


def test_summarise_by_group_counts_what_could_not_be_computed() -> None:
    outcomes = {
        "a": Outcome(0.4), "b": Outcome(0.8), "c": Outcome(None, UNKNOWN),
        "d": Outcome(None, STALE), "e": Outcome(None, UNKNOWN), "f": Outcome(1.0),
    }
    group_of = {"a": "dev", "b": "dev", "c": "dev", "d": "heldout", "e": "heldout", "f": "heldout"}
    dev, held = summarise("P@5", outcomes, group_of)
    assert (dev.group, dev.computed, dev.mean, dict(dev.not_computed)) == ("dev", 2, pytest.approx(0.6), {UNKNOWN: 1})
    assert (held.computed, held.mean) == (1, 1.0)
    assert list(held.not_computed) == [STALE, UNKNOWN]
    (empty,) = summarise("P@5", {"c": Outcome(None, UNKNOWN)}, {"c": "dev"})
    assert empty.mean is None and empty.computed == 0


GRADE_OR_REASON = st.one_of(st.integers(0, 3), st.sampled_from([UNKNOWN, STALE, DRAFT, DISAGREE, NOT_JUDGED]))


@given(st.lists(GRADE_OR_REASON, min_size=5, max_size=12))
def test_computed_exactly_when_fully_judged(values: list[int | str]) -> None:
    docs = [f"d{i}" for i in range(len(values))]
    grades = _grades(dict(zip(docs, values, strict=True)))
    p = judged_precision(docs, grades)
    assert (p.value is not None) == all(isinstance(v, int) for v in values[:5])
    n = pooled_ndcg(docs, docs, grades)
    all_judged = all(isinstance(v, int) for v in values)
    assert (n.value is not None) == (all_judged and any(v for v in values if isinstance(v, int)))
    if n.value is not None:
        assert 0.0 <= n.value <= 1.0


def test_judged_outcomes_cover_every_pooled_query() -> None:
    grades = {"q1": _grades({d: (3 if d == "d2" else 0) for d in POOL})}
    p, n = judged_outcomes({"q1": POOL, "q2": POOL}, {"q1": POOL, "q2": POOL, "q3": POOL}, grades)
    assert p["q1"] == Outcome(0.2) and n["q1"] == pooled_ndcg(POOL, POOL, grades["q1"])
    assert p["q2"] == n["q2"] == Outcome(None, NOT_JUDGED)
    assert p["q3"] == n["q3"] == Outcome(None, NOT_IN_RANKING)
