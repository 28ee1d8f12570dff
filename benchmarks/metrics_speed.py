"""Evaluate 10,000 queries x 1,000 results with citator, pytrec_eval and ir_measures in one run.

    .venv/bin/python benchmarks/metrics_speed.py [--queries 10000] [--depth 1000]

Prints a table and writes benchmarks/results/metrics_speed.json. All three score the same tie-free run, and the
script checks that their mean nDCG@10 agree before it reports any time.
"""

from __future__ import annotations

import argparse
import platform
import random
import time
from pathlib import Path

from citator.data import Qrels, write_json_atomic
from citator.evaluate import evaluate

MEASURES = {"ndcg@10": ("ndcg_cut_10", "nDCG@10"), "rr": ("recip_rank", "RR"), "p@10": ("P_10", "P@10"),
            "recall@100": ("recall_100", "R@100")}


def make_case(n_queries: int, depth: int, seed: int = 0):  # type: ignore[no-untyped-def]
    rng = random.Random(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        qid = f"q{q}"
        docs = [f"d{rng.randrange(10 * depth)}" for _ in range(depth * 2)]
        docs = list(dict.fromkeys(docs))[:depth]
        judged = rng.sample(docs, 30) + [f"x{q}-{i}" for i in range(5)]
        qrels[qid] = {d: rng.randint(0, 3) for d in judged}
        qrels[qid][judged[0]] = max(1, qrels[qid][judged[0]])
        scores = rng.sample(range(1, 10**7), len(docs))
        run[qid] = {d: float(s) for d, s in zip(docs, scores)}
    return qrels, run


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--depth", type=int, default=1_000)
    args = ap.parse_args()
    qrels, run = make_case(args.queries, args.depth)
    rows = []

    # Peers take {doc: score} and sort; citator takes ranked lists. Time both ways, the sort included once.
    start = time.perf_counter()
    ranked = {q: sorted(d, key=d.__getitem__, reverse=True) for q, d in run.items()}
    sort_seconds = time.perf_counter() - start
    start = time.perf_counter()
    ours = evaluate(Qrels.from_dict(qrels), ranked, list(MEASURES))
    seconds = time.perf_counter() - start
    rows.append(("citator (ranked lists)", seconds, ours["ndcg@10"]))
    rows.append(("citator (+ sort scores)", seconds + sort_seconds, ours["ndcg@10"]))

    import pytrec_eval

    start = time.perf_counter()
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {m[0] for m in MEASURES.values()})
    per_q = evaluator.evaluate(run)
    mean = sum(v["ndcg_cut_10"] for v in per_q.values()) / len(per_q)
    rows.append(("pytrec_eval", time.perf_counter() - start, mean))

    import ir_measures
    from ir_measures import P, R, RR, nDCG

    start = time.perf_counter()
    agg = ir_measures.calc_aggregate([nDCG @ 10, RR, P @ 10, R @ 100], qrels, run)
    rows.append(("ir_measures", time.perf_counter() - start, agg[nDCG @ 10]))

    for name, _, value in rows:
        assert abs(value - ours["ndcg@10"]) < 1e-9, (name, value, ours["ndcg@10"])
    print(f"{args.queries} queries x {args.depth} results, 4 measures (ndcg@10, rr, p@10, recall@100)")
    print(f"{'tool':<26}{'seconds':>10}{'mean ndcg@10':>16}")
    for name, seconds, value in rows:
        print(f"{name:<26}{seconds:>10.2f}{value:>16.6f}")
    out = Path(__file__).parent / "results" / "metrics_speed.json"
    write_json_atomic(out, {
        "command": "benchmarks/metrics_speed.py", "queries": args.queries, "depth": args.depth,
        "machine": platform.platform(), "results": [{"tool": n, "seconds": s, "ndcg@10": v} for n, s, v in rows],
    })


if __name__ == "__main__":
    main()
