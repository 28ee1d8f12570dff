"""Read a statute run's pool.jsonl: the reviewer-visible texts, and the keyword order kept apart from them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from citator.data.atomic import mark_read
from citator.data.jsonl import iter_jsonl, require_str
from citator.errors import PoolError
from citator.data.hashing import sha256_captioned, sha256_text
from citator.statutes.review.records import ReviewItem

POOL_FILE = "pool.jsonl"
_TEXT_FIELDS = ("query_id", "query", "split", "family", "kind", "doc_id", "heading", "section_text", "caption", "passage")
# Texts that may legitimately be empty (a section without a heading, a passage without a caption).
_MAY_BE_EMPTY = {"heading", "caption"}


@dataclass(frozen=True)
class PoolEntry:
    """One pool line: the item a reviewer may see, and the keyword rank they must never see."""

    item: ReviewItem
    keyword_rank: int


def read_pool(run_dir: str | Path) -> list[PoolEntry]:
    """Read RUN_DIR/pool.jsonl strictly; hashes must match their texts. Keys beyond the contract are ignored."""
    path = Path(run_dir) / POOL_FILE
    mark_read([path])  # no output of the same command may replace it (`review metrics RUN --json RUN/pool.jsonl`)
    entries: list[PoolEntry] = []
    seen: dict[tuple[str, str], int] = {}
    ranks: dict[tuple[str, int], int] = {}
    per_query: dict[str, tuple[tuple[str, str, str, str], int]] = {}
    for line, obj in iter_jsonl(path, PoolError):
        text = {k: require_str(obj, k, path, line, PoolError, nonempty=k not in _MAY_BE_EMPTY) for k in _TEXT_FIELDS}
        for heading, text_field, hash_field in (("heading", "section_text", "section_sha256"),
                                                ("caption", "passage", "passage_sha256")):
            given = require_str(obj, hash_field, path, line, PoolError)
            if given != sha256_captioned(text[heading], text[text_field]):
                raise PoolError(path, line, f"is not the sha256 of {heading} and {text_field}: rebuild the pool",
                                field=hash_field)
        rank = obj.get("keyword_rank")
        if not isinstance(rank, int) or isinstance(rank, bool) or rank < 1:
            raise PoolError(path, line, f"expected an integer >= 1, got {rank!r}", field="keyword_rank")
        pair = (text["query_id"], text["doc_id"])
        if pair in seen:
            raise PoolError(path, line, f"duplicate candidate {pair[1]!r} for query {pair[0]!r} (first on line {seen[pair]})",
                            field="doc_id")
        seen[pair] = line
        if (pair[0], rank) in ranks:
            raise PoolError(path, line, f"rank {rank} repeats line {ranks[(pair[0], rank)]}", field="keyword_rank")
        ranks[(pair[0], rank)] = line
        about = (text["query"], text["split"], text["family"], text["kind"])
        first = per_query.setdefault(pair[0], (about, line))
        if first[0] != about:
            raise PoolError(path, line, f"query, split, family or kind differ from line {first[1]} for the same query_id",
                            field="query")
        item = ReviewItem(**text, query_sha256=sha256_text(text["query"]), section_sha256=obj["section_sha256"],
                          passage_sha256=obj["passage_sha256"])
        entries.append(PoolEntry(item, rank))
    return entries


def keyword_order(entries: Sequence[PoolEntry]) -> dict[str, list[str]]:
    """query_id -> doc_ids in keyword order (the pool's primary baseline ranking)."""
    by_query: dict[str, list[PoolEntry]] = {}
    for e in entries:
        by_query.setdefault(e.item.query_id, []).append(e)
    return {q: [e.item.doc_id for e in sorted(es, key=lambda e: e.keyword_rank)] for q, es in by_query.items()}


def pool_items(entries: Sequence[PoolEntry]) -> Mapping[tuple[str, str], ReviewItem]:
    """(query_id, doc_id) -> the item, for staleness checks and pooled metrics."""
    return {(e.item.query_id, e.item.doc_id): e.item for e in entries}
