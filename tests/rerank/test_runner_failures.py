"""Every way a strategy can misbehave fails only its own query (scored zero, reason recorded); others go on."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from citator.rerank.errors import RerankError
from citator.rerank.runner import Runner

TARGET = "47923"

MODES = {
    "garbage": "garbage",
    "unknown_id": "unknown_id",
    "duplicate_ids": "duplicate_ids",
    "too_many_ids": "too_many_ids",
    "missing_result": "missing_result",
    "cpu": "cpu",
    "slow": "timeout",
    "crash": "crash",
    "oversize": "oversize",
    "bad_request": "bad_request",
    "unknown_candidate": "unknown_id",
    "too_many_requests": "too_many_requests",
    "fork_cpu": "crash",  # the fork is refused (one process, one thread), so the strategy fails there
    "close_stdout": "missing_result",
    "surrogate_id": "unknown_id",
    "terminal_codes_id": "unknown_id",
    "deep_json": "garbage",
    "huge_number": "garbage",
    "role_list": "bad_request",
    "surrogate_content": "bad_request",
    "count_flood": "too_many_requests",
}


@pytest.mark.parametrize("mode", sorted(MODES))
def test_failure_scores_only_that_query_zero(tiny_llm, pool, short_limits, script, mode: str) -> None:  # noqa: ANN001
    runner = Runner(tiny_llm, script("misbehave.py", mode), short_limits)
    outcomes = [runner.run_query(q) for q in pool]
    by_id = {o.query_id: o for o in outcomes}
    bad = by_id[TARGET]
    assert bad.failed and bad.ids == ()
    assert bad.failure.kind == MODES[mode], bad.failure
    assert bad.failure.reason
    if mode == "count_flood":  # stopped by the characters it had counted, before the request cap
        assert "characters of messages to count" in bad.failure.reason, bad.failure
    for q in pool:
        if q.query_id != TARGET:
            good = by_id[q.query_id]
            assert good.failure is None
            assert list(good.ids) == [c.id for c in q.candidates[:10]]


def test_a_strategy_s_words_reach_the_operator_escaped(tiny_llm, pool, short_limits, script) -> None:  # noqa: ANN001
    """An id a strategy sends is quoted in the failure reason escaped: no carriage return or ESC to forge a progress
    line, no lone surrogate to break a UTF-8 ledger."""
    for mode in ("terminal_codes_id", "surrogate_id"):
        outcome = Runner(tiny_llm, script("misbehave.py", mode), short_limits).run_query(
            next(q for q in pool if q.query_id == TARGET))
        reason = outcome.failure.reason
        assert reason.isascii() and reason.isprintable() and ("\\r" in reason or "\\ud800" in reason), reason


def test_cpu_overrun_is_killed_near_the_limit(tiny_llm, pool, short_limits, script) -> None:  # noqa: ANN001
    runner = Runner(tiny_llm, script("misbehave.py", "cpu"), short_limits)
    outcome = runner.run_query(next(q for q in pool if q.query_id == TARGET))
    assert outcome.failure.kind == "cpu"
    # Killed by the meter (polled every 20 ms), long before RLIMIT_CPU's backstop (limit + 2 s).
    assert short_limits.cpu_seconds < outcome.strategy_cpu_seconds < short_limits.cpu_seconds + 1.0


def test_crash_reason_carries_exit_code_and_stderr(tiny_llm, pool, short_limits, script) -> None:  # noqa: ANN001
    runner = Runner(tiny_llm, script("misbehave.py", "crash"), short_limits)
    outcome = runner.run_query(next(q for q in pool if q.query_id == TARGET))
    assert "exit code 1" in outcome.failure.reason
    assert "RuntimeError: strategy bug" in outcome.stderr_tail


def test_a_command_that_cannot_start_is_refused_before_the_first_query(tiny_llm, short_limits) -> None:  # noqa: ANN001
    with pytest.raises(RerankError, match="cannot run as .*no program '/nonexistent/strategy'"):
        Runner(tiny_llm, ["/nonexistent/strategy"], short_limits)
    with pytest.raises(RerankError, match="no program 'no-such-strategy-program'"):
        Runner(tiny_llm, "no-such-strategy-program --flag", short_limits)


def test_a_strategy_its_user_cannot_read_is_refused_before_the_first_query(tiny_llm, short_limits,  # noqa: ANN001
                                                                           scripts_dir: Path, reachable_tmp: Path) -> None:
    # As root the strategy runs as nobody, who cannot enter a 0700 directory; as any user, a file of mode 000 is
    # unreadable to its owner too.
    private = Path(tempfile.mkdtemp(prefix="citator-test-private-"))
    try:
        shutil.copy(scripts_dir / "misbehave.py", private / "mine.py")
        if os.geteuid() != 0:
            os.chmod(private / "mine.py", 0)
        work_root = reachable_tmp
        with pytest.raises(RerankError, match=f"cannot read {private / 'mine.py'}"):
            Runner(tiny_llm, f"python {private / 'mine.py'} none", short_limits, work_root=work_root)
        assert list(work_root.iterdir()) == []  # the run's directory went with the refusal
    finally:
        shutil.rmtree(private, ignore_errors=True)


def test_without_the_process_filter_a_child_s_cpu_is_still_metered(tiny_llm, pool, short_limits, script,  # noqa: ANN001
                                                                  monkeypatch) -> None:  # noqa: ANN001
    # Where no seccomp filter can be installed, the strategy's session is scanned: a forked child that burns CPU
    # is counted and the query fails on CPU, as before the filter.
    import citator.rerank.runner as runner_module

    monkeypatch.setattr(runner_module.syscall_filter, "available", lambda: False)
    runner = Runner(tiny_llm, script("misbehave.py", "fork_cpu"), short_limits)
    assert runner.single_process is False
    outcome = runner.run_query(next(q for q in pool if q.query_id == TARGET))
    assert outcome.failure is not None and outcome.failure.kind == "cpu", outcome.failure


def test_a_run_directory_its_user_cannot_reach_is_one_clear_error(tiny_llm, short_limits, pool) -> None:  # noqa: ANN001
    if os.geteuid() != 0:
        pytest.skip("needs root: a runner's own user reaches its own private directory")
    private = Path(tempfile.mkdtemp(prefix="citator-test-private-"))  # 0700: nobody cannot enter it
    try:
        # Without namespaces of its own the strategy would see the host's private directory: refused up front.
        with pytest.raises(RerankError, match="the run's directory must be reachable by that user"):
            Runner(tiny_llm, "bm25", short_limits, work_root=private, isolate_network=False)
        assert list(private.iterdir()) == []
        # Inside its own namespaces only the run's directory is bound in, under searchable placeholders: the probe
        # runs there too, so what it accepts is what runs.
        from citator.rerank import namespaces
        from citator.rerank.account import sandbox_user

        if namespaces.available(sandbox_user("nobody")):
            runner = Runner(tiny_llm, "bm25", short_limits, work_root=private)
            try:
                assert runner.protections["private_tmp"]
                assert runner.run_query(pool[0]).failure is None
            finally:
                runner.close()
            assert list(private.iterdir()) == []
    finally:
        shutil.rmtree(private, ignore_errors=True)
