"""Rows read back from the label store, checked before they are trusted.

The store is a file anyone can edit (a grade set to 'banana', a hash cut short, a time that is no time). A bad
row stops the command with one line naming the store, the table, the row id and the column; it never becomes a
null grade in an export, nor an error that blames a file the user did not name.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from citator.data.hashing import sha256_captioned, sha256_text
from citator.errors import LabelStoreError
from citator.statutes.review.records import (
    HEX64,
    TIMESTAMP_RULE,
    LabelRecord,
    ReviewItem,
    item_key,
    parse_timestamp,
)

ITEM_COLUMNS = (
    "query_id", "doc_id", "query", "split", "family", "kind", "heading", "section_text", "caption", "passage",
    "query_sha256", "section_sha256", "passage_sha256",
)
# How the store writes a grade (`str(grade)`); nothing else is one, " 2" and "2.0" included.
_GRADES: dict[str, int | str] = {"0": 0, "1": 1, "2": 2, "3": 3, "unknown": "unknown"}

Refuse = Callable[[str, str], LabelStoreError]


def _refuser(path: Path, table: str, row_id: Any) -> Refuse:
    def refuse(column: str, message: str) -> LabelStoreError:
        return LabelStoreError(f'{path}: table "{table}" row {row_id} column "{column}": {message}; '
                               "fix or delete that row (or restore the store from a backup)")
    return refuse


def _shown(value: Any) -> str:
    """A value as the error line shows it: its repr, cut short (a cell may hold megabytes)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _text(row: Any, column: str, refuse: Refuse) -> str:
    value = row[column]
    if not isinstance(value, str):
        raise refuse(column, f"expected text, got {_shown(value)}")
    return value


def item_problem(item: ReviewItem) -> tuple[str, str] | None:
    """(column, what is wrong) when an item's hashes are not those of its texts, else None: a label is bound to
    these hashes, so a text edited without them would let an old grade pass for the new text."""
    for column in ("query_sha256", "section_sha256", "passage_sha256"):
        if not HEX64.fullmatch(getattr(item, column)):
            return column, "expected 64 lowercase hex digits"
    expected = (("query_sha256", sha256_text(item.query)),
                ("section_sha256", sha256_captioned(item.heading, item.section_text)),
                ("passage_sha256", sha256_captioned(item.caption, item.passage)))
    for column, digest in expected:
        if getattr(item, column) != digest:
            return column, "is not the sha256 of the texts it stands for"
    return None


def item_from_row(path: Path, row: Any) -> ReviewItem:
    """An items row (columns `id`, `item_key` and ITEM_COLUMNS), checked."""
    refuse = _refuser(path, "items", row["id"])
    item = ReviewItem(**{c: _text(row, c, refuse) for c in ITEM_COLUMNS})
    problem = item_problem(item)
    if problem is not None:
        raise refuse(*problem)
    if row["item_key"] != item.key:  # pages and grade forms find the item by this key
        raise refuse("item_key", f"expected {item_key(item.query_id, item.doc_id)!r}, got {_shown(row['item_key'])}")
    return item


def label_from_row(path: Path, row: Any) -> LabelRecord:
    """A labels row joined to its item and reviewer (see store.LABEL_SELECT), checked."""
    refuse = _refuser(path, "labels", row["label_id"])
    grades = []
    for column in ("section_grade", "passage_grade"):
        value = row[column]
        if not isinstance(value, str) or value not in _GRADES:
            raise refuse(column, f'expected 0, 1, 2, 3 or "unknown", got {_shown(value)}')
        grades.append(_GRADES[value])
    hashes = [_text(row, c, refuse) for c in ("query_sha256", "section_sha256", "passage_sha256")]
    for column, value in zip(("query_sha256", "section_sha256", "passage_sha256"), hashes, strict=True):
        if not HEX64.fullmatch(value):
            raise refuse(column, f"expected 64 lowercase hex digits, got {_shown(value)}")
    complete = row["complete"]
    if type(complete) is not int or complete not in (0, 1):
        raise refuse("complete", f"expected 0 or 1, got {_shown(complete)}")
    labeled_at = _text(row, "updated_at", refuse)
    instant = parse_timestamp(labeled_at, naive_is_utc=True)
    if instant is None:
        raise refuse("updated_at", f"expected {TIMESTAMP_RULE}, got {_shown(labeled_at)}")
    if parse_timestamp(labeled_at) is None:  # a zone-less time an earlier import kept: UTC, as documented then
        labeled_at = instant.isoformat()
    note = _text(row, "note", refuse)
    query_id = _text(row, "query_id", _refuser(path, "items", row["item_id"]))
    doc_id = _text(row, "doc_id", _refuser(path, "items", row["item_id"]))
    reviewer = _text(row, "name", _refuser(path, "reviewers", row["reviewer_id"]))
    query_sha256, section_sha256, passage_sha256 = hashes
    return LabelRecord(query_id, doc_id, reviewer, grades[0], grades[1], note, query_sha256, section_sha256,
                       passage_sha256, bool(complete), labeled_at)


def reviewer_name(path: Path, row: Any) -> str:
    """The name of a reviewers row (columns `id`, `name`), checked."""
    return _text(row, "name", _refuser(path, "reviewers", row["id"]))
