"""What the label store reads back is checked before it is trusted: its schema when it is opened, each row when it
is read, and labeled_at as an instant (never as text)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from citator.errors import LabelError, LabelStoreError
from citator.statutes.review import LabelStore, export_labels, import_labels, read_labels, read_pool
from fixtures.review_run import build_run, graded_store


@pytest.fixture
def graded(tmp_path: Path) -> Path:
    """A store with its run loaded and one complete label by alice; closed, so a test may damage it."""
    return graded_store(tmp_path / "labels.sqlite", tmp_path / "run")


def _sql(db: Path, *statements: str) -> None:
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA ignore_check_constraints = 1")  # to plant what the schema's CHECKs would refuse
    for statement in statements:
        conn.execute(statement)
    conn.commit()
    conn.close()


def _export_rows(store: LabelStore, path: Path) -> list[dict]:  # type: ignore[type-arg]
    export_labels(store, path)
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("value", ["zzz", "2099-01-01", "2099-01-01T00:00:00", "9999-12-31T23:59:59-23:59"])
def test_labeled_at_must_be_a_timestamp_with_a_timezone(graded: Path, tmp_path: Path, value: str) -> None:
    with LabelStore(graded) as store:
        (row,) = _export_rows(store, tmp_path / "labels.jsonl")
    (tmp_path / "bad.jsonl").write_text(json.dumps({**row, "labeled_at": value}) + "\n")
    with pytest.raises(LabelError, match=r'bad.jsonl line 1 field "labeled_at": expected an ISO-8601 timestamp'):
        read_labels(tmp_path / "bad.jsonl")


def test_timestamps_are_instants() -> None:
    from citator.statutes.review.records import parse_timestamp

    assert parse_timestamp("2030-01-01T00:00:00+05:00") == parse_timestamp("2029-12-31T19:00:00Z")
    for bad in ("zzz", "2099-01-01T00:00:00", 20990101, None):
        assert parse_timestamp(bad) is None


def test_a_zone_less_time_an_earlier_import_kept_reads_as_utc(graded: Path, tmp_path: Path) -> None:
    # Earlier citators imported labeled_at as given; their docs said UTC. Such a store stays usable.
    _sql(graded, "UPDATE labels SET updated_at = '2024-05-01T12:00:00'")
    with LabelStore(graded) as store:
        (row,) = _export_rows(store, tmp_path / "labels.jsonl")
    assert row["labeled_at"] == "2024-05-01T12:00:00+00:00"
    with LabelStore(graded) as store:  # its own export reads back as the same label
        assert import_labels(store, tmp_path / "labels.jsonl")["unchanged"] == 1


def test_the_later_instant_wins_an_import_whatever_its_text(graded: Path, tmp_path: Path) -> None:
    with LabelStore(graded) as store:
        (row,) = _export_rows(store, tmp_path / "labels.jsonl")
    first = {**row, "labeled_at": "2030-01-01T00:00:00+05:00"}  # 2029-12-31 19:00 UTC
    later = {**row, "section_grade": 0, "labeled_at": "2029-12-31T20:00:00Z"}  # sorts first as text
    earlier = {**row, "section_grade": 3, "labeled_at": "2029-12-31T18:00:00Z"}
    for name, obj in (("first", first), ("later", later), ("earlier", earlier)):
        (tmp_path / f"{name}.jsonl").write_text(json.dumps(obj) + "\n")
    with LabelStore(graded) as store:
        assert import_labels(store, tmp_path / "first.jsonl")["updated"] == 1
        assert import_labels(store, tmp_path / "later.jsonl")["updated"] == 1
        assert import_labels(store, tmp_path / "earlier.jsonl")["kept"] == 1
        assert store.labels()[0].section_grade == 0


@pytest.mark.parametrize(("damage", "problem"), [
    ("DROP TABLE labels", 'table "labels" is missing'),
    ("DROP TABLE sessions", 'table "sessions" is missing'),
    ("ALTER TABLE labels DROP COLUMN note", 'table "labels" has no column "note"'),
    ("ALTER TABLE items RENAME COLUMN caption TO cap", 'table "items" has no column "caption"'),
    ("ALTER TABLE reviewers ADD COLUMN extra TEXT NOT NULL DEFAULT ''", 'table "reviewers" has a column "extra"'),
])
def test_a_store_with_damaged_tables_is_refused_when_opened(graded: Path, damage: str, problem: str) -> None:
    _sql(graded, damage)
    with pytest.raises(LabelStoreError, match=f"labels.sqlite: is not a whole label store .*{problem}"):
        LabelStore(graded)


def test_another_sqlite_database_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    db = tmp_path / "other.db"
    _sql(db, "CREATE TABLE notes (text TEXT)")
    before = db.read_bytes()
    with pytest.raises(LabelStoreError, match="other.db: is an SQLite database but not a label store"):
        LabelStore(db)
    assert db.read_bytes() == before


@pytest.mark.parametrize(("damage", "where"), [
    ("UPDATE labels SET section_grade = 'banana'", 'table "labels" row 1 column "section_grade"'),
    ("UPDATE labels SET passage_grade = ' 2'", 'table "labels" row 1 column "passage_grade"'),
    ("UPDATE labels SET complete = 7", 'table "labels" row 1 column "complete"'),
    ("UPDATE labels SET updated_at = 'zzz'", 'table "labels" row 1 column "updated_at"'),
    ("UPDATE labels SET section_sha256 = 'abc'", 'table "labels" row 1 column "section_sha256"'),
    ("UPDATE reviewers SET name = x'0102'", 'table "reviewers" row 1 column "name"'),
    ("UPDATE items SET passage = 'edited' WHERE id = 1", 'table "items" row 1 column "passage_sha256"'),
    ("UPDATE items SET item_key = 'x' WHERE id = 1", 'table "items" row 1 column "item_key"'),
])
def test_a_damaged_row_is_refused_naming_store_table_row_and_column(graded: Path, tmp_path: Path, damage: str,
                                                                    where: str) -> None:
    _sql(graded, damage)
    with LabelStore(graded) as store, pytest.raises(LabelStoreError, match=f"labels.sqlite: {where}"):
        export_labels(store, tmp_path / "out.jsonl")
    assert not (tmp_path / "out.jsonl").exists()


def test_a_session_whose_expiry_is_no_time_has_ended(graded: Path) -> None:
    with LabelStore(graded) as store:
        (alice,) = store.reviewers()
        secret = store.open_session(alice)
        assert store.reviewer_for_session(secret) == alice
        _sql(graded, "UPDATE sessions SET expires_at = 'zzz'")  # as text, 'zzz' is later than any date
        assert store.reviewer_for_session(secret) is None
        store.open_session(alice)  # clears ended sessions
        assert sqlite3.connect(graded).execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 1


def test_an_item_whose_hashes_are_not_its_texts_is_never_loaded(tmp_path: Path) -> None:
    from dataclasses import replace

    item = read_pool(build_run(tmp_path / "run"))[0].item
    with LabelStore(tmp_path / "l.sqlite") as store:
        with pytest.raises(LabelStoreError, match="passage_sha256 is not the sha256"):
            store.load_items([replace(item, passage="edited")])
        assert store.items() == []
