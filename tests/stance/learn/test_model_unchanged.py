"""Training on the test fixture gives the very model the code before the seam between retrieval and training
(commit 1ad3c59) gave: the same bytes in every file of the model, the same fusion, weights and ranker, and the same
dev scores training chose them by.

RECORDED was recorded by running this file's `model_identity` and `train_on_fixture` at commit 1ad3c59 (this
file copied into that checkout, its own venv from `make install-test`, `pytest -k recorded -s`), twice, with the
same value, on the machine the suite runs on (x86-64 AMD EPYC, 2 cores, torch 2.13.0 CPU). Training runs in fp32, in
this one process, on one thread of torch and of BLAS (another test may have left either at another count, which
orders sums otherwise), so no bf16 unit, lane or thread count decides a bit; a CPU whose float kernels order sums
otherwise (another vector width) may round a weight differently, and then the value is recorded again there.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

RECORDED = "0a0fdf70358d1b2e8bb613f77e9ac5f2e33106c9b8253ee2f4bba48edf39a6c9"


def train_on_fixture(small_stance_set: dict[str, Path], work: Path) -> Path:
    """`citator train` on the fixture, two thirds of its propositions as train (as tests/fixtures/stance.py's
    small_artifacts), one epoch, fp32, in this process on one thread."""
    import torch
    from threadpoolctl import threadpool_limits

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpool_limits(limits=1):
            return _train(small_stance_set, work)
    finally:
        torch.set_num_threads(threads)


def _train(small_stance_set: dict[str, Path], work: Path) -> Path:
    from citator.cli.main import main

    rows = [json.loads(line) for line in small_stance_set["queries"].open()]
    props = sorted({r["proposition_id"] for r in rows})
    for r in rows:
        r["split"] = "train" if props.index(r["proposition_id"]) % 3 else "dev"
    queries = work / "queries.jsonl"
    queries.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = work / "artifacts"
    assert main(["train", "--corpus", str(small_stance_set["corpus"]), "--queries", str(queries),
                 "--ground-truth", str(small_stance_set["gt"]), "--out", str(out), "--epochs", "1",
                 "--precision", "fp32", "--no-side-by-side"]) == 0
    return out


def model_identity(artifacts: Path) -> str:
    """sha256 over what identifies a trained model: its fusion, weights and ranker kind, every file's sha256 (the
    encoder's weights, the memory, the document offsets, the ranker), and the dev scores it was chosen by (paths
    and timings left out)."""
    manifest = json.loads((artifacts / "manifest.json").read_text())
    identity = {"fusion": manifest["fusion"], "weights": manifest["weights"], "ranker": manifest["ranker"],
                "files": {name: entry["sha256"] for name, entry in sorted(manifest["files"].items())},
                "dev_ndcg@10": manifest["report"]["dev_ndcg@10"],
                "stance_contrast": manifest["report"]["stance_contrast"]}
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()


@pytest.mark.slow
def test_training_on_the_fixture_gives_the_recorded_model(small_stance_set: dict[str, Path], tmp_path: Path) -> None:
    found = model_identity(train_on_fixture(small_stance_set, tmp_path))
    print(f"model identity: {found}")
    assert found == RECORDED
