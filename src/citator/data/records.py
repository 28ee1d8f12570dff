"""The records that travel between modules: documents, queries, judgments and ranked results."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

STANCES = ("supported", "refuted", "all")


def _frozen(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class Document:
    """One corpus document; `extra` keeps any keys beyond the contract."""

    doc_id: str
    title: str
    text: str
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {"doc_id": self.doc_id, "title": self.title, "text": self.text, **self.extra}


@dataclass(frozen=True)
class Query:
    """A proposition asked with a stance: supported, refuted or all."""

    query_id: str
    text: str
    stance: str = "all"
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @property
    def split(self) -> str | None:
        value = self.extra.get("split")
        return value if isinstance(value, str) else None

    def to_json(self) -> dict[str, Any]:
        return {"query_id": self.query_id, "text": self.text, "stance": self.stance, **self.extra}


@dataclass(frozen=True)
class Qrels:
    """Relevance grades per query: query_id -> doc_id -> grade (binary ground truth uses grade 1)."""

    grades: Mapping[str, Mapping[str, int]]

    @classmethod
    def from_dict(cls, grades: Mapping[str, Mapping[str, int]]) -> Qrels:
        return cls(_frozen({q: _frozen(d) for q, d in grades.items()}))

    def __contains__(self, query_id: object) -> bool:
        return query_id in self.grades

    def __len__(self) -> int:
        return len(self.grades)

    def query_ids(self) -> list[str]:
        return list(self.grades)

    def of(self, query_id: str) -> Mapping[str, int]:
        """Grades of one query; an unknown query has no relevant documents."""
        return self.grades.get(query_id, MappingProxyType({}))

    def relevant(self, query_id: str, min_grade: int = 1) -> frozenset[str]:
        return frozenset(d for d, g in self.of(query_id).items() if g >= min_grade)


@dataclass(frozen=True)
class ScoredDoc:
    doc_id: str
    score: float


@dataclass(frozen=True)
class ResultLine:
    """One line of a workload-1 results file: the ranked documents of one query, best first."""

    query_id: str
    results: tuple[ScoredDoc, ...]

    @property
    def doc_ids(self) -> list[str]:
        return [r.doc_id for r in self.results]

    def to_json(self) -> dict[str, Any]:
        return {"query_id": self.query_id, "results": [{"doc_id": r.doc_id, "score": r.score} for r in self.results]}
