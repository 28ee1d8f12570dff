"""Fit the `adaptive` strategy's fusion weights on TREC DL19 (never DL20) with a given model.

The LLM evidence (label log-probs of the planned candidate set) does not depend on the weights, so it is
computed once per query in-process (same ledger and prompts as in the runner), then a grid over
(w_bm25, w_rank) with w_llm in {0, 1} is searched for the best mean nDCG@10. Ties go to the smaller weights.

    .venv/bin/python benchmarks/fit_adaptive.py --model QWEN3_1_7B_DIR [--write]

--write replaces src/citator/rerank/strategies/adaptive_weights.json; without it the fit is only reported
(benchmarks/results/rerank-adaptive-fit.json). With a random-weight model the fit is meaningless: do not --write.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path
from statistics import fmean

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "trec-dl"
GRID = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--pool", default=str(DATA / "dl19.jsonl.gz"))
    parser.add_argument("--qrels", default=str(DATA / "dl19-qrels.json"))
    parser.add_argument("--limit", type=int)
    parser.add_argument("--write", action="store_true", help="write the fitted weights into the package")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "rerank-adaptive-fit.json"))
    args = parser.parse_args()
    if "dl20" in Path(args.pool).name.lower() or "dl20" in Path(args.qrels).name.lower():
        raise SystemExit("refusing to fit on DL20: it is the held-out evaluation set (SPEC section 2)")

    from citator.data import read_graded_qrels, write_json_atomic
    from citator.evaluate import ndcg
    from citator.models.transformers_llm import TransformersLLM
    from citator.rerank.local import LocalClient, query_info
    from citator.rerank.pool import read_pool
    from citator.rerank.strategies import adaptive

    backend = TransformersLLM(args.model)
    qrels = read_graded_qrels(args.qrels)
    evidence = []
    for q in read_pool(args.pool, args.limit):
        client = LocalClient(backend)
        cands, z, lp = adaptive.evidence(query_info(q), client)
        assert client.ledger.spent <= 2048
        evidence.append((q.query_id, cands, z, lp))
        print(f"{q.query_id}: {len(lp)} shown, {client.ledger.spent} tokens", file=sys.stderr)

    def score(w: dict) -> float:
        return fmean(ndcg(adaptive.fuse(c, z, lp, w)[:10], qrels.of(qid), 10) for qid, c, z, lp in evidence)

    results = []
    for w_llm, w_bm25, w_rank in itertools.product((0.0, 1.0), GRID, GRID):
        w = {"w_llm": w_llm, "w_bm25": w_bm25, "w_rank": w_rank}
        results.append((score(w), -(w_llm + w_bm25 + w_rank), w))
    best_ndcg, _, best = max(results, key=lambda r: (r[0], r[1]))
    current = adaptive.weights()
    report = {
        "model": backend.model_id,
        "pool": args.pool,
        "queries": len(evidence),
        "best": best,
        "best_ndcg@10": best_ndcg,
        "current_weights_ndcg@10": score(current),
        "bm25_only_ndcg@10": score({"w_llm": 0.0, "w_bm25": 0.0, "w_rank": 1.0}),
    }
    print(report)
    write_json_atomic(args.out, report)
    if args.write:
        note = (
            f"Fitted on DL19 ({len(evidence)} queries) by benchmarks/fit_adaptive.py with {backend.model_id}: "
            f"grid w_llm in {{0,1}}, w_bm25 and w_rank in {list(GRID)}; DL19 nDCG@10 {best_ndcg:.4f}."
        )
        write_json_atomic(
            adaptive.__file__.replace("adaptive.py", "adaptive_weights.json"),
            {**best, "fitted_on": "dl19", "model": backend.model_id, "note": note},
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
