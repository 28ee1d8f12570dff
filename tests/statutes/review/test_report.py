"""Human-label metrics for a run, from the store or an export, checked against the run's current hashes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citator.cli.main import main
from citator.evaluate.human_labels import NOT_JUDGED, STALE, UNKNOWN
from citator.statutes.review import LabelStore, keyword_order, read_pool
from citator.statutes.review.report import human_label_report, read_ranking
from fixtures.review_run import build_run

SECTION = {"NRS 1.301": 3, "NRS 1.302": 0, "NRS 1.303": 2, "NRS 1.304": 1, "NRS 1.305": 0,
           "NRS 432B.201": 2, "NRS 432B.202": 2, "NRS 432B.203": 0, "NRS 432B.204": 1, "NRS 432B.205": 3}


def _labelled_store(tmp_path: Path, run: Path) -> LabelStore:
    store = LabelStore(tmp_path / "labels.sqlite")
    store.load_items(e.item for e in read_pool(run))
    store.add_reviewer("alice")
    (alice,) = store.reviewers()
    for it in store.items():
        if it.doc_id in SECTION:  # NRS 432B.206 (keyword position 6 of the dev query) stays unjudged
            passage = "unknown" if it.doc_id == "NRS 1.303" else 2
            store.save_label(alice, it.key, SECTION[it.doc_id], passage, "", it.hashes, True)
    return store


def _row(report, ranking: str, facet: str, metric: str, group: str):  # type: ignore[no-untyped-def]
    (row,) = [s for r, f, s in report.rows if (r, f, s.metric, s.group) == (ranking, facet, metric, group)]
    return row


def test_metrics_only_where_fully_judged(tmp_path: Path) -> None:
    run = build_run(tmp_path / "run")
    entries = read_pool(run)
    with _labelled_store(tmp_path, run) as store:
        report = human_label_report(entries, store.labels(), {"keyword": keyword_order(entries)})
    held = _row(report, "keyword", "section", "P@5", "heldout/ranking")
    assert (held.computed, held.mean) == (1, pytest.approx(2 / 5))
    assert _row(report, "keyword", "section", "nDCG@5", "heldout/ranking").computed == 1
    dev_p = _row(report, "keyword", "section", "P@5", "dev/ranking")
    assert (dev_p.computed, dev_p.mean) == (1, pytest.approx(3 / 5))
    dev_n = _row(report, "keyword", "section", "nDCG@5", "dev/ranking")
    assert (dev_n.computed, dict(dev_n.not_computed)) == (0, {NOT_JUDGED: 1})
    # One passage graded "unknown" blocks the passage metrics of its query instead of counting as 0.
    passage = _row(report, "keyword", "passage", "P@5", "heldout/ranking")
    assert (passage.computed, dict(passage.not_computed)) == (0, {UNKNOWN: 1})


def test_labels_for_changed_texts_are_stale_not_reused(tmp_path: Path) -> None:
    run = build_run(tmp_path / "run")
    with _labelled_store(tmp_path, run) as store:
        labels = store.labels()
    changed = read_pool(build_run(tmp_path / "run2", edit={"NRS 1.302": "2. A rewritten passage."}))
    report = human_label_report(changed, labels, {"keyword": keyword_order(changed)})
    held = _row(report, "keyword", "section", "P@5", "heldout/ranking")
    assert (held.computed, dict(held.not_computed)) == (0, {STALE: 1})


def test_one_reviewer_at_a_time_and_other_rankings(tmp_path: Path) -> None:
    run = build_run(tmp_path / "run")
    entries = read_pool(run)
    ranking_file = tmp_path / "reranked.jsonl"
    reverse = {q: list(reversed(docs)) for q, docs in keyword_order(entries).items()}
    ranking_file.write_text("".join(json.dumps({"query_id": q, "doc_ids": d}) + "\n" for q, d in reverse.items()))
    with _labelled_store(tmp_path, run) as store:
        labels = store.labels()
    rankings = {"keyword": keyword_order(entries), "reranked": read_ranking(ranking_file)}
    report = human_label_report(entries, labels, rankings, reviewer="alice")
    held = _row(report, "reranked", "section", "P@5", "heldout/ranking")
    assert held.mean == pytest.approx(2 / 5)  # same five documents, other order
    nobody = human_label_report(entries, labels, rankings, reviewer="bob")
    assert all(s.computed == 0 for _, _, s in nobody.rows)


def test_review_cli_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = build_run(tmp_path / "run")
    db = str(tmp_path / "labels.sqlite")
    assert main(["review", "add-reviewer", "alice", "--db", db]) == 0
    token = capsys.readouterr().out.strip()
    assert len(token) >= 32
    assert main(["review", "add-reviewer", "alice", "--db", db]) == 2  # already has a token
    assert main(["review", "load", str(run), "--db", db]) == 0
    assert main(["review", "load", str(run), "--db", db]) == 0
    assert "0 added, 0 changed, 11 unchanged" in capsys.readouterr().out
    with LabelStore(db) as store:
        alice = store.reviewer_for_token(token)
        assert alice is not None
        for it in store.items():
            store.save_label(alice, it.key, 2, 1, "", it.hashes, True)
    assert main(["review", "export", "--db", db, "--out", str(tmp_path / "labels.jsonl")]) == 0
    assert main(["review", "import", str(tmp_path / "labels.jsonl"), "--db", db]) == 0
    assert "0 added, 0 updated, 11 unchanged" in capsys.readouterr().out
    out = tmp_path / "metrics.json"
    assert main(["review", "metrics", str(run), "--labels", str(tmp_path / "labels.jsonl"), "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert {(r["facet"], r["metric"], r["group"], r["computed"]) for r in rows if r["ranking"] == "keyword"} == {
        (f, m, g, 1) for f in ("section", "passage") for m in ("P@5", "nDCG@5")
        for g in ("dev/ranking", "heldout/ranking")
    }
    # The keyword order is always in the report: a ranking may not take its name (nor two rankings one name).
    ranking = tmp_path / "ranking.jsonl"
    ranking.write_text("")
    for specs in (["keyword=" + str(ranking)], ["mine=" + str(ranking), "mine=" + str(ranking)]):
        argv = ["review", "metrics", str(run), "--labels", str(tmp_path / "labels.jsonl")]
        assert main(argv + [a for spec in specs for a in ("--ranking", spec)]) == 2
        assert "is already taken" in capsys.readouterr().err
    assert main(["review", "stale", "--db", db]) == 0
    assert main(["review", "load", str(build_run(tmp_path / "run2", edit={"NRS 1.301": "New."})), "--db", db]) == 0
    assert main(["review", "stale", "--db", db]) == 1
    assert "NRS 1.301\talice\tchanged: passage" in capsys.readouterr().out
