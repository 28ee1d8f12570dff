"""The model fixtures reload offline and really are Qwen3 / MiniLM."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_vendored_tokenizer_is_the_real_qwen3(qwen3_tokenizer_dir: Path) -> None:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(qwen3_tokenizer_dir, local_files_only=True)
    assert tok.convert_tokens_to_ids("<|im_start|>") == 151644
    assert tok.convert_tokens_to_ids("<think>") == 151667
    rendered = tok.apply_chat_template(
        [{"role": "user", "content": "Hi"}], tokenize=False, add_generation_prompt=True, enable_thinking=False
    )
    assert rendered.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")


@pytest.mark.parametrize("kind,cls", [("causal", "Qwen3ForCausalLM"), ("embedding", "Qwen3Model")])
def test_tiny_qwen3_reloads_offline(request: pytest.FixtureRequest, kind: str, cls: str) -> None:
    from transformers import AutoConfig, AutoModel, AutoModelForCausalLM

    path = request.getfixturevalue(f"tiny_qwen3_{kind}_dir")
    assert AutoConfig.from_pretrained(path, local_files_only=True).model_type == "qwen3"
    loader = AutoModelForCausalLM if kind == "causal" else AutoModel
    model = loader.from_pretrained(path, local_files_only=True)
    assert type(model).__name__ == cls


def test_minilm_is_shipped_by_the_package(minilm_dir: Path) -> None:
    assert (minilm_dir / "config.json").is_file()
    assert any(minilm_dir.glob("*.safetensors")) or any(minilm_dir.glob("*.bin"))
