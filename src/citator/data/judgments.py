"""Relevance judgments: binary ground truth (JSONL), graded qrels (JSON) and TREC qrels (text)."""

from __future__ import annotations

from pathlib import Path

from citator.data.atomic import atomic_open, write_jsonl_atomic
from citator.data.jsonl import iter_jsonl, iter_text_lines, read_json, require_unique_str
from citator.data.records import Qrels
from citator.errors import JudgmentError


def read_ground_truth(path: str | Path) -> Qrels:
    """Read `{"query_id", "relevant_doc_ids": [...]}` lines as binary qrels (grade 1)."""
    grades: dict[str, dict[str, int]] = {}
    seen: dict[str, int] = {}
    for line, obj in iter_jsonl(path, JudgmentError):
        query_id = require_unique_str(obj, "query_id", seen, path, line, JudgmentError)
        ids = obj.get("relevant_doc_ids")
        if ids is None:
            raise JudgmentError(path, line, "missing field", field="relevant_doc_ids")
        if not isinstance(ids, list) or not all(isinstance(d, str) and d for d in ids):
            raise JudgmentError(path, line, "expected a list of non-empty strings", field="relevant_doc_ids")
        if len(set(ids)) != len(ids):
            raise JudgmentError(path, line, "duplicate doc ids in list", field="relevant_doc_ids")
        grades[query_id] = {d: 1 for d in ids}
    return Qrels.from_dict(grades)


def write_ground_truth(path: str | Path, qrels: Qrels) -> None:
    rows = ({"query_id": q, "relevant_doc_ids": sorted(qrels.relevant(q))} for q in qrels.query_ids())
    write_jsonl_atomic(path, rows)


def read_graded_qrels(path: str | Path) -> Qrels:
    """Read a JSON object `{query_id: {doc_id: grade}}` (grades are integers >= 0)."""
    data = read_json(path, JudgmentError)
    if not isinstance(data, dict):
        raise JudgmentError(path, None, "expected a JSON object {query_id: {doc_id: grade}}")
    grades: dict[str, dict[str, int]] = {}
    for query_id, docs in data.items():
        if not isinstance(docs, dict):
            raise JudgmentError(path, None, f'query "{query_id}": expected an object of grades', field=query_id)
        for doc_id, grade in docs.items():
            if not isinstance(grade, int) or isinstance(grade, bool) or grade < 0:
                raise JudgmentError(path, None, f'doc "{doc_id}": grade must be an integer >= 0', field=query_id)
        grades[query_id] = dict(docs)
    return Qrels.from_dict(grades)


def read_trec_qrels(path: str | Path) -> Qrels:
    """Read TREC qrels lines `qid iter docid grade`."""
    path = Path(path)
    grades: dict[str, dict[str, int]] = {}
    for line_no, text in iter_text_lines(path, JudgmentError):
        parts = text.split()
        if not parts:
            continue
        if len(parts) != 4:
            raise JudgmentError(path, line_no, f"expected 4 columns 'qid iter docid grade', got {len(parts)}")
        try:
            grade = int(parts[3])
        except ValueError:
            raise JudgmentError(path, line_no, f"grade {parts[3]!r} is not an integer", field="grade") from None
        doc_grades = grades.setdefault(parts[0], {})
        if parts[2] in doc_grades:
            raise JudgmentError(path, line_no, f'duplicate judgment for doc "{parts[2]}"', field="docid")
        doc_grades[parts[2]] = grade
    return Qrels.from_dict(grades)


def write_trec_qrels(path: str | Path, qrels: Qrels) -> None:
    with atomic_open(path) as handle:
        for query_id in qrels.query_ids():
            for doc_id, grade in qrels.of(query_id).items():
                handle.write(f"{query_id} 0 {doc_id} {grade}\n")
