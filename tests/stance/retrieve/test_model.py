"""The trained stance model's record: what `save` writes, `load` reads back whole or refuses with "retrain"."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from citator.errors import IndexDirError
from citator.stance.retrieve.model import FORMAT, BaseEncoder, StanceModel


def saved(root: Path, **fields: Any) -> StanceModel:
    """A model folder with small stand-ins for its parts, recorded by save()."""
    (root / "encoder").mkdir(parents=True)
    (root / "encoder" / "config.json").write_text("{}")
    (root / "encoder" / "model.safetensors").write_bytes(b"weights")
    (root / "memory").mkdir()
    (root / "memory" / "memory.jsonl").write_text('{"proposition_id": "p"}\n')
    (root / "ranker.json").write_text("{}")
    (root / "work").mkdir()
    (root / "work" / "cache.npy").write_bytes(b"scratch")  # training's scratch: neither recorded nor read
    settings = {"fusion": "learned", "weights": {"ft_dense": 1.0}, "ranker": "lambdamart", "complete": True,
                "report": {"timings": {"total_seconds": 1.0}}, **fields}
    return StanceModel(root, BaseEncoder("/models/minilm", "minilm", "a" * 64), **settings).save()


def test_save_records_every_shipped_file_and_load_reads_the_same_model(tmp_path: Path) -> None:
    model = saved(tmp_path / "m")
    assert set(model.files) == {"encoder/config.json", "encoder/model.safetensors", "memory/memory.jsonl",
                                "ranker.json"}
    loaded = StanceModel.load(tmp_path / "m")
    assert loaded == model
    assert loaded.ranker_path == tmp_path / "m" / "ranker.json"
    assert json.loads(loaded.manifest_path.read_text())["format"] == FORMAT


def test_an_unfinished_model_is_refused_unless_training_asks_for_it(tmp_path: Path) -> None:
    saved(tmp_path / "m", complete=False, fusion="interpolate", ranker="none")
    with pytest.raises(IndexDirError, match="training did not finish"):
        StanceModel.load(tmp_path / "m")
    assert StanceModel.load(tmp_path / "m", allow_incomplete=True).fusion == "interpolate"


def damage_weights(root: Path) -> None:
    (root / "encoder" / "model.safetensors").write_bytes(b"Weights")  # same size, other bytes


def cut_memory(root: Path) -> None:
    (root / "memory" / "memory.jsonl").write_text("")


def add_file(root: Path) -> None:
    (root / "encoder" / "extra.bin").write_bytes(b"x")


def drop_ranker(root: Path) -> None:
    (root / "ranker.json").unlink()


def link_ranker(root: Path) -> None:
    (root / "ranker.json").unlink()
    (root / "ranker.json").symlink_to(root / "encoder" / "config.json")


def edit_manifest(change: dict[str, Any]):  # type: ignore[no-untyped-def]
    def edit(root: Path) -> None:
        path = root / "manifest.json"
        obj = json.loads(path.read_text())
        path.write_text(json.dumps({k: v for k, v in {**obj, **change}.items() if v is not ...}))
    return edit


@pytest.mark.parametrize("damage, message", [
    (damage_weights, "model.safetensors: content differs"),
    (cut_memory, "memory.jsonl: 0 bytes"),
    (add_file, "extra.bin: not recorded"),
    (drop_ranker, "ranker.json: missing"),
    (link_ranker, "ranker.json: not a regular file"),
    (edit_manifest({"format": "citator-artifacts/1"}), "format 'citator-artifacts/1' is not"),
    (edit_manifest({"refuter_slots": 10}), "unknown field 'refuter_slots'"),
    (edit_manifest({"fusion": "interpolate"}), "fusion 'interpolate' with ranker 'lambdamart'"),
    (edit_manifest({"fusion": "rrf"}), "fusion 'rrf' is not one of"),
    (edit_manifest({"weights": {"ft_dense": "1"}}), "weights must map signal names to finite numbers"),
    (edit_manifest({"weights": {"ft_dense": float("nan")}}), "weights must map"),
    (edit_manifest({"complete": "yes"}), "complete must be true or false"),
    (edit_manifest({"base_encoder": {"model_id": "minilm"}}), "base_encoder must give path, model_id and sha256"),
    (edit_manifest({"files": {}}), "no file table"),
    (edit_manifest({"files": {"../x": {"bytes": 1, "sha256": "0" * 64}}}), "entry '../x' is malformed"),
    (edit_manifest({"report": []}), "report must be an object"),
    (edit_manifest({"files": ...}), "no file table"),
])
def test_a_damaged_or_foreign_model_is_refused_with_retrain_in_one_line(tmp_path: Path, damage, message: str  # type: ignore[no-untyped-def]
                                                                        ) -> None:
    saved(tmp_path / "m")
    damage(tmp_path / "m")
    with pytest.raises(IndexDirError) as caught:
        StanceModel.load(tmp_path / "m")
    text = str(caught.value)
    assert message in text and "\n" not in text
    assert "retrain" in text or "citator train" in text


def test_a_folder_that_is_no_model_says_so(tmp_path: Path) -> None:
    with pytest.raises(IndexDirError, match="not a citator model directory"):
        StanceModel.load(tmp_path)
    (tmp_path / "manifest.json").write_text("[1, 2")
    with pytest.raises(IndexDirError, match="unreadable"):
        StanceModel.load(tmp_path)
