"""Candidate pools of the reranking workload: per query, fixed BM25 candidates with text."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citator.data.jsonl import iter_jsonl, require_str, require_unique_str
from citator.errors import DataError


class PoolFileError(DataError):
    """A reranking pool file is malformed."""


@dataclass(frozen=True)
class PoolCandidate:
    """One fixed BM25 candidate: id, text, 1-based BM25 rank and score."""

    id: str
    text: str
    rank: int
    bm25_score: float

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "text": self.text, "rank": self.rank, "bm25_score": self.bm25_score}


@dataclass(frozen=True)
class PoolQuery:
    """A query and its candidates in BM25 order."""

    query_id: str
    query: str
    candidates: tuple[PoolCandidate, ...]

    def ids(self) -> frozenset[str]:
        return frozenset(c.id for c in self.candidates)


def iter_pool(path: str | Path) -> Iterator[PoolQuery]:
    """Stream `{"query_id", "query", "candidates": [{"id","text","rank","bm25_score"}]}` lines, strictly."""
    seen: dict[str, int] = {}
    for line, obj in iter_jsonl(path, PoolFileError):
        qid = require_unique_str(obj, "query_id", seen, path, line, PoolFileError)
        text = require_str(obj, "query", path, line, PoolFileError)
        raw = obj.get("candidates")
        if not isinstance(raw, list) or not raw:
            raise PoolFileError(path, line, "expected a non-empty list", field="candidates")
        cands, ids = [], set()
        for i, c in enumerate(raw):
            where = f"candidates[{i}]"
            if not isinstance(c, dict):
                raise PoolFileError(path, line, f"{where} is not an object", field="candidates")
            cid, ctext, rank, score = c.get("id"), c.get("text"), c.get("rank"), c.get("bm25_score")
            if not isinstance(cid, str) or not cid:
                raise PoolFileError(path, line, f"{where}.id must be a non-empty string", field="candidates")
            if cid in ids:
                raise PoolFileError(path, line, f'{where}: duplicate candidate id "{cid}"', field="candidates")
            if not isinstance(ctext, str):
                raise PoolFileError(path, line, f"{where}.text must be a string", field="candidates")
            if not isinstance(rank, int) or isinstance(rank, bool) or rank < 1:
                raise PoolFileError(path, line, f"{where}.rank must be an integer >= 1", field="candidates")
            if not isinstance(score, (int, float)) or isinstance(score, bool):
                raise PoolFileError(path, line, f"{where}.bm25_score must be a number", field="candidates")
            ids.add(cid)
            cands.append(PoolCandidate(cid, ctext, rank, float(score)))
        cands.sort(key=lambda c: c.rank)
        yield PoolQuery(qid, text, tuple(cands))


def read_pool(path: str | Path, limit: int | None = None) -> list[PoolQuery]:
    """The first `limit` queries of a pool file (all when None)."""
    out: list[PoolQuery] = []
    for q in iter_pool(path):
        if limit is not None and len(out) >= limit:
            break
        out.append(q)
    return out
