"""`citator rerank` (the DL harness through the trusted runner) and `citator rerank-strategy NAME`."""

from __future__ import annotations

import argparse
import json
import signal

from citator.cli.arguments import COUNT, SECONDS
from citator.cli.demo_model import note_machinery_only


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("rerank", help="rerank a pool of BM25 candidates with a strategy under the token budget")
    p.add_argument("--pool", required=True, help="pool JSONL(.gz): query_id, query, candidates")
    p.add_argument("--qrels", required=True, help='graded qrels JSON {query_id: {doc_id: grade}}')
    p.add_argument("--model", required=True, help="local causal LM directory (Qwen3-1.7B); nothing is downloaded")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--strategy", help="built-in strategy: bm25, first-token, pointwise, adaptive")
    which.add_argument("--strategy-command", help='command line of a strategy program, e.g. "python my.py"')
    p.add_argument("--deployment", help="deployment.json (only attention and cpu_threads)")
    p.add_argument("--out", required=True, help="run directory: run.jsonl, run.trec, ledgers/, summary.json")
    p.add_argument("--limit", type=COUNT, help="only the first N queries of the pool")
    p.add_argument("--strategy-python", help="interpreter for strategies (default: the first one the sandbox user can run)")
    p.add_argument("--cpu-seconds", type=SECONDS, default=1.0, help="strategy CPU limit per query (spec: 1)")
    p.add_argument("--response-timeout", type=SECONDS, default=90.0, help="seconds per strategy message (spec: 90)")
    p.add_argument("--quiet", action="store_true", help="no per-query progress lines")
    p.set_defaults(func=run_rerank)

    s = sub.add_parser("rerank-strategy", help="serve one query with a built-in strategy over stdin/stdout (JSONL)")
    s.add_argument("name", help="bm25, first-token, pointwise or adaptive")
    s.set_defaults(func=run_strategy)


def run_rerank(args: argparse.Namespace) -> int:
    from citator.rerank.workload import read_inputs, run_dl
    from citator.rerank.deployment import load_deployment
    from citator.rerank.limits import Limits
    from citator.rerank.runner import Runner
    from citator.rerank.runtime import exit_on_signal

    from citator.errors import ConfigError
    from citator.rerank.strategies import STRATEGIES

    from citator.data.atomic import output_dir, run_directory

    output_dir(args.out, make=False)
    if args.strategy is not None and args.strategy not in STRATEGIES:
        raise ConfigError(f"unknown strategy {args.strategy!r}: use one of {', '.join(STRATEGIES)} or --strategy-command")
    deployment = load_deployment(args.deployment)
    limits = Limits(cpu_seconds=args.cpu_seconds, response_timeout_s=args.response_timeout)
    strategy = args.strategy or args.strategy_command
    inputs = read_inputs(args.pool, args.qrels, args.limit)
    note_machinery_only(args.model)
    # Stopped by a signal, the runner kills its strategy and removes its directories before it exits.
    previous = {sig: signal.signal(sig, exit_on_signal) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        # One run at a time in a run directory: two would overwrite each other's ledgers and summary.
        with run_directory(args.out), \
                Runner.load(args.model, deployment, strategy, limits, python=args.strategy_python) as runner:
            summary = run_dl(args.pool, args.qrels, runner, args.out, args.limit, progress=not args.quiet,
                             inputs=inputs)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    keys = ("queries", "failed_queries", "ndcg@10", "reward", "weighted_tokens", "strategy_cpu_seconds")
    print(json.dumps({k: summary[k] for k in keys}, indent=2))
    return 0


def run_strategy(args: argparse.Namespace) -> int:
    from citator.rerank.strategies.__main__ import main

    return main([args.name])
