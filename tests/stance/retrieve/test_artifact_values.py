"""Values read back from a trained model's files are checked when read, not where a search first trips on them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from citator.errors import ArtifactError, ConfigError, IndexDirError
from citator.stance.retrieve.doc_embedding import DELTAS, DOCUMENTS, DocumentOffsets
from citator.stance.retrieve.ranker import FeatureMismatch, LinearRanker, load_ranker

LINEAR = {"kind": "linear", "features": ["bm25:norm", "dense:norm"], "mean": [0.0, 0.1], "scale": [1.0, 2.0],
          "weights": [0.5, -0.25], "bias": 0.1, "candidates": 50}


@pytest.mark.parametrize("change", [
    {"weights": ["x", "y"]}, {"mean": [0.0]}, {"scale": [1.0, float("nan")]}, {"bias": "0"}, {"bias": True},
    {"features": [1, 2]}, {"features": []}, {"candidates": 0}, {"candidates": "many"},
])
def test_a_linear_ranker_with_values_of_another_kind_is_refused(tmp_path: Path, change: dict) -> None:
    path = tmp_path / "ranker.json"
    path.write_text(json.dumps({**LINEAR, **change}))
    with pytest.raises(ConfigError, match="ranker.json: not a ranker file"):
        load_ranker(path)


@pytest.mark.parametrize("text", ["[]", '{"kind": "lambdamart", "features": [3], "model": "tree"}',
                                  '{"kind": "lambdamart", "features": ["a"], "model": 5}',
                                  '{"kind": "linear", "bias": ' + "9" * 400 + "}"])
def test_other_shapes_are_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "ranker.json"
    path.write_text(text)
    with pytest.raises(ConfigError, match="ranker.json: not a ranker file"):
        load_ranker(path)


def test_a_good_linear_ranker_scores_and_a_foreign_one_is_index_damage(tmp_path: Path) -> None:
    path = tmp_path / "ranker.json"
    path.write_text(json.dumps(LINEAR))
    ranker = load_ranker(path)
    assert isinstance(ranker, LinearRanker) and ranker.weights == (0.5, -0.25)
    x = np.ones((1, 3, 2), dtype=np.float32)
    assert ranker.score(["bm25:norm", "dense:norm"], x).shape == (1, 3)
    with pytest.raises(FeatureMismatch, match="ranker was not trained for this index") as caught:
        ranker.score(["bm25:norm", "other:norm"], x)
    assert isinstance(caught.value, IndexDirError)  # one line and exit 2 at the command line


def _deltas(tmp_path: Path, rows: list[str], array: np.ndarray) -> Path:
    (tmp_path / DOCUMENTS).write_text("".join(r + "\n" for r in rows))
    np.save(tmp_path / DELTAS, array)
    return tmp_path


@pytest.mark.parametrize("rows, array, message", [
    (['{"doc_id": "d1", "title": "T"}'], np.zeros((1, 3), np.float32), "shape (1, 3): expected finite offsets"),
    (['{"doc_id": "d1", "title": "T"}'], np.full((1, 4), np.nan, np.float32), "holds NaN or infinite values"),
    (['{"doc_id": 5, "title": "T"}'], np.zeros((1, 4), np.float32), 'field "doc_id": expected a string'),
    (['{"doc_id": "d1"}'], np.zeros((1, 4), np.float32), 'field "title"'),
    (['{"doc_id": "d1", "title": "T"}'], np.zeros((2, 4), np.float32), "shape (2, 4)"),
])
def test_document_offsets_that_do_not_fit_are_refused(tmp_path: Path, rows: list[str], array: np.ndarray,
                                                      message: str) -> None:
    with pytest.raises(ArtifactError) as caught:
        DocumentOffsets.load(_deltas(tmp_path, rows, array), 4)
    assert message in str(caught.value)


def test_fitting_offsets_move_their_document() -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        base = np.eye(2, 4, dtype=np.float32)
        offsets = DocumentOffsets.load(_deltas(Path(tmp), ['{"doc_id": "d1", "title": "T"}'],
                                               np.ones((1, 4), np.float32)), 4)
        assert offsets is not None
        moved = offsets.vectors(["d1", "d2"], ["T", "U"], base)
    assert not np.allclose(moved[0], base[0]) and np.allclose(moved[1], base[1])
