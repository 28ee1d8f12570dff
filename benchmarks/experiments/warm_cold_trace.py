"""Where a warm (torch) and a cold (numpy) search part ways, query by query: not a shipped part.

The server encodes queries with torch, a cold run.sh with citator.models.numpy_bert; the two agree to about 2e-7
per component, and late interaction is exact integer arithmetic either way. A query whose answers still differ
got there through one of: the query vector (which moves every learned signal), the interpolation's candidate set
(a document crossing the 100th place), a ranker feature crossing one of LightGBM's split thresholds, or the
contrast/slots reading those scores. For the 311-query batch of benchmarks/learning.py this prints each query
whose top 10 differ, with the largest difference of each of those stages.

    .venv/bin/python benchmarks/experiments/warm_cold_trace.py [--dataset casefacts]

Needs the index benchmarks/learning.py leaves in benchmarks/work/learning/NAME. Reads test queries only to answer
them (as run.sh does); nothing is tuned. Output in benchmarks/results/warm_cold_trace.log (by tee).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from citator.data import read_queries
from citator.retrieve.ranker import ranked_candidates
from citator.retrieve.searcher import StanceSearcher

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / "benchmarks" / "work" / "learning"


def stages(searcher: StanceSearcher, queries):  # type: ignore[no-untyped-def]
    names = searcher.needed_signals()
    encoded = searcher.encode(queries)
    signals = searcher.signal_matrices(queries, names, encoded)
    ranker = searcher.ranker
    base, cand, feature_names, x = ranked_candidates(
        signals, [q.stance for q in queries], searcher.years, searcher.config.weights, ranker.candidates,
        searcher.config.norm_depth, searcher.citations, encoded.tokens, searcher.late_store)
    logits = ranker.score(feature_names, x)
    return {"vectors": encoded.vectors, "signals": signals, "cand": cand, "names": feature_names, "x": x,
            "logits": logits}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default="casefacts")
    args = ap.parse_args()
    work = WORK / args.dataset
    index, queries = work / "index", read_queries(work / "queries311.jsonl")
    warm, cold = StanceSearcher(index), StanceSearcher(index, cold=True)
    print(f"warm encoder {type(warm.ft_encoder).__name__}, cold encoder {type(cold.ft_encoder).__name__}")
    answers = [(w.doc_ids, c.doc_ids) for w, c in zip(warm.search(queries, 10), cold.search(queries, 10))]
    differ = [i for i, (w, c) in enumerate(answers) if w != c]
    print(f"{len(queries)} queries, {len(differ)} whose top 10 differ: {[queries[i].query_id for i in differ]}")
    a, b = stages(warm, queries), stages(cold, queries)
    print(f"query vectors: max |difference| {np.abs(a['vectors'] - b['vectors']).max():.2e}")
    for name in a["signals"]:
        print(f"  signal {name:18s} max |difference| {np.abs(a['signals'][name] - b['signals'][name]).max():.2e}")
    same_cand = (np.sort(a["cand"], axis=1) == np.sort(b["cand"], axis=1)).all(axis=1)
    print(f"queries whose ranker candidates differ as a set: {int((~same_cand).sum())}")
    logit_gap = np.array([np.abs(np.sort(a["logits"][i]) - np.sort(b["logits"][i])).max() if same_cand[i] else np.inf
                          for i in range(len(queries))])
    print(f"queries with a ranker logit more than 1e-3 apart: {int((logit_gap > 1e-3).sum())}")
    for i in sorted(set(differ) | set(np.flatnonzero(~same_cand).tolist()) | set(np.flatnonzero(logit_gap > 1e-3).tolist())):
        q = queries[i]
        print(f"\n{q.query_id} ({q.stance}): warm {answers[i][0][:5]}... cold {answers[i][1][:5]}...")
        if not same_cand[i]:
            only_w = set(a["cand"][i]) - set(b["cand"][i])
            only_c = set(b["cand"][i]) - set(a["cand"][i])
            print(f"  candidates only warm {[warm.doc_ids[d] for d in only_w]}, only cold {[warm.doc_ids[d] for d in only_c]}")
            continue
        order = np.argsort(a["cand"][i])
        xa, xb = a["x"][i][order], b["x"][i][np.argsort(b["cand"][i])]
        diff = np.nan_to_num(np.abs(xa - xb))
        worst = np.argsort(-diff.max(axis=0))[:4]
        print("  largest feature differences: " + ", ".join(f"{a['names'][f]} {diff[:, f].max():.2e}" for f in worst))
        la, lb = a["logits"][i][order], b["logits"][i][np.argsort(b["cand"][i])]
        moved = np.flatnonzero(np.abs(la - lb) > 1e-4)
        print(f"  candidates whose ranker logit moved by more than 1e-4: {len(moved)}"
              + (f" (largest {np.abs(la - lb).max():.4f}, doc {warm.doc_ids[np.sort(a['cand'][i])[moved[0]]]})"
                 if len(moved) else ""))
        for m in moved[:3]:
            f = np.argmax(diff[m])
            print(f"    doc {warm.doc_ids[np.sort(a['cand'][i])[m]]}: logit {la[m]:.4f} vs {lb[m]:.4f}; its largest "
                  f"feature difference {a['names'][f]} {xa[m, f]:.7f} vs {xb[m, f]:.7f}")


if __name__ == "__main__":
    main()
