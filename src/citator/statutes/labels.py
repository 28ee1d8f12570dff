"""Human labels of a run's pools: hash-checked consensus grades, human-label metrics and calibration.

The grade rule (lower median of complete, fresh, known grades) and the metrics (P@5 only where the top five
are judged, pooled nDCG@5 only where the whole pool is) are `citator.evaluate.human_labels`; this module
binds them to a run's pools and orders.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from citator.statutes.pool import Pool, PoolItem
from citator.data.hashing import sha256_text
from citator.data.statutes import HumanLabel
from citator.evaluate.calibration import calibrate
from citator.evaluate.human_labels import (
    DocGrade,
    Judgment,
    MetricSummary,
    judged_outcomes,
    resolve,
    summarise,
)
from citator.statutes.providers.grades import GradeDistribution

Key = tuple[str, str]
# query_id -> doc_id -> the usable grade or why there is none.
Grades = Mapping[str, Mapping[str, DocGrade]]
K = 5
MIN_GRADE = 2


@dataclass(frozen=True)
class Consensus:
    """Per query and doc, the consensus section and passage grades (lower median), and label counts."""

    section: Grades
    passage: Grades
    used: int
    stale: int
    incomplete: int
    not_in_pool: int


def consensus(labels: Sequence[HumanLabel], items: Mapping[Key, PoolItem]) -> Consensus:
    """Keep complete labels whose query, section and passage hashes match the run's texts."""
    section: dict[Key, list[Judgment]] = {key: [] for key in items}
    passage: dict[Key, list[Judgment]] = {key: [] for key in items}
    used = stale = incomplete = not_in_pool = 0
    for label in labels:
        key = (label.query_id, label.doc_id)
        item = items.get(key)
        if item is None:
            not_in_pool += 1
            continue
        # A label for another text than this run shows must not be used.
        is_stale = (label.query_sha256, label.section_sha256, label.passage_sha256) != (
            sha256_text(item.query), item.section_sha256, item.passage_sha256)
        if is_stale:
            stale += 1
        elif not label.complete:
            incomplete += 1
        else:
            used += 1
        section[key].append(Judgment(label.reviewer, label.section_grade, label.complete, is_stale))
        passage[key].append(Judgment(label.reviewer, label.passage_grade, label.complete, is_stale))

    def fold(judgments: dict[Key, list[Judgment]]) -> dict[str, dict[str, DocGrade]]:
        out: dict[str, dict[str, DocGrade]] = {}
        for (qid, doc_id), js in sorted(judgments.items()):
            out.setdefault(qid, {})[doc_id] = resolve(js, "lower-median")
        return out

    return Consensus(fold(section), fold(passage), used, stale, incomplete, not_in_pool)


def human_metrics(pools: Sequence[Pool], orders: Mapping[str, Mapping[str, Sequence[str]]],
                  grades: Grades) -> dict[str, Any]:
    """Per split and order: P@5 only where the top five are all judged; pooled nDCG@5 only where the whole pool is."""
    ranking = [p for p in pools if p.query.kind == "ranking"]
    split_of = {p.query.query_id: p.query.split for p in ranking}
    members = {p.query.query_id: p.doc_ids for p in ranking}
    out: dict[str, Any] = {split: {} for split in sorted(set(split_of.values()))}
    for name, by_query in sorted(orders.items()):
        precision, ndcg = judged_outcomes(by_query, members, grades, K, MIN_GRADE)
        for p5, nd in zip(summarise(f"P@{K}", precision, split_of), summarise(f"nDCG@{K}", ndcg, split_of)):
            out[p5.group][name] = {"queries": len(p5.per_query), **_summary("p@5", p5), **_summary("ndcg@5", nd)}
    return out


def _summary(prefix: str, s: MetricSummary) -> dict[str, Any]:
    return {f"{prefix}_queries": s.computed, prefix: None if s.mean is None else round(s.mean, 6),
            f"{prefix}_not_computed": dict(s.not_computed)}


def calibration(pools: Sequence[Pool], dists: Mapping[Key, GradeDistribution], grades: Grades) -> dict[str, Any]:
    """Per split: calibration of the model's distributions against known human grades (None when none overlap)."""
    out: dict[str, Any] = {}
    for split in sorted({p.query.split for p in pools}):
        pairs = []
        for pool in (p for p in pools if p.query.split == split):
            for item in pool.items:
                key = (item.query_id, item.doc_id)
                grade = grades.get(item.query_id, {}).get(item.doc_id, DocGrade(None)).grade
                if key in dists and grade is not None:
                    pairs.append((dists[key], grade))
        if not pairs:
            out[split] = None
            continue
        cal = calibrate([d.p_useful for d, _ in pairs], [d.confidence for d, _ in pairs],
                        [d.grade for d, _ in pairs], [g for _, g in pairs])
        out[split] = _rounded(asdict(cal))
    return out


def _rounded(obj: Any) -> Any:
    if isinstance(obj, float):
        return round(obj, 6)
    if isinstance(obj, dict):
        return {k: _rounded(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_rounded(v) for v in obj]
    return obj
