"""Label export/import as JSON lines: the exact contract, round trips, and stale labels kept apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citator.errors import LabelError
from citator.statutes.review import LabelStore, export_labels, import_labels, read_labels, read_pool
from fixtures.review_run import build_run

EXPORT_KEYS = {"query_id", "doc_id", "reviewer", "section_grade", "passage_grade", "note", "query_sha256",
               "section_sha256", "passage_sha256", "complete", "labeled_at"}


def _store(tmp_path: Path, name: str, run: Path) -> LabelStore:
    store = LabelStore(tmp_path / f"{name}.sqlite")
    store.load_items(e.item for e in read_pool(run))
    return store


def _grade_all(store: LabelStore, who: str, section, passage, complete: bool = True) -> None:  # type: ignore[no-untyped-def]
    store.add_reviewer(who)
    reviewer = next(r for r in store.reviewers() if r.name == who)
    for it in store.items():
        store.save_label(reviewer, it.key, section, passage, f"{who} on {it.doc_id}", it.hashes, complete)


def test_export_has_exactly_the_contract_keys_and_round_trips(tmp_path: Path) -> None:
    run = build_run(tmp_path / "run")
    with _store(tmp_path, "a", run) as a, _store(tmp_path, "b", run) as b:
        _grade_all(a, "alice", 2, "unknown")
        counts = export_labels(a, tmp_path / "labels.jsonl")
        assert (counts.written, counts.stale_left_out) == (11, 0)
        lines = [json.loads(line) for line in (tmp_path / "labels.jsonl").read_text().splitlines()]
        assert all(set(line) == EXPORT_KEYS for line in lines)
        assert {line["passage_grade"] for line in lines} == {"unknown"} and {line["section_grade"] for line in lines} == {2}
        assert all(line["complete"] is True for line in lines)
        assert import_labels(b, tmp_path / "labels.jsonl")["added"] == 11
        assert b.labels() == a.labels()
        assert import_labels(b, tmp_path / "labels.jsonl")["unchanged"] == 11
        # Imported reviewers exist but cannot sign in until they are given a token.
        assert [(r.name, r.has_token) for r in b.reviewers()] == [("alice", False)]


def test_stale_labels_are_left_out_of_the_export_unless_asked(tmp_path: Path) -> None:
    run = build_run(tmp_path / "run")
    with _store(tmp_path, "a", run) as a:
        _grade_all(a, "alice", 1, 1)
        a.load_items(e.item for e in read_pool(build_run(tmp_path / "run2", edit={"NRS 1.301": "A new passage."})))
        counts = export_labels(a, tmp_path / "fresh.jsonl")
        assert (counts.written, counts.stale_left_out) == (10, 1)
        assert "NRS 1.301" not in (tmp_path / "fresh.jsonl").read_text()
        assert export_labels(a, tmp_path / "all.jsonl", include_stale=True).written == 11


def test_imported_stale_labels_stay_stale(tmp_path: Path) -> None:
    with _store(tmp_path, "old", build_run(tmp_path / "run")) as old:
        _grade_all(old, "alice", 3, 3)
        export_labels(old, tmp_path / "labels.jsonl")
    edited = build_run(tmp_path / "run2", edit={"NRS 432B.201": "Changed."})
    with _store(tmp_path, "new", edited) as new:
        import_labels(new, tmp_path / "labels.jsonl")
        assert [lab.doc_id for lab, _ in new.stale_labels()] == ["NRS 432B.201"]


def test_newer_label_wins_on_import(tmp_path: Path) -> None:
    run = build_run(tmp_path / "run")
    with _store(tmp_path, "a", run) as a:
        _grade_all(a, "alice", 1, 1)
        export_labels(a, tmp_path / "labels.jsonl")
    rows = [json.loads(line) for line in (tmp_path / "labels.jsonl").read_text().splitlines()]
    rows[0] |= {"section_grade": 3, "labeled_at": "2999-01-01T00:00:00+00:00"}
    rows[1] |= {"section_grade": 3, "labeled_at": "2000-01-01T00:00:00+00:00"}
    (tmp_path / "edited.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with LabelStore(tmp_path / "a.sqlite") as a:
        counts = import_labels(a, tmp_path / "edited.jsonl")
        assert (counts["updated"], counts["kept"], counts["unchanged"]) == (1, 1, 9)
        grades = {lab.doc_id: lab.section_grade for lab in a.labels()}
        assert grades[rows[0]["doc_id"]] == 3 and grades[rows[1]["doc_id"]] == 1


def test_import_for_items_not_loaded_is_refused_without_writing(tmp_path: Path) -> None:
    run = build_run(tmp_path / "run")
    with _store(tmp_path, "a", run) as a:
        _grade_all(a, "alice", 2, 2)
        export_labels(a, tmp_path / "labels.jsonl")
    with LabelStore(tmp_path / "empty.sqlite") as empty:
        empty.load_items([e.item for e in read_pool(run)][:3])
        with pytest.raises(LabelError, match="load its run first"):
            import_labels(empty, tmp_path / "labels.jsonl")
        assert empty.labels() == [] and empty.reviewers() == []


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"section_grade": "2"}, "section_grade"),
        ({"passage_grade": 4}, "passage_grade"),
        ({"passage_grade": None}, "passage_grade"),
        ({"complete": "yes"}, "complete"),
        ({"query_sha256": "abc"}, "query_sha256"),
        ({"reviewer": ""}, "reviewer"),
    ],
)
def test_malformed_label_lines_name_the_field(tmp_path: Path, change: dict, field: str) -> None:
    line = {"query_id": "q", "doc_id": "d", "reviewer": "r", "section_grade": 1, "passage_grade": "unknown",
            "note": "", "query_sha256": "a" * 64, "section_sha256": "b" * 64, "passage_sha256": "c" * 64,
            "complete": False, "labeled_at": "2026-01-01T00:00:00+00:00"}
    (tmp_path / "l.jsonl").write_text(json.dumps(line) + "\n" + json.dumps(line | change) + "\n")
    with pytest.raises(LabelError, match=f'line 2 field "{field}"'):
        read_labels(tmp_path / "l.jsonl")
