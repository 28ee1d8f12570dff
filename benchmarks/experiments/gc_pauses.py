"""Garbage-collection pauses in a warm search process, with and without `gc.freeze()` after loading (what
`citator serve` does since this probe): how often a full (generation 2) collection falls inside a 311-query search
and what one costs. The first series starts straight after loading, as a server's first request does (the evaluator
runs run.sh once after build.sh).

A loaded searcher holds a few hundred thousand Python objects (doc ids, vocabularies, the models' modules) that
live as long as the server; a full collection walks them all, frozen ones aside. This runs `--searches` searches
of benchmarks/learning.py's 311-query batch in one process with a gc callback timing every collection, then
freezes and repeats in the same process, and times an explicit full collection both ways. (The frozen series
follows the other's searches and a full collection; the count of full collections inside searches is what the
two series compare.)

    .venv/bin/python benchmarks/experiments/gc_pauses.py [--dataset casefacts] [--searches 12]

Reads test queries only to answer them (as run.sh does); nothing is tuned. Output in
benchmarks/results/gc_pauses.log (by tee).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search_stages import warm_searcher  # noqa: E402

from citator.data import Query  # noqa: E402
from citator.retrieve.searcher import StanceSearcher  # noqa: E402


def full_collection_seconds() -> float:
    start = time.perf_counter()
    gc.collect()
    return time.perf_counter() - start


def searches(searcher: StanceSearcher, queries: list[Query], n: int) -> str:
    """n searches with every full collection inside them timed: a one-line summary."""
    pauses: list[float] = []
    during: list[int] = []  # the search (1-based) each full collection fell in
    started = [0.0]

    def watch(phase: str, info: dict[str, Any]) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            pauses.append(time.perf_counter() - started[0])
            during.append(len(took) + 1)

    took = []
    gc.callbacks.append(watch)
    try:
        for _ in range(n):
            start = time.perf_counter()
            searcher.search(queries, 10)
            took.append(time.perf_counter() - start)
    finally:
        gc.callbacks.remove(watch)
    spent = (f", {sum(pauses):.2f} s in all (longest {max(pauses):.3f} s), in search {during}" if pauses else "")
    return (f"{n} searches: median {statistics.median(took):.2f} s (min {min(took):.2f}, max {max(took):.2f}); "
            f"{len(pauses)} full collections inside them{spent}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default="casefacts", help="a folder of benchmarks/work/learning")
    ap.add_argument("--searches", type=int, default=12)
    args = ap.parse_args()
    searcher, queries = warm_searcher(args.dataset)
    # As the server was before the freeze: searches straight after loading and warm-up, no collection between.
    lines = [f"tracked objects after loading: {len(gc.get_objects()):,}",
             "nothing frozen: " + searches(searcher, queries, args.searches),
             f"full collection, nothing frozen: {full_collection_seconds():.3f} s"]
    gc.freeze()
    lines += [f"frozen: {gc.get_freeze_count():,} objects; full collection {full_collection_seconds():.3f} s",
              "frozen: " + searches(searcher, queries, args.searches)]
    print(f"{args.dataset}, {len(queries)} queries:")
    print("\n".join("  " + line for line in lines))


if __name__ == "__main__":
    main()
