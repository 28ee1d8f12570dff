"""Query files: JSONL `{"query_id", "text", "stance"}` with extra keys kept."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from citator.data.atomic import write_jsonl_atomic
from citator.data.jsonl import iter_jsonl, require_str, require_unique_str
from citator.data.records import STANCES, Query
from citator.errors import QueryError


def iter_queries(path: str | Path, *, default_stance: str | None = None, lenient: bool = False) -> Iterator[Query]:
    """Stream queries; `stance` is required unless `default_stance` is given.

    `lenient` (run.sh: one refused line would score zero for the whole batch) keeps an empty text, with a
    warning on stderr. Everything else stays an error, an unknown stance included: it is a wrong request,
    and guessing "all" would answer a question nobody asked.
    """
    seen: dict[str, int] = {}
    for line, obj in iter_jsonl(path, QueryError):
        query_id = require_unique_str(obj, "query_id", seen, path, line, QueryError)
        text = require_str(obj, "text", path, line, QueryError, nonempty=not lenient)
        if lenient and not text.strip():
            _warn(path, line, "text", "empty text: ranked on nothing")
        if "stance" in obj or default_stance is None:
            stance = require_str(obj, "stance", path, line, QueryError)
        else:
            stance = default_stance
        if stance not in STANCES:
            raise QueryError(
                path, line, f'unknown stance "{stance}": expected one of {", ".join(STANCES)}', field="stance"
            )
        extra = {k: v for k, v in obj.items() if k not in ("query_id", "text", "stance")}
        yield Query(query_id, text, stance, extra)


def _warn(path: str | Path, line: int, field: str, message: str) -> None:
    print(f'warning: {Path(path).name} line {line} field "{field}": {message}', file=sys.stderr)


def read_queries(path: str | Path, *, default_stance: str | None = None, lenient: bool = False) -> list[Query]:
    queries = list(iter_queries(path, default_stance=default_stance, lenient=lenient))
    if not queries:
        raise QueryError(path, None, "no queries in file")
    return queries


def write_queries(path: str | Path, queries: Iterable[Query]) -> None:
    write_jsonl_atomic(path, (q.to_json() for q in queries))
