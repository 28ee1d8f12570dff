"""Human labels of a run's pools: hash-checked consensus grades, human-label metrics and calibration."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from statistics import median_low
from typing import Any

from citator.bench.statutes.pool import Pool, PoolItem
from citator.data.statutes import HumanLabel, sha256_text
from citator.evaluate.calibration import calibrate
from citator.evaluate.ndcg import ndcg
from citator.evaluate.precision import precision
from citator.providers.grades import GradeDistribution

Key = tuple[str, str]


@dataclass(frozen=True)
class Consensus:
    """Per (query, doc): the lower median of reviewers' known grades (None = unknown), and label counts."""

    section: Mapping[Key, int | None]
    passage: Mapping[Key, int | None]
    used: int
    stale: int
    incomplete: int
    not_in_pool: int


def consensus(labels: Sequence[HumanLabel], items: Mapping[Key, PoolItem]) -> Consensus:
    """Keep complete labels whose query, section and passage hashes match the run's texts."""
    section: dict[Key, list[int]] = {}
    passage: dict[Key, list[int]] = {}
    used = stale = incomplete = not_in_pool = 0
    for label in labels:
        item = items.get((label.query_id, label.doc_id))
        if item is None:
            not_in_pool += 1
            continue
        if (label.query_sha256, label.section_sha256, label.passage_sha256) != (
                sha256_text(item.query), item.section_sha256, item.passage_sha256):
            stale += 1  # graded another text than this run shows: must not be used
            continue
        if not label.complete:
            incomplete += 1
            continue
        used += 1
        key = (label.query_id, label.doc_id)
        section.setdefault(key, [])
        passage.setdefault(key, [])
        # Unknown stays unknown: it is left out, never counted as grade 0.
        if label.section_grade is not None:
            section[key].append(label.section_grade)
        if label.passage_grade is not None:
            passage[key].append(label.passage_grade)

    def fold(grades: dict[Key, list[int]]) -> dict[Key, int | None]:
        return {k: (median_low(v) if v else None) for k, v in sorted(grades.items())}

    return Consensus(fold(section), fold(passage), used, stale, incomplete, not_in_pool)


def _judged(order: Sequence[str], qid: str, grades: Mapping[Key, int | None]) -> dict[str, int] | None:
    known = {d: grades.get((qid, d)) for d in order}
    if any(g is None for g in known.values()):
        return None
    return known  # type: ignore[return-value]


def human_metrics(pools: Sequence[Pool], orders: Mapping[str, Mapping[str, Sequence[str]]],
                  grades: Mapping[Key, int | None]) -> dict[str, Any]:
    """Per split and order: P@5 only where the top five are all judged; pooled nDCG@5 only where the whole pool is."""
    out: dict[str, Any] = {}
    for split in sorted({p.query.split for p in pools if p.query.kind == "ranking"}):
        group = [p for p in pools if p.query.split == split and p.query.kind == "ranking"]
        out[split] = {}
        for name, by_query in sorted(orders.items()):
            p5, nd = [], []
            for pool in group:
                qid = pool.query.query_id
                order = list(by_query[qid])
                top = _judged(order[:5], qid, grades)
                if top is not None:
                    p5.append(precision(order, top, 5, min_grade=2))
                whole = _judged(pool.doc_ids, qid, grades)
                if whole is not None:
                    nd.append(ndcg(order, whole, 5))
            out[split][name] = {
                "queries": len(group),
                "p@5_queries": len(p5), "p@5": round(sum(p5) / len(p5), 6) if p5 else None,
                "ndcg@5_queries": len(nd), "ndcg@5": round(sum(nd) / len(nd), 6) if nd else None,
            }
    return out


def calibration(pools: Sequence[Pool], dists: Mapping[Key, GradeDistribution],
                grades: Mapping[Key, int | None]) -> dict[str, Any]:
    """Per split: calibration of the model's distributions against known human grades (None when none overlap)."""
    out: dict[str, Any] = {}
    for split in sorted({p.query.split for p in pools}):
        keys = [(i.query_id, i.doc_id) for p in pools if p.query.split == split for i in p.items]
        pairs = [(dists[k], grades[k]) for k in keys if k in dists and grades.get(k) is not None]
        if not pairs:
            out[split] = None
            continue
        cal = calibrate([d.p_useful for d, _ in pairs], [d.confidence for d, _ in pairs],
                        [d.grade for d, _ in pairs], [int(g) for _, g in pairs])  # type: ignore[arg-type]
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
