"""The byte preflight bounds real Qwen3 token counts and refuses requests that could exceed the budget."""

from __future__ import annotations

from pathlib import Path

from citator.statutes import prompt
from citator.statutes.keyword import KeywordIndex
from citator.statutes.pool import build_pool
from citator.statutes.journal import Journal
from citator.statutes.receipts import Budget, Ledger, ledger_of, preflight_tokens, refusal, request_hash
from citator.data.statutes import read_sections, read_suite
from citator.statutes.providers.base import chat_payload


def _payloads(nrs_sections: Path, nrs_suite: Path) -> list[dict]:
    sections = read_sections(nrs_sections)
    index = KeywordIndex(sections)
    query = read_suite(nrs_suite)[0]
    pool = build_pool(index, query)
    return [chat_payload("m", prompt.messages(query.text, b), prompt.max_tokens(len(b))) for b in prompt.batches(pool.items)]


def test_preflight_bound_is_never_below_real_qwen3_tokens(
    nrs_sections: Path, nrs_suite: Path, qwen3_tokenizer_dir: Path
) -> None:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(qwen3_tokenizer_dir, local_files_only=True)
    for payload in _payloads(nrs_sections, nrs_suite):
        rendered = tok.apply_chat_template(payload["messages"], tokenize=False, add_generation_prompt=True,
                                           enable_thinking=False)
        tokens = len(tok(rendered, add_special_tokens=False)["input_ids"])
        assert tokens <= preflight_tokens(payload)


def test_preflight_refuses_a_request_that_could_exceed_the_token_budget() -> None:
    payload = {"messages": [{"role": "user", "content": "x" * 1000}]}
    bound = preflight_tokens(payload)
    assert bound > 1000
    budget = Budget(max_requests=272, max_input_tokens=5000)
    assert refusal(Ledger(3, 5000 - bound, 0, 0), budget, bound) is None
    why = refusal(Ledger(3, 5000 - bound + 1, 0, 0), budget, bound)
    assert why is not None and "input-token budget" in why


def test_request_cap_is_counted_in_attempts() -> None:
    budget = Budget(max_requests=272)
    assert refusal(Ledger(271, 0, 0, 0), budget, 10) is None
    assert "request budget spent: 272 of 272" in (refusal(Ledger(272, 0, 0, 0), budget, 10) or "")


def test_ledger_charges_the_bound_until_usage_is_reported(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "attempts.jsonl")

    def attempt(digest: str, n: int, bound: int) -> None:
        journal.append({"event": "attempt", "request_hash": digest, "attempt": n, "preflight_tokens": bound,
                        "at": "t"})

    attempt("a" * 64, 1, 900)  # in flight: the bound
    attempt("b" * 64, 1, 800)
    journal.append({"event": "outcome", "request_hash": "b" * 64, "attempt": 1, "status": "failed",
                    "prompt_tokens": None, "completion_tokens": None})
    attempt("b" * 64, 2, 800)  # resent: usage reported
    journal.append({"event": "outcome", "request_hash": "b" * 64, "attempt": 2, "status": "completed",
                    "prompt_tokens": 300, "completion_tokens": 7})
    attempt("c" * 64, 1, 700)
    assert ledger_of(journal.attempts()) == Ledger(4, 900 + 800 + 300 + 700, 300, 7)


def test_request_hash_is_canonical() -> None:
    assert request_hash({"a": 1, "b": [1, 2]}) == request_hash({"b": [1, 2], "a": 1})
