"""Receipts are validated when read back, and spend is counted from the append-only attempts journal."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures.suites import write_suite

from citator.statutes.receipts import Budget, ReceiptStore
from citator.statutes.run import RunConfig, run_statutes
from citator.cli.main import main
from citator.errors import ReceiptError
from citator.statutes.providers.openai_http import OpenAIHTTPProvider

MODEL = "fake-grader-2026-01-01"


def _served(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


@pytest.fixture
def bench(tmp_path: Path, nrs_sections: Path, nrs_suite: Path,
          fake_server: Callable[..., tuple[str, Path]]) -> Callable[[int], dict]:
    """Run one ranking query (8 batches) against the counting fake server under a request cap."""
    base_url, log = fake_server(0.0)
    suite = write_suite(tmp_path / "suite.jsonl", nrs_suite, ["nrs-dev-10"])
    provider = OpenAIHTTPProvider(base_url, "fake", MODEL, api_key_env="CITATOR_NO_SUCH_KEY")

    def run(max_requests: int) -> dict:
        return run_statutes(RunConfig(nrs_sections, suite, tmp_path / "run", budget=Budget(max_requests)), provider)

    run.log = log  # type: ignore[attr-defined]
    run.base_url = base_url  # type: ignore[attr-defined]
    run.out = tmp_path / "run"  # type: ignore[attr-defined]
    return run


def _receipts(out: Path) -> list[Path]:
    return sorted((out / "receipts").glob("*.json"))


def _edit(path: Path, **fields: object) -> None:
    receipt = json.loads(path.read_text())
    for name, value in fields.items():
        if value is ...:
            receipt.pop(name)
        else:
            receipt[name] = value
    path.write_text(json.dumps(receipt))


def test_spend_is_counted_from_the_journal(bench) -> None:  # type: ignore[no-untyped-def]
    metrics = bench(3)
    assert metrics["provider_requests"] == 3 and _served(bench.log) == 3
    lines = [json.loads(x) for x in (bench.out / "attempts.jsonl").read_text().splitlines()]
    assert [x["event"] for x in lines] == ["attempt", "outcome"] * 3
    ledger = ReceiptStore(bench.out / "receipts").ledger()
    assert ledger.attempts == 3
    assert ledger.input_tokens == sum(x["prompt_tokens"] for x in lines if x["event"] == "outcome")
    again = bench(5)  # resumes: 3 reused, 2 more sent
    assert again["provider_requests"] == 5 and _served(bench.log) == 5


@pytest.mark.parametrize(("fields", "field"), [
    ({"attempts": -100}, "attempts"),
    ({"attempts": "many"}, "attempts"),
    ({"attempts": True}, "attempts"),
    ({"preflight_tokens": ...}, "preflight_tokens"),
    ({"preflight_tokens": 1}, "preflight_tokens"),
    ({"status": "paid"}, "status"),
    ({"request": {"model": "other"}}, "request"),
    ({"http_status": "200"}, "http_status"),
])
def test_a_tampered_receipt_is_one_clear_error_and_nothing_is_sent(bench, fields: dict, field: str) -> None:  # type: ignore[no-untyped-def]
    bench(3)
    _edit(_receipts(bench.out)[0], **fields)
    with pytest.raises(ReceiptError) as caught:
        bench(3)
    assert f'field "{field}"' in str(caught.value) and "receipts/" in str(caught.value)
    assert _served(bench.log) == 3


def test_receipts_cannot_roll_the_request_budget_back(bench) -> None:  # type: ignore[no-untyped-def]
    bench(3)
    # A receipt that agrees with itself but claims fewer attempts than the journal recorded.
    path = _receipts(bench.out)[0]
    receipt = json.loads(path.read_text())
    path.write_text(json.dumps({**receipt, "status": "attempted", "attempts": 1}))
    (bench.out / "attempts.jsonl").unlink()
    with pytest.raises(ReceiptError) as caught:
        bench(3)
    assert 'field "attempts"' in str(caught.value)
    assert _served(bench.log) == 3


def test_a_deleted_receipt_is_an_integrity_error_not_a_resend(bench, tmp_path: Path, nrs_sections: Path,  # type: ignore[no-untyped-def]
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    bench(3)
    _receipts(bench.out)[1].unlink()
    with pytest.raises(ReceiptError) as caught:
        bench(8)
    assert "was attempted but its receipt" in str(caught.value)
    assert _served(bench.log) == 3
    # Through the CLI: one line, exit 2.
    rc = main(["bench", "statutes", "--corpus", str(nrs_sections), "--suite", str(tmp_path / "suite.jsonl"),
               "--provider", "openai", "--base-url", bench.base_url, "--model-name", "fake",
               "--model-version", MODEL, "--api-key-env", "CITATOR_NO_SUCH_KEY", "--out", str(bench.out)])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("ReceiptError: attempts.jsonl line") and err.count("\n") == 1
    assert _served(bench.log) == 3


def test_a_torn_journal_line_and_an_unsent_receipt_resume_cleanly(bench) -> None:  # type: ignore[no-untyped-def]
    bench(3)
    journal = bench.out / "attempts.jsonl"
    with journal.open("ab") as handle:
        handle.write(b'{"event":"attempt","request_ha')  # killed mid-append
    metrics = bench(4)
    assert metrics["provider_requests"] == 4 and _served(bench.log) == 4
    assert all(json.loads(x) for x in journal.read_text().splitlines())
    # Killed after its receipt was written but before it was journaled (so before it was sent): sent as new.
    last = max(_receipts(bench.out), key=lambda p: p.stat().st_mtime_ns)
    lines = journal.read_text().splitlines()
    digest = last.stem
    journal.write_text("".join(x + "\n" for x in lines if json.loads(x)["request_hash"] != digest))
    _edit(last, status="attempted", http_status=..., finished_at=..., response=..., usage=..., error=...)
    metrics = bench(4)
    assert metrics["provider_requests"] == 4 and _served(bench.log) == 5
    assert metrics["failures"].get("attempted_unfinished") is None


def test_a_manifest_that_is_not_an_object_is_a_clear_error(bench) -> None:  # type: ignore[no-untyped-def]
    bench(1)
    (bench.out / "manifest.json").write_text("[]")
    with pytest.raises(ReceiptError, match="no fingerprint of the run.s inputs"):
        bench(1)
