"""The pool reader is strict and names file, line and field; the SDK entry point serves one query."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from citator.rerank.pool import PoolFileError, read_pool

GOOD = {"query_id": "q1", "query": "x", "candidates": [{"id": "a", "text": "t", "rank": 1, "bm25_score": 2.0}]}


def _write(tmp_path: Path, *rows: object) -> Path:
    path = tmp_path / "pool.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_reads_candidates_in_rank_order(tmp_path: Path) -> None:
    row = dict(GOOD, candidates=[{"id": "b", "text": "u", "rank": 2, "bm25_score": 1.0}, *GOOD["candidates"]])
    (q,) = read_pool(_write(tmp_path, row))
    assert [c.id for c in q.candidates] == ["a", "b"] and q.ids() == {"a", "b"}


@pytest.mark.parametrize(
    "change, field",
    [
        ({"query_id": ""}, "query_id"),
        ({"query": 3}, "query"),
        ({"candidates": []}, "candidates"),
        ({"candidates": [{"id": "a", "text": "t", "rank": 0, "bm25_score": 1.0}]}, "candidates"),
        ({"candidates": [{"id": "a", "text": "t", "rank": 1, "bm25_score": "1"}]}, "candidates"),
        ({"candidates": [GOOD["candidates"][0], GOOD["candidates"][0]]}, "candidates"),
    ],
)
def test_malformed_rows_name_line_and_field(tmp_path: Path, change: dict, field: str) -> None:
    with pytest.raises(PoolFileError) as info:
        read_pool(_write(tmp_path, GOOD | {"query_id": "q0"}, GOOD | change))
    assert info.value.line == 2 and info.value.field == field


def test_duplicate_query_ids_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(PoolFileError, match="duplicate query_id"):
        read_pool(_write(tmp_path, GOOD, GOOD))


def test_rerank_strategy_command_serves_one_query() -> None:
    msg = json.dumps({"type": "query", **GOOD, "budgets": {}}) + "\n"
    out = subprocess.run(
        [sys.executable, "-m", "citator.cli.main", "rerank-strategy", "bm25"], input=msg, capture_output=True,
        text=True, check=True, timeout=60,
    )
    assert json.loads(out.stdout) == {"type": "result", "ids": ["a"]}
