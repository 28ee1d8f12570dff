"""Query files: JSONL `{"query_id", "text", "stance"}` with extra keys kept."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from citator.data.atomic import write_jsonl_atomic
from citator.data.jsonl import iter_jsonl, require_str, require_unique_str
from citator.data.records import STANCES, Query
from citator.errors import QueryError

# Longest query text a search reads, cut before anything tokenises or stems it. Propositions are short (the longest
# train/dev query of CaseFacts has 415 characters and 80 MiniLM tokens, of Climate-FEVER 406 and 82, of SciFact 204
# and 64), and what a batch costs grows with its queries' length (the encoders' forward passes above all), so the
# worst batch, 311 queries all at the cut, is what run.sh's 20 s must hold: 512 characters (about 110 tokens) keep
# every real proposition whole and make a 9 MB query cost what a long proposition does.
MAX_QUERY_CHARS = 512
# The whole batch's budget: 320 characters a query on average (the 311 longest CaseFacts train/dev propositions
# average 296, of Climate-FEVER 217, so no real batch is cut by it), which holds a batch of 311 texts all at the cut to what 311 texts of 320
# characters cost.
MEAN_QUERY_CHARS = 320
MIN_BUDGET_QUERIES = 64
# Where a query's stance is needed, said the same way by every message about it: a search ranks for one stance, a
# brief shows both.
STANCE_RULE = (f"give one of {', '.join(STANCES)} (a search, as run.sh and citator eval read queries, needs each "
               "query's stance; citator brief, which shows both stances, lets it be left out)")


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
        if "stance" not in obj and default_stance is None:
            raise QueryError(path, line, f"missing; {STANCE_RULE}", field="stance")
        stance = require_str(obj, "stance", path, line, QueryError) if "stance" in obj else default_stance
        if stance not in STANCES:
            raise QueryError(path, line, f'unknown stance "{stance}": {STANCE_RULE}', field="stance")
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


def cut_for_search(queries: Iterable[Query], limit: int = MAX_QUERY_CHARS) -> list[Query]:
    """The queries as the searcher reads them, so that what a batch costs is bounded whatever the input: each text
    cut to `limit` characters, and, when a batch's texts add up to more than its budget (batch_budget), the longest
    ones cut further, to the one length that fits the budget. Cuts fall at a word boundary where one is near."""
    queries = list(queries)
    cap = water_level([min(len(q.text), limit) for q in queries], batch_budget(len(queries)))
    return [_cut(q, min(limit, cap)) for q in queries]


def batch_budget(n: int) -> int:
    """Characters a batch of `n` queries may read in all: MEAN_QUERY_CHARS a query, counted over at least
    MIN_BUDGET_QUERIES (a small batch is cheap whatever its texts, so a lone long proposition is never cut below
    MAX_QUERY_CHARS)."""
    return MEAN_QUERY_CHARS * max(n, MIN_BUDGET_QUERIES)


def water_level(lengths: list[int], budget: int) -> int:
    """The largest cap c with sum(min(length, c)) <= budget (every length when they fit): cutting only the longest
    texts, to a common length, spends the budget on the most queries whole."""
    if sum(lengths) <= budget:
        return max(lengths, default=0)
    spent, ordered = 0, sorted(lengths)
    for i, length in enumerate(ordered):
        share = (budget - spent) // (len(ordered) - i)
        if length > share:
            return share
        spent += length
    return ordered[-1]


def _cut(q: Query, limit: int) -> Query:
    if len(q.text) <= limit:
        return q
    head = q.text[:limit]
    space = head.rfind(" ", max(0, limit - 100))
    return Query(q.query_id, head[:space] if space > 0 else head, q.stance, q.extra)
