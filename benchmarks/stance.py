"""Workload 1 on casefacts, scifact and climate-fever `test`: NDCG@10 by stance for each signal and the hybrid,
plain bm25s (default settings) side by side, build time, and run.sh wall time cold and warm.

    .venv/bin/python benchmarks/stance.py [--datasets casefacts scifact climate-fever] [--data ../shared/data/stance]

Reads ../shared/data (never shipped); builds indexes under benchmarks/work/ (git-ignored); writes
benchmarks/results/stance.json. Fusion weights are the shipped defaults, tuned on casefacts `dev` only.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import time
from pathlib import Path

from citator.data import read_corpus, read_ground_truth, read_queries, write_json_atomic, write_queries
from citator.evaluate import per_query, reward

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "benchmarks" / "work"


def ndcg_by_stance(qrels, queries, run):  # type: ignore[no-untyped-def]
    values = per_query(qrels, run, ["ndcg@10"], [q.query_id for q in queries])["ndcg@10"]
    out = {s: _mean([values[q.query_id] for q in queries if q.stance == s]) for s in ("supported", "refuted", "all")}
    out["overall"] = _mean(list(values.values()))
    return out


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")


def plain_bm25s(corpus, queries):  # type: ignore[no-untyped-def]
    """bm25s exactly as its README shows: default tokenize (lower-case, English stopwords off), BM25()."""
    import bm25s

    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize([f"{d.title}\n{d.text}" for d in corpus], show_progress=False), show_progress=False)
    docs, _ = retriever.retrieve(bm25s.tokenize([q.text for q in queries], show_progress=False), k=10, show_progress=False)
    ids = [d.doc_id for d in corpus]
    return {q.query_id: [ids[i] for i in row] for q, row in zip(queries, docs)}


def timed_run_sh(index: Path, queries: Path, out: Path, extra: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([str(ROOT / "run.sh"), "--index-dir", str(index), "--queries", str(queries), "--output", str(out),
                    "--top-k", "10", *extra], check=True, capture_output=True)
    return time.perf_counter() - start


def bench_dataset(name: str, data: Path, reuse: dict | None) -> dict:  # type: ignore[type-arg]
    from citator.stance.workload import build, start_server, stop_server
    from citator.engines.fusion import top_k
    from citator.stance.retrieve.searcher import StanceSearcher

    folder = data / name
    corpus = read_corpus(folder / "corpus.jsonl")
    queries = [q for q in read_queries(folder / "queries.jsonl") if q.split == "test"]
    qrels = read_ground_truth(folder / "ground_truth.jsonl")
    index = WORK / name / "index"
    if reuse is not None and (index / "manifest.json").is_file():
        # --reuse: same index, searched with the current code; the build time is the earlier run's.
        stop_server(index)
        start_server(index)
        build_seconds = reuse["build_seconds"]
    else:
        start = time.perf_counter()
        build(folder / "corpus.jsonl", index, serve=True)
        build_seconds = time.perf_counter() - start

    searcher = StanceSearcher(index)
    table = searcher.features(queries, ["bm25", "bm25_maxp", "dense"])
    signals = table.signals
    rows: dict[str, dict[str, float]] = {}
    for label, matrix in [("bm25 (doc)", signals["bm25"]), ("bm25 MaxP", signals["bm25_maxp"]),
                          ("dense MaxP", signals["dense"]), ("hybrid (ours)", table.fused(searcher.config))]:
        idx, _ = top_k(matrix, 10)
        rows[label] = ndcg_by_stance(qrels, queries, {q.query_id: [searcher.doc_ids[i] for i in r] for q, r in zip(queries, idx)})
    rows["bm25s default"] = ndcg_by_stance(qrels, queries, plain_bm25s(corpus, queries))

    sample = WORK / name / "queries311.jsonl"
    write_queries(sample, queries[:311])
    warm = timed_run_sh(index, sample, WORK / name / "warm.jsonl", [])
    stop_server(index)
    cold = timed_run_sh(index, sample, WORK / name / "cold.jsonl", [])
    return {"documents": len(corpus), "test_queries": len(queries), "build_seconds": build_seconds,
            "run_sh_311": {"queries": min(311, len(queries)), "warm_seconds": warm, "cold_seconds": cold},
            "ndcg@10": rows}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", nargs="+", default=["casefacts", "scifact", "climate-fever"])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "stance")
    ap.add_argument("--reuse", action="store_true", help="search the indexes of the last run instead of rebuilding")
    args = ap.parse_args()
    results_path = ROOT / "benchmarks" / "results" / "stance.json"
    previous = json.loads(results_path.read_text())["datasets"] if args.reuse and results_path.is_file() else {}
    report = {"command": "benchmarks/stance.py --datasets " + " ".join(args.datasets) + (" --reuse" if args.reuse else ""),
              "machine": f"{platform.platform()}, {__import__('os').cpu_count()} cores", "datasets": {}}
    for name in args.datasets:
        result = bench_dataset(name, args.data, previous.get(name) if args.reuse else None)
        result["build_reused"] = bool(args.reuse and name in previous)
        report["datasets"][name] = result
        print(f"\n{name}: {result['documents']} docs, {result['test_queries']} test queries, "
              f"build {result['build_seconds']:.0f} s, run.sh 311 queries warm {result['run_sh_311']['warm_seconds']:.2f} s"
              f" / cold {result['run_sh_311']['cold_seconds']:.2f} s")
        print(f"{'system':<16}{'supported':>10}{'refuted':>10}{'all':>10}{'overall':>10}{'reward':>8}")
        for label, v in result["ndcg@10"].items():
            print(f"{label:<16}{v['supported']:>10.4f}{v['refuted']:>10.4f}{v['all']:>10.4f}{v['overall']:>10.4f}"
                  f"{reward(v['overall']):>8.3f}")
        write_json_atomic(ROOT / "benchmarks" / "results" / "stance.json", report)


if __name__ == "__main__":
    main()
