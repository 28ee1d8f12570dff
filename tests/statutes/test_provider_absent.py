"""A provider that is not there costs nothing; a run whose every request failed says so and exits non-zero."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures.servers import free_port
from fixtures.suites import write_suite

from citator.cli.main import main

MODEL = "fake-grader-2026-01-01"


@pytest.fixture
def bench(tmp_path: Path, nrs_sections: Path, nrs_suite: Path) -> Callable[..., int]:
    suite = write_suite(tmp_path / "suite.jsonl", nrs_suite, ["nrs-dev-10", "nrs-exact-01"])

    def run(base_url: str, *extra: str, version: str = MODEL) -> int:
        return main(["bench", "statutes", "--corpus", str(nrs_sections), "--suite", str(suite), "--provider", "openai",
                     "--base-url", base_url, "--model-name", "fake", "--model-version", version,
                     "--api-key-env", "CITATOR_NO_SUCH_KEY", "--out", str(tmp_path / "run"), *extra])

    return run


def _spent(out: Path) -> list[Path]:
    return [*out.glob("receipts/*"), *out.glob("attempts.jsonl")]


def test_an_absent_server_is_found_before_any_receipt(bench, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert bench(f"http://127.0.0.1:{free_port()}/v1") == 2
    err = capsys.readouterr().err
    assert err.startswith("ProviderError: ") and err.count("\n") == 1
    assert "did not answer" in err and "no budget was spent" in err
    assert _spent(tmp_path / "run") == []


def test_a_model_the_server_does_not_serve_is_found_before_any_receipt(  # type: ignore[no-untyped-def]
        bench, fake_server, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base_url, log = fake_server(0.0)
    assert bench(base_url, version="gpt-9") == 2
    assert "does not serve model 'gpt-9'" in capsys.readouterr().err
    assert _spent(tmp_path / "run") == [] and not log.exists()


def test_every_request_failing_exits_non_zero_after_the_summary(  # type: ignore[no-untyped-def]
        bench, fake_server, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base_url, _ = fake_server(0.0, "fail")
    assert bench(base_url) == 1
    captured = capsys.readouterr()
    assert "provider requests: 8" in captured.out
    assert "every ranking request failed (8 requests" in captured.err
    out = tmp_path / "run"
    for name in ("manifest.json", "pool.jsonl", "failures.jsonl", "usage.json", "metrics.json", "report.md",
                 "report.html", "attempts.jsonl"):
        assert f"wrote {out / name}\n" in captured.out
    assert f"wrote 8 receipt file(s) in {out / 'receipts'}" in captured.out
    assert "HTTP 500: the model is still loading" in (out / "failures.jsonl").read_text()


def test_a_good_run_exits_zero_and_lists_only_what_it_wrote(  # type: ignore[no-untyped-def]
        bench, fake_server, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base_url, _ = fake_server(0.0)
    assert bench(base_url) == 0
    assert "wrote 8 receipt file(s)" in capsys.readouterr().out
    assert bench(base_url) == 0  # resumed: every receipt reused, none rewritten
    again = capsys.readouterr().out
    assert "receipt file" not in again and f"wrote {tmp_path / 'run' / 'metrics.json'}" in again
