"""`citator demo-model`: a machinery-only Qwen3, the same from the same seed, labelled as such, written without
taking the place of anything that is not one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citator.cli.main import main
from citator.models.demo_qwen3 import MARK, machinery_only

pytestmark = pytest.mark.slow


def test_the_model_is_labelled_and_made_again_from_its_seed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    assert main(["demo-model", "--out", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err
    assert err.startswith(f"wrote {tmp_path / 'a'}: a machinery-only Qwen3 causal LM") and "mean nothing" in err
    config = json.loads((tmp_path / "a" / "config.json").read_text())
    assert "random weights" in config[MARK] and machinery_only(tmp_path / "a") == config[MARK]
    assert "Not a model" in (tmp_path / "a" / "README.md").read_text()
    # The real tokenizer: Qwen3's ids and chat template; the model loads offline.
    tokenizer = AutoTokenizer.from_pretrained(tmp_path / "a", local_files_only=True)
    assert tokenizer.convert_tokens_to_ids("<|im_start|>") == 151644
    model = AutoModelForCausalLM.from_pretrained(tmp_path / "a", local_files_only=True)
    assert type(model).__name__ == "Qwen3ForCausalLM"

    weights = (tmp_path / "a" / "model.safetensors").read_bytes()
    assert main(["demo-model", "--out", str(tmp_path / "a")]) == 0  # its own folder: written again, the same
    assert (tmp_path / "a" / "model.safetensors").read_bytes() == weights
    assert main(["demo-model", "--out", str(tmp_path / "b"), "--seed", "1"]) == 0
    assert (tmp_path / "b" / "model.safetensors").read_bytes() != weights
    assert not [p for p in (tmp_path / "a").iterdir() if p.name.startswith(".")]  # no work folder left behind


def test_a_folder_holding_anything_else_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    real = tmp_path / "Qwen3-1.7B"
    real.mkdir()
    (real / "config.json").write_text('{"model_type": "qwen3"}')
    (real / "model.safetensors").write_bytes(b"real weights")
    assert main(["demo-model", "--out", str(real)]) == 2
    assert capsys.readouterr().err.startswith(f"OutputError: {real}: holds files and is no machinery-only model")
    assert (real / "model.safetensors").read_bytes() == b"real weights" and len(list(real.iterdir())) == 2
    (tmp_path / "file").write_text("x")
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "nowhere")
    for target in (tmp_path / "file", link):
        assert main(["demo-model", "--out", str(target)]) == 2
        assert capsys.readouterr().err.startswith(f"OutputError: {target}: ")
    assert (tmp_path / "file").read_text() == "x" and not (tmp_path / "nowhere").exists()
    assert machinery_only(real) is None and machinery_only(tmp_path / "missing") is None
