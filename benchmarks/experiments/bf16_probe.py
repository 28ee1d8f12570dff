"""Probe, not shipped: the fine-tuned query encoder in bfloat16 (torch CPU autocast) against float32, on CaseFacts dev.

With the shipped contrast and slots, over dev's main and overruled queries (train-only memory, as in
contrast_probes.py): NDCG@10, strict NDCG and outranks on the overruled pairs, how many top-10 lists change, and
the time to search the whole dev batch each way. Reads train and dev only. Not shipped: with late interaction
in int8 warm run.sh is within its budget without it, and bf16 would make the server's answers differ from a cold
run.sh's (numpy, float32) and from the float32 features the ranker was trained on (BENCHMARKS.md).

    .venv/bin/python benchmarks/experiments/bf16_probe.py
"""

from __future__ import annotations

import contextlib
import time

import torch

from citator.evaluate import evaluate
from citator.evaluate.stance_discrimination import stance_discrimination

from citator.learn import train as T

from contrast_probes import DATA, train_memory_searcher


def main() -> None:
    searcher = train_memory_searcher()
    sets = [(DATA / "queries.jsonl", DATA / "ground_truth.jsonl"),
            (DATA / "queries_overruled.jsonl", DATA / "ground_truth_overruled.jsonl")]
    dev_q, dev_qrels = T.load_labeled(sets, "dev")
    print(f"bf16 kernels supported: {torch.ops.mkldnn._is_mkldnn_bf16_supported()}; dev queries {len(dev_q)}")
    runs = {}
    for bf16 in (False, True):
        # Autocast is per thread: it reaches the encoder's forward pass (the only torch work of a search).
        with torch.autocast("cpu", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext():
            searcher.search(dev_q[:32], k=10)
            t0 = time.perf_counter()
            results = searcher.search(dev_q, k=10)
            took = time.perf_counter() - t0
        run = {r.query_id: r.doc_ids for r in results}
        runs[bf16] = run
        ndcg = evaluate(dev_qrels, run, ["ndcg@10"])["ndcg@10"]
        sd = stance_discrimination(dev_q, dev_qrels, run)
        strict = " / ".join(f"{sd.strict_ndcg[s]:.4f}" for s in ("supported", "refuted"))
        print(f"{'bf16' if bf16 else 'fp32'}: dev NDCG@10 {ndcg:.4f}; strict NDCG sup/ref {strict}; "
              f"outranks {sd.outranks_rate:.3f} ({sd.queries} queries); search {took:.2f} s")
    changed = sum(runs[False][q] != runs[True][q] for q in runs[False])
    sets_changed = sum(set(runs[False][q]) != set(runs[True][q]) for q in runs[False])
    print(f"top-10 lists that differ: {changed} of {len(runs[False])} (as sets: {sets_changed})")


if __name__ == "__main__":
    main()
