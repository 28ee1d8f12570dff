"""Per-query and per-split statute metrics: Hit@1/5/10, reciprocal rank and target coverage of a pool."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from citator.evaluate.bootstrap import PairedInterval, paired_family_bootstrap
from citator.evaluate.hit import hit
from citator.evaluate.rr import reciprocal_rank

METRICS = ("hit@1", "hit@5", "hit@10", "rr")
DIGITS = 6


@dataclass(frozen=True)
class QueryScore:
    """One query's scores under one order; `coverage` is the share of nominated targets inside the pool."""

    query_id: str
    split: str
    family: str
    kind: str
    values: tuple[float, float, float, float]
    coverage: float

    def get(self, metric: str) -> float:
        return self.coverage if metric == "coverage" else self.values[METRICS.index(metric)]


def score_order(query_id: str, split: str, family: str, kind: str, ranking: Sequence[str],
                nominated: Collection[str], pool: Collection[str]) -> QueryScore:
    """Scores of `ranking` against the nominated targets (grade 2 or 3); unjudged sections count as misses."""
    grades = {d: 1 for d in nominated}
    values = (hit(ranking, grades, 1), hit(ranking, grades, 5), hit(ranking, grades, 10),
              reciprocal_rank(ranking, grades))
    coverage = sum(1 for d in nominated if d in pool) / len(nominated) if nominated else 0.0
    return QueryScore(query_id, split, family, kind, values, coverage)


def _round(x: float) -> float:
    return round(x, DIGITS)


def summarize(scores: Sequence[QueryScore]) -> dict[str, dict[str, dict[str, float | int]]]:
    """{split: {kind: {"queries", "hit@1", "hit@5", "hit@10", "rr", "coverage"}}}, sorted keys."""
    out: dict[str, dict[str, dict[str, float | int]]] = {}
    for split in sorted({s.split for s in scores}):
        out[split] = {}
        for kind in sorted({s.kind for s in scores if s.split == split}):
            group = [s for s in scores if s.split == split and s.kind == kind]
            row: dict[str, float | int] = {"queries": len(group)}
            for metric in (*METRICS, "coverage"):
                row[metric] = _round(sum(s.get(metric) for s in group) / len(group))
            out[split][kind] = row
    return out


def interval_json(iv: PairedInterval) -> dict[str, object]:
    return {
        "queries": iv.queries, "families": iv.families,
        "keyword": _round(iv.mean_a), "reranked": _round(iv.mean_b), "difference": _round(iv.difference),
        "keyword_ci95": [_round(x) for x in iv.ci_a], "reranked_ci95": [_round(x) for x in iv.ci_b],
        "difference_ci95": [_round(x) for x in iv.ci_difference],
    }


def paired(keyword: Sequence[QueryScore], reranked: Sequence[QueryScore]) -> dict[str, dict[str, dict[str, object]]]:
    """{split: {metric: paired interval}} over ranking queries, resampling query families."""
    by_id = {s.query_id: s for s in reranked}
    out: dict[str, dict[str, dict[str, object]]] = {}
    for split in sorted({s.split for s in keyword if s.kind == "ranking"}):
        group = [s for s in keyword if s.split == split and s.kind == "ranking"]
        out[split] = {}
        for metric in METRICS:
            iv = paired_family_bootstrap([s.get(metric) for s in group], [by_id[s.query_id].get(metric) for s in group],
                                         [s.family for s in group])
            out[split][metric] = interval_json(iv)
    return out
