"""The strategy process: unprivileged, own empty writable work dir, no GPU, light SDK, exact reservation rule."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from citator.rerank.interpreter import BOOTSTRAP
from citator.rerank.runner import Runner
from citator.rerank.runtime import copy_sdk
from citator.rerank.strategies import STRATEGIES


def _report(outcome) -> dict:  # noqa: ANN001
    line = next(ln for ln in outcome.stderr_tail.splitlines() if ln.startswith("REPORT "))
    return json.loads(line[len("REPORT ") :])


@pytest.fixture(scope="module")
def probe(tiny_llm, pool, short_limits, script):  # noqa: ANN001, ANN201
    runner = Runner(tiny_llm, script("probe.py"), short_limits)
    outcome = runner.run_query(pool[0])
    assert outcome.failure is None, outcome
    return outcome, _report(outcome), runner


def test_runs_unprivileged_in_an_empty_private_work_dir_without_gpu(probe) -> None:  # noqa: ANN001
    outcome, report, runner = probe
    if os.geteuid() == 0:
        assert report["uid"] == runner.user.uid != 0
    assert report["cwd_listing"] == []
    assert report["home"] == report["cwd"]
    assert report["cuda"] == ""
    if runner.user:
        assert report["groups"] in ([], [runner.user.gid])
    if runner.protections["network_namespace"]:  # a fresh network namespace: only a down loopback, nothing reachable
        assert report["network"] != "reachable"
    assert not os.path.exists(report["cwd"])  # removed after the query


def test_count_is_exact_and_the_reservation_rule_is_enforced(probe, tiny_llm, pool) -> None:  # noqa: ANN001
    outcome, report, _ = probe
    msgs = [{"role": "user", "content": "Is this relevant? " + pool[0].query + " word" * report["pad"]}]
    assert report["count"] == tiny_llm.count(msgs)
    assert 2048 - 40 < report["count"] <= 2048 - 4
    assert report["over"]["type"] == "refused"
    assert report["over"]["needed"] == report["count"] + 4 * (report["exact_max_new"] + 1) > 2048
    first = report["first"]
    assert first["type"] == "generation"
    assert first["input_tokens"] == report["count"]
    assert first["weighted_tokens"] == first["input_tokens"] + 4 * first["output_tokens"]
    assert first["budget_left"] == 2048 - first["weighted_tokens"]
    assert set(first["logprobs"]) == {"yes", "no", "Maybe not"}
    assert first["multi_token"] == ["Maybe not"]
    assert all(v <= 0 for v in first["logprobs"].values())
    after = report["after"]
    if first["budget_left"] >= report["count"] + 4:
        assert after["type"] == "generation"
    else:
        assert after["type"] == "refused"
    assert outcome.weighted_tokens <= 2048
    assert outcome.weighted_tokens == sum(c.weighted for c in outcome.calls)
    assert [c.refused for c in outcome.calls][:2] == [True, False]
    assert outcome.candidates_seen == (pool[0].candidates[0].id,)


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_strategy_process_imports_no_heavy_module(name: str, tmp_path) -> None:  # noqa: ANN001
    """Start-up counts against the 1 CPU-second: a built-in strategy loads json and the SDK, not torch."""
    copy_sdk(tmp_path / "code")
    code = BOOTSTRAP.split("from citator")[0] + (
        f"import importlib;from citator.rerank.strategies import STRATEGIES;importlib.import_module(STRATEGIES[{name!r}])\n"
        "import citator.rerank.strategy\n"
        "heavy=[m for m in ('torch','transformers','numpy','citator.data','citator.evaluate','dataclasses','typing')"
        " if m in sys.modules];print(heavy)"
    )

    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(tmp_path / "code")})
    assert out.stdout.strip() == "[]"


def test_a_strategy_can_start_threads_but_no_process(tiny_llm, pool, short_limits, script) -> None:  # noqa: ANN001
    # A process that leaves the session, or that the kernel reaps, would spend CPU no meter of the strategy sees:
    # the sandbox refuses every new process, so the strategy's own counters hold all the CPU it can use.
    runner = Runner(tiny_llm, script("spawner.py"), short_limits)
    if not runner.single_process:
        pytest.skip("no seccomp process filter on this platform")
    outcome = runner.run_query(pool[0])
    assert outcome.failure is None, outcome
    report = _report(outcome)
    assert report.pop("thread") == "started"
    assert report == dict.fromkeys(("setsid_grandchild", "auto_reaped_child", "subprocess"),
                                   "refused: PermissionError: [Errno 1] Operation not permitted")
    assert len(outcome.ids) == 10


def test_a_wrapper_that_starts_its_program_fails_at_once(tiny_llm, pool, short_limits, script) -> None:  # noqa: ANN001
    # A shell that does not exec its last command forks it. Refused with EAGAIN, a shell retries the fork until the
    # response timeout ends the query (90 s each); refused with EPERM it stops there and then.
    program = " ".join(script("misbehave.py", "none")[1:])
    runner = Runner(tiny_llm, ["/bin/bash", "-c", f"python3 {program}; echo finished >&2"], short_limits)
    if not runner.single_process:
        pytest.skip("no seccomp process filter on this platform")
    outcome = runner.run_query(pool[0])
    assert outcome.failure is not None and outcome.failure.kind != "timeout", outcome.failure
    assert "fork: Operation not permitted" in outcome.stderr_tail


def test_a_runner_without_a_user_to_switch_to_says_so(tiny_llm, short_limits, script, monkeypatch,  # noqa: ANN001
                                                      capsys) -> None:  # noqa: ANN001
    import citator.rerank.runner as runner_module

    monkeypatch.setattr(runner_module, "sandbox_user", lambda name: None)  # what a runner that is not root gets
    runner = Runner(tiny_llm, script("probe.py"), short_limits)
    assert runner.user is None
    assert "strategies run as this runner's own user" in capsys.readouterr().err


def test_a_strategy_reaches_no_socket_of_any_family(tiny_llm, pool, short_limits, script,  # noqa: ANN001
                                                    reachable_tmp) -> None:  # noqa: ANN001
    # A world-writable Unix socket is reachable from any network namespace: a strategy could make the server behind
    # it work for it, unmetered. The syscall filter refuses socket() and socketpair() for every family.
    import socket

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    path = reachable_tmp / "open.sock"
    listener.bind(str(path))
    os.chmod(path, 0o666)
    listener.listen(1)
    listener.setblocking(False)
    judgments = reachable_tmp / "qrels.json"
    judgments.write_text("{}")
    os.chmod(judgments, 0o644)
    runner = Runner(tiny_llm, script("reach_out.py", str(path), str(judgments)), short_limits)
    try:
        if not runner.single_process:
            pytest.skip("no seccomp filter on this platform")
        outcome = runner.run_query(pool[0])
        assert runner.protections["no_sockets"] is True
    finally:
        runner.close()
    assert outcome.failure is None, outcome
    report = _report(outcome)
    refused = "refused: PermissionError: [Errno 1] Operation not permitted"
    assert report.pop("judgments") == "read"  # world-readable judgments are readable: the runner warns (test_harness)
    assert report == dict.fromkeys(("unix_connect", "socketpair", "inet", "udp", "netlink"), refused)
    with pytest.raises(BlockingIOError):
        listener.accept()  # nobody ever connected
    listener.close()


def test_the_runtime_is_the_runner_s_own_and_goes_with_it(tiny_llm, pool, short_limits, reachable_tmp,  # noqa: ANN001
                                                          monkeypatch) -> None:  # noqa: ANN001
    # When no system interpreter is runnable by the strategy's user (a pyenv under /root, say), the runner's own is
    # laid out in the run's directory; nothing of it outlives the runner.
    import citator.rerank.interpreter as interpreter

    monkeypatch.setattr(interpreter, "system_candidates", lambda: ["/nonexistent/python3"])
    runner = Runner(tiny_llm, "bm25", short_limits, work_root=reachable_tmp)
    root = runner.runtime.root
    assert runner.python == str(root / "python" / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}")
    assert (root / "code" / "citator" / "rerank" / "strategy.py").is_file()
    assert not (root / "code" / "citator" / "data").exists()  # the SDK and strategies only
    outcome = runner.run_query(pool[0])
    assert outcome.failure is None, outcome
    assert outcome.ids == tuple(c.id for c in pool[0].candidates[:10])
    runner.close()
    assert list(reachable_tmp.iterdir()) == []


def test_a_strategy_sees_a_private_tmp_and_no_judgments(tiny_llm, pool, short_limits, script,  # noqa: ANN001
                                                        reachable_tmp) -> None:  # noqa: ANN001
    # World-readable judgments beside the strategy's own files, and a file another user left under /tmp: inside the
    # strategy's mount namespace neither is readable, and what it writes under /tmp never reaches the host's /tmp.
    judgments = reachable_tmp / "qrels.json"
    judgments.write_text('{"19335": {"d1": 3}}')
    os.chmod(judgments, 0o644)
    other = Path(tempfile.mkdtemp(prefix="citator-test-other-"))
    os.chmod(other, 0o755)
    left_by_other = other / "notes.txt"
    left_by_other.write_text("another user's file")
    os.chmod(left_by_other, 0o644)
    leftover = Path(tempfile.gettempdir()) / f"citator-test-leftover-{os.getpid()}"
    runner = Runner(tiny_llm, script("look_around.py", str(judgments), f"at:{left_by_other}", f"at:{leftover}"),
                    short_limits)
    try:
        if not runner.protections["private_tmp"]:
            pytest.skip("this host allows no mount namespace")
        runner.hide(judgments)
        assert runner.protections["judgments_hidden"] is True
        assert not runner.can_read(judgments)
        outcome = runner.run_query(pool[0])
    finally:
        runner.close()
        shutil.rmtree(other, ignore_errors=True)
    assert outcome.failure is None, outcome
    report = _report(outcome)
    assert report["judgments"].startswith("refused: PermissionError") or report["judgments"] == "empty", report
    assert report["host_tmp_file"].startswith("refused: FileNotFoundError"), report
    assert report["leave"] == "written"
    assert not leftover.exists()
    assert judgments.read_text() == '{"19335": {"d1": 3}}'  # the host's view never changed


def test_a_strategy_reaches_no_other_process(tiny_llm, pool, short_limits, script) -> None:  # noqa: ANN001
    # All strategies of a root runner run as `nobody`, and a non-root runner's as that user: without the filter, one
    # could kill another run's strategy, or attach to it (or to the runner) and read its memory.
    from citator.rerank.account import sandbox_user

    user = sandbox_user()
    other = subprocess.Popen(["sleep", "60"], user=user.uid if user else None, group=user.gid if user else None)
    try:
        runner = Runner(tiny_llm, script("reach_others.py", str(other.pid)), short_limits)
        if not runner.single_process:
            pytest.skip("no seccomp filter on this platform")
        outcome = runner.run_query(pool[0])
        namespaces_held = runner.protections["private_tmp"]
        runner.close()
        with open("/proc/sysvipc/msg") as table:  # the host's queues, before the cleanup below
            host_keys = {line.split()[0] for line in table.readlines()[1:]}
    finally:
        other.kill()
        other.wait()
        # Where the host allowed no IPC namespace, the queue is the host's: remove it.
        subprocess.run(["ipcrm", "-Q", str(0x43495441)], capture_output=True, check=False)
    assert outcome.failure is None, outcome
    report = _report(outcome)
    refused = "refused: PermissionError: [Errno 1] Operation not permitted"
    assert {k: report[k] for k in ("signal_other", "signal_runner")} == dict.fromkeys(("signal_other", "signal_runner"), refused)
    assert report["ptrace_other"].startswith("refused: PermissionError") and "Errno 1" in report["ptrace_other"]
    assert report["read_other_memory"].startswith("refused: PermissionError"), report
    if namespaces_held:  # its own IPC namespace: the queue it made is not the host's, and is gone with it
        assert report["message_queue"] == "done", report
        assert str(0x43495441) not in host_keys


def test_the_namespace_probe_answers_for_the_host_wherever_the_runner_stands(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    # A runner started in a directory under /tmp once found its own directory covered by the private /tmp, took that
    # for a host without namespaces, and ran strategies with the judgments readable.
    from citator.rerank import namespaces
    from citator.rerank.account import sandbox_user

    user = sandbox_user()
    try:
        namespaces.available.cache_clear()
        monkeypatch.chdir("/")
        at_root = namespaces.available(user)
        namespaces.available.cache_clear()
        monkeypatch.chdir(tmp_path)  # under /tmp, which the probe's private tmpfs covers
        assert namespaces.available(user) == at_root
    finally:
        namespaces.available.cache_clear()


def test_the_links_to_an_interpreter_are_made_again_but_nothing_beside_them(tiny_llm, pool, short_limits,  # noqa: ANN001
                                                                            script, reachable_tmp) -> None:  # noqa: ANN001
    # The interpreter is reached through a directory link and a file link under /tmp; a file beside those links
    # (another run's judgments, say) stays out of the strategy's view.
    bin_dir = reachable_tmp / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    for folder in (bin_dir.parent, bin_dir):
        os.chmod(folder, 0o755)
    (bin_dir / "python").symlink_to(os.path.realpath(sys.executable))
    (reachable_tmp / "venv-link").symlink_to(bin_dir.parent)
    beside = bin_dir / "qrels.json"
    beside.write_text('{"q": {"d": 3}}')
    os.chmod(beside, 0o644)
    nowhere = f"{tempfile.gettempdir()}/citator-test-no-judgments-{os.getpid()}"  # names no folder to keep
    leftover = f"at:{tempfile.gettempdir()}/citator-test-leave-{os.getpid()}"
    runner = Runner(tiny_llm, script("look_around.py", nowhere, f"at:{beside}", leftover), short_limits,
                    python=str(reachable_tmp / "venv-link" / "bin" / "python"))
    try:
        if not runner.protections["private_tmp"]:
            pytest.skip("this host allows no mount namespace")
        outcome = runner.run_query(pool[0])
    finally:
        runner.close()
    assert outcome.failure is None, outcome
    assert _report(outcome)["host_tmp_file"].startswith("refused: FileNotFoundError"), _report(outcome)


def test_an_interpreter_linked_from_under_tmp_still_runs_in_the_private_tmp(tiny_llm, pool, short_limits,  # noqa: ANN001
                                                                            reachable_tmp) -> None:  # noqa: ANN001
    # A venv under /tmp: its bin/python is a link (through a second, relative one) out to the system's interpreter.
    # The strategy's private /tmp would hide the links themselves; the probe and the strategy see the same view.
    bin_dir = reachable_tmp / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    os.chmod(bin_dir.parent, 0o755)
    os.chmod(bin_dir, 0o755)
    (bin_dir / "python3").symlink_to(os.path.realpath(sys.executable))
    (bin_dir / "python").symlink_to("python3")
    runner = Runner(tiny_llm, "bm25", short_limits, python=str(bin_dir / "python"))
    try:
        if not runner.protections["private_tmp"]:
            pytest.skip("this host allows no mount namespace")
        assert runner.python == str(bin_dir / "python")
        outcome = runner.run_query(pool[0])
    finally:
        runner.close()
    assert outcome.failure is None, outcome
    assert outcome.ids == tuple(c.id for c in pool[0].candidates[:10])
