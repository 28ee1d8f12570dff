"""Queue order is a keyed hash of reviewer and item: it cannot echo the keyword or reranked order."""

from __future__ import annotations

import json
from pathlib import Path

from citator.statutes.review import LabelStore, read_pool
from citator.statutes.review.queue import queue_order
from fixtures.review_run import build_run

KEY = bytes(range(32))


def test_order_ignores_rank_and_file_order(tmp_path: Path) -> None:
    run_a = build_run(tmp_path / "a")
    run_b = build_run(tmp_path / "b")
    rows = [json.loads(line) for line in (run_b / "pool.jsonl").read_text().splitlines()]
    n = len(rows)
    for r in rows:
        r["keyword_rank"] = n - r["keyword_rank"] + 1  # reverse the ranks too
    (run_b / "pool.jsonl").write_text("".join(json.dumps(r) + "\n" for r in reversed(rows)))
    a = [it.key for it in queue_order(KEY, "alice", [e.item for e in read_pool(run_a)])]
    b = [it.key for it in queue_order(KEY, "alice", [e.item for e in read_pool(run_b)])]
    assert a == b


def test_each_reviewer_gets_their_own_order_with_queries_kept_together(tmp_path: Path) -> None:
    items = [e.item for e in read_pool(build_run(tmp_path / "run"))]
    alice = queue_order(KEY, "alice", items)
    bob = queue_order(KEY, "bob", items)
    assert [i.key for i in alice] != [i.key for i in bob]
    queries = [i.query_id for i in alice]
    assert queries == sorted(queries, key=queries.index)  # one block per query
    assert sorted(i.key for i in alice) == sorted(i.key for i in items)


def test_store_queue_uses_its_own_secret_key(tmp_path: Path) -> None:
    items = [e.item for e in read_pool(build_run(tmp_path / "run"))]
    with LabelStore(tmp_path / "l.sqlite") as store:
        store.load_items(items)
        store.add_reviewer("alice")
        (alice,) = store.reviewers()
        assert store.queue(alice) == queue_order(store.queue_key, "alice", items)
        assert len(store.queue_key) == 32
