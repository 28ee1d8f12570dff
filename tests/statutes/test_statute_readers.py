"""Sections, suites and label exports are read strictly, with errors that name file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citator.data.hashing import sha256_captioned
from citator.data.statutes import read_labels, read_sections, read_suite, snapshot_manifest
from citator.errors import DataError, StatuteError, SuiteError


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_fixture_sections_keep_metadata_and_hash(nrs_sections: Path) -> None:
    sections = read_sections(nrs_sections)
    assert len(sections) == 36
    s = next(x for x in sections if x.doc_id == "NRS 432B.220")
    assert s.chapter == "432B" and s.heading.startswith("Persons required to make report")
    assert s.revision.startswith("[Rev.") and s.source.startswith("public-law/nevada-revised-statutes-parser@")
    assert s.sha256 == sha256_captioned(s.heading, s.text)
    manifest = snapshot_manifest(nrs_sections, sections)
    assert manifest["sections"] == 36 and len(manifest["sha256"]) == 64
    assert manifest["sources"] == ["public-law/nevada-revised-statutes-parser@3b47539f3114"]


def test_duplicate_section_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.jsonl", [{"doc_id": "NRS 1.1", "title": "A", "text": "x"}] * 2)
    with pytest.raises(StatuteError, match='line 2 field "doc_id": duplicate doc_id "NRS 1.1"'):
        read_sections(path)


def test_suite_reads_and_checks_targets(nrs_sections: Path, nrs_suite: Path, tmp_path: Path) -> None:
    ids = {s.doc_id for s in read_sections(nrs_sections)}
    suite = read_suite(nrs_suite, ids)
    assert [q.kind for q in suite].count("exact_citation") == 3
    assert suite[0].nominated == {"NRS 432B.220", "NRS 432B.121", "NRS 432B.230", "NRS 432B.200"}
    bad = _write(tmp_path / "bad.jsonl", [{"query_id": "q", "text": "t", "split": "dev", "family": "f",
                                           "kind": "ranking", "targets": {"NRS 9.999": 3}}])
    with pytest.raises(SuiteError, match='field "targets": target "NRS 9.999" is not in the corpus'):
        read_suite(bad, ids)


def test_a_family_in_both_splits_is_refused(tmp_path: Path) -> None:
    rows = [{"query_id": f"q{i}", "text": "t", "split": split, "family": "f", "kind": "ranking",
             "targets": {"NRS 0.020": 3}} for i, split in enumerate(("dev", "heldout"))]
    with pytest.raises(SuiteError, match='family "f" appears in splits dev and heldout'):
        read_suite(_write(tmp_path / "s.jsonl", rows))


def test_outside_corpus_must_have_no_targets(tmp_path: Path) -> None:
    rows = [{"query_id": "q", "text": "t", "split": "dev", "family": "f", "kind": "outside_corpus",
             "targets": {"NRS 0.020": 3}}]
    with pytest.raises(SuiteError, match="outside_corpus queries must have no targets"):
        read_suite(_write(tmp_path / "s.jsonl", rows))


def test_labels_keep_unknown_apart_from_zero(tmp_path: Path) -> None:
    base = {"query_id": "q", "doc_id": "d", "reviewer": "r", "query_sha256": "a", "section_sha256": "b",
            "passage_sha256": "c", "complete": True}
    path = _write(tmp_path / "l.jsonl", [{**base, "section_grade": "unknown", "passage_grade": 0}])
    (label,) = read_labels(path)
    assert label.section_grade is None and label.passage_grade == 0
    bad = _write(tmp_path / "b.jsonl", [{**base, "section_grade": 4, "passage_grade": 0}])
    with pytest.raises(DataError, match='line 1 field "section_grade"'):
        read_labels(bad)


def test_labels_refuse_a_reviewer_counted_twice(tmp_path: Path) -> None:
    # Two exports concatenated: alice twice would make the lower-median consensus 3 where alice and bob give 0.
    base = {"query_id": "q", "doc_id": "d", "query_sha256": "a", "section_sha256": "b", "passage_sha256": "c",
            "complete": True}
    rows = [{**base, "reviewer": r, "section_grade": g, "passage_grade": g} for r, g in (("alice", 3), ("bob", 0),
                                                                                           ("alice", 3))]
    with pytest.raises(DataError, match=r'line 3 field "reviewer": duplicate label \(first on line 1\)'):
        read_labels(_write(tmp_path / "l.jsonl", rows))
    # A label of an older passage text is another label (the benchmark counts it as stale).
    rows[2]["passage_sha256"] = "d"
    assert len(read_labels(_write(tmp_path / "l.jsonl", rows))) == 3
