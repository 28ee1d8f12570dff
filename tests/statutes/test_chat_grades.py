"""Responses are validated against the schema; grade distributions come from log-probs or are flagged parsed."""

from __future__ import annotations

import math

import pytest

from citator.statutes.providers.grades import InvalidResponse, parse_chat_grades, usage_of


def _body(content: str, entries: list[dict] | None = None, usage: dict | None = None) -> dict:
    return {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                     "logprobs": {"content": entries} if entries is not None else None}],
        "usage": usage if usage is not None else {"prompt_tokens": 10, "completion_tokens": 5},
    }


def _tok(text: str, top: dict[str, float] | None = None) -> dict:
    return {"token": text, "logprob": 0.0,
            "top_logprobs": [{"token": t, "logprob": lp} for t, lp in (top or {}).items()]}


def test_distribution_from_logprobs_at_the_grade_position() -> None:
    content = '{"C1": 3, "C2": 0}'
    entries = [_tok('{"'), _tok("C"), _tok("1"), _tok('":'), _tok(" "),
               _tok("3", {"3": math.log(0.6), "2": math.log(0.3), "0": math.log(0.1)}),
               _tok(', "'), _tok("C"), _tok("2"), _tok('":'), _tok(" "),
               _tok("0", {"0": math.log(0.5), "1": math.log(0.25), "x": math.log(0.25)}), _tok("}")]
    grades = parse_chat_grades(_body(content, entries), ["C1", "C2"])
    c1, c2 = grades["C1"], grades["C2"]
    assert c1.source == "logprobs" and c1.probs == pytest.approx((0.1, 0.0, 0.3, 0.6))
    assert c1.p_useful == pytest.approx(0.9) and c1.confidence == pytest.approx(0.6) and c1.grade == 3
    # Only grade digits count, renormalised: 0.5 / 0.75 and 0.25 / 0.75.
    assert c2.probs == pytest.approx((2 / 3, 1 / 3, 0.0, 0.0)) and c2.grade == 0


def test_without_logprobs_the_answer_is_one_hot_and_flagged() -> None:
    grades = parse_chat_grades(_body(' {"C2": 1, "C1": 2}\n'), ["C1", "C2"])
    assert grades["C1"].source == "parsed" and grades["C1"].probs == (0.0, 0.0, 1.0, 0.0)
    assert grades["C2"].grade == 1 and grades["C2"].p_useful == 0.0


@pytest.mark.parametrize(
    "content",
    ['```json\n{"C1": 2}\n```', '{"C1": 2, "C2": 1}', '{"C1": 4}', '{"C1": "2"}', '{"C1": true}', "[2]", "grade 2", ""],
)
def test_invalid_answers_are_failures_not_repaired(content: str) -> None:
    with pytest.raises(InvalidResponse):
        parse_chat_grades(_body(content), ["C1"])


@pytest.mark.parametrize("body", [None, "text", {"choices": []}, {"choices": [{"message": {}}]}])
def test_invalid_envelopes(body: object) -> None:
    with pytest.raises(InvalidResponse):
        parse_chat_grades(body, ["C1"])


def test_usage_must_be_reported() -> None:
    assert usage_of(_body("{}")).prompt_tokens == 10
    with pytest.raises(InvalidResponse):
        usage_of({"choices": []})
    with pytest.raises(InvalidResponse):
        usage_of(_body("{}", usage={"prompt_tokens": -1, "completion_tokens": 0}))


def test_positions_follow_real_qwen3_tokens(qwen3_tokenizer_dir) -> None:  # type: ignore[no-untyped-def]
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(qwen3_tokenizer_dir, local_files_only=True)
    content = '{"C1": 3, "C2": 0, "C3": 2}'
    pieces = [tok.decode([i]) for i in tok(content, add_special_tokens=False)["input_ids"]]
    assert "".join(pieces) == content
    entries = [_tok(p, {p.strip(): math.log(0.7), "1": math.log(0.3)} if p.strip() in "0123" and p.strip() else None)
               for p in pieces]
    grades = parse_chat_grades(_body(content, entries), ["C1", "C2", "C3"])
    assert {k: v.source for k, v in grades.items()} == {"C1": "logprobs", "C2": "logprobs", "C3": "logprobs"}
    assert grades["C1"].probs == pytest.approx((0.0, 0.3, 0.0, 0.7))


def test_space_attached_digit_tokens_add_up() -> None:
    content = '{"C1": 2}'
    entries = [_tok('{"C1":'), _tok(" 2", {" 2": math.log(0.4), "2": math.log(0.2), " 3": math.log(0.1)}), _tok("}")]
    grade = parse_chat_grades(_body(content, entries), ["C1"])["C1"]
    assert grade.source == "logprobs" and grade.probs == pytest.approx((0.0, 0.0, 6 / 7, 1 / 7))
