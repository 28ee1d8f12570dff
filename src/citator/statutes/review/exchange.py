"""Labels as JSON lines: the export the statute benchmark's calibration reads, and its import."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from citator.data.atomic import write_jsonl_atomic
from citator.data.jsonl import iter_jsonl, require_str
from citator.errors import LabelError
from citator.statutes.review.records import HEX64, TIMESTAMP_RULE, LabelRecord, parse_grade, parse_timestamp
from citator.statutes.review.store import LabelStore


@dataclass(frozen=True)
class ExportCounts:
    """Labels written, and stale labels left out (their texts changed since they were given)."""

    written: int
    stale_left_out: int


def read_labels(path: str | Path) -> list[LabelRecord]:
    """Read a label export strictly; one label per (query_id, doc_id, reviewer)."""
    out: list[LabelRecord] = []
    seen: dict[tuple[str, str, str], int] = {}
    for line, obj in iter_jsonl(path, LabelError):
        q, d, who = (require_str(obj, k, path, line, LabelError) for k in ("query_id", "doc_id", "reviewer"))
        grades = []
        for key in ("section_grade", "passage_grade"):
            if key not in obj:
                raise LabelError(path, line, "missing field", field=key)
            grade = parse_grade(obj[key])
            # Strict: JSON grades are integers or "unknown", never "2".
            if grade is None or isinstance(obj[key], str) and obj[key] != "unknown":
                raise LabelError(path, line, f'expected 0, 1, 2, 3 or "unknown", got {obj[key]!r}', field=key)
            grades.append(grade)
        note = require_str(obj, "note", path, line, LabelError, nonempty=False)
        hashes = []
        for key in ("query_sha256", "section_sha256", "passage_sha256"):
            value = require_str(obj, key, path, line, LabelError)
            if not HEX64.fullmatch(value):
                raise LabelError(path, line, "expected 64 lowercase hex digits", field=key)
            hashes.append(value)
        complete = obj.get("complete")
        if not isinstance(complete, bool):
            raise LabelError(path, line, f"expected true or false, got {complete!r}", field="complete")
        labeled_at = require_str(obj, "labeled_at", path, line, LabelError)
        # The newer label wins an import: a time that names no instant cannot be ordered against another.
        if parse_timestamp(labeled_at) is None:
            raise LabelError(path, line, f"expected {TIMESTAMP_RULE}, got {labeled_at[:60]!r}", field="labeled_at")
        if (q, d, who) in seen:
            raise LabelError(path, line, f"duplicate label (first on line {seen[(q, d, who)]})", field="reviewer")
        seen[(q, d, who)] = line
        query_sha256, section_sha256, passage_sha256 = hashes
        out.append(LabelRecord(q, d, who, grades[0], grades[1], note, query_sha256, section_sha256, passage_sha256,
                               complete, labeled_at))
    return out


def export_labels(store: LabelStore, path: str | Path, *, include_stale: bool = False) -> ExportCounts:
    """Write every label (drafts too, `complete` says which); stale ones only when asked, so none is reused unawares."""
    stale = {(lab.query_id, lab.doc_id, lab.reviewer) for lab, _ in store.stale_labels()}
    rows = [
        lab for lab in store.labels() if include_stale or (lab.query_id, lab.doc_id, lab.reviewer) not in stale
    ]
    write_jsonl_atomic(path, (lab.to_json() for lab in rows))
    return ExportCounts(len(rows), 0 if include_stale else len(stale))


def import_labels(store: LabelStore, path: str | Path) -> Counter[str]:
    """Merge a label export (newer labeled_at wins; hashes kept as given, so stale stays stale); return counts."""
    records = read_labels(path)
    known = {(it.query_id, it.doc_id) for it in store.items()}
    # Check every line before writing any, so a bad file leaves the store untouched.
    for n, record in enumerate(records, 1):
        if (record.query_id, record.doc_id) not in known:
            raise LabelError(path, n, f"no review item for query {record.query_id!r}, candidate {record.doc_id!r}: "
                             "load its run first (citator review load RUN_DIR)", field="doc_id")
    counts: Counter[str] = Counter()
    for record in records:
        counts[store.put_label(record)] += 1
    return counts
