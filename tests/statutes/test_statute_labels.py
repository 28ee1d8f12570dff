"""A run's human labels: lower-median consensus bound to hashes, metrics only where fully judged."""

from __future__ import annotations

from pathlib import Path

from citator.statutes.keyword import KeywordIndex
from citator.statutes.labels import consensus, human_metrics
from citator.statutes.pool import Pool, build_pools
from citator.data.hashing import sha256_text
from citator.data.statutes import HumanLabel, read_sections, read_suite
from citator.evaluate.human_labels import NOT_JUDGED, NOTHING_RELEVANT, STALE


def _pools(sections: Path, suite: Path) -> list[Pool]:
    return [p for p in build_pools(KeywordIndex(read_sections(sections)), read_suite(suite)) if p.query.kind == "ranking"]


def _label(pool: Pool, i: int, grade: int | None, reviewer: str = "ann", *, fresh: bool = True,
           complete: bool = True) -> HumanLabel:
    item = pool.items[i]
    return HumanLabel(item.query_id, item.doc_id, reviewer, grade, grade, sha256_text(item.query),
                      item.section_sha256 if fresh else "0" * 64, item.passage_sha256, complete)


def test_consensus_is_the_lower_median_of_complete_fresh_known_grades(nrs_sections: Path, nrs_suite: Path) -> None:
    pool = _pools(nrs_sections, nrs_suite)[0]
    items = {(i.query_id, i.doc_id): i for i in pool.items}
    labels = [_label(pool, 0, 1), _label(pool, 0, 3, "bob"), _label(pool, 0, None, "cy"),
              _label(pool, 1, 0), _label(pool, 1, 2, "bob"), _label(pool, 1, 3, "cy"),
              _label(pool, 2, 3, fresh=False), _label(pool, 3, 3, complete=False),
              HumanLabel("elsewhere", "NRS 0.010", "ann", 1, 1, "a" * 64, "b" * 64, "c" * 64, True)]
    c = consensus(labels, items)
    grades = c.section[pool.query.query_id]
    assert grades[pool.items[0].doc_id].grade == 1 and grades[pool.items[1].doc_id].grade == 2
    assert grades[pool.items[2].doc_id].missing == STALE and grades[pool.items[4].doc_id].missing == NOT_JUDGED
    assert (c.used, c.stale, c.incomplete, c.not_in_pool) == (6, 1, 1, 1)


def test_a_fully_judged_pool_with_nothing_relevant_has_no_ndcg(nrs_sections: Path, nrs_suite: Path) -> None:
    pools = _pools(nrs_sections, nrs_suite)
    relevant, irrelevant = pools[0], pools[1]
    labels = [_label(relevant, i, 3 if i == 2 else 0) for i in range(len(relevant.items))]
    labels += [_label(irrelevant, i, 0) for i in range(len(irrelevant.items))]
    items = {(i.query_id, i.doc_id): i for p in pools for i in p.items}
    orders = {"keyword": {p.query.query_id: p.doc_ids for p in pools}}
    dev = human_metrics(pools, orders, consensus(labels, items).section)["dev"]["keyword"]
    # P@5 is computed for both; nDCG only where the ideal DCG is not 0 (third of five: 1/log2(4) = 0.5).
    assert dev["queries"] == len(pools) and dev["p@5_queries"] == 2 and dev["p@5"] == 0.1
    assert dev["ndcg@5_queries"] == 1 and dev["ndcg@5"] == 0.5
    assert dev["ndcg@5_not_computed"] == {NOT_JUDGED: len(pools) - 2, NOTHING_RELEVANT: 1}
