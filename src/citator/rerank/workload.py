"""The DL19/DL20 reranking harness: every query of a pool through the runner; run, ledgers and summary."""

from __future__ import annotations

import hashlib
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from statistics import fmean
from typing import Any

from citator.data import ResultLine, ScoredDoc, read_graded_qrels, write_json_atomic, write_results, write_trec_run
from citator.data.atomic import output_dir
from citator.data.hashing import sha256_file
from citator.data.records import Qrels
from citator.errors import JudgmentError
from citator.evaluate import ndcg, reward_between
from citator.rerank.outcome import QueryOutcome
from citator.rerank.pool import PoolQuery, read_pool
from citator.rerank.runner import Runner


def summarize(outcomes: Sequence[QueryOutcome], qrels: Qrels, budget: int) -> dict[str, Any]:
    """The summary.json figures: failed queries count as nDCG 0; reward uses the spec's B and U."""
    per_query = {o.query_id: (0.0 if o.failed else ndcg(list(o.ids), qrels.of(o.query_id), 10)) for o in outcomes}
    q = fmean(per_query.values()) if per_query else 0.0

    def stats(values: list[float], as_int: bool = False) -> dict[str, float]:
        if not values:
            return {"mean": 0.0, "max": 0}
        return {"mean": fmean(values), "max": int(max(values)) if as_int else max(values)}

    tokens = [float(o.weighted_tokens) for o in outcomes]
    return {
        "queries": len(outcomes),
        "failed_queries": sum(o.failed for o in outcomes),
        "failures": dict(Counter(o.failure.kind for o in outcomes if o.failure)),
        "ndcg@10": q,
        "reward": reward_between(q),
        "weighted_tokens": stats(tokens, as_int=True),
        "budget_fraction": stats([t / budget for t in tokens]),
        "over_budget_queries": sum(o.weighted_tokens > budget for o in outcomes),
        "strategy_cpu_seconds": stats([o.strategy_cpu_seconds for o in outcomes]),
        "candidates_seen": stats([float(len(o.candidates_seen)) for o in outcomes], as_int=True),
        "generate_calls": stats([float(sum(not c.refused for c in o.calls)) for o in outcomes], as_int=True),
        "wall_seconds": stats([o.wall_seconds for o in outcomes]),
        "model_seconds": stats([o.model_seconds for o in outcomes]),
        "overhead_seconds": stats([o.overhead_seconds for o in outcomes]),
        "per_query_ndcg@10": per_query,
    }


def run_pool(
    runner: Runner,
    queries: Sequence[PoolQuery],
    qrels: Qrels,
    out_dir: str | Path,
    on_query: Callable[[QueryOutcome], None] | None = None,
) -> dict[str, Any]:
    """Run every query, writing RUN_DIR/ledgers/QID.json as it goes, then run.jsonl, run.trec, summary.json."""
    out = Path(out_dir)
    # Ledgers carry each query's nDCG, computed from the judgments: the runner's user alone reads them, so a later
    # query's strategy (another user under a root runner) cannot learn from an earlier one's score.
    os.chmod(output_dir(out / "ledgers"), 0o700)
    outcomes = []
    t0 = time.monotonic()
    for query in queries:
        outcome = runner.run_query(query)
        record = outcome.to_json()
        record["ndcg@10"] = 0.0 if outcome.failed else ndcg(list(outcome.ids), qrels.of(query.query_id), 10)
        write_json_atomic(out / "ledgers" / f"{_safe(query.query_id)}.json", record)
        outcomes.append(outcome)
        if on_query:
            on_query(outcome)
    lines = [
        ResultLine(o.query_id, tuple(ScoredDoc(d, float(len(o.ids) - i)) for i, d in enumerate(o.ids)))
        for o in outcomes
    ]
    write_results(out / "run.jsonl", lines)
    write_trec_run(out / "run.trec", lines, tag="citator-rerank")
    summary = summarize(outcomes, qrels, runner.limits.weighted_tokens)
    summary["total_seconds"] = time.monotonic() - t0
    summary["load_seconds"] = runner.load_seconds
    summary["warm_up_seconds"] = runner.warm_up_seconds
    summary["model_id"] = getattr(runner.backend, "model_id", "unknown")
    summary["strategy_command"] = runner.argv
    summary["strategy_python"] = runner.python
    summary["strategy_user"] = runner.user.name if runner.user else None
    summary["network_isolated"] = runner.protections["network_namespace"]
    summary["single_process"] = runner.single_process
    summary["protections"] = runner.protections
    summary["device"] = str(getattr(runner.backend, "device", "unknown"))
    summary["peak_device_memory_gib"] = _peak_device_memory_gib()
    summary["limits"] = runner.limits.to_json()
    return summary


def read_inputs(pool: str | Path, qrels_path: str | Path, limit: int | None = None) -> tuple[list[PoolQuery], Qrels]:
    """Read the pool and its qrels, before any model is loaded. A pool query the qrels do not judge is refused:
    it could only score nDCG 0 (no relevant document) and pull the mean down without saying why."""
    queries = list(read_pool(pool, limit))
    qrels = read_graded_qrels(qrels_path)
    missing = [q.query_id for q in queries if q.query_id not in qrels]
    if missing:
        shown = ", ".join(repr(m) for m in missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise JudgmentError(qrels_path, None, f"no judgments for {len(missing)} of the pool's {len(queries)} queries "
                            f"({shown}): they would score nDCG 0; give the qrels this pool was made from")
    return queries, qrels


def run_dl(
    pool: str | Path, qrels_path: str | Path, runner: Runner, out_dir: str | Path, limit: int | None = None,
    progress: bool = True, inputs: tuple[list[PoolQuery], Qrels] | None = None,
) -> dict[str, Any]:
    """The `citator rerank` harness: reads pool and qrels (unless given, as read by read_inputs), runs, writes
    RUN_DIR/summary.json and returns it."""
    queries, qrels = inputs or read_inputs(pool, qrels_path, limit)
    runner.hide(qrels_path)
    judgments_readable = runner.can_read(qrels_path)
    if judgments_readable:
        who = runner.user.name if runner.user else "this runner's own user"
        print(f"citator rerank: warning: {qrels_path} is readable by the strategy's user ({who}): a strategy could "
              "read the judgments; make the file unreadable to that user (chmod o-r, or a private directory); this host allows no mount namespace that would hide it",
              file=sys.stderr)

    def report(o: QueryOutcome) -> None:
        status = f"FAILED {o.failure.kind}: {o.failure.reason}" if o.failure else "ok"
        print(
            f"{o.query_id}: {o.weighted_tokens} tokens, {len(o.candidates_seen)} seen, "
            f"{o.strategy_cpu_seconds:.3f} CPU s, {o.wall_seconds:.2f} s, {status}",
            file=sys.stderr,
        )

    summary = run_pool(runner, queries, qrels, out_dir, report if progress else None)
    summary["pool"] = str(pool)
    summary["pool_sha256"] = sha256_file(pool)
    summary["qrels"] = str(qrels_path)
    summary["judgments_readable_by_strategy"] = judgments_readable
    summary["limit"] = limit
    write_json_atomic(Path(out_dir) / "summary.json", summary)
    return summary


def _peak_device_memory_gib() -> float | None:
    """Peak CUDA memory allocated by this process (None on CPU)."""
    import torch

    return torch.cuda.max_memory_allocated() / (1 << 30) if torch.cuda.is_available() else None


def _safe(query_id: str) -> str:
    """A ledger's file name: the id itself where it is a plain name, else its plain characters and a digest of the
    whole id, so that no two query ids ("a/b", "a_b") share a ledger."""
    plain = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "-_.") else "_" for ch in query_id)
    if plain == query_id and 0 < len(plain) <= 100 and plain not in (".", ".."):
        return plain
    return f"{plain[:100]}~{hashlib.sha256(query_id.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}"
