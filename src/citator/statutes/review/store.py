"""The SQLite label store: reviewers, review items, labels bound to text hashes, and sign-in sessions."""

from __future__ import annotations

import contextlib
import os
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
from citator.statutes.review.records import (
    HEX64,
    TIMESTAMP_RULE,
    Grade,
    LabelRecord,
    Reviewer,
    ReviewItem,
    parse_grade,
    parse_timestamp,
)
from citator.statutes.review.rows import ITEM_COLUMNS as _ITEM_COLUMNS
from citator.statutes.review.rows import item_from_row, item_problem, label_from_row, reviewer_name
from citator.statutes.review.tokens import new_secret, secret_hash

_ITEM_SELECT = f"SELECT id, item_key, {', '.join(_ITEM_COLUMNS)} FROM items"
_LABEL_SELECT = """
    SELECT l.id AS label_id, l.item_id, l.reviewer_id, i.query_id, i.doc_id, r.name,
           l.section_grade, l.passage_grade, l.note, l.query_sha256, l.section_sha256, l.passage_sha256,
           l.complete, l.updated_at
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


def _ended(expires_at: object) -> bool:
    """A session has ended at its expiry instant; a time that names no instant ends it too (never a free pass)."""
    instant = parse_timestamp(expires_at)
    return instant is None or instant < datetime.now(UTC)


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


def _busy(exc: sqlite3.Error) -> bool:
    return (getattr(exc, "sqlite_errorcode", 0) & 0xFF) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


@contextlib.contextmanager
def command_store(path: str | Path) -> Iterator[LabelStore]:
    """The label store for one command. When the command fails (bad input refused), a store that this call
    created and that still holds no row is removed again: a refused command leaves no empty store behind. A store
    that existed before is never removed."""
    target = Path(path)
    created = not os.path.lexists(target)
    store: LabelStore | None = None
    try:
        store = LabelStore(target)
        yield store
    except BaseException:
        # A failed open cannot have been shared yet; an open store is removed only if nothing was written to it.
        try:
            empty = store is None or store.is_empty()
        except LabelStoreError:
            empty = False  # cannot tell: keep it, and report the command's own error
        if store is not None:
            store.close()
        if created and empty:
            for leftover in (target, *(target.with_name(target.name + s) for s in ("-wal", "-shm", "-journal"))):
                with contextlib.suppress(FileNotFoundError):
                    leftover.unlink()
        raise
    store.close()


class LabelStore:
    """One open label database; every query is parameterised, every write is one transaction."""

    def __init__(self, path: str | Path) -> None:
        # The store is a file citator writes: the output rule holds (no symlink, device, directory or FIFO).
        self.path = check_output(path, in_place=True)
        try:
            self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=BUSY_SECONDS)
        except sqlite3.Error as exc:
            raise LabelStoreError(f"{self.path}: cannot open the label store: {exc}") from exc
        try:
            self._conn.row_factory = sqlite3.Row
            self._conn.execute("PRAGMA foreign_keys = ON")
            # Migrated and checked before WAL is set: a database that is refused is left as it was.
            migrate(self._conn, self.path)
            # WAL lets the CLI load or export while the review server is running.
            self._conn.execute("PRAGMA journal_mode = WAL")
            key = self._conn.execute("SELECT value FROM meta WHERE key = 'queue_key'").fetchone()
        except sqlite3.Error as exc:
            self._conn.close()
            raise LabelStoreError(f"{self.path}: cannot open the label store: {exc}") from exc
        except BaseException:
            self._conn.close()
            raise
        if key is None:
            with self._tx() as c:
                c.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('queue_key', ?)", (secrets.token_hex(32),))
        elif not isinstance(key[0], str) or not HEX64.fullmatch(key[0]):
            self._conn.close()
            raise LabelStoreError(f'{self.path}: table "meta" key "queue_key": expected 64 lowercase hex digits; fix '
                                  "or delete that row (a new key reshuffles every reviewer's queue)")

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> LabelStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _error(self, exc: sqlite3.Error) -> LabelStoreError:
        """What an SQLite failure means to the user: busy (try again) or a store that cannot be used as it is."""
        if _busy(exc):  # locked by another writer past the connection's 10 s wait
            return LabelStoreBusy(f"{self.path}: the label store is busy with another writer ({exc}); nothing was "
                                  "written, try again")
        return LabelStoreError(f"{self.path}: the label store cannot be used: {exc}")

    def _rows(self, sql: str, params: tuple[object, ...] = ()) -> list[sqlite3.Row]:
        try:
            return self._conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise self._error(exc) from None

    @contextlib.contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise self._error(exc) from None
        try:
            yield self._conn
            self._conn.execute("COMMIT")
        except BaseException as exc:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise self._error(exc) from None
            raise

    def is_empty(self) -> bool:
        """True when the store holds no item, reviewer, label or session (its random queue key aside)."""
        return not any(self._rows(f"SELECT 1 FROM {t} LIMIT 1") for t in ("items", "reviewers", "labels", "sessions"))

    @property
    def queue_key(self) -> bytes:
        return bytes.fromhex(self._rows("SELECT value FROM meta WHERE key = 'queue_key'")[0][0])

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
        rows = self._rows("SELECT id, name, token_sha256 FROM reviewers ORDER BY name")
        return [Reviewer(r["id"], reviewer_name(self.path, r), r["token_sha256"] is not None) for r in rows]

    def reviewer_for_token(self, token: str) -> Reviewer | None:
        """The reviewer holding `token`, or None (an empty or unknown token never matches)."""
        if not token:
            return None
        rows = self._rows("SELECT id, name FROM reviewers WHERE token_sha256 = ?", (secret_hash(token),))
        return Reviewer(rows[0]["id"], reviewer_name(self.path, rows[0]), True) if rows else None

    def open_session(self, reviewer: Reviewer) -> str:
        """Start a session for a signed-in reviewer; return its secret (the cookie value)."""
        secret = new_secret()
        expires = (datetime.now(UTC) + timedelta(hours=SESSION_HOURS)).isoformat(timespec="seconds")
        with self._tx() as c:
            ended = [(h,) for h, at in c.execute("SELECT session_sha256, expires_at FROM sessions") if _ended(at)]
            c.executemany("DELETE FROM sessions WHERE session_sha256 = ?", ended)
            c.execute(
                "INSERT INTO sessions (session_sha256, reviewer_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
                (secret_hash(secret), reviewer.reviewer_id, now(), expires),
            )
        return secret

    def reviewer_for_session(self, secret: str) -> Reviewer | None:
        if not secret:
            return None
        rows = self._rows(
            "SELECT r.id, r.name, s.expires_at FROM sessions s JOIN reviewers r ON r.id = s.reviewer_id "
            "WHERE s.session_sha256 = ? AND r.token_sha256 IS NOT NULL",
            (secret_hash(secret),),
        )
        if not rows or _ended(rows[0]["expires_at"]):
            return None
        return Reviewer(rows[0]["id"], reviewer_name(self.path, rows[0]), True)

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
        for it in ordered:  # checked here too, or the store would refuse to read back what it was given
            problem = item_problem(it)
            if problem is not None:
                raise LabelStoreError(f"review item for query {it.query_id!r}, candidate {it.doc_id!r}: {problem[0]} "
                                      f"{problem[1]}; nothing was loaded")
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
        return [item_from_row(self.path, r) for r in self._rows(_ITEM_SELECT + " ORDER BY query_id, doc_id")]

    def item(self, key: str) -> ReviewItem | None:
        rows = self._rows(_ITEM_SELECT + " WHERE item_key = ?", (key,))
        return item_from_row(self.path, rows[0]) if rows else None

    def queue(self, reviewer: Reviewer) -> list[ReviewItem]:
        """Every item, in this reviewer's keyed-hash order."""
        return queue_order(self.queue_key, reviewer.name, self.items())

    # labels

    def labels(self, reviewer: str | None = None) -> list[LabelRecord]:
        """All labels (or one reviewer's), stale ones included, ordered by query, candidate, reviewer."""
        sql = _LABEL_SELECT + (" WHERE r.name = ?" if reviewer is not None else "")
        sql += " ORDER BY i.query_id, i.doc_id, r.name"
        return [label_from_row(self.path, r) for r in self._rows(sql, (reviewer,) if reviewer is not None else ())]

    def label(self, reviewer: Reviewer, key: str) -> LabelRecord | None:
        rows = self._rows(_LABEL_SELECT + " WHERE l.reviewer_id = ? AND i.item_key = ?", (reviewer.reviewer_id, key))
        return label_from_row(self.path, rows[0]) if rows else None

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
        """Store an imported label as given (hashes included); return "added", "updated", "unchanged" or "kept".

        Of two labels by one reviewer for one item, the one with the later `labeled_at` instant is kept."""
        given = parse_timestamp(record.labeled_at)
        if given is None:
            raise LabelStoreError(f"labeled_at: expected {TIMESTAMP_RULE}, got {record.labeled_at[:60]!r}")
        if parse_grade(record.section_grade) is None or parse_grade(record.passage_grade) is None:
            raise LabelStoreError("grades must be 0, 1, 2, 3 or unknown")
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
                old_label = label_from_row(self.path, old)
                if old_label == record:
                    return "unchanged"
                stored = parse_timestamp(old_label.labeled_at, naive_is_utc=True)
                assert stored is not None  # label_from_row refuses a row whose time names no instant
                # Instants, not text: as text "...Z" sorts after "...+00:00" of the same second, "zzz" after any year.
                if stored >= given:
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
