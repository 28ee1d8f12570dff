"""Stance contrast: the two answers of a text asked with both stances are read side by side."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from citator.data import Qrels, Query, read_queries, validate_results
from citator.errors import ConfigError
from citator.stance.retrieve import contrast
from citator.stance.retrieve.config import RetrievalConfig
from citator.stance.retrieve.index_dir import BuildOptions, build_index
from citator.stance.retrieve.searcher import StanceSearcher


def test_groups_are_texts_asked_with_both_stances() -> None:
    queries = [Query("a:s", "Courts  may X.", "supported"), Query("a:r", "Courts may\nX.", "refuted"),
               Query("a:all", "Courts may X.", "all"), Query("b:s", "Only one stance.", "supported"),
               Query("a:s2", "Courts may X. ", "supported"), Query("A:r", "courts may x.", "refuted")]
    # Whitespace does not matter, case does (a cased encoder may score two casings apart).
    assert contrast.both_stance_groups(queries) == [([0, 4], [1])]
    assert contrast.both_stance_groups(queries[2:4]) == []


def test_each_document_moves_towards_the_stance_it_leans_to() -> None:
    queries = [Query("s", "t", "supported"), Query("r", "t", "refuted"), Query("other", "u", "refuted")]
    # Documents 0, 1, 2 (and 3, 4 seen by one query only); the refuted query ranks them almost as the supported one.
    idx = np.array([[0, 1, 2, 3], [0, 1, 4, 2], [2, 1, 0, 3]])
    scores = np.array([[1.9, 1.8, 1.5, 1.4], [1.85, 1.84, 1.3, 1.2], [3.0, 2.0, 1.0, 0.0]], dtype=np.float32)
    same_idx, same_scores = contrast.contrast_top(idx, scores, queries, 0.0)
    assert same_idx is idx and same_scores is scores
    moved_idx, moved = contrast.contrast_top(idx, scores, queries, 2.0)
    # Leans s - r: doc0 0.05, doc1 -0.04, doc2 0.3, doc3 1.4 - 1.2 (floor), doc4 1.4 (floor) - 1.3.
    lean = {0: 0.05, 1: -0.04, 2: 0.3, 3: 0.2, 4: 0.1}
    s = {0: 1.9, 1: 1.8, 2: 1.5, 3: 1.4, 4: 1.4}
    r = {0: 1.85, 1: 1.84, 2: 1.2, 3: 1.2, 4: 1.3}
    want_s = sorted(lean, key=lambda d: -(s[d] + 2 * lean[d]))[:4]
    want_r = sorted(lean, key=lambda d: -(r[d] - 2 * lean[d]))[:4]
    assert moved_idx[0].tolist() == want_s == [2, 0, 3, 1]
    assert moved_idx[1].tolist() == want_r == [1, 0, 4, 3]
    assert moved[0].tolist() == pytest.approx([s[d] + 2 * lean[d] for d in want_s], abs=1e-5)
    assert moved[1].tolist() == pytest.approx([r[d] - 2 * lean[d] for d in want_r], abs=1e-5)
    assert (np.diff(moved[:2], axis=1) <= 0).all() and np.isfinite(moved).all()
    # The refuted query's first answer is now the document it, and not the supported one, prefers.
    assert moved_idx[1, 0] != moved_idx[0, 0]
    assert moved_idx[2].tolist() == idx[2].tolist() and moved[2].tolist() == scores[2].tolist()


def test_the_weight_is_a_checked_setting() -> None:
    assert RetrievalConfig().stance_contrast == 0.0
    for bad in (-1.0, float("nan"), float("inf"), "2", None, True):
        with pytest.raises(ConfigError, match="stance_contrast"):
            RetrievalConfig(stance_contrast=bad).check()
    assert RetrievalConfig.from_json({**RetrievalConfig().to_json(), "stance_contrast": 2.0}).stance_contrast == 2.0


def test_search_contrasts_both_stance_texts_across_sub_batches(small_stance_set: dict[str, Path],
                                                              tiny_qwen3_embedding_dir: Path, tmp_path: Path) -> None:
    # A Qwen3-Embedding index: its queries carry a per-stance instruction, so a text's scores depend on its stance.
    index = tmp_path / "index"
    build_index(small_stance_set["corpus"], index, BuildOptions(tiny_qwen3_embedding_dir, progress=False))
    asked = read_queries(small_stance_set["queries"])
    # Every text of the fixture asked with the stance it lacks too, then the queries as the fixture has them.
    flipped = [Query(q.query_id + ":flip", q.text, "refuted" if q.stance == "supported" else "supported")
               for q in asked if q.stance != "all"]
    queries = flipped + asked
    plain = StanceSearcher(index)
    base = plain.search(queries, k=10)
    contrasted = StanceSearcher(index)
    contrasted.config = dataclasses.replace(contrasted.config, stance_contrast=2.0)
    results = contrasted.search(queries, k=10)
    assert validate_results(results, set(contrasted.doc_ids), queries, 10) == []
    # What the searcher returns is the contrast of the plain fused top candidates, cut to 10.
    deep = plain.search(queries, k=contrast.DEPTH)
    idx = np.array([[plain.doc_ids.index(d.doc_id) for d in r.results] for r in deep])
    scores = np.array([[d.score for d in r.results] for r in deep], dtype=np.float32)
    want_idx, want_scores = contrast.contrast_top(idx, scores, queries, 2.0)
    assert [r.doc_ids for r in results] == [[plain.doc_ids[i] for i in row[:10]] for row in want_idx.tolist()]
    assert [d.score for d in results[0].results] == pytest.approx(want_scores[0, :10].tolist(), abs=1e-5)
    # It moves answers of both-stance texts, and only theirs.
    moved = [q.stance for q, a, b in zip(queries, base, results) if a.doc_ids != b.doc_ids]
    assert len(moved) >= len(queries) // 4 and "all" not in moved
    # Pairs are found across the searcher's sub-batches: with one query per sub-batch (where no sub-batch holds a
    # pair) the answers are the same, not the plain ones.
    assert [r.doc_ids for r in contrasted.search(queries, k=10, batch_size=1)] == [r.doc_ids for r in results]


def test_asking_for_more_than_the_contrast_reads_keeps_the_first_answers(
        small_stance_set: dict[str, Path], tiny_qwen3_embedding_dir: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The fixture has 40 documents; with the contrast reading the top 5, k = 20 reaches past it.
    monkeypatch.setattr(contrast, "DEPTH", 5)
    index = tmp_path / "index"
    build_index(small_stance_set["corpus"], index, BuildOptions(tiny_qwen3_embedding_dir, progress=False))
    asked = read_queries(small_stance_set["queries"])
    queries = [Query(q.query_id + ":flip", q.text, "refuted" if q.stance == "supported" else "supported")
               for q in asked if q.stance != "all"] + asked
    searcher = StanceSearcher(index)
    searcher.config = dataclasses.replace(searcher.config, stance_contrast=5.0)
    short, long = searcher.search(queries, k=3), searcher.search(queries, k=20)
    assert validate_results(long, set(searcher.doc_ids), queries, 20) == []
    assert [r.doc_ids[:3] for r in long] == [r.doc_ids for r in short]
    assert [r.doc_ids[:5] for r in long] == [r.doc_ids for r in searcher.search(queries, k=5)]
    assert [r.doc_ids for r in long] == [r.doc_ids for r in searcher.search(queries, k=20, batch_size=4)]


def test_refuter_slots_give_the_refuted_answer_its_known_refuters() -> None:
    queries = [Query("s", "t", "supported"), Query("r", "t", "refuted"), Query("one", "u", "refuted")]
    citations = {"paired_refuted": np.array([0, 0, 0, 0, 0, 2, 1, 3.0]), "paired_supported": np.array([1, 0, 0, 0, 0, 1, 0, 3.0])}
    # Known refuters: cited as refuting more often than as supporting (document 7 is cited as often both ways: not one).
    assert contrast.known_refuters(citations).tolist() == [False] * 5 + [True, True, False]
    refuters = contrast.known_refuters(citations)
    fused = np.array([[5, 4, 3, 2, 1, 0.5, 0.7, 9.0]] * 3, dtype=np.float32)
    best = contrast.best_refuters(fused, refuters, 3)
    assert best.tolist() == [[6, 5]] * 3  # only two refuters, best scored first, from all documents
    assert contrast.best_refuters(fused, refuters, 0).shape == (3, 0)
    assert contrast.refuted_rows(queries) == [1]
    idx = np.array([[6, 0, 1, 2], [0, 1, 2, 3], [0, 1, 2, 3]])
    scores = np.array([[4.0, 3.0, 2.0, 1.0], [4.0, 3.0, 2.0, 1.0], [4.0, 3.0, 2.0, 1.0]], dtype=np.float32)
    same = contrast.refuter_slots(idx, scores, queries, 0, refuters, {1: best[1]})
    assert same[0] is idx and same[1] is scores
    moved, moved_scores = contrast.refuter_slots(idx, scores, queries, 1, refuters, {1: best[1]})
    # Supported: its first place is freed of the refuter; refuted: its first place goes to its best refuter.
    assert moved.tolist() == [[0, 6, 1, 2], [6, 0, 1, 2], [0, 1, 2, 3]]
    assert moved_scores.tolist() == [[4, 3, 2, 1], [5, 4, 3, 2], [4, 3, 2, 1]]
    moved, moved_scores = contrast.refuter_slots(idx, scores, queries, 3, refuters, {1: best[1]})
    assert moved.tolist() == [[0, 1, 2, 6], [6, 5, 0, 1], [0, 1, 2, 3]]
    assert (np.diff(moved_scores, axis=1) <= 0).all()
    # A refuter already in the refuted row moves up without being repeated.
    moved, _ = contrast.refuter_slots(idx, scores, queries, 2, refuters, {1: np.array([2, 6])})
    assert moved[1].tolist() == [2, 6, 0, 1]
    # More slots than places: the row is all refuters, still `depth` long.
    many = np.zeros(8, dtype=bool)
    many[:6] = True
    moved, moved_scores = contrast.refuter_slots(idx, scores, queries, 50, many, {1: np.array([5, 4, 3, 2, 1, 0])})
    assert moved.shape == idx.shape and moved[1].tolist() == [5, 4, 3, 2] and (np.diff(moved_scores, axis=1) <= 0).all()
    for bad in (-1, 1.5, "3", None, True):
        with pytest.raises(ConfigError, match="refuter_slots"):
            RetrievalConfig(refuter_slots=bad).check()


def test_splice_keeps_the_moved_head_and_the_rest_below_it() -> None:
    # Row 0's head took document 7 from further down; row 1's head is as it was.
    top_idx = np.array([[7, 0], [0, 1]])
    top_scores = np.array([[2.0, 1.0], [5.0, 4.0]], dtype=np.float32)
    idx = np.array([[0, 1, 7, 2, 3, 4], [0, 1, 2, 3, 4, 5]])
    scores = np.array([[3.0, 2.5, 2.0, 1.5, 1.0, 0.5], [5.0, 4.0, 3.0, 2.0, 1.0, 0.0]], dtype=np.float32)
    out_idx, out_scores = contrast.splice(top_idx, top_scores, idx, scores, 4)
    assert out_idx.tolist() == [[7, 0, 1, 2], [0, 1, 2, 3]]
    # Row 0's rest (2.5, 1.5) is shifted down to start at the head's last score; row 1's rest already sits below.
    assert out_scores.tolist() == [[2.0, 1.0, 1.0, 0.0], [5.0, 4.0, 3.0, 2.0]]
    assert contrast.splice(top_idx, top_scores, idx, scores, 2)[0].tolist() == top_idx.tolist()
    assert contrast.splice(top_idx, top_scores, idx, scores, 100)[0].shape == (2, 6)


def test_training_chooses_the_weight_with_the_best_strict_ndcg_on_dev() -> None:
    from citator.stance.learn.selection import choose_contrast

    doc_ids = [f"d{i}" for i in range(120)]
    queries, grades = [], {}
    fused = np.zeros((4, 120), dtype=np.float32)
    for p in range(2):
        s, r = 2 * p, 2 * p + 1
        queries += [Query(f"p{p}:supported", f"text {p}", "supported", {"proposition_id": f"p{p}"}),
                    Query(f"p{p}:refuted", f"text {p}", "refuted", {"proposition_id": f"p{p}"})]
        grades[f"p{p}:supported"], grades[f"p{p}:refuted"] = {f"d{10 * p}": 1}, {f"d{10 * p + 1}": 1}
        # Both queries put the supported document first; the refuted one is a little less sure of it, and far
        # surer of the refuting document. Everything else is ranked the same by both, below these two.
        fused[s] = fused[r] = np.linspace(1.0, 0.0, 120)
        fused[s, 10 * p], fused[s, 10 * p + 1] = 3.0, 2.0
        fused[r, 10 * p], fused[r, 10 * p + 1] = 2.9, 2.8
    qrels = Qrels.from_dict(grades)
    weight, table = choose_contrast(queries, qrels, doc_ids, fused)
    assert set(table) == {f"{w:g}" for w in contrast.GRID}  # weights only: refuter slots are never tried
    assert table["0"]["outranks"] == 0.5 and table["0"]["queries"] == 4  # the refuted queries all lose
    best = max(v["strict_ndcg@10"] for v in table.values())
    assert table[f"{weight:g}"]["strict_ndcg@10"] == best > table["0"]["strict_ndcg@10"]
    assert weight == min(w for w in contrast.GRID if table[f"{w:g}"]["strict_ndcg@10"] == best)
    assert table[f"{weight:g}"]["outranks"] == 1.0
    # Nothing asked with both stances: off, and the manifest says why.
    weight, table = choose_contrast(queries[::2], qrels, doc_ids, fused[::2])
    assert weight == 0.0 and "no proposition" in table["skipped"]
    # A fusion fitted on dev (no dev scores to choose on): off too.
    weight, table = choose_contrast(queries, qrels, doc_ids, None)
    assert weight == 0.0 and "fitted on dev" in table["skipped"]
