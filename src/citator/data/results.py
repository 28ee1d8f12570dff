"""Workload-1 results files and the exact output rules they must follow."""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Iterator, Sequence
from pathlib import Path

from citator.data.atomic import atomic_open, write_jsonl_atomic
from citator.data.jsonl import iter_jsonl, iter_text_lines, require_unique_str
from citator.data.records import Query, ResultLine, ScoredDoc
from citator.errors import ResultsError


def iter_results(path: str | Path) -> Iterator[ResultLine]:
    """Stream result lines, checking types only (use validate_results for the output rules)."""
    seen: dict[str, int] = {}
    for line, obj in iter_jsonl(path, ResultsError):
        query_id = require_unique_str(obj, "query_id", seen, path, line, ResultsError)
        raw = obj.get("results")
        if not isinstance(raw, list):
            raise ResultsError(path, line, "expected a list", field="results")
        scored = []
        listed: set[str] = set()
        for i, item in enumerate(raw):
            if not isinstance(item, dict):
                raise ResultsError(path, line, f"results[{i}] is not an object", field="results")
            doc_id = item.get("doc_id")
            score = item.get("score")
            if not isinstance(doc_id, str) or not doc_id:
                raise ResultsError(path, line, f"results[{i}].doc_id must be a non-empty string", field="results")
            if not isinstance(score, (int, float)) or isinstance(score, bool):
                raise ResultsError(path, line, f"results[{i}].score must be a number", field="results")
            if doc_id in listed:
                raise ResultsError(path, line, f'results[{i}].doc_id "{doc_id}" is listed twice for this query',
                                   field="results")
            listed.add(doc_id)
            scored.append(ScoredDoc(doc_id, float(score)))
        yield ResultLine(query_id, tuple(scored))


def read_results(path: str | Path) -> list[ResultLine]:
    return list(iter_results(path))


def write_results(path: str | Path, lines: Iterable[ResultLine], inputs: Iterable[str | Path] = ()) -> None:
    """Write a results file atomically; `inputs`: files of the command it must not replace."""
    write_jsonl_atomic(path, (line.to_json() for line in lines), inputs)


def validate_results(
    results: Sequence[ResultLine], corpus_ids: Collection[str], queries: Sequence[Query], k: int, exact: bool = True
) -> list[str]:
    """Return every breach of the workload-1 output rules; an empty list means the output is valid. `exact=False`:
    at most k results a query (a filtered search, which answers fewer where fewer documents meet its filters)."""
    problems: list[str] = []
    wanted = [q.query_id for q in queries]
    wanted_set = set(wanted)
    seen: set[str] = set()
    for n, line in enumerate(results, 1):
        where = f'line {n} (query "{line.query_id}")'
        if line.query_id not in wanted_set:
            problems.append(f"{where}: query_id is not in the queries file")
        if line.query_id in seen:
            problems.append(f"{where}: second line for this query")
        seen.add(line.query_id)
        ids = line.doc_ids
        if len(ids) > k or (exact and len(ids) != k):
            problems.append(f"{where}: has {len(ids)} results, expected exactly {k}")
        if len(set(ids)) != len(ids):
            problems.append(f"{where}: duplicate doc ids")
        unknown = [d for d in ids if d not in corpus_ids]
        if unknown:
            problems.append(f'{where}: unknown doc ids {", ".join(repr(u) for u in unknown[:3])}')
        scores = [r.score for r in line.results]
        if not all(math.isfinite(s) for s in scores):
            problems.append(f"{where}: non-finite score")
        elif any(b > a for a, b in zip(scores, scores[1:])):
            problems.append(f"{where}: scores are not in non-increasing order")
    missing = [q for q in wanted if q not in seen]
    if missing:
        problems.append(f"{len(missing)} queries have no line, e.g. {missing[0]!r}")
    return problems


def write_trec_run(path: str | Path, lines: Iterable[ResultLine], tag: str = "citator") -> None:
    """Export results as a TREC run (`qid Q0 docid rank score tag`)."""
    with atomic_open(path) as handle:
        for line in lines:
            for rank, r in enumerate(line.results, 1):
                handle.write(f"{line.query_id} Q0 {r.doc_id} {rank} {r.score!r} {tag}\n")


def read_trec_run(path: str | Path) -> list[ResultLine]:
    """Import a TREC run; within a query, order by rank column (the file's own order breaks rank ties)."""
    path = Path(path)
    by_query: dict[str, list[tuple[int, int, ScoredDoc]]] = {}
    docs_of: dict[str, set[str]] = {}
    for line_no, text in iter_text_lines(path, ResultsError):
        parts = text.split()
        if not parts:
            continue
        if len(parts) != 6:
            raise ResultsError(path, line_no, f"expected 6 columns 'qid Q0 docid rank score tag', got {len(parts)}")
        try:
            rank = int(parts[3])
        except ValueError:
            raise ResultsError(path, line_no, f"rank {parts[3]!r} is not an integer", field="rank") from None
        try:
            score = float(parts[4])
        except ValueError:
            raise ResultsError(path, line_no, f"score {parts[4]!r} is not a number", field="score") from None
        rows = by_query.setdefault(parts[0], [])
        listed = docs_of.setdefault(parts[0], set())
        if parts[2] in listed:
            raise ResultsError(path, line_no, f'doc id "{parts[2]}" is listed twice for query "{parts[0]}"',
                               field="docid")
        listed.add(parts[2])
        rows.append((rank, line_no, ScoredDoc(parts[2], score)))
    return [
        ResultLine(qid, tuple(doc for _, _, doc in sorted(rows, key=lambda r: (r[0], r[1]))))
        for qid, rows in by_query.items()
    ]
