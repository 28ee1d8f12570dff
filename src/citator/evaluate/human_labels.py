"""Metrics from human labels, computed only where the judgments are complete; the rest is counted by reason.

P@k needs a usable grade for each of the top k results; pooled nDCG@k needs one for every member of the
query's candidate pool (the ideal DCG comes from the pool). A grade is usable when it comes from a review
marked complete whose hashes still match the texts; "unknown" is never read as 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean, median_low

from citator.evaluate.ndcg import ndcg
from citator.evaluate.precision import precision

# Why a value could not be computed, most telling first (a query gets the first reason that applies).
FEWER_THAN_K = "fewer than k results"
NOT_IN_RANKING = "query missing from the ranking"
OUTSIDE_POOL = "a ranked result is not in the pool"
STALE = "stale label (texts changed since it was given)"
UNKNOWN = "graded unknown"
DISAGREE = "reviewers disagree"
DRAFT = "review not marked complete"
NOT_JUDGED = "not judged"
NOTHING_RELEVANT = "no relevant document in the pool (ideal DCG is 0)"
CONSENSUS_RULES = ("lower-median", "agree")
REASONS = (NOT_IN_RANKING, FEWER_THAN_K, OUTSIDE_POOL, STALE, UNKNOWN, DISAGREE, DRAFT, NOT_JUDGED, NOTHING_RELEVANT)


@dataclass(frozen=True)
class Judgment:
    """One reviewer's grade of one document; `grade` None means the reviewer said "unknown"."""

    reviewer: str
    grade: int | None
    complete: bool
    stale: bool


@dataclass(frozen=True)
class DocGrade:
    """A document's usable grade, or the reason there is none."""

    grade: int | None
    missing: str | None = None


@dataclass(frozen=True)
class Outcome:
    """A metric value for one query, or why it could not be computed."""

    value: float | None
    reason: str | None = None


@dataclass(frozen=True)
class MetricSummary:
    """One metric over one group of queries: mean over computed queries and counts of the rest by reason."""

    metric: str
    group: str
    computed: int
    mean: float | None
    not_computed: Mapping[str, int]
    per_query: Mapping[str, float | None]


def resolve(judgments: Sequence[Judgment], consensus: str = "lower-median") -> DocGrade:
    """Combine reviewers' complete, fresh, known grades; otherwise say why there is no grade.

    "lower-median" (the statute benchmark's rule) takes the lower median of those grades; "agree" gives no
    grade when they differ.
    """
    if consensus not in CONSENSUS_RULES:
        raise ValueError(f"consensus must be one of {CONSENSUS_RULES}, got {consensus!r}")
    usable = [j for j in judgments if j.complete and not j.stale]
    known = [j.grade for j in usable if j.grade is not None]
    if known and (consensus == "lower-median" or len(set(known)) == 1):
        return DocGrade(median_low(known))
    if known:
        return DocGrade(None, DISAGREE)
    if usable:
        return DocGrade(None, UNKNOWN)
    if any(j.stale for j in judgments):
        return DocGrade(None, STALE)
    if judgments:
        return DocGrade(None, DRAFT)
    return DocGrade(None, NOT_JUDGED)


def _first_reason(docs: Sequence[str], grades: Mapping[str, DocGrade]) -> str | None:
    reasons = {grades.get(d, DocGrade(None, NOT_JUDGED)).missing for d in docs} - {None}
    return min(reasons, key=REASONS.index) if reasons else None


def _known(grades: Mapping[str, DocGrade]) -> dict[str, int]:
    return {d: g.grade for d, g in grades.items() if g.grade is not None}


def judged_precision(ranking: Sequence[str], grades: Mapping[str, DocGrade], k: int = 5, min_grade: int = 2) -> Outcome:
    """P@k, only when the ranking has k results and every one of them has a usable grade."""
    top = list(ranking[:k])
    if len(top) < k:
        return Outcome(None, FEWER_THAN_K)
    reason = _first_reason(top, grades)
    if reason is not None:
        return Outcome(None, reason)
    return Outcome(precision(top, _known(grades), k, min_grade))


def pooled_ndcg(ranking: Sequence[str], pool: Sequence[str], grades: Mapping[str, DocGrade], k: int = 5) -> Outcome:
    """nDCG@k (linear gain), only when every pool member has a usable grade; the ideal DCG is the pool's."""
    members = set(pool)
    if any(d not in members for d in ranking[:k]):
        return Outcome(None, OUTSIDE_POOL)
    reason = _first_reason(sorted(members), grades)
    if reason is not None:
        return Outcome(None, reason)
    pool_grades = {d: g for d, g in _known(grades).items() if d in members}
    if not any(g > 0 for g in pool_grades.values()):
        return Outcome(None, NOTHING_RELEVANT)
    return Outcome(ndcg(list(ranking), pool_grades, k))


def judged_outcomes(
    ranking: Mapping[str, Sequence[str]], pools: Mapping[str, Sequence[str]],
    grades: Mapping[str, Mapping[str, DocGrade]], k: int = 5, min_grade: int = 2,
) -> tuple[dict[str, Outcome], dict[str, Outcome]]:
    """P@k and pooled nDCG@k of one ranking for every pooled query (query_id -> Outcome each)."""
    p_at_k: dict[str, Outcome] = {}
    n_at_k: dict[str, Outcome] = {}
    for q, pool in pools.items():
        if q not in ranking:
            p_at_k[q] = n_at_k[q] = Outcome(None, NOT_IN_RANKING)
            continue
        p_at_k[q] = judged_precision(ranking[q], grades.get(q, {}), k, min_grade)
        n_at_k[q] = pooled_ndcg(ranking[q], pool, grades.get(q, {}), k)
    return p_at_k, n_at_k


def summarise(metric: str, outcomes: Mapping[str, Outcome], group_of: Mapping[str, str]) -> list[MetricSummary]:
    """One summary per group (e.g. split), sorted by group name; queries absent from `group_of` are skipped."""
    groups: dict[str, list[str]] = {}
    for q in sorted(outcomes):
        if q in group_of:
            groups.setdefault(group_of[q], []).append(q)
    out = []
    for group, queries in sorted(groups.items()):
        values = [value for q in queries if (value := outcomes[q].value) is not None]
        missing: dict[str, int] = {}
        for q in queries:
            reason = outcomes[q].reason
            if outcomes[q].value is None and reason is not None:
                missing[reason] = missing.get(reason, 0) + 1
        out.append(MetricSummary(
            metric=metric,
            group=group,
            computed=len(values),
            mean=fmean(values) if values else None,
            not_computed=dict(sorted(missing.items(), key=lambda kv: REASONS.index(kv[0]))),
            per_query={q: outcomes[q].value for q in queries},
        ))
    return out
