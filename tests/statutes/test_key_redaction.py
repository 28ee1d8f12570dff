"""The API key never reaches a stored file: not verbatim, not encoded, not a long fragment of it."""

from __future__ import annotations

import base64
from pathlib import Path
from urllib.parse import quote

import pytest
from fixtures.suites import write_suite

from citator.cli.main import main
from citator.statutes.providers.base import MIN_FRAGMENT, Redactor

# Characters that URL-encoding and the two base64 alphabets all treat differently.
KEY = "sk-proj-Ab+c/d=e?f&g~0123456789XYZ_qrs"


def _leaks(text: str, key: str) -> list[str]:
    """Every way `key` shows in `text`, computed apart from the code under test."""
    raw = key.encode()
    forms = [key, quote(key, safe=""), raw.hex()]
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        forms += [encode(raw).decode(), encode(raw[1:]).decode()[:-4], encode(raw[2:]).decode()[:-4]]
    found = [f for f in forms if f in text]
    found += [key[i:i + MIN_FRAGMENT] for i in range(len(key) - MIN_FRAGMENT + 1) if key[i:i + MIN_FRAGMENT] in text]
    return found


@pytest.mark.parametrize("echo", [
    KEY, quote(KEY, safe=""), base64.b64encode(KEY.encode()).decode().rstrip("="),
    base64.urlsafe_b64encode(KEY.encode()).decode(), base64.b64encode(b"Basic user:" + KEY.encode()).decode(),
    KEY[:12] + "…", "…" + KEY[-8:], KEY.encode().hex(),
])
def test_each_form_is_replaced(echo: str) -> None:
    redacted = Redactor(KEY).text(f"Invalid API key: {echo} (request 42)")
    assert _leaks(redacted, KEY) == [] and redacted.startswith("Invalid API key: ") and "(request 42)" in redacted
    assert "***" in redacted


def test_text_that_only_shares_short_runs_with_the_key_is_kept() -> None:
    text = "sk-proj and 0123456 and XYZ are not the key"
    assert Redactor(KEY).text(text) == text
    assert Redactor(None).text(KEY) == KEY


def test_a_hostile_server_echoing_the_key_leaves_no_trace_in_the_run(
        tmp_path: Path, nrs_sections: Path, nrs_suite: Path, fake_server, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    base_url, _ = fake_server(0.0, "echo")
    monkeypatch.setenv("CITATOR_HOSTILE_KEY", KEY)
    suite = write_suite(tmp_path / "suite.jsonl", nrs_suite, ["nrs-dev-10", "nrs-out-01"])
    out = tmp_path / "run"
    rc = main(["bench", "statutes", "--corpus", str(nrs_sections), "--suite", str(suite), "--provider", "openai",
               "--base-url", base_url, "--model-name", "fake", "--model-version", "fake-grader-2026-01-01",
               "--api-key-env", "CITATOR_HOSTILE_KEY", "--out", str(out)])
    assert rc == 0  # some requests come back 200 (with the key in their answer), the rest as 401 failures
    failures = (out / "failures.jsonl").read_text()
    assert "HTTP 401: Invalid API key: ***" in failures
    stored = [p for p in out.rglob("*") if p.is_file()]
    assert {"failures.jsonl", "report.md", "attempts.jsonl"} <= {p.name for p in stored}
    assert len(list(out.glob("receipts/*.json"))) == 16
    for path in stored:
        text = path.read_bytes().decode("utf-8", "replace")
        assert _leaks(text, KEY) == [], path
