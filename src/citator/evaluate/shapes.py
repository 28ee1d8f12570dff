"""The judgment and run shapes users bring from ranx, ir_measures and pytrec_eval, read into citator's own.

Judgments: a `Qrels`, or `{query_id: {doc_id: grade}}` with integer grades. A run: `{query_id: [doc_id, ...]}`
(ranked, best first: position is the rank) or `{query_id: {doc_id: score}}` (ranked by score, highest first, and
a tie by doc id, descending: trec_eval's order, so a score run is ranked exactly as trec_eval and ir_measures rank
it). Anything else is refused with a `ShapeError` naming the query and the field, not an AttributeError deep in a
metric.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from numbers import Integral

from citator.data.numbers import finite_number
from citator.data.records import Qrels
from citator.errors import ShapeError

Run = Mapping[str, Sequence[str]] | Mapping[str, Mapping[str, float]]


def as_qrels(qrels: Qrels | Mapping[str, Mapping[str, int]]) -> Qrels:
    """`qrels` as a `Qrels`; grades must be integers (bool is refused: it is a flag, not a grade)."""
    if isinstance(qrels, Qrels):
        return qrels
    if not isinstance(qrels, Mapping):
        raise ShapeError(f"qrels: expected a Qrels or {{query_id: {{doc_id: grade}}}}, got {type(qrels).__name__}")
    grades: dict[str, dict[str, int]] = {}
    for q, docs in qrels.items():
        _check_id(q, "qrels", "query id")
        if not isinstance(docs, Mapping):
            raise ShapeError(f'qrels, query "{q}": expected {{doc_id: grade}}, got {type(docs).__name__}')
        for d, g in docs.items():
            _check_id(d, f'qrels, query "{q}"', "doc id")
            # Linear gain divides the grade as a float: past a float's range it could only overflow.
            if not (isinstance(g, Integral) and finite_number(g)):
                raise ShapeError(f'qrels, query "{q}", doc "{d}": grade must be an integer, got {_shown(g)}')
        grades[q] = {d: int(g) for d, g in docs.items()}
    return Qrels.from_dict(grades)


def as_rankings(run: Run) -> dict[str, Sequence[str]]:
    """`run` as query_id -> doc ids best first (a ranked list is kept as given: duplicates are the metrics' to
    refuse)."""
    if not isinstance(run, Mapping):
        raise ShapeError(f"run: expected {{query_id: [doc_id, ...]}} or {{query_id: {{doc_id: score}}}}, "
                        f"got {type(run).__name__}")
    out: dict[str, Sequence[str]] = {}
    for q, ranked in run.items():
        _check_id(q, "run", "query id")
        if isinstance(ranked, Mapping):
            out[q] = _by_score(q, ranked)
        elif isinstance(ranked, Sequence) and not isinstance(ranked, (str, bytes)):
            for d in ranked:
                _check_id(d, f'run, query "{q}"', "doc id")
            out[q] = ranked
        else:
            raise ShapeError(f'run, query "{q}": expected a list of doc ids or {{doc_id: score}}, '
                            f"got {type(ranked).__name__}")
    return out


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "…"


def _by_score(q: str, scores: Mapping[str, float]) -> list[str]:
    for d, s in scores.items():
        _check_id(d, f'run, query "{q}"', "doc id")
        if not finite_number(s):
            raise ShapeError(f'run, query "{q}", doc "{d}": score must be a finite number, got {_shown(s)}')
    # Two sorts, stable: doc id descending, then score descending, which keeps the doc-id order within a tie.
    by_id = sorted(scores, reverse=True)
    return sorted(by_id, key=lambda d: float(scores[d]), reverse=True)


def _check_id(value: object, where: str, what: str) -> None:
    if not isinstance(value, str):
        raise ShapeError(f"{where}: {what} must be a string, got {value!r}")
