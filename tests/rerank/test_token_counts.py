"""Token counts are the real Qwen3 tokenizer's, with the chat template and thinking disabled."""

from __future__ import annotations

from pathlib import Path

import pytest

from citator.rerank.strategies import listwise, pointwise


@pytest.fixture(scope="module")
def tokenizer(qwen3_tokenizer_dir: Path):  # noqa: ANN201
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(qwen3_tokenizer_dir, local_files_only=True)


MESSAGES = [
    [{"role": "user", "content": "Hi"}],
    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Query: axon terminals\n[A] text é ü"}],
    listwise.messages("causes of left ventricular hypertrophy", ["one passage", "another, longer passage â\x80\x99s"]),
]


@pytest.mark.parametrize("messages", MESSAGES)
def test_count_equals_the_tokenizer_with_chat_template(tiny_llm, tokenizer, messages: list) -> None:  # noqa: ANN001
    ids = tokenizer.apply_chat_template(messages, tokenize=True, add_generation_prompt=True, enable_thinking=False)
    ids = ids["input_ids"] if isinstance(ids, dict) or hasattr(ids, "keys") else ids
    assert tiny_llm.count(messages) == len(ids)


def test_count_of_a_known_prompt(tiny_llm, tokenizer) -> None:  # noqa: ANN001
    # "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n" in Qwen3 tokens.
    text = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
    assert tiny_llm.count([{"role": "user", "content": "Hi"}]) == len(tokenizer(text, add_special_tokens=False)["input_ids"])


def test_generation_reports_the_counted_input_and_its_output(tiny_llm) -> None:  # noqa: ANN001
    msgs = [{"role": "user", "content": "Is this passage relevant? yes or no"}]
    gen = tiny_llm.generate(msgs, 3, ["yes", "no"])
    assert gen.input_tokens == tiny_llm.count(msgs)
    assert 1 <= gen.output_tokens <= 3
    assert set(gen.logprobs) == {"yes", "no"} and gen.multi_token == ()


def test_listwise_labels_and_pointwise_answers_are_single_tokens(tokenizer) -> None:  # noqa: ANN001
    for s in [*listwise.LABELS, *pointwise.YES, *pointwise.NO]:
        assert len(tokenizer(s, add_special_tokens=False)["input_ids"]) == 1, s
