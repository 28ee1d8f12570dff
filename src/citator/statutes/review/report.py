"""Human-label metrics for a statute run: its pool, its rankings and the labels, checked against current hashes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from citator.data.jsonl import iter_jsonl, require_str
from citator.errors import LabelError
from citator.evaluate.human_labels import DocGrade, Judgment, MetricSummary, judged_outcomes, resolve, summarise
from citator.statutes.review.pool import PoolEntry
from citator.statutes.review.records import LabelRecord

FACETS = ("section", "passage")


@dataclass(frozen=True)
class HumanLabelReport:
    """Summaries per ranking, facet (section or passage grade), metric and split/kind group."""

    rows: Sequence[tuple[str, str, MetricSummary]]
    labels_outside_run: int

    def to_json(self) -> dict:
        return {
            "labels_outside_run": self.labels_outside_run,
            "rows": [
                {"ranking": ranking, "facet": facet, "metric": s.metric, "group": s.group, "computed": s.computed,
                 "mean": s.mean, "not_computed": dict(s.not_computed), "per_query": dict(s.per_query)}
                for ranking, facet, s in self.rows
            ],
        }


def read_ranking(path: str | Path) -> dict[str, list[str]]:
    """A ranking file: JSON lines {"query_id": ..., "doc_ids": [...]} in ranked order (only ids, no scores)."""
    out: dict[str, list[str]] = {}
    for line, obj in iter_jsonl(path, LabelError):
        q = require_str(obj, "query_id", path, line, LabelError)
        docs = obj.get("doc_ids")
        if not isinstance(docs, list) or not all(isinstance(d, str) and d for d in docs):
            raise LabelError(path, line, "expected a list of non-empty strings", field="doc_ids")
        if q in out:
            raise LabelError(path, line, f"duplicate query_id {q!r}", field="query_id")
        out[q] = docs
    return out


def doc_grades(
    entries: Sequence[PoolEntry],
    labels: Sequence[LabelRecord],
    facet: str,
    reviewer: str | None = None,
    consensus: str = "lower-median",
) -> tuple[dict[str, dict[str, DocGrade]], int]:
    """query_id -> doc_id -> usable grade for one facet; also the number of labels for items not in the run."""
    if facet not in FACETS:
        raise ValueError(f"facet must be one of {FACETS}")
    items = {(e.item.query_id, e.item.doc_id): e.item for e in entries}
    judgments: dict[tuple[str, str], list[Judgment]] = {pair: [] for pair in items}
    outside = 0
    for lab in labels:
        if reviewer is not None and lab.reviewer != reviewer:
            continue
        item = items.get((lab.query_id, lab.doc_id))
        if item is None:
            outside += 1
            continue
        grade = lab.section_grade if facet == "section" else lab.passage_grade
        judgments[(lab.query_id, lab.doc_id)].append(
            Judgment(lab.reviewer, grade if isinstance(grade, int) else None, lab.complete, lab.is_stale_for(item))
        )
    grades: dict[str, dict[str, DocGrade]] = {}
    for (q, d), js in judgments.items():
        grades.setdefault(q, {})[d] = resolve(js, consensus)
    return grades, outside


def human_label_report(
    entries: Sequence[PoolEntry],
    labels: Sequence[LabelRecord],
    rankings: Mapping[str, Mapping[str, Sequence[str]]],
    *,
    reviewer: str | None = None,
    consensus: str = "lower-median",
    k: int = 5,
    min_grade: int = 2,
) -> HumanLabelReport:
    """P@k and pooled nDCG@k per ranking, facet and split/kind; queries are grouped as "split/kind"."""
    pools: dict[str, list[str]] = {}
    group_of: dict[str, str] = {}
    for e in entries:
        pools.setdefault(e.item.query_id, []).append(e.item.doc_id)
        group_of[e.item.query_id] = f"{e.item.split}/{e.item.kind}"
    rows: list[tuple[str, str, MetricSummary]] = []
    outside = 0
    for facet in FACETS:
        grades, outside = doc_grades(entries, labels, facet, reviewer, consensus)
        for name, ranking in rankings.items():
            p_at_k, n_at_k = judged_outcomes(ranking, pools, grades, k, min_grade)
            rows += [(name, facet, s) for s in summarise(f"P@{k}", p_at_k, group_of)]
            rows += [(name, facet, s) for s in summarise(f"nDCG@{k}", n_at_k, group_of)]
    return HumanLabelReport(rows, outside)
