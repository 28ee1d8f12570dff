"""The SQLite label store: reviewers, review items, labels bound to text hashes, and sign-in sessions."""

from __future__ import annotations

import contextlib
import secrets
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from citator.data.atomic import check_output
from citator.errors import LabelStoreBusy, LabelStoreError, NoReviewItem
from citator.statutes.review.migrations import migrate
from citator.statutes.review.queue import queue_order
from citator.statutes.review.records import Grade, LabelRecord, Reviewer, ReviewItem, parse_grade
from citator.statutes.review.tokens import new_secret, secret_hash

_ITEM_COLUMNS = (
    "query_id", "doc_id", "query", "split", "family", "kind", "heading", "section_text", "caption", "passage",
    "query_sha256", "section_sha256", "passage_sha256",
)
_LABEL_SELECT = """
    SELECT i.query_id, i.doc_id, r.name, l.section_grade, l.passage_grade, l.note,
           l.query_sha256, l.section_sha256, l.passage_sha256, l.complete, l.updated_at
    FROM labels l JOIN items i ON i.id = l.item_id JOIN reviewers r ON r.id = l.reviewer_id
"""
_UPSERT_LABEL = """
    INSERT INTO labels (reviewer_id, item_id, section_grade, passage_grade, note, query_sha256,
                        section_sha256, passage_sha256, complete, created_at, updated_at, completed_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (reviewer_id, item_id) DO UPDATE SET
        section_grade = excluded.section_grade, passage_grade = excluded.passage_grade,
        note = excluded.note, query_sha256 = excluded.query_sha256,
        section_sha256 = excluded.section_sha256, passage_sha256 = excluded.passage_sha256,
        complete = excluded.complete, updated_at = excluded.updated_at, completed_at = excluded.completed_at
"""
SESSION_HOURS = 12
# How long a write waits for another writer (an import, a load, another reviewer) before the store says busy.
BUSY_SECONDS = 10.0


def now() -> str:
    """UTC timestamp, ISO 8601 to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class LoadCounts:
    """What `load_items` did: new items, items whose texts changed (their labels go stale), untouched items."""

    added: int
    changed: int
    unchanged: int


@dataclass(frozen=True)
class Progress:
    """One reviewer's queue: complete reviews, drafts, labels gone stale, and the total."""

    total: int
    complete: int
    draft: int
    stale: int


def _grade_text(grade: Grade) -> str:
    return str(grade)


def _item(row: sqlite3.Row) -> ReviewItem:
    return ReviewItem(**{c: row[c] for c in _ITEM_COLUMNS})


def _label(row: sqlite3.Row | tuple) -> LabelRecord:
    q, d, name, sg, pg, note, qh, sh, ph, complete, at = tuple(row)
    return LabelRecord(q, d, name, parse_grade(sg), parse_grade(pg), note, qh, sh, ph, bool(complete), at)  # type: ignore[arg-type]


class LabelStore:
    """One open label database; every query is parameterised, every write is one transaction."""

    def __init__(self, path: str | Path) -> None:
        # The store is a file citator writes: the output rule holds (no symlink, device, directory or FIFO).
        self.path = check_output(path, in_place=True)
        try:
            self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=BUSY_SECONDS)
            self._conn.row_factory = sqlite3.Row
            self._conn.execute("PRAGMA foreign_keys = ON")
            # WAL lets the CLI load or export while the review server is running.
            self._conn.execute("PRAGMA journal_mode = WAL")
        except sqlite3.Error as exc:
            raise LabelStoreError(f"{self.path}: cannot open the label store: {exc}") from exc
        migrate(self._conn)
        if self._conn.execute("SELECT 1 FROM meta WHERE key = 'queue_key'").fetchone() is None:
            with self._tx() as c:
                c.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('queue_key', ?)", (secrets.token_hex(32),))

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> LabelStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:  # locked by another writer past the connection's 10 s wait
            raise LabelStoreBusy(f"{self.path}: the label store is busy with another writer ({exc}); nothing was "
                                 "written, try again") from None
        try:
            yield self._conn
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    @property
    def queue_key(self) -> bytes:
        return bytes.fromhex(self._conn.execute("SELECT value FROM meta WHERE key = 'queue_key'").fetchone()[0])

    # reviewers and sessions

    def add_reviewer(self, name: str, *, new_token: bool = False) -> str:
        """Create reviewer `name` (or give a token-less imported one a token); return the token, shown only once."""
        name = name.strip()
        if not name:
            raise LabelStoreError("a reviewer needs a non-empty name")
        token = new_secret()
        with self._tx() as c:
            row = c.execute("SELECT token_sha256 FROM reviewers WHERE name = ?", (name,)).fetchone()
            if row is None:
                c.execute(
                    "INSERT INTO reviewers (name, token_sha256, created_at) VALUES (?, ?, ?)",
                    (name, secret_hash(token), now()),
                )
            elif row[0] is not None and not new_token:
                raise LabelStoreError(f'reviewer "{name}" already has a token: pass --new-token to replace it')
            else:
                c.execute("UPDATE reviewers SET token_sha256 = ? WHERE name = ?", (secret_hash(token), name))
                c.execute("DELETE FROM sessions WHERE reviewer_id = (SELECT id FROM reviewers WHERE name = ?)", (name,))
        return token

    def _ensure_reviewer(self, c: sqlite3.Connection, name: str) -> int:
        row = c.execute("SELECT id FROM reviewers WHERE name = ?", (name,)).fetchone()
        if row is not None:
            return int(row[0])
        cur = c.execute("INSERT INTO reviewers (name, token_sha256, created_at) VALUES (?, NULL, ?)", (name, now()))
        return int(cur.lastrowid or 0)

    def reviewers(self) -> list[Reviewer]:
        rows = self._conn.execute("SELECT id, name, token_sha256 FROM reviewers ORDER BY name").fetchall()
        return [Reviewer(r[0], r[1], r[2] is not None) for r in rows]

    def reviewer_for_token(self, token: str) -> Reviewer | None:
        """The reviewer holding `token`, or None (an empty or unknown token never matches)."""
        if not token:
            return None
        row = self._conn.execute(
            "SELECT id, name FROM reviewers WHERE token_sha256 = ?", (secret_hash(token),)
        ).fetchone()
        return Reviewer(row[0], row[1], True) if row else None

    def open_session(self, reviewer: Reviewer) -> str:
        """Start a session for a signed-in reviewer; return its secret (the cookie value)."""
        secret = new_secret()
        expires = (datetime.now(UTC) + timedelta(hours=SESSION_HOURS)).isoformat(timespec="seconds")
        with self._tx() as c:
            c.execute("DELETE FROM sessions WHERE expires_at < ?", (now(),))
            c.execute(
                "INSERT INTO sessions (session_sha256, reviewer_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
                (secret_hash(secret), reviewer.reviewer_id, now(), expires),
            )
        return secret

    def reviewer_for_session(self, secret: str) -> Reviewer | None:
        if not secret:
            return None
        row = self._conn.execute(
            "SELECT r.id, r.name FROM sessions s JOIN reviewers r ON r.id = s.reviewer_id "
            "WHERE s.session_sha256 = ? AND s.expires_at >= ? AND r.token_sha256 IS NOT NULL",
            (secret_hash(secret), now()),
        ).fetchone()
        return Reviewer(row[0], row[1], True) if row else None

    def close_session(self, secret: str) -> None:
        with self._tx() as c:
            c.execute("DELETE FROM sessions WHERE session_sha256 = ?", (secret_hash(secret),))

    # review items

    def load_items(self, items: Iterable[ReviewItem]) -> LoadCounts:
        """Insert new items and refresh changed ones by (query_id, doc_id); loading twice adds nothing."""
        added = changed = unchanged = 0
        stamp = now()
        # Sorted so row ids follow (query_id, doc_id), never the order (rank) of the source file.
        ordered = sorted(items, key=lambda it: (it.query_id, it.doc_id))
        with self._tx() as c:
            for it in ordered:
                values = tuple(getattr(it, col) for col in _ITEM_COLUMNS)
                row = c.execute(
                    f"SELECT {', '.join(_ITEM_COLUMNS)} FROM items WHERE query_id = ? AND doc_id = ?",
                    (it.query_id, it.doc_id),
                ).fetchone()
                if row is None:
                    c.execute(
                        f"INSERT INTO items (item_key, {', '.join(_ITEM_COLUMNS)}, loaded_at, updated_at) "
                        f"VALUES ({', '.join('?' * (len(_ITEM_COLUMNS) + 3))})",
                        (it.key, *values, stamp, stamp),
                    )
                    added += 1
                elif tuple(row) != values:
                    assignments = ", ".join(f"{col} = ?" for col in _ITEM_COLUMNS)
                    c.execute(
                        f"UPDATE items SET {assignments}, updated_at = ? WHERE query_id = ? AND doc_id = ?",
                        (*values, stamp, it.query_id, it.doc_id),
                    )
                    changed += 1
                else:
                    unchanged += 1
        return LoadCounts(added, changed, unchanged)

    def items(self) -> list[ReviewItem]:
        rows = self._conn.execute(f"SELECT {', '.join(_ITEM_COLUMNS)} FROM items ORDER BY query_id, doc_id")
        return [_item(r) for r in rows.fetchall()]

    def item(self, key: str) -> ReviewItem | None:
        row = self._conn.execute(f"SELECT {', '.join(_ITEM_COLUMNS)} FROM items WHERE item_key = ?", (key,)).fetchone()
        return _item(row) if row else None

    def queue(self, reviewer: Reviewer) -> list[ReviewItem]:
        """Every item, in this reviewer's keyed-hash order."""
        return queue_order(self.queue_key, reviewer.name, self.items())

    # labels

    def labels(self, reviewer: str | None = None) -> list[LabelRecord]:
        """All labels (or one reviewer's), stale ones included, ordered by query, candidate, reviewer."""
        sql = _LABEL_SELECT + (" WHERE r.name = ?" if reviewer is not None else "")
        sql += " ORDER BY i.query_id, i.doc_id, r.name"
        return [_label(r) for r in self._conn.execute(sql, (reviewer,) if reviewer is not None else ()).fetchall()]

    def label(self, reviewer: Reviewer, key: str) -> LabelRecord | None:
        row = self._conn.execute(
            _LABEL_SELECT + " WHERE l.reviewer_id = ? AND i.item_key = ?", (reviewer.reviewer_id, key)
        ).fetchone()
        return _label(row) if row else None

    def stale_labels(self) -> list[tuple[LabelRecord, ReviewItem]]:
        """Labels whose bound hashes no longer match the item's current texts."""
        current = {(it.query_id, it.doc_id): it for it in self.items()}
        out = []
        for lab in self.labels():
            it = current[(lab.query_id, lab.doc_id)]
            if lab.is_stale_for(it):
                out.append((lab, it))
        return out

    def save_label(
        self,
        reviewer: Reviewer,
        key: str,
        section_grade: Grade,
        passage_grade: Grade,
        note: str,
        seen_hashes: tuple[str, str, str],
        complete: bool,
    ) -> LabelRecord:
        """Record a reviewer's grades for the texts they saw; refuse if those texts changed meanwhile."""
        if parse_grade(section_grade) is None or parse_grade(passage_grade) is None:
            raise LabelStoreError("grades must be 0, 1, 2, 3 or unknown")
        stamp = now()
        with self._tx() as c:
            row = c.execute(
                "SELECT id, query_sha256, section_sha256, passage_sha256 FROM items WHERE item_key = ?", (key,)
            ).fetchone()
            if row is None:
                raise NoReviewItem(f"no review item {key!r}")
            if tuple(row)[1:] != tuple(seen_hashes):
                raise LabelStoreError("the texts of this item changed after the page was shown: reload and grade again")
            c.execute(
                _UPSERT_LABEL,
                (reviewer.reviewer_id, row[0], _grade_text(section_grade), _grade_text(passage_grade), note,
                 *seen_hashes, int(complete), stamp, stamp, stamp if complete else None),
            )
        saved = self.label(reviewer, key)
        assert saved is not None
        return saved

    def put_label(self, record: LabelRecord) -> str:
        """Store an imported label as given (hashes included); return "added", "updated", "unchanged" or "kept"."""
        with self._tx() as c:
            item = c.execute(
                "SELECT id FROM items WHERE query_id = ? AND doc_id = ?", (record.query_id, record.doc_id)
            ).fetchone()
            if item is None:
                raise LabelStoreError(
                    f"no review item for query {record.query_id!r}, candidate {record.doc_id!r}: load its run first"
                )
            reviewer_id = self._ensure_reviewer(c, record.reviewer)
            old = c.execute(
                _LABEL_SELECT + " WHERE l.reviewer_id = ? AND l.item_id = ?", (reviewer_id, item[0])
            ).fetchone()
            if old is not None:
                old_label = _label(old)
                if old_label == record:
                    return "unchanged"
                if old_label.labeled_at >= record.labeled_at:
                    return "kept"  # the store's own label is as new or newer
            c.execute(
                _UPSERT_LABEL,
                (reviewer_id, item[0], _grade_text(record.section_grade), _grade_text(record.passage_grade),
                 record.note, *record.hashes, int(record.complete), record.labeled_at, record.labeled_at,
                 record.labeled_at if record.complete else None),
            )
        return "added" if old is None else "updated"

    def progress(self, reviewer: Reviewer) -> Progress:
        """Counts over the current items: a stale label counts as stale, never as done."""
        current = {(it.query_id, it.doc_id): it for it in self.items()}
        complete = draft = stale = 0
        for lab in self.labels(reviewer.name):
            if lab.is_stale_for(current[(lab.query_id, lab.doc_id)]):
                stale += 1
            elif lab.complete:
                complete += 1
            else:
                draft += 1
        return Progress(len(current), complete, draft, stale)
