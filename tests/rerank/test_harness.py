"""`citator rerank`: run, per-query ledgers and summary.json; failed queries count as zero."""

from __future__ import annotations

import json
from pathlib import Path

from citator.cli.main import main
from citator.data import read_graded_qrels, read_results
from citator.evaluate import ndcg, reward_between

HERE = Path(__file__).parent
POOL, QRELS, SCRIPTS = HERE / "fixtures" / "pool.jsonl", HERE / "fixtures" / "qrels.json", HERE / "strategies"

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


def test_failing_query_scores_zero_in_the_summary(tiny_qwen3_causal_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    argv = ["rerank", "--pool", str(POOL), "--qrels", str(QRELS), "--model", str(tiny_qwen3_causal_dir),
            "--strategy-command", f"python {SCRIPTS / 'misbehave.py'} crash", "--out", str(out), "--limit", "2",
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
