"""In-process search time for the 311-query batch of benchmarks/learning.py, as the search server runs it.

One warm-up query (as `citator serve` does), then the batch 8 times in one process: first, min and median seconds.
To compare two versions side by side on the same index, run it under each version's sources, alternating:

    git worktree add /tmp/old <commit>
    PYTHONPATH=/tmp/old/src .venv/bin/python benchmarks/experiments/search_timing.py
    PYTHONPATH=src .venv/bin/python benchmarks/experiments/search_timing.py

`--dataset NAME` (default casefacts) reads the index and queries that `benchmarks/learning.py` leaves in
benchmarks/work/learning/NAME.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import citator
from citator.data.records import Query
from citator.retrieve.searcher import StanceSearcher

WORK = Path(__file__).resolve().parents[1] / "work" / "learning"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default="casefacts", help="a folder of benchmarks/work/learning")
    work = WORK / ap.parse_args().dataset
    searcher = StanceSearcher(work / "index")
    for lexical in (searcher.lexical_doc, searcher.lexical_passage, searcher.lexical_expanded):
        if lexical is not None:
            lexical.use_numba()
    rows = [json.loads(line) for line in (work / "queries311.jsonl").open(encoding="utf-8")]
    queries = [Query(q["query_id"], q["text"], q.get("stance", "all")) for q in rows]
    searcher.search([Query("warm-up", "warm up", "all")], 1)
    took = []
    for _ in range(8):
        start = time.perf_counter()
        searcher.search(queries, 10)
        took.append(time.perf_counter() - start)
    print(f"{Path(citator.__file__).parents[1]}: {work.name}, {len(queries)} queries, first {took[0]:.2f} s, "
          f"min {min(took):.2f} s, median {statistics.median(took):.2f} s")


if __name__ == "__main__":
    main()
