"""The SQLite label store: duplicate loads, staleness, unknown grades, tokens, migrations."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from citator.errors import LabelStoreError
from citator.statutes.review import LabelStore, read_pool
from citator.statutes.review.migrations import SCHEMA_VERSION
from fixtures.review_run import build_run

EDITED = "2. Except as provided in subsection 3, a person shall act within 15 days."


@pytest.fixture
def store(tmp_path: Path):  # type: ignore[no-untyped-def]
    with LabelStore(tmp_path / "labels.sqlite") as s:
        s.load_items(e.item for e in read_pool(build_run(tmp_path / "run")))
        yield s


def _alice(store: LabelStore):  # type: ignore[no-untyped-def]
    if "alice" not in [r.name for r in store.reviewers()]:
        store.add_reviewer("alice")
    return next(r for r in store.reviewers() if r.name == "alice")


def _grade(store: LabelStore, doc_id: str, section=2, passage=3, complete=True):  # type: ignore[no-untyped-def]
    item = next(it for it in store.items() if it.doc_id == doc_id)
    return store.save_label(_alice(store), item.key, section, passage, "note", item.hashes, complete)


def test_loading_the_same_run_twice_creates_no_duplicates(tmp_path: Path, store: LabelStore) -> None:
    again = store.load_items(e.item for e in read_pool(tmp_path / "run"))
    assert (again.added, again.changed, again.unchanged) == (0, 0, 11)
    rows = sqlite3.connect(store.path).execute("SELECT COUNT(*), COUNT(DISTINCT item_key) FROM items").fetchone()
    assert rows == (11, 11)


def test_a_label_whose_texts_changed_is_stale_and_not_done(tmp_path: Path, store: LabelStore) -> None:
    _grade(store, "NRS 1.302")
    _grade(store, "NRS 1.303")
    alice = _alice(store)
    assert store.progress(alice).complete == 2
    reloaded = store.load_items(e.item for e in read_pool(build_run(tmp_path / "run2", edit={"NRS 1.302": EDITED})))
    assert (reloaded.added, reloaded.changed) == (0, 1)
    ((label, item),) = store.stale_labels()
    assert label.doc_id == "NRS 1.302" and label.is_stale_for(item)
    assert label.passage_sha256 != item.passage_sha256 and label.section_sha256 == item.section_sha256
    progress = store.progress(alice)
    assert (progress.complete, progress.stale) == (1, 1)
    # Grading again binds the label to the new texts.
    _grade(store, "NRS 1.302")
    assert store.stale_labels() == [] and store.progress(alice).complete == 2


def test_grading_texts_other_than_the_current_ones_is_refused(store: LabelStore) -> None:
    item = store.items()[0]
    with pytest.raises(LabelStoreError, match="changed after the page was shown"):
        store.save_label(_alice(store), item.key, 1, 1, "", (item.query_sha256, "0" * 64, item.passage_sha256), True)
    assert store.labels() == []


def test_unknown_is_stored_as_unknown_never_as_zero(store: LabelStore) -> None:
    label = _grade(store, "NRS 1.301", section="unknown", passage=0)
    assert (label.section_grade, label.passage_grade) == ("unknown", 0)
    raw = sqlite3.connect(store.path).execute("SELECT section_grade, passage_grade FROM labels").fetchone()
    assert raw == ("unknown", "0")
    with pytest.raises(LabelStoreError):
        _grade(store, "NRS 1.301", section=4)
    with pytest.raises(LabelStoreError):
        _grade(store, "NRS 1.301", section=None)


def test_draft_then_complete_updates_one_label(store: LabelStore) -> None:
    assert _grade(store, "NRS 1.301", complete=False).complete is False
    done = _grade(store, "NRS 1.301", section=3, complete=True)
    assert done.complete is True and done.section_grade == 3
    assert len(store.labels()) == 1


def test_tokens_are_stored_only_as_hashes_and_checked(store: LabelStore) -> None:
    token = store.add_reviewer("bob")
    assert store.reviewer_for_token(token).name == "bob"  # type: ignore[union-attr]
    for wrong in ("", " ", token[:-1], token + "x", token.upper()):
        assert store.reviewer_for_token(wrong) is None
    assert token.encode() not in store.path.read_bytes()
    with pytest.raises(LabelStoreError, match="already has a token"):
        store.add_reviewer("bob")
    new = store.add_reviewer("bob", new_token=True)
    assert store.reviewer_for_token(token) is None and store.reviewer_for_token(new) is not None


def test_sessions_end_on_sign_out_and_token_change(store: LabelStore) -> None:
    store.add_reviewer("bob")
    bob = next(r for r in store.reviewers() if r.name == "bob")
    secret = store.open_session(bob)
    assert store.reviewer_for_session(secret) == bob
    store.close_session(secret)
    assert store.reviewer_for_session(secret) is None
    secret = store.open_session(bob)
    store.add_reviewer("bob", new_token=True)
    assert store.reviewer_for_session(secret) is None
    assert store.reviewer_for_session("") is None


def test_schema_is_versioned_and_a_newer_schema_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite"
    LabelStore(db).close()
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    LabelStore(db).close()  # reopening migrates nothing and loses nothing
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    with pytest.raises(LabelStoreError, match="newer than this citator knows"):
        LabelStore(db)


def test_sql_is_parameterised(store: LabelStore) -> None:
    hostile = "x'); DROP TABLE labels; --"
    store.add_reviewer(hostile)
    assert hostile in [r.name for r in store.reviewers()]
    assert store.item(hostile) is None and store.labels(hostile) == []
