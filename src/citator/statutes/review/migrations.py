"""Versioned schema of the label store; `PRAGMA user_version` records how far a database has been migrated."""

from __future__ import annotations

import sqlite3

from citator.errors import LabelStoreError

# Append only: a released migration is never edited, a change is a new entry.
MIGRATIONS: tuple[str, ...] = (
    # 1: reviewers, review items, labels, sign-in sessions and the per-store queue key.
    """
    CREATE TABLE meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    CREATE TABLE reviewers (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        token_sha256 TEXT UNIQUE,
        created_at TEXT NOT NULL
    );
    CREATE TABLE items (
        id INTEGER PRIMARY KEY,
        item_key TEXT NOT NULL UNIQUE,
        query_id TEXT NOT NULL,
        doc_id TEXT NOT NULL,
        query TEXT NOT NULL,
        split TEXT NOT NULL,
        family TEXT NOT NULL,
        kind TEXT NOT NULL,
        heading TEXT NOT NULL,
        section_text TEXT NOT NULL,
        caption TEXT NOT NULL,
        passage TEXT NOT NULL,
        query_sha256 TEXT NOT NULL,
        section_sha256 TEXT NOT NULL,
        passage_sha256 TEXT NOT NULL,
        loaded_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (query_id, doc_id)
    );
    CREATE TABLE labels (
        id INTEGER PRIMARY KEY,
        reviewer_id INTEGER NOT NULL REFERENCES reviewers(id),
        item_id INTEGER NOT NULL REFERENCES items(id),
        section_grade TEXT NOT NULL CHECK (section_grade IN ('0', '1', '2', '3', 'unknown')),
        passage_grade TEXT NOT NULL CHECK (passage_grade IN ('0', '1', '2', '3', 'unknown')),
        note TEXT NOT NULL DEFAULT '',
        query_sha256 TEXT NOT NULL,
        section_sha256 TEXT NOT NULL,
        passage_sha256 TEXT NOT NULL,
        complete INTEGER NOT NULL CHECK (complete IN (0, 1)),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        completed_at TEXT,
        UNIQUE (reviewer_id, item_id)
    );
    CREATE TABLE sessions (
        session_sha256 TEXT PRIMARY KEY,
        reviewer_id INTEGER NOT NULL REFERENCES reviewers(id),
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL
    );
    """,
)

SCHEMA_VERSION = len(MIGRATIONS)


def migrate(conn: sqlite3.Connection) -> int:
    """Bring `conn` up to SCHEMA_VERSION, one transaction per step; refuse a database from a newer citator."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise LabelStoreError(
            f"label store schema version {version} is newer than this citator knows ({SCHEMA_VERSION}): upgrade citator"
        )
    for number in range(version + 1, SCHEMA_VERSION + 1):
        # executescript commits first; the explicit BEGIN makes each step all-or-nothing.
        try:
            conn.executescript(f"BEGIN; {MIGRATIONS[number - 1]}; PRAGMA user_version = {number}; COMMIT;")
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.rollback()
            raise LabelStoreError(f"label store migration {number} failed: {exc}") from exc
    return SCHEMA_VERSION
