"""Every way a strategy can misbehave fails only its own query (scored zero, reason recorded); others go on."""

from __future__ import annotations

import pytest

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
    for q in pool:
        if q.query_id != TARGET:
            good = by_id[q.query_id]
            assert good.failure is None
            assert list(good.ids) == [c.id for c in q.candidates[:10]]


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


def test_a_command_that_cannot_start_fails_the_query_not_the_runner(tiny_llm, pool, short_limits, script) -> None:  # noqa: ANN001
    runner = Runner(tiny_llm, ["/nonexistent/strategy"], short_limits)
    outcome = runner.run_query(pool[0])
    # Popen's own exec fails (runner_error), or, behind unshare/setpriv, their exec does (exit code 127).
    assert outcome.failed and outcome.failure.kind in ("runner_error", "crash")


def test_without_the_process_filter_a_child_s_cpu_is_still_metered(tiny_llm, pool, short_limits, script,  # noqa: ANN001
                                                                  monkeypatch) -> None:  # noqa: ANN001
    # Where no seccomp filter can be installed, the strategy's session is scanned: a forked child that burns CPU
    # is counted and the query fails on CPU, as before the filter.
    import citator.rerank.runner as runner_module

    monkeypatch.setattr(runner_module.no_processes, "available", lambda: False)
    runner = Runner(tiny_llm, script("misbehave.py", "fork_cpu"), short_limits)
    assert runner.single_process is False
    outcome = runner.run_query(next(q for q in pool if q.query_id == TARGET))
    assert outcome.failure is not None and outcome.failure.kind == "cpu", outcome.failure
