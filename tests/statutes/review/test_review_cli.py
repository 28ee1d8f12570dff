"""`citator review ...` (and `bench statutes --label-store`) over bad input and damaged stores: exit 2 with one
line naming the store, never the last-resort exit 70; a refused command creates no store."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from citator.cli.main import entry
from citator.statutes.review import LabelStore, read_pool
from fixtures.review_run import graded_store


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    code = entry(list(argv))
    return code, capsys.readouterr().err.splitlines()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return graded_store(tmp_path / "store.sqlite", tmp_path / "run", passage_grade=2)


@pytest.mark.parametrize("labels", ['{"x": 1}\n', "not json\n"])
def test_a_refused_import_creates_no_store(tmp_path: Path, capsys: pytest.CaptureFixture[str], labels: str) -> None:
    (tmp_path / "labels.jsonl").write_text(labels)
    code, err = _run(capsys, "review", "import", str(tmp_path / "labels.jsonl"), "--db", str(tmp_path / "fresh.sqlite"))
    assert code == 2 and len(err) == 1 and "labels.jsonl line 1" in err[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["labels.jsonl"]


def test_a_refused_command_never_removes_a_store_that_existed(store: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.sqlite"
    LabelStore(empty).close()
    (tmp_path / "labels.jsonl").write_text('{"x": 1}\n')
    for db in (store, empty):
        assert _run(capsys, "review", "import", str(tmp_path / "labels.jsonl"), "--db", str(db))[0] == 2
        assert db.is_file()
    assert _run(capsys, "review", "add-reviewer", " ", "--db", str(tmp_path / "new.sqlite"))[0] == 2
    assert not (tmp_path / "new.sqlite").exists()


@pytest.mark.parametrize("damage", ["DROP TABLE labels", "DROP TABLE sessions", "ALTER TABLE labels DROP COLUMN note"])
def test_commands_refuse_a_store_with_damaged_tables(store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     damage: str) -> None:
    conn = sqlite3.connect(store)
    conn.execute(damage)
    conn.commit()
    conn.close()
    for argv in (["review", "stale"], ["review", "export", "--out", str(tmp_path / "out.jsonl")],
                 ["review", "metrics", str(tmp_path / "run")], ["review", "add-reviewer", "bob"]):
        code, err = _run(capsys, *argv, "--db", str(store))
        assert code == 2 and len(err) == 1, (argv, err)
        assert err[0].startswith(f"LabelStoreError: {store}: is not a whole label store"), (argv, err)


def _banana(db: Path) -> None:
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA ignore_check_constraints = 1")
    conn.execute("UPDATE labels SET section_grade = 'banana'")
    conn.commit()
    conn.close()


def test_a_non_grade_in_the_store_is_refused_not_exported_as_null(store: Path, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    _banana(store)
    code, err = _run(capsys, "review", "export", "--db", str(store), "--out", str(tmp_path / "out.jsonl"))
    assert code == 2 and err == [f'LabelStoreError: {store}: table "labels" row 1 column "section_grade": expected '
                                 "0, 1, 2, 3 or \"unknown\", got 'banana'; fix or delete that row (or restore the "
                                 "store from a backup)"]
    assert not (tmp_path / "out.jsonl").exists()


def test_bench_statutes_names_the_label_store_not_a_temp_file(tmp_path: Path, nrs_sections: Path, nrs_suite: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    base = ["bench", "statutes", "--corpus", str(nrs_sections), "--suite", str(nrs_suite), "--provider", "none",
            "--out", str(tmp_path / "run")]
    assert entry(base) == 0
    db = tmp_path / "st3.db"
    with LabelStore(db) as s:
        s.load_items(e.item for e in read_pool(tmp_path / "run"))
        s.add_reviewer("ann")
        (ann,) = s.reviewers()
        item = s.items()[0]
        s.save_label(ann, item.key, 2, 2, "note", item.hashes, True)
    _banana(db)
    capsys.readouterr()
    code, err = _run(capsys, *base, "--label-store", str(db))
    assert code == 2 and err[-1].startswith(f'LabelStoreError: {db}: table "labels" row 1 column "section_grade"')
    assert "labels.jsonl" not in "\n".join(err)
