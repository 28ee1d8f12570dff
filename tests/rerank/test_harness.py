"""`citator rerank`: run, per-query ledgers and summary.json; failed queries count as zero."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from citator.cli.main import main
from citator.data import read_graded_qrels, read_results
from citator.evaluate import ndcg, reward_between

HERE = Path(__file__).parent
POOL, QRELS = HERE / "fixtures" / "pool.jsonl", HERE / "fixtures" / "qrels.json"

SUMMARY_KEYS = {"queries", "failed_queries", "ndcg@10", "reward", "weighted_tokens", "strategy_cpu_seconds"}


def test_bm25_through_the_cli(tiny_qwen3_causal_dir: Path, tmp_path: Path, pool) -> None:  # noqa: ANN001
    deployment = tmp_path / "deployment.json"
    deployment.write_text('{"attention": "eager", "cpu_threads": 1}')
    out = tmp_path / "run"
    argv = ["rerank", "--pool", str(POOL), "--qrels", str(QRELS), "--model", str(tiny_qwen3_causal_dir),
            "--strategy", "bm25", "--deployment", str(deployment), "--out", str(out), "--quiet"]
    assert main(argv) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert SUMMARY_KEYS <= set(summary)
    qrels = read_graded_qrels(QRELS)
    expected = sum(ndcg([c.id for c in q.candidates[:10]], qrels.of(q.query_id), 10) for q in pool) / len(pool)
    assert summary["queries"] == 3 and summary["failed_queries"] == 0
    assert abs(summary["ndcg@10"] - expected) < 1e-12
    assert abs(summary["reward"] - reward_between(expected)) < 1e-12
    assert summary["weighted_tokens"] == {"mean": 0.0, "max": 0}
    assert 0 < summary["strategy_cpu_seconds"]["max"] < 1.0
    runs = read_results(out / "run.jsonl")
    assert [r.query_id for r in runs] == [q.query_id for q in pool]
    ledger = json.loads((out / "ledgers" / "19335.json").read_text())
    assert ledger["failure"] is None and ledger["weighted_tokens"] == 0 and "strategy_cpu_seconds" in ledger
    assert (out / "ledgers").stat().st_mode & 0o777 == 0o700  # scores from the judgments: the runner's user only


def test_failing_query_scores_zero_in_the_summary(tiny_qwen3_causal_dir: Path, tmp_path: Path,
                                                   scripts_dir: Path) -> None:
    out = tmp_path / "run"
    argv = ["rerank", "--pool", str(POOL), "--qrels", str(QRELS), "--model", str(tiny_qwen3_causal_dir),
            "--strategy-command", f"python {scripts_dir / 'misbehave.py'} crash", "--out", str(out), "--limit", "2",
            "--quiet"]
    assert main(argv) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["queries"] == 2 and summary["failed_queries"] == 1
    assert summary["failures"] == {"crash": 1}
    assert summary["per_query_ndcg@10"]["47923"] == 0.0
    assert summary["per_query_ndcg@10"]["19335"] > 0
    ledger = json.loads((out / "ledgers" / "47923.json").read_text())
    assert ledger["failure"]["kind"] == "crash" and ledger["ids"] == []


def test_bad_deployment_stops_before_loading(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    deployment = tmp_path / "deployment.json"
    deployment.write_text('{"attention": "sdpa", "dtype": "bf16"}')
    argv = ["rerank", "--pool", str(POOL), "--qrels", str(QRELS), "--model", str(tmp_path), "--strategy", "bm25",
            "--deployment", str(deployment), "--out", str(tmp_path / "run")]
    assert main(argv) == 2
    assert "unknown key" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["--cpu-seconds", "--response-timeout"])
@pytest.mark.parametrize("value", ["nan", "inf"])
def test_limits_that_are_not_finite_are_refused_before_loading(tmp_path: Path, capsys, flag: str,  # noqa: ANN001
                                                               value: str) -> None:
    # NaN passed every "> 0" check, and a NaN timeout waited forever for a silent strategy.
    argv = ["rerank", "--pool", str(POOL), "--qrels", str(QRELS), "--model", str(tmp_path / "no-model"),
            "--strategy", "bm25", "--out", str(tmp_path / "run"), flag, value]
    assert main(argv) == 2
    assert "must be a finite number" in capsys.readouterr().err


def test_a_run_directory_held_by_another_run_is_refused(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    from citator.data.atomic import run_directory

    argv = ["rerank", "--pool", str(POOL), "--qrels", str(QRELS), "--model", str(tmp_path / "no-model"),
            "--strategy", "bm25", "--out", str(tmp_path / "run")]
    with run_directory(tmp_path / "run"):
        assert main(argv) == 2
    assert "another citator run is writing this run directory" in capsys.readouterr().err


def test_every_query_id_has_a_ledger_of_its_own() -> None:
    from citator.rerank.workload import _safe

    ids = ["19335", "a/b", "a_b", "a\\b", "..", ".", "", "é", "e", "x" * 300, "x" * 301, "a~b", "\ud800"]
    names = [_safe(i) for i in ids]
    assert len(set(names)) == len(ids) and names[:1] == ["19335"] and names[2] == "a_b"
    assert all(0 < len(n.encode()) <= 120 and "/" not in n and n not in (".", "..") for n in names)


def test_pool_queries_the_qrels_do_not_judge_are_refused_before_loading(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    # Scored, they could only be nDCG 0 (no relevant document) and pull the mean down without a word.
    qrels = json.loads(QRELS.read_text())
    dropped = sorted(qrels)[0]
    del qrels[dropped]
    partial = tmp_path / "qrels.json"
    partial.write_text(json.dumps(qrels))
    argv = ["rerank", "--pool", str(POOL), "--qrels", str(partial), "--model", str(tmp_path / "no-model"),
            "--strategy", "bm25", "--out", str(tmp_path / "run")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"JudgmentError: qrels.json: no judgments for 1 of the pool's 3 queries ('{dropped}')" in err
    assert not (tmp_path / "run").exists()


def test_judgments_are_hidden_from_the_strategy_or_warned_about(tiny_qwen3_causal_dir: Path, tmp_path: Path,  # noqa: ANN001
                                                                reachable_tmp: Path, capsys) -> None:  # noqa: ANN001
    open_qrels = reachable_tmp / "qrels.json"
    open_qrels.write_text(QRELS.read_text())
    os.chmod(open_qrels, 0o644)
    argv = ["rerank", "--pool", str(POOL), "--qrels", str(open_qrels), "--model", str(tiny_qwen3_causal_dir),
            "--strategy", "bm25", "--out", str(tmp_path / "run"), "--limit", "1", "--quiet"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert set(summary["protections"]) == {"separate_user", "network_namespace", "private_tmp", "judgments_hidden",
                                           "no_processes", "no_sockets"}
    assert summary["protections"]["separate_user"] is (os.geteuid() == 0)
    if summary["protections"]["judgments_hidden"]:  # a mount namespace covers the file: nothing to warn about
        assert summary["judgments_readable_by_strategy"] is False
        assert "warning:" not in err
    else:
        assert summary["judgments_readable_by_strategy"] is True
        assert f"warning: {open_qrels} is readable by the strategy's user" in err
    os.chmod(open_qrels, 0o600)
    if os.geteuid() == 0:  # nobody cannot read a root file of mode 0600; a runner's own user always can
        assert main([*argv[:-3], "--out", str(tmp_path / "run2"), "--limit", "1", "--quiet"]) == 0
        assert "warning:" not in capsys.readouterr().err
        summary = json.loads((tmp_path / "run2" / "summary.json").read_text())
        assert summary["judgments_readable_by_strategy"] is False


def test_sigterm_removes_the_runner_s_directories(tiny_qwen3_causal_dir: Path, tmp_path: Path, scripts_dir: Path,
                                                  reachable_tmp: Path) -> None:
    # A real runner process and a real signal, while a strategy (that never answers) holds its query.
    env = {**os.environ, "TMPDIR": str(reachable_tmp)}
    argv = [sys.executable, "-m", "citator.cli.main", "rerank", "--pool", str(POOL), "--qrels", str(QRELS),
            "--model", str(tiny_qwen3_causal_dir), "--strategy-command",
            f"python {scripts_dir / 'misbehave.py'} slow", "--out", str(tmp_path / "run"), "--quiet"]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        # misbehave.py answers the first query at once and sleeps through the second (its TARGET).
        while not list(reachable_tmp.glob("citator-strategy-*/q-*")) or not (tmp_path / "run" / "ledgers").is_dir() \
                or not list((tmp_path / "run" / "ledgers").iterdir()):
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert list(reachable_tmp.glob("citator-strategy-*"))
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
        assert code == 128 + signal.SIGTERM, proc.stderr.read().decode() if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert list(reachable_tmp.iterdir()) == []
