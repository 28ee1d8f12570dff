"""Statute relevance benchmark: keyword order vs the MiniLM embedding reranker on the NRS and D.C. dev suites.

Per suite and split: Hit@1/5/10, RR and target coverage of the 30-candidate keyword pool, for keyword order and
the reranked order of the same 30, with paired family-bootstrap 95% intervals (10,000 replicates, seed 20260920);
the secondary all-terms baseline and the controls are in each run's metrics.json and report.

    .venv/bin/python benchmarks/statutes.py [--data ../shared/data/statutes] [--runs-dir benchmarks/work/statutes] [--suites nrs dc] [--resume]

Wall time per suite is from a fresh run directory (BM25 indexing, passages, MiniLM encoding, bootstrap, report),
after the encoder is loaded.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "statutes"
SUITES = {"nrs": "nevada_nrs_subset", "dc": "dc_code"}
METRICS = ("hit@1", "hit@5", "hit@10", "rr")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="folder holding nevada_nrs_subset/ and dc_code/")
    parser.add_argument("--runs-dir", type=Path, default=ROOT / "benchmarks" / "work" / "statutes")
    parser.add_argument("--suites", nargs="+", choices=sorted(SUITES), default=["nrs", "dc"])
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "statutes.json")
    parser.add_argument("--resume", action="store_true", help="reuse existing run directories (wall time then means little)")
    args = parser.parse_args()

    from citator.bench.statutes.run import RunConfig, run_statutes
    from citator.providers.embedding import EmbeddingProvider

    provider = EmbeddingProvider()
    results: dict[str, object] = {}
    print(f"{'suite':<5} {'split':<6} {'kind':<15} {'n':>3} {'order':<9} {'hit@1':>6} {'hit@5':>6} {'hit@10':>6} "
          f"{'rr':>6} {'cov':>6}")
    for name in args.suites:
        corpus, suite = (args.data / SUITES[name] / f for f in ("sections.jsonl", "suite-dev.jsonl"))
        if not args.resume:
            shutil.rmtree(args.runs_dir / name, ignore_errors=True)
        start = time.perf_counter()
        metrics = run_statutes(RunConfig(corpus, suite, args.runs_dir / name), provider)
        seconds = time.perf_counter() - start
        for split, kinds in metrics["by_split"].items():
            for kind in kinds:
                for order, table in (("keyword", metrics["by_split"]), ("embedding", metrics["reranked_by_split"])):
                    r = table[split][kind]
                    print(f"{name:<5} {split:<6} {kind:<15} {r['queries']:>3} {order:<9} "
                          + " ".join(f"{r[m]:>6.3f}" for m in (*METRICS, "coverage")))
        for split, ms in metrics["paired"].items():
            for metric, iv in ms.items():
                lo, hi = iv["difference_ci95"]
                print(f"{name:<5} {split:<6} paired {metric:<7} diff {iv['difference']:+.3f}  95% CI [{lo:+.3f}, {hi:+.3f}]"
                      f"  ({iv['queries']} queries, {iv['families']} families)")
        results[name] = {
            "corpus": f"{SUITES[name]}/sections.jsonl",
            "suite_version": metrics["suite_version"],
            "provider": metrics["provider"],
            "retrieval_version": metrics["retrieval_version"],
            "passage_version": metrics["passage_version"],
            "provider_requests": metrics["provider_requests"],
            "keyword": metrics["by_split"],
            "embedding": metrics["reranked_by_split"],
            "paired": metrics["paired"],
            "secondary_baseline": metrics["secondary_baseline"],
            "keyword_fallback_queries": metrics["keyword_fallback_queries"],
            "exact_citation": [{k: c[k] for k in ("query_id", "text", "resolved", "message")}
                               for c in metrics["controls"]["exact_citation"]],
            "outside_corpus_top3": {c["query_id"]: [h["doc_id"] for h in c["keyword_top"][:3]]
                                    for c in metrics["controls"]["outside_corpus"]},
            "wall_seconds": round(seconds, 1),
        }
    results["machine"] = {"python": platform.python_version(), "platform": platform.platform()}
    results["command"] = "python benchmarks/statutes.py " + " ".join(sys.argv[1:])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
