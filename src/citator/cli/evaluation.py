"""`citator eval` and `citator validate`: score or check a workload-1 results file."""

from __future__ import annotations

import argparse
import sys
from statistics import fmean

from citator.cli.arguments import number, whole
from citator.data import read_corpus, read_ground_truth, read_queries, read_results, validate_results, write_json_atomic
from citator.data.atomic import check_output
from citator.evaluate import per_query, reward
from citator.evaluate.reward import STANCE_BASELINE


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("eval", help="score a results file against ground truth, per stance and overall")
    p.add_argument("--queries", required=True, help="queries JSONL (query_id, text, stance)")
    p.add_argument("--ground-truth", required=True, help="ground-truth JSONL (graded relevant doc ids per query)")
    p.add_argument("--results", required=True, help="results JSONL to score (query_id, doc_ids)")
    p.add_argument("--metric", action="append", dest="metrics", help="e.g. ndcg@10 (repeatable; default ndcg@10)")
    p.add_argument(
        "--baseline", type=number(below=1), default=STANCE_BASELINE,
        help="B of reward = clamp((Q-B)/(1-B)); default: the spec's"
    )
    p.add_argument("--json", dest="json_out", help="write metrics as JSON here")
    p.set_defaults(func=run_eval)

    v = sub.add_parser("validate", help="check a results file against the workload-1 output rules")
    v.add_argument("--corpus", required=True, help="corpus JSONL the results must draw doc ids from")
    v.add_argument("--queries", required=True, help="queries JSONL: one results line per query")
    v.add_argument("--results", required=True, help="results JSONL to check")
    v.add_argument("--top-k", type=whole(1), default=10, help="doc ids each line must hold (default: %(default)s)")
    v.set_defaults(func=run_validate)


def run_eval(args: argparse.Namespace) -> int:
    if args.json_out:
        check_output(args.json_out)
    queries = read_queries(args.queries)
    qrels = read_ground_truth(args.ground_truth)
    run = {line.query_id: line.doc_ids for line in read_results(args.results)}
    metrics = args.metrics or ["ndcg@10"]
    ids = [q.query_id for q in queries]
    values = per_query(qrels, run, metrics, ids)
    stances = sorted({q.stance for q in queries})
    by_stance_ids = {s: [q.query_id for q in queries if q.stance == s] for s in stances}
    report: dict = {"metrics": {}, "reward": None}
    for name, vals in values.items():
        report["metrics"][name] = {
            "mean": fmean(vals.values()),
            "by_stance": {s: fmean(vals[q] for q in qs) for s, qs in by_stance_ids.items()},
            "per_query": vals,
        }
    first = next(iter(values))
    if first.startswith("ndcg@"):
        report["reward"] = reward(report["metrics"][first]["mean"], args.baseline)
    header = f"{'metric':<12}" + "".join(f"{s:>12}" for s in stances) + f"{'overall':>12}"
    print(f"{len(ids)} queries ({', '.join(f'{s}: {len(by_stance_ids[s])}' for s in stances)})")
    print(header)
    for name, m in report["metrics"].items():
        print(f"{name:<12}" + "".join(f"{m['by_stance'][s]:>12.4f}" for s in stances) + f"{m['mean']:>12.4f}")
    if report["reward"] is not None:
        print(f"reward ({first}, B={args.baseline}): {report['reward']:.4f}")
    if args.json_out:
        write_json_atomic(args.json_out, report)
    return 0


def run_validate(args: argparse.Namespace) -> int:
    corpus_ids = {d.doc_id for d in read_corpus(args.corpus)}
    queries = read_queries(args.queries)
    problems = validate_results(read_results(args.results), corpus_ids, queries, args.top_k)
    if problems:
        for p in problems:
            print(f"{args.results}: {p}", file=sys.stderr)
        print(f"INVALID: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(f"valid: {len(queries)} queries, top-{args.top_k} each")
    return 0
