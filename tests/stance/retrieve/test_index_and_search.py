"""The index directory is complete or refused, and search obeys the output contract."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from citator.data import read_ground_truth, read_queries, validate_results
from citator.errors import CorpusError, IndexDirError
from citator.evaluate import evaluate
from citator.stance.retrieve.index_dir import BuildOptions, build_index
from citator.stance.retrieve.layout import read_manifest
from citator.stance.retrieve.searcher import StanceSearcher


def test_manifest_records_what_run_needs(small_index: Path, small_stance_set: dict[str, Path]) -> None:
    manifest = read_manifest(small_index)
    assert manifest.n_docs == 40 and manifest.n_passages >= 40
    assert manifest.source.encoder_id.startswith("bert:")
    import hashlib

    assert manifest.source.corpus_sha256 == hashlib.sha256(small_stance_set["corpus"].read_bytes()).hexdigest()
    assert [p.name for p in small_index.glob("build-*")] == [manifest.data_dir]


def test_search_is_valid_and_finds_relevant_documents(small_index: Path, small_stance_set: dict[str, Path]) -> None:
    queries = read_queries(small_stance_set["queries"])
    searcher = StanceSearcher(small_index)
    results = searcher.search(queries, k=10)
    assert validate_results(results, set(searcher.doc_ids), queries, 10) == []
    run = {r.query_id: r.doc_ids for r in results}
    # A real signal: far above the ~0.1 that random order of 40 documents would give.
    assert evaluate(read_ground_truth(small_stance_set["gt"]), run, ["ndcg@10"])["ndcg@10"] > 0.5


@pytest.mark.parametrize("damage", ["missing", "no-manifest", "corrupt", "not-an-object", "odd-encoder",
                                    "foreign-format", "missing-part"])
def test_broken_indexes_are_refused(small_index: Path, tmp_path: Path, damage: str) -> None:
    broken = tmp_path / "index"
    if damage != "missing":
        shutil.copytree(small_index, broken)
    manifest = broken / "manifest.json"
    if damage == "no-manifest":
        manifest.unlink()
    elif damage == "corrupt":
        manifest.write_text('{"format": "citator-stance-index/1", "complete": tr')
    elif damage == "not-an-object":
        manifest.write_text("[]")
    elif damage == "odd-encoder":
        obj = json.loads(manifest.read_text())
        manifest.write_text(json.dumps(dict(obj, encoder=["a", "list"])))
    elif damage == "foreign-format":
        obj = json.loads(manifest.read_text())
        manifest.write_text(json.dumps(dict(obj, format="something-else/9")))
    elif damage == "missing-part":
        data_dir = json.loads(manifest.read_text())["data_dir"]
        (broken / data_dir / "dense.npy").unlink()
    with pytest.raises(IndexDirError, match="rebuild|run build.sh"):
        read_manifest(broken)


def test_failed_build_keeps_the_old_index(small_index: Path, tmp_path: Path) -> None:
    index = tmp_path / "index"
    shutil.copytree(small_index, index)
    before = (index / "manifest.json").read_text()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"doc_id": "a", "title": "", "text": "x"}\n{"doc_id": "a", "title": "", "text": "y"}\n')
    with pytest.raises(CorpusError, match='line 2 field "doc_id": duplicate doc_id "a"'):
        build_index(bad, index, BuildOptions(progress=False))
    assert (index / "manifest.json").read_text() == before
    read_manifest(index)


def test_faiss_path_for_large_indexes_matches_exact_search(small_index: Path, small_stance_set: dict[str, Path],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from citator.engines import dense

    queries = read_queries(small_stance_set["queries"])
    searcher = StanceSearcher(small_index)
    exact = searcher.search(queries, k=10)
    # As if the index held more vectors than exact numpy search is meant for; small batches as for millions.
    monkeypatch.setattr(dense, "FAISS_THRESHOLD", 0)
    monkeypatch.setattr("citator.stance.retrieve.searcher.MAX_BATCH_CELLS", 3 * searcher.manifest.n_passages)
    via_faiss = searcher.search(queries, k=10)
    assert searcher.dense._faiss is not None  # the faiss index was really built and used
    assert [r.doc_ids for r in via_faiss] == [r.doc_ids for r in exact]
    assert [s.score for r in via_faiss for s in r.results] == pytest.approx([s.score for r in exact for s in r.results], abs=1e-5)
