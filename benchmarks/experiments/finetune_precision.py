"""Fine-tuning speed in fp32 and under bf16 autocast on this CPU, side by side. Not a shipped part.

Each run fine-tunes the default MiniLM (`citator.learn.finetune`, the settings `make artifacts` uses) on the first
`--steps` batches of CaseFacts' train examples, in a fresh single-thread process as each lane of `citator train`
is, and prints seconds per step (the model load and the first two steps left out). The passage vectors are random
unit vectors of the corpus's real passage layout: this measures speed only, and the encoder's forward and backward
passes are nearly all of a step's time.

    .venv/bin/python benchmarks/experiments/finetune_precision.py [--steps 20]

Reads train only. Output in benchmarks/results/finetune_precision.log (by tee).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CASEFACTS = ROOT.parent / "shared" / "data" / "stance" / "casefacts"


def one_run(precision: str, steps: int) -> None:
    """Fine-tune `steps` steps in this process on one thread; print per-step seconds as JSON (the child side)."""
    import numpy as np
    import torch
    from tqdm import tqdm

    from citator.data import read_corpus, read_ground_truth, read_queries
    from citator.learn import finetune
    from citator.learn.pairs import QUERY_PREFIXES, query_examples
    from citator.models.encoder import default_encoder_path
    from citator.retrieve.passages import PassageSpec, passage_layout

    torch.set_num_threads(1)
    docs = read_corpus(CASEFACTS / "corpus.jsonl")
    train = [q for q in read_queries(CASEFACTS / "queries.jsonl") if q.split == "train"]
    examples = query_examples(train, read_ground_truth(CASEFACTS / "ground_truth.jsonl"), [d.doc_id for d in docs])
    config = finetune.FinetuneConfig(epochs=1, learning_rate=5e-5, precision=precision)
    examples = examples[: config.batch_size * steps]
    passages, starts = passage_layout([d.title for d in docs], [d.text for d in docs], PassageSpec())
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((len(passages), 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    stamps: list[float] = []
    update = tqdm.update

    def timed_update(self, n=1):  # type: ignore[no-untyped-def]
        stamps.append(time.perf_counter())
        return update(self, n)

    tqdm.update = timed_update  # one stamp per finished step
    with tempfile.TemporaryDirectory() as out:
        finetune.finetune_query_encoder(default_encoder_path(), examples, vectors, starts, Path(out) / "encoder",
                                        config, True, query_prefixes=QUERY_PREFIXES)
    gaps = [b - a for a, b in zip(stamps[1:], stamps[2:])]
    print(json.dumps({"precision": finetune.resolve_precision(precision, "cpu"), "step_seconds": gaps}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        one_run(args.child, args.steps)
        return
    from citator.learn.finetune import cpu_has_bf16_units

    print(f"CPU bf16 units (AMX / AVX-512 BF16): {cpu_has_bf16_units()}; {args.steps} steps per run, 1 thread,"
          " batch 32; seconds per step after the first two:")
    for precision in ("fp32", "bf16", "fp32", "bf16"):
        done = subprocess.run([sys.executable, __file__, "--child", precision, "--steps", str(args.steps)],
                              capture_output=True, text=True, check=True)
        row = json.loads(done.stdout.strip().splitlines()[-1])
        gaps = sorted(row["step_seconds"])
        print(f"  {precision}: median {gaps[len(gaps) // 2]:.3f} s  mean {sum(gaps) / len(gaps):.3f} s")


if __name__ == "__main__":
    main()
