"""Metered reranking benchmark: every built-in strategy on TREC DL19/DL20 through the full runner.

Per strategy: weighted tokens per query (mean, max; never above 2,048), fraction of the budget used, candidates
the LLM saw, strategy CPU s/query, runner overhead s/query (wall minus time inside the model) and nDCG@10.
Without --model it builds a tiny random-weight Qwen3 with the real tokenizer: then token counts, CPU and
overhead are real, nDCG of the LLM strategies measures machinery only.

    .venv/bin/python benchmarks/rerank.py [--model DIR] [--years 19 20] [--limit N]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "trec-dl"
WORK = ROOT / "benchmarks" / "work" / "rerank"


def tiny_model() -> Path:
    """A tiny random Qwen3ForCausalLM with the real Qwen3 tokenizer (built once under benchmarks/work)."""
    target = WORK / "tiny-qwen3-causal"
    if not (target / "config.json").is_file():
        sys.path.insert(0, str(ROOT / "tests"))
        from fixtures.models import build_tiny_qwen3

        build_tiny_qwen3(target, "causal")
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="causal LM directory (default: a tiny random Qwen3)")
    parser.add_argument("--data", default=str(DATA), help="directory with dl19.jsonl.gz, dl19-qrels.json, ...")
    parser.add_argument("--years", nargs="+", default=["19", "20"])
    parser.add_argument("--strategies", nargs="+", default=["bm25", "first-token", "pointwise", "adaptive"])
    parser.add_argument("--limit", type=int, help="first N queries per year only")
    parser.add_argument("--deployment", help="deployment.json")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "rerank.json"))
    args = parser.parse_args()

    from citator.data import read_graded_qrels, write_json_atomic
    from citator.rerank.deployment import load_deployment
    from citator.rerank.pool import read_pool
    from citator.rerank.runner import Runner
    from citator.rerank.workload import run_pool

    model = Path(args.model) if args.model else tiny_model()
    runner = Runner.load(model, load_deployment(args.deployment), "bm25")
    rows = []
    header = (
        f"{'pool':<5} {'strategy':<12} {'q':>3} {'fail':>4} {'tok mean':>8} {'tok max':>7} {'budget':>6} "
        f"{'seen':>5} {'cpu s/q':>8} {'cpu max':>7} {'ovh s/q':>7} {'model s/q':>9} {'nDCG@10':>8}"
    )
    print(f"model {runner.backend.model_id} loaded in {runner.load_seconds:.1f} s, warm-up {runner.warm_up_seconds:.2f} s")
    print(header)
    for year in args.years:
        queries = read_pool(Path(args.data) / f"dl{year}.jsonl.gz", args.limit)
        qrels = read_graded_qrels(Path(args.data) / f"dl{year}-qrels.json")
        for name in args.strategies:
            runner.use(name)
            t0 = time.monotonic()
            s = run_pool(runner, queries, qrels, WORK / f"dl{year}-{name}")
            row = {
                "pool": f"dl{year}",
                "strategy": name,
                "seconds": time.monotonic() - t0,
                **{k: v for k, v in s.items() if k not in ("per_query_ndcg@10", "limits", "strategy_command")},
            }
            rows.append(row)
            print(
                f"{row['pool']:<5} {name:<12} {s['queries']:>3} {s['failed_queries']:>4} "
                f"{s['weighted_tokens']['mean']:>8.0f} {s['weighted_tokens']['max']:>7} "
                f"{s['budget_fraction']['mean']:>6.3f} {s['candidates_seen']['mean']:>5.1f} "
                f"{s['strategy_cpu_seconds']['mean']:>8.3f} {s['strategy_cpu_seconds']['max']:>7.3f} "
                f"{s['overhead_seconds']['mean']:>7.3f} {s['model_seconds']['mean']:>9.3f} {s['ndcg@10']:>8.4f}",
                flush=True,
            )
    write_json_atomic(
        args.out,
        {
            "command": " ".join(sys.argv),
            "model_dir": str(model),
            "model_id": runner.backend.model_id,
            "random_weights": args.model is None,
            "limit": args.limit,
            "load_seconds": runner.load_seconds,
            "warm_up_seconds": runner.warm_up_seconds,
            "strategy_python": runner.python,
            "strategy_user": runner.user.name if runner.user else None,
            "rows": rows,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
