"""Where the search server's time goes for the 311-query batch of benchmarks/learning.py, stage by stage, and what
this CPU's matrix products reach: the numbers that say whether a warm run.sh can fit 3 s on a given machine.

    .venv/bin/python benchmarks/experiments/search_stages.py [--dataset casefacts] [--repeats 3]

Stages (median of the repeats, one warm process as `citator serve` holds it): the fine-tuned encoder's forward pass
(query vectors and token states), the signal matrices, late interaction (maxsim over each query's top candidates),
the whole fusion (maxsim included), and the whole search. Then float32 GEMM throughput of torch (MKL) and numpy
(OpenBLAS) at the shape of MiniLM's feed-forward layer for a batch of 32 queries, on 1 and 2 threads.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from citator.data import read_queries
from citator.data.records import Query
from citator.retrieve import ranker as ranker_module
from citator.retrieve.late_interaction import maxsim
from citator.retrieve.searcher import StanceSearcher

WORK = Path(__file__).resolve().parents[1] / "work" / "learning"


def timed(fn, repeats: int) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    took, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        took.append(time.perf_counter() - start)
    return statistics.median(took), out


def gemm_rates() -> list[str]:
    import torch
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    a, w = rng.standard_normal((1280, 384), dtype=np.float32), rng.standard_normal((1536, 384), dtype=np.float32)
    ta, tw = torch.from_numpy(a), torch.from_numpy(w)
    flops = 2 * a.shape[0] * a.shape[1] * w.shape[0]
    lines = []
    for threads in (1, 2):
        torch.set_num_threads(threads)
        with torch.inference_mode():
            seconds, _ = timed(lambda: [torch.nn.functional.linear(ta, tw) for _ in range(20)], 3)
        lines.append(f"torch linear, {threads} thread(s): {flops * 20 / seconds / 1e9:.0f} GFLOP/s")
        with threadpool_limits(threads, user_api="blas"):
            seconds, _ = timed(lambda: [a @ w.T for _ in range(20)], 3)
        lines.append(f"numpy matmul, {threads} thread(s): {flops * 20 / seconds / 1e9:.0f} GFLOP/s")
    torch.set_num_threads(2)
    return lines


def warm_searcher(dataset: str) -> tuple[StanceSearcher, list[Query]]:
    """The index and 311-query batch that benchmarks/learning.py leaves in benchmarks/work/learning/`dataset`, the
    searcher warmed up by one query as `citator serve` warms it."""
    work = WORK / dataset
    searcher = StanceSearcher(work / "index")
    searcher.search([Query("warm-up", "warm up", "all")], 1)
    return searcher, read_queries(work / "queries311.jsonl")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default="casefacts", help="a folder of benchmarks/work/learning")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    searcher, queries = warm_searcher(args.dataset)
    names = searcher.needed_signals()
    encode, encoded = timed(lambda: searcher.encode(queries), args.repeats)
    signals_s, signals = timed(lambda: searcher.signal_matrices(queries, names, encoded), args.repeats)
    lines = [f"encode (forward pass) {encode:.2f} s", f"signal matrices {signals_s:.2f} s"]
    if searcher.uses_late_interaction and searcher.ranker is not None:
        base = ranker_module.interpolate(signals, searcher.config.weights, searcher.config.norm_depth)
        cand, _ = ranker_module.top_k(base, searcher.ranker.candidates)
        depth = min(ranker_module.LATE_DEPTH, cand.shape[1])
        late, _ = timed(lambda: maxsim(encoded.tokens, cand[:, :depth], searcher.late_store), args.repeats)
        lines.append(f"maxsim ({cand.shape[0]} x {depth} pairs) {late:.2f} s")
    fuse, _ = timed(lambda: searcher.fuse(signals, queries, encoded=encoded), args.repeats)
    search, _ = timed(lambda: searcher.search(queries, 10), args.repeats)
    lines += [f"fuse (maxsim included) {fuse:.2f} s", f"whole search {search:.2f} s", *gemm_rates()]
    print(f"{args.dataset}, {len(queries)} queries, median of {args.repeats}:")
    print("\n".join("  " + line for line in lines))


if __name__ == "__main__":
    main()
