"""Every index file read back is checked: damage is an IndexDirError naming the file, never a traceback or a
silent ranking. Each case damages a copy of a good index; the "re-recorded" cases also rewrite the manifest's file
table to match (as a careless tool or a hand edit would), so the checks behind the checksum are exercised too."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from citator.errors import IndexDirError
from citator.stance.retrieve.index_files import record_files
from citator.stance.retrieve.layout import read_manifest
from citator.stance.retrieve.searcher import StanceSearcher


def _copy(small_index: Path, tmp_path: Path) -> tuple[Path, Path, dict]:
    index = tmp_path / "index"
    shutil.copytree(small_index, index, ignore=shutil.ignore_patterns("service"))
    manifest = json.loads((index / "manifest.json").read_text())
    return index, index / manifest["data_dir"], manifest


def _write_manifest(index: Path, manifest: dict, rerecord: bool = True) -> None:
    if rerecord:
        manifest["files"] = record_files(index / manifest["data_dir"])
    (index / "manifest.json").write_text(json.dumps(manifest))


def _nan_vectors(data: Path, manifest: dict) -> None:
    vectors = np.load(data / "dense.npy")
    vectors[:] = np.nan
    np.save(data / "dense.npy", vectors)


def _truncate_dense(data: Path, manifest: dict) -> None:
    raw = (data / "dense.npy").read_bytes()
    (data / "dense.npy").write_bytes(raw[: len(raw) // 2])


def _drop_an_id(data: Path, manifest: dict) -> None:
    ids = json.loads((data / "doc_ids.json").read_text())
    (data / "doc_ids.json").write_text(json.dumps(ids[:-1]))


def _repeat_an_id(data: Path, manifest: dict) -> None:
    ids = json.loads((data / "doc_ids.json").read_text())
    (data / "doc_ids.json").write_text(json.dumps([ids[0]] + ids[1:-1] + [ids[0]]))


def _empty_lexical(data: Path, manifest: dict) -> None:
    for name in ("data", "indices"):
        np.save(data / "lexical_doc" / f"{name}.csc.index.npy", np.zeros(0, dtype=np.float32))


def _int_vectors(data: Path, manifest: dict) -> None:
    np.save(data / "dense.npy", np.zeros((manifest["n_passages"], 4), dtype=np.int64))


def _starts_out_of_range(data: Path, manifest: dict) -> None:
    starts = np.load(data / "passage_starts.npy")
    starts[-1] = manifest["n_passages"] + 5
    np.save(data / "passage_starts.npy", starts)


def _pickled_array(data: Path, manifest: dict) -> None:
    np.save(data / "passage_starts.npy", np.array([object()] * manifest["n_docs"]), allow_pickle=True)


def _stopwords_a_number(data: Path, manifest: dict) -> None:
    (data / "lexical_doc" / "stopwords.tokenizer.json").write_text("5")


FILE_DAMAGE: dict[str, tuple[Callable[[Path, dict], None], str]] = {
    "stopwords a number": (_stopwords_a_number, "lexical_doc: unreadable BM25 index (TypeError"),
    "NaN vectors": (_nan_vectors, "dense.npy: holds NaN or infinite values"),
    "truncated dense.npy": (_truncate_dense, "dense.npy: unreadable array"),
    "doc_ids.json one id short": (_drop_an_id, "doc_ids.json: 39 ids"),
    "doc_ids.json repeats an id": (_repeat_an_id, "doc_ids.json: 40 ids (39 distinct)"),
    "empty lexical arrays": (_empty_lexical, "lexical_doc: BM25 arrays are inconsistent"),
    "integer vectors": (_int_vectors, "dense.npy: int64 array"),
    "passage starts out of range": (_starts_out_of_range, "passage_starts.npy: passage starts are not increasing"),
    "pickled object array": (_pickled_array, "passage_starts.npy: unreadable array"),
}


@pytest.mark.parametrize("case", sorted(FILE_DAMAGE))
def test_damaged_files_are_caught_by_their_checksum(small_index: Path, tmp_path: Path, case: str) -> None:
    index, data, manifest = _copy(small_index, tmp_path)
    FILE_DAMAGE[case][0](data, manifest)
    with pytest.raises(IndexDirError, match="rebuild with build.sh") as caught:
        StanceSearcher(index, cold=True)
    assert "differs from what was made" in str(caught.value) or "bytes, made as" in str(caught.value)


@pytest.mark.parametrize("case", sorted(FILE_DAMAGE))
def test_damage_behind_a_matching_checksum_is_caught_by_the_file_checks(
    small_index: Path, tmp_path: Path, case: str
) -> None:
    index, data, manifest = _copy(small_index, tmp_path)
    damage, message = FILE_DAMAGE[case]
    damage(data, manifest)
    _write_manifest(index, manifest)
    with pytest.raises(IndexDirError, match="rebuild with build.sh") as caught:
        StanceSearcher(index, cold=True)
    assert message in str(caught.value)


MANIFEST_DAMAGE: dict[str, tuple[Callable[[dict], None], str]] = {
    "built by citator 9.9.9": (lambda m: m.update(citator_version="9.9.9"), "built by citator '9.9.9'"),
    "wrong n_docs": (lambda m: m.update(n_docs=m["n_docs"] + 1), "doc_ids.json: 40 ids (40 distinct), the manifest says 41"),
    "n_docs a string": (lambda m: m.update(n_docs="40"), "are not counts"),
    "n_docs negative": (lambda m: m.update(n_docs=-1), "are not counts"),
    "wrong-type weights": (lambda m: m["config"].update(weights={"bm25": "heavy"}), "weights must map"),
    "weights a list": (lambda m: m["config"].update(weights=["bm25"]), "weights must map"),
    "k1 NaN": (lambda m: m["config"].update(k1=float("nan")), "k1 must be a finite number"),
    "no file table": (lambda m: m.pop("files"), "no file table"),
    "file table escapes": (lambda m: m["files"].update({"../../etc/passwd": {"bytes": 1, "sha256": "0" * 64}}),
                           "is malformed"),
    "data_dir escapes": (lambda m: m.update(data_dir="../elsewhere"), "is not a folder of the index"),
    "a recorded size is wrong": (lambda m: m["files"]["dense.npy"].update(bytes=1), "dense.npy: "),
}


@pytest.mark.parametrize("case", sorted(MANIFEST_DAMAGE))
def test_a_damaged_manifest_is_refused(small_index: Path, tmp_path: Path, case: str) -> None:
    index, _, manifest = _copy(small_index, tmp_path)
    edit, message = MANIFEST_DAMAGE[case]
    edit(manifest)
    _write_manifest(index, manifest, rerecord=False)
    with pytest.raises(IndexDirError, match="rebuild with build.sh") as caught:
        StanceSearcher(index, cold=True)
    assert message in str(caught.value)


def test_a_good_index_records_every_file_it_holds(small_index: Path) -> None:
    manifest = read_manifest(small_index)
    data = small_index / manifest.data_dir
    on_disk = {p.relative_to(data).as_posix() for p in data.rglob("*") if p.is_file()}
    assert set(manifest.files) == on_disk and {"dense.npy", "doc_ids.json", "passage_starts.npy"} <= on_disk
    StanceSearcher(small_index, cold=True)


def test_a_cold_search_runs_the_index_onnx_graph_and_ranks_as_torch(small_index: Path) -> None:
    from citator.data import Query

    queries = [Query("q1", "the police searched a car without a warrant", "supported"),
               Query("q2", "a contract needs consideration", "refuted")]
    cold, warm = StanceSearcher(small_index, cold=True), StanceSearcher(small_index)
    cold_results, warm_results = cold.search(queries, 10), warm.search(queries, 10)
    assert type(cold.encoder).__name__ == "OnnxEncoder" and type(warm.encoder).__name__ == "TransformerEncoder"
    for a, b in zip(cold_results, warm_results):
        assert [d.doc_id for d in a.results] == [d.doc_id for d in b.results]
        assert np.allclose([d.score for d in a.results], [d.score for d in b.results], atol=1e-5)


def test_a_damaged_onnx_graph_behind_a_matching_checksum_is_index_damage(small_index: Path, tmp_path: Path) -> None:
    from citator.data import Query

    index, data, manifest = _copy(small_index, tmp_path)
    graph = data / "query_graphs" / "base.onnx"
    graph.write_bytes(graph.read_bytes()[:4096])
    _write_manifest(index, manifest)
    with pytest.raises(IndexDirError, match="base.onnx: not a readable ONNX graph.*rebuild with build.sh"):
        StanceSearcher(index, cold=True).search([Query("q1", "a warrant is needed", "supported")], 10)


def test_a_query_graph_is_checked_when_a_search_loads_it_and_only_then(small_index: Path, tmp_path: Path) -> None:
    """Encoders and their ONNX graphs are hashed as they are loaded: a cold search (onnxruntime) refuses a damaged
    graph in one line, while a server, which runs the encoder in torch, never reads it."""
    from citator.data.records import Query

    index, data, _ = _copy(small_index, tmp_path)
    graph = data / "query_graphs" / "base.onnx"
    raw = bytearray(graph.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    graph.write_bytes(bytes(raw))
    queries = [Query("q", "a proposition", "supported")]
    cold = StanceSearcher(index, cold=True)  # nothing loaded the graph yet
    with pytest.raises(IndexDirError, match="rebuild with build.sh") as caught:
        cold.search(queries, 10)
    assert "query_graphs/base.onnx: content differs" in str(caught.value) and "\n" not in str(caught.value)
    assert len(StanceSearcher(index, cold=False).search(queries, 10)[0].results) == 10


def test_passage_vectors_of_another_width_are_index_damage(small_index: Path, tmp_path: Path) -> None:
    # Behind a matching checksum, vectors of the wrong width are only seen against a query's: one line, not numpy's.
    from citator.data.records import Query

    index, data, manifest = _copy(small_index, tmp_path)
    np.save(data / "dense.npy", np.zeros((manifest["n_passages"], 7), dtype=np.float16))
    _write_manifest(index, manifest)
    searcher = StanceSearcher(index, cold=True)
    with pytest.raises(IndexDirError, match=r"dense.npy: passage vectors of width 7, but the query encoder gives "
                                            r"\d+; rebuild with build.sh"):
        searcher.search([Query("q1", "a grant of land", "all")], 5)
