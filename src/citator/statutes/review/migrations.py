"""Versioned schema of the label store; `PRAGMA user_version` records how far a database has been migrated.

The version alone is not trusted: a store at the current version must also have every table, column and UNIQUE
constraint the migrations make (a table dropped or a column removed by hand would otherwise surface as an
sqlite3 error in the middle of a command).
"""

from __future__ import annotations

import functools
import sqlite3
from dataclasses import dataclass
from pathlib import Path

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


@dataclass(frozen=True)
class TableShape:
    """What a table must have: its columns as (name, declared type, not null, primary-key position), and the
    column lists of its UNIQUE constraints (ON CONFLICT upserts and the one-label-per-reviewer rule need them)."""

    columns: tuple[tuple[str, str, int, int], ...]
    uniques: frozenset[tuple[str, ...]]


def _shape(conn: sqlite3.Connection, table: str) -> TableShape:
    columns = conn.execute('SELECT name, upper(type), "notnull", pk FROM pragma_table_info(?) ORDER BY cid',
                           (table,)).fetchall()
    indexes = conn.execute('SELECT name FROM pragma_index_list(?) WHERE "unique" = 1', (table,)).fetchall()
    uniques = frozenset(
        tuple(r[0] for r in conn.execute("SELECT name FROM pragma_index_info(?) ORDER BY seqno", (i[0],)))
        for i in indexes
    )
    return TableShape(tuple(tuple(c) for c in columns), uniques)


@functools.cache
def expected_schema() -> dict[str, TableShape]:
    """Every table of a store at SCHEMA_VERSION, read from a scratch database the migrations build in memory."""
    conn = sqlite3.connect(":memory:")
    try:
        for step in MIGRATIONS:
            conn.executescript(step)
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {t: _shape(conn, t) for t in tables}
    finally:
        conn.close()


def schema_problem(conn: sqlite3.Connection) -> str | None:
    """What the store lacks or has changed against SCHEMA_VERSION, or None when every table is whole.

    Tables the store has beyond these are left alone: no query of citator reads them."""
    for table, want in expected_schema().items():
        got = _shape(conn, table)
        if not got.columns:
            return f'table "{table}" is missing'
        have = {c[0]: c for c in got.columns}
        for column in want.columns:
            if column[0] not in have:
                return f'table "{table}" has no column "{column[0]}"'
            if have[column[0]] != column:
                return f'table "{table}" column "{column[0]}" has been altered'
        extra = [name for name in have if name not in {c[0] for c in want.columns}]
        if extra:
            return f'table "{table}" has a column "{extra[0]}" that no migration made'
        if want.uniques - got.uniques:
            return f'table "{table}" has lost a UNIQUE constraint'
    return None


def migrate(conn: sqlite3.Connection, path: str | Path) -> int:
    """Bring `conn` (the store at `path`) up to SCHEMA_VERSION, one transaction per step, and check its tables;
    refuse a database from a newer citator, one that is not a label store, and one whose tables are damaged."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise LabelStoreError(
            f"{path}: label store schema version {version} is newer than this citator knows ({SCHEMA_VERSION}): "
            "upgrade citator"
        )
    if version == 0 and conn.execute("SELECT 1 FROM sqlite_master").fetchone() is not None:
        # Some other SQLite database: migrating it would write citator's tables into it.
        raise LabelStoreError(f"{path}: is an SQLite database but not a label store (it has no schema version); "
                              "give a new path or an existing label store")
    for number in range(version + 1, SCHEMA_VERSION + 1):
        # executescript commits first; the explicit BEGIN makes each step all-or-nothing.
        try:
            conn.executescript(f"BEGIN; {MIGRATIONS[number - 1]}; PRAGMA user_version = {number}; COMMIT;")
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.rollback()
            raise LabelStoreError(f"{path}: label store migration {number} failed: {exc}") from exc
    problem = schema_problem(conn)
    if problem is not None:
        raise LabelStoreError(f"{path}: is not a whole label store (schema version {SCHEMA_VERSION}): {problem}; "
                              "restore it from a backup")
    return SCHEMA_VERSION
