"""Fine-tuning throughput on this CPU: one process on all threads against two single-thread processes side by side
(what running the full and the fold encoders of `citator train` concurrently would buy). Not a shipped part.

Each run fine-tunes the default MiniLM for one epoch on the first `--steps` batches of CaseFacts' train examples,
against the base passage vectors that `citator train` cached in artifacts/work (run `make artifacts` first), and
prints wall-clock seconds and steps per second.

    .venv/bin/python benchmarks/experiments/finetune_threads.py [--steps 30]

Reads train only. Output in benchmarks/results/finetune_threads.log (by tee).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CASEFACTS = ROOT.parent / "shared" / "data" / "stance" / "casefacts"


def one_run(threads: int, steps: int) -> None:
    """Fine-tune in this process with `threads` torch threads (the subprocess side)."""
    import numpy as np
    import torch

    from citator.data import read_corpus, read_ground_truth, read_queries
    from citator.learn.finetune import FinetuneConfig, finetune_query_encoder
    from citator.learn.pairs import QUERY_PREFIXES, query_examples
    from citator.data.hashing import sha256_file
    from citator.models.encoder import default_encoder_path, encoder_fingerprint
    from citator.retrieve.index_dir import base_passage_cache
    from citator.retrieve.passages import PassageSpec, passage_layout

    torch.set_num_threads(threads)
    docs = read_corpus(CASEFACTS / "corpus.jsonl")
    train = [q for q in read_queries(CASEFACTS / "queries.jsonl") if q.split == "train"]
    examples = query_examples(train, read_ground_truth(CASEFACTS / "ground_truth.jsonl"), [d.doc_id for d in docs])
    config = FinetuneConfig(epochs=1)
    examples = examples[: config.batch_size * steps]
    _, starts = passage_layout([d.title for d in docs], [d.text for d in docs], PassageSpec())
    cache, _ = base_passage_cache(ROOT / "artifacts" / "work", sha256_file(CASEFACTS / "corpus.jsonl"),
                                  encoder_fingerprint(default_encoder_path()))
    vectors = np.load(cache)
    with tempfile.TemporaryDirectory() as out:
        finetune_query_encoder(default_encoder_path(), examples, vectors, starts, Path(out) / "encoder", config,
                               False, query_prefixes=QUERY_PREFIXES)


def timed(threads: int, steps: int, side_by_side: int) -> float:
    """Wall-clock seconds of `side_by_side` processes, each fine-tuning `steps` steps on `threads` threads."""
    start = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, __file__, "--child", str(threads), "--steps", str(steps)])
             for _ in range(side_by_side)]
    if any(p.wait() for p in procs):
        raise SystemExit("a fine-tuning process failed")
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        one_run(args.child, args.steps)
        return
    rows = [("one process, 2 threads", 2, 1), ("one process, 1 thread", 1, 1), ("two processes, 1 thread each", 1, 2)]
    print(f"fine-tuning {args.steps} steps per process (model load included):")
    for label, threads, n in rows:
        seconds = timed(threads, args.steps, n)
        print(f"  {label:30s} {seconds:6.1f} s  {n * args.steps / seconds:.2f} steps/s")


if __name__ == "__main__":
    main()
