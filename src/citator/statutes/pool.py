"""The candidate pool: exactly 30 hits of the run's retrieval arm per query, each with its hashed passage (pool.jsonl).

`keyword_rank` (a pool.jsonl contract key) is the rank in the arm's own order: BM25 for the keyword arm, the fused
order for the hybrid arm.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Protocol

from citator.statutes.keyword import RETRIEVAL_VERSION, Analyzer, Hit
from citator.statutes.passages import extract_passage
from citator.data.statutes import StatuteSection, SuiteQuery
from citator.errors import StatuteError

POOL_SIZE = 30
# The keys of pool.jsonl, in order: the contract with the human-review app.
POOL_KEYS = (
    "query_id", "query", "split", "family", "kind", "doc_id", "heading", "section_text", "section_sha256",
    "caption", "passage", "passage_sha256", "keyword_rank",
)


class Retriever(Protocol):
    """What a pool needs of a retrieval arm (KeywordIndex, HybridIndex): its ranking and the keyword analyzer and
    IDF that passage extraction uses under every arm."""

    sections: list[StatuteSection]
    analyzer: Analyzer
    version: str

    def idf(self, term: str) -> float: ...

    def search(self, query: str, k: int) -> list[Hit]: ...


@dataclass(frozen=True)
class PoolItem:
    """One (query, candidate) of a pool, with the exact section and passage texts and their hashes."""

    query_id: str
    query: str
    split: str
    family: str
    kind: str
    doc_id: str
    heading: str
    section_text: str
    section_sha256: str
    caption: str
    passage: str
    passage_sha256: str
    keyword_rank: int
    keyword_score: float

    def to_json(self) -> dict[str, object]:
        """The pool.jsonl line (contract keys only; the keyword score lives in metrics)."""
        row = asdict(self)
        return {k: row[k] for k in POOL_KEYS}


@dataclass(frozen=True)
class Pool:
    """A query's 30 candidates in retrieval order; `fallback` says every retrieval score was 0 (no query term matched
    any section: keyword arm only, as the hybrid arm's dense scores always rank)."""

    query: SuiteQuery
    items: tuple[PoolItem, ...]
    fallback: bool
    retrieval_version: str = RETRIEVAL_VERSION

    @property
    def doc_ids(self) -> list[str]:
        return [i.doc_id for i in self.items]


def build_pool(index: Retriever, query: SuiteQuery, size: int = POOL_SIZE) -> Pool:
    """Retrieve exactly `size` sections for `query` and extract each one's passage."""
    if len(index.sections) < size:
        raise StatuteError("sections", None, f"the corpus has {len(index.sections)} sections; a pool needs {size}")
    hits = index.search(query.text, size)
    terms = frozenset(index.analyzer.terms(query.text))
    items = []
    for hit in hits:
        section = index.sections[hit.index]
        passage = extract_passage(section, terms, index.analyzer.terms, index.idf)
        items.append(PoolItem(
            query.query_id, query.text, query.split, query.family, query.kind, section.doc_id, section.heading,
            section.text, section.sha256, passage.caption, passage.text, passage.sha256,
            hit.rank, hit.score,
        ))
    # With no matching term every score is 0 and the pool is corpus order: kept, but disclosed.
    return Pool(query, tuple(items), fallback=all(h.score == 0.0 for h in hits), retrieval_version=index.version)


def build_pools(index: Retriever, queries: Sequence[SuiteQuery], size: int = POOL_SIZE) -> list[Pool]:
    """Pools for every ranking and outside-corpus query, in suite order (citation controls need none)."""
    return [build_pool(index, q, size) for q in queries if q.kind != "exact_citation"]
