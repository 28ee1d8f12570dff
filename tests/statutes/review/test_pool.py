"""pool.jsonl reading: strict on the contract, blind to anything beyond it."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from citator.errors import PoolError
from citator.statutes.review import ReviewItem, keyword_order, read_pool
from fixtures.review_run import build_run, captioned_sha, sha


def _rewrite(run: Path, change) -> None:  # type: ignore[no-untyped-def]
    rows = [json.loads(line) for line in (run / "pool.jsonl").read_text().splitlines()]
    change(rows)
    (run / "pool.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_reads_items_without_rank_or_scores(tmp_path: Path) -> None:
    entries = read_pool(build_run(tmp_path / "run"))
    assert len(entries) == 11
    fields = {f.name for f in dataclasses.fields(ReviewItem)}
    assert not {f for f in fields if "rank" in f or "score" in f or "grade" in f or "useful" in f}
    first = entries[0].item
    assert first.query_sha256 == sha(first.query)
    assert first.section_sha256 == captioned_sha(first.heading, first.section_text)


def test_keyword_order_follows_keyword_rank_not_file_order(tmp_path: Path) -> None:
    run = build_run(tmp_path / "run")
    _rewrite(run, lambda rows: rows.reverse())
    order = keyword_order(read_pool(run))
    assert order["q-held-1"] == [f"NRS 1.{300 + i}" for i in range(1, 6)]


def test_a_hash_that_does_not_match_its_text_is_an_error(tmp_path: Path) -> None:
    run = build_run(tmp_path / "run")
    _rewrite(run, lambda rows: rows[2].update(passage=rows[2]["passage"] + " (edited)"))
    with pytest.raises(PoolError, match=r'pool.jsonl line 3 field "passage_sha256"'):
        read_pool(run)


@pytest.mark.parametrize(("field", "hashed"), [("caption", "passage_sha256"), ("heading", "section_sha256")])
def test_a_caption_or_heading_edited_after_hashing_is_an_error(tmp_path: Path, field: str, hashed: str) -> None:
    run = build_run(tmp_path / "run")
    _rewrite(run, lambda rows: rows[2].update({field: "Repealed."}))
    with pytest.raises(PoolError, match=f'pool.jsonl line 3 field "{hashed}"'):
        read_pool(run)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda rows: rows[1].pop("caption"), "caption"),
        (lambda rows: rows[1].update(keyword_rank="2"), "keyword_rank"),
        (lambda rows: rows[1].update(keyword_rank=1), "keyword_rank"),
        (lambda rows: rows[1].update(doc_id=rows[0]["doc_id"]), "doc_id"),
        (lambda rows: rows[1].update(split="heldout"), "query"),
    ],
)
def test_contract_breaches_name_line_and_field(tmp_path: Path, change, field: str) -> None:  # type: ignore[no-untyped-def]
    run = build_run(tmp_path / "run")
    _rewrite(run, change)
    with pytest.raises(PoolError, match=f'line 2 field "{field}"'):
        read_pool(run)


def test_missing_pool_is_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(PoolError, match="file not found"):
        read_pool(tmp_path)
