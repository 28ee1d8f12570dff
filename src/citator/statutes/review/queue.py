"""Queue order per reviewer: a keyed hash of (reviewer, query, candidate), so it can never echo a rank."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable

from citator.statutes.review.records import ReviewItem


def _keyed(key: bytes, *parts: str) -> str:
    return hmac.new(key, "\x1f".join(parts).encode("utf-8"), hashlib.sha256).hexdigest()


def queue_order(key: bytes, reviewer: str, items: Iterable[ReviewItem]) -> list[ReviewItem]:
    """Candidates of one query stay together (context helps reviewers); queries and candidates are shuffled by key."""
    return sorted(
        items,
        key=lambda it: (_keyed(key, reviewer, it.query_id), _keyed(key, reviewer, it.query_id, it.doc_id)),
    )
