"""Statute relevance benchmark: pool order vs the MiniLM embedding reranker on the NRS and D.C. dev suites (and the
fresh hand-written sets: statute_suites.py), for each retrieval arm (keyword, hybrid), and the arms against each other.

Per suite, arm and split: Hit@1/5/10, RR and target coverage of the 30-candidate pool, for the pool's order and the
reranked order of the same 30, with paired family-bootstrap 95% intervals (10,000 replicates, seed 20260920); then
hybrid minus keyword, paired the same way, for pool order and for reranked order. The secondary all-terms baseline
and the controls are in each run's metrics.json and report.

    .venv/bin/python benchmarks/statutes.py [--data ../shared/data/statutes] [--runs-dir benchmarks/work/statutes]
        [--suites nrs dc fresh-nrs fresh-dc fresh2-nrs fresh2-dc fresh3-nrs fresh3-dc] [--retrieval keyword hybrid] [--index-dir benchmarks/work/statutes-index] [--resume]

Wall time per run is from a fresh run directory (indexing, passages, MiniLM encoding, bootstrap, report), after the
reranker's encoder is loaded; the hybrid arm's vectors come from --index-dir (built there on first use, and the
build time is then part of that run's wall time).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

from statute_suites import ROOT, add_suite_arguments, corpus_key, display_path, paths, write_results

METRICS = ("hit@1", "hit@5", "hit@10", "rr")


def _print_run(name: str, arm: str, metrics: dict) -> None:
    for split, kinds in metrics["by_split"].items():
        for kind in kinds:
            for order, table in ((f"{arm}", metrics["by_split"]), (f"{arm}+emb", metrics["reranked_by_split"])):
                r = table[split][kind]
                print(f"{name:<9} {split:<6} {kind:<15} {r['queries']:>3} {order:<13} "
                      + " ".join(f"{r[m]:>6.3f}" for m in (*METRICS, "coverage")))
    for split, ms in metrics["paired"].items():
        for metric, iv in ms.items():
            lo, hi = iv["difference_ci95"]
            print(f"{name:<9} {split:<6} {arm} paired emb-pool {metric:<7} diff {iv['difference']:+.3f}  "
                  f"95% CI [{lo:+.3f}, {hi:+.3f}]  ({iv['queries']} queries, {iv['families']} families)")


def _summary(corpus: str, metrics: dict, seconds: float) -> dict:
    return {
        "corpus": corpus,
        "suite_version": metrics["suite_version"],
        "provider": metrics["provider"],
        "retrieval_version": metrics["retrieval_version"],
        "passage_version": metrics["passage_version"],
        "provider_requests": metrics["provider_requests"],
        "pool_order": metrics["by_split"],
        "embedding": metrics["reranked_by_split"],
        "paired": metrics["paired"],
        "secondary_baseline": metrics["secondary_baseline"],
        "keyword_fallback_queries": metrics["keyword_fallback_queries"],
        "exact_citation": [{k: c[k] for k in ("query_id", "text", "resolved", "message", "provider_calls")}
                           for c in metrics["controls"]["exact_citation"]],
        "outside_corpus_top3": {c["query_id"]: [h["doc_id"] for h in c["keyword_top"][:3]]
                                for c in metrics["controls"]["outside_corpus"]},
        "wall_seconds": round(seconds, 1),
    }


def _between(name: str, keyword: dict, hybrid: dict) -> dict:
    """Hybrid minus keyword over the ranking queries, paired by query and resampled by family, for pool order
    ("keyword" in per_query) and for the reranked order."""
    from citator.statutes.metrics import interval_json
    from citator.evaluate.bootstrap import paired_family_bootstrap

    out: dict[str, dict] = {}
    rows_h = {r["query_id"]: r for r in hybrid["per_query"]}
    for split in sorted({r["split"] for r in keyword["per_query"] if r["kind"] == "ranking"}):
        rows = [r for r in keyword["per_query"] if r["kind"] == "ranking" and r["split"] == split]
        families = [r["family"] for r in rows]
        out[split] = {}
        for order in ("keyword", "reranked"):
            for metric in (*METRICS, "coverage"):
                if order == "reranked" and metric == "coverage":
                    continue
                a = [r[order][metric] for r in rows]
                b = [rows_h[r["query_id"]][order][metric] for r in rows]
                iv = interval_json(paired_family_bootstrap(a, b, families))
                label = "pool" if order == "keyword" else "embedding"
                out[split][f"{label}/{metric}"] = {"keyword_arm": iv["keyword"], "hybrid_arm": iv["reranked"],
                                                   "difference": iv["difference"],
                                                   "keyword_arm_ci95": iv["keyword_ci95"],
                                                   "hybrid_arm_ci95": iv["reranked_ci95"],
                                                   "difference_ci95": iv["difference_ci95"],
                                                   "queries": iv["queries"], "families": iv["families"]}
                lo, hi = iv["difference_ci95"]
                print(f"{name:<9} {split:<6} hybrid-keyword {label:<9} {metric:<8} {iv['keyword']:.3f} -> "
                      f"{iv['reranked']:.3f}  diff {iv['difference']:+.3f}  95% CI [{lo:+.3f}, {hi:+.3f}]")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_suite_arguments(parser, "statutes.json", suites=("nrs", "dc"))
    parser.add_argument("--runs-dir", type=Path, default=ROOT / "benchmarks" / "work" / "statutes")
    parser.add_argument("--resume", action="store_true", help="reuse existing run directories (wall time then means little)")
    parser.add_argument("--retrieval", nargs="+", choices=("keyword", "hybrid"), default=["keyword", "hybrid"])
    args = parser.parse_args()

    from citator.statutes.run import RunConfig, run_statutes
    from citator.statutes.providers.embedding import EmbeddingProvider

    provider = EmbeddingProvider()
    results: dict[str, object] = {}
    print(f"{'suite':<9} {'split':<6} {'kind':<15} {'n':>3} {'order':<13} {'hit@1':>6} {'hit@5':>6} {'hit@10':>6} "
          f"{'rr':>6} {'cov':>6}")
    for name in args.suites:
        corpus, suite = paths(args.data, name)
        by_arm: dict[str, dict] = {}
        for arm in args.retrieval:
            run_dir = args.runs_dir / (name if arm == "keyword" else f"{name}-{arm}")
            if not args.resume:
                shutil.rmtree(run_dir, ignore_errors=True)
            start = time.perf_counter()
            config = RunConfig(corpus, suite, run_dir, retrieval=arm, index_dir=args.index_dir / corpus_key(name))
            metrics = run_statutes(config, provider)
            seconds = time.perf_counter() - start
            by_arm[arm] = metrics
            _print_run(name, arm, metrics)
            results[f"{name}/{arm}"] = _summary(display_path(corpus, args.data), metrics, seconds)
        if {"keyword", "hybrid"} <= by_arm.keys():
            results[f"{name}/hybrid-vs-keyword"] = _between(name, by_arm["keyword"], by_arm["hybrid"])
    results[f"command/{'+'.join(args.suites)}"] = "python benchmarks/statutes.py " + " ".join(sys.argv[1:])
    # Suites run separately add to one results file; a suite's entries are replaced when it is run again, and so is
    # an earlier command whose suites were all run again.
    if args.out.is_file():
        earlier = json.loads(args.out.read_text(encoding="utf-8"))
        rerun = set(args.suites)
        results = {**{k: v for k, v in earlier.items()
                      if not (k.startswith("command/") and set(k.removeprefix("command/").split("+")) <= rerun)},
                   **results}
    write_results(args.out, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
