"""Warm run.sh time as the evaluator sees it: wall clock of `./run.sh` for the 311-query batch of benchmarks/learning.py
against a live search server, repeated, with a fresh server every `--per-server` runs.

To compare two versions side by side, give each as a source folder; their runs alternate, each version against its
own server (started from that version's sources), so both see the same moments of this shared VM:

    git worktree add /tmp/old <commit>
    .venv/bin/python benchmarks/experiments/run_sh_timing.py --sources /tmp/old/src src --runs 16

`--dataset NAME` (default casefacts) reads the index and queries that `benchmarks/learning.py` leaves in
benchmarks/work/learning/NAME. Prints, per version, first-after-start, min, median and max seconds, and checks that
every run's output is byte for byte the same as the first's. Writes nothing but the outputs under the work folder.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / "benchmarks" / "work" / "learning"


def server(src: Path, index: Path, start: bool) -> None:
    """Stop the index's server, and with `start` start one from `src` and wait until it answers."""
    code = ("import sys; from pathlib import Path; from citator.bench.stance import start_server, stop_server; "
            f"stop_server(Path(sys.argv[1])); {'start_server(Path(sys.argv[1]))' if start else ''}")
    subprocess.run([sys.executable, "-c", code, str(index)], check=True, env={**os.environ, "PYTHONPATH": str(src)})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default="casefacts", help="a folder of benchmarks/work/learning")
    ap.add_argument("--sources", nargs="+", type=Path, default=[ROOT / "src"], help="src folders of the versions")
    ap.add_argument("--runs", type=int, default=16, help="warm runs per version")
    ap.add_argument("--per-server", type=int, default=4, help="runs before a fresh server")
    args = ap.parse_args()
    work = WORK / args.dataset
    index, queries = work / "index", work / "queries311.jsonl"
    took: dict[Path, list[float]] = {src: [] for src in args.sources}
    firsts: dict[Path, list[float]] = {src: [] for src in args.sources}
    outputs: dict[Path, bytes] = {}
    for round_start in range(0, args.runs, args.per_server):
        for src in args.sources:
            server(src.resolve(), index, start=True)
            out = work / f"timing.{args.sources.index(src)}.jsonl"
            for i in range(min(args.per_server, args.runs - round_start)):
                start = time.perf_counter()
                subprocess.run([str(ROOT / "run.sh"), "--index-dir", str(index), "--queries", str(queries),
                                "--output", str(out), "--top-k", "10"], check=True, capture_output=True,
                               env={**os.environ, "PYTHONPATH": str(src.resolve())})
                seconds = time.perf_counter() - start
                took[src].append(seconds)
                if i == 0:
                    firsts[src].append(seconds)
                data = out.read_bytes()
                if outputs.setdefault(src, data) != data:
                    raise SystemExit(f"{src}: run {len(took[src])} wrote other results than the first run")
    server(args.sources[-1].resolve(), index, start=False)
    for src in args.sources:
        t = took[src]
        print(f"{src}: {args.dataset}, {len(t)} warm runs of run.sh, first after a start "
              f"{statistics.median(firsts[src]):.2f} s (median), min {min(t):.2f} s, median {statistics.median(t):.2f} s, "
              f"max {max(t):.2f} s")
    if len(set(outputs.values())) > 1:
        print("note: the versions' outputs differ")


if __name__ == "__main__":
    main()
