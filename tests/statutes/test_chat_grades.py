"""Responses are validated against the schema; grade distributions come from log-probs or are flagged parsed."""

from __future__ import annotations

import math

import pytest

from citator.providers.grades import InvalidResponse, parse_chat_grades, usage_of


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
