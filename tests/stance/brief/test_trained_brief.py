"""With trained artifacts, a brief's reasons are the training propositions that cite each document."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citator.stance.brief.index import StanceIndex
from citator.stance.brief.render import render


@pytest.fixture(scope="module")
def trained_index(small_stance_set: dict[str, Path], small_artifacts: Path,
                  tmp_path_factory: pytest.TempPathFactory) -> Path:
    index_dir = tmp_path_factory.mktemp("trained-brief") / "index"
    # Built through the public API: model= is the artifacts directory, and the opened index says it is trained.
    assert StanceIndex.build(small_stance_set["corpus"], index_dir, model=small_artifacts).trained
    return index_dir


@pytest.mark.slow
def test_reasons_are_the_nearest_citing_propositions(trained_index: Path, small_stance_set: dict[str, Path]) -> None:
    index = StanceIndex.open(trained_index)
    assert index.trained
    memory = index.searcher.learned.memory
    cites = {}
    for entry in memory.entries:
        for doc_id in entry.doc_ids:
            cites.setdefault(doc_id, set()).add((entry.proposition_id, entry.stance, entry.text))
    texts = list(dict.fromkeys(json.loads(line)["text"] for line in small_stance_set["queries"].open()))[:5]
    with_reasons = two = 0
    for text in texts:
        brief = index.brief(text, k=5)
        assert brief.trained and index.ranks_stance
        two += brief.stance_ranked  # one list only where this proposition's two stances ranked alike
        for key, _, column in brief.columns():
            stance = "supported" if key == "relevant" else key
            assert [(h.doc_id, h.score) for h in column] == [(h.doc_id, h.score) for h in index.search(text, stance, 5)]
            for hit in column:
                assert hit.memory is not None and len(hit.memory) <= 3
                for reason in hit.memory:
                    assert (reason.proposition_id, reason.stance, reason.text) in cites[hit.doc_id]
                sims = [r.similarity for r in hit.memory]
                assert sims == sorted(sims, reverse=True)
                with_reasons += bool(hit.memory)
                assert {s.name for s in hit.signals} == set(index.searcher.needed_signals())
        assert "memory: no trained memory" not in render(brief, "table")
    assert with_reasons > 0 and two > 0


@pytest.mark.slow
def test_the_index_copies_the_trained_model_readable_like_its_other_files(trained_index: Path) -> None:
    # Training writes its weights 0600 (an atomic write); the index's copy takes the index's own file mode, so a
    # user who may read the index may search it.
    import stat

    from citator.stance.retrieve.layout import read_manifest

    data = trained_index / read_manifest(trained_index).data_dir
    mode = stat.S_IMODE((data / "doc_ids.json").stat().st_mode)
    copied = [p for p in (data / "finetuned_encoder").rglob("*") if p.is_file()] + [data / "ranker.json"]
    copied += [p for p in (data / "memory").rglob("*") if p.is_file()]
    assert (data / "finetuned_encoder" / "model.safetensors") in copied
    assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in copied} == {p.name: mode for p in copied}


@pytest.mark.slow
def test_memory_vectors_of_another_width_are_index_damage(trained_index: Path, tmp_path: Path) -> None:
    # Behind a matching checksum: refused when the index opens, not by numpy at the first query.
    import shutil

    import numpy as np

    from citator.errors import IndexDirError
    from citator.stance.retrieve.index_files import record_files

    index = tmp_path / "index"
    shutil.copytree(trained_index, index, ignore=shutil.ignore_patterns("service"))
    manifest = json.loads((index / "manifest.json").read_text())
    data = index / manifest["data_dir"]
    vectors = data / "memory" / "memory_vectors.npy"
    np.save(vectors, np.zeros((len(np.load(vectors)), 10), dtype=np.float16))
    manifest["files"] = record_files(data)
    (index / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IndexDirError, match=r"memory_vectors.npy: vectors of shape \(\d+, 10\), not of width"):
        StanceIndex.open(index)
