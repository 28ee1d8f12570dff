"""Probe (not shipped): LambdaMART's settings on CaseFacts dev, with the out-of-fold train features `citator train`
fits it on (fold encoders in artifacts/work/folds reused) and dev scored as train scores it (train-only memory).
Reads train and dev only.

    .venv/bin/python benchmarks/experiments/lambdamart_grid.py
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from contrast_probes import ARTIFACTS, DATA, train_memory_searcher  # noqa: E402
from pair_features import SETS  # noqa: E402

from citator.data import read_corpus  # noqa: E402
from citator.learn import train as T  # noqa: E402
from citator.learn.finetune import FinetuneConfig  # noqa: E402
from citator.learn.ranker_fit import fit_lambdamart  # noqa: E402
from citator.models.encoder import load_encoder  # noqa: E402
from citator.retrieve.passages import PassageSpec, passage_layout  # noqa: E402

# (trees, leaves, learning rate, min leaf); the first is what citator train uses.
GRID = [(300, 15, 0.05, 50), (600, 15, 0.05, 50), (300, 31, 0.05, 50), (1000, 15, 0.02, 50), (300, 7, 0.1, 50),
        (300, 15, 0.05, 20), (300, 15, 0.05, 100)]


def main() -> None:
    searcher = train_memory_searcher()
    manifest = json.loads((ARTIFACTS / "manifest.json").read_text())
    train_q, train_qrels = T.load_labeled(SETS, "train")
    dev_q, dev_qrels = T.load_labeled(SETS, "dev")
    weights = manifest["weights"]
    wanted = [n for n in searcher.available_signals() if n != "dense"]
    docs = read_corpus(DATA / "corpus.jsonl")
    base_path = Path(manifest["base_encoder"])
    _, starts = passage_layout([d.title for d in docs], [d.text for d in docs], PassageSpec())
    stem = next((ARTIFACTS / "work").glob("base-passages-*.npy")).stem
    fitting = T._Fitting(DATA / "corpus.jsonl", docs, base_path, load_encoder(base_path).model_id,
                         np.load(ARTIFACTS / "work" / f"{stem}.npy"), starts, FinetuneConfig(**manifest["finetune"]),
                         False)
    names, x, y, _, reused = T.out_of_fold_features(fitting, searcher, train_q, train_qrels, wanted, weights,
                                                    ARTIFACTS / "work" / "folds")
    print(f"out-of-fold features {x.shape}, fold encoders reused: {reused}")
    enc = searcher.encode(dev_q)
    signals = searcher.signal_matrices(dev_q, wanted, enc)
    for trees, leaves, rate, min_leaf in GRID:
        t = time.monotonic()
        ranker = fit_lambdamart(names, x, y, candidates=100, trees=trees, leaves=leaves, learning_rate=rate,
                                min_leaf=min_leaf)
        score = T._ranker_ndcg(ranker, signals, dev_q, dev_qrels, searcher, weights, enc.tokens)
        print(f"trees {trees:5d} leaves {leaves:3d} rate {rate:.2f} min leaf {min_leaf:4d}: dev NDCG@10 {score:.4f} "
              f"(fit {time.monotonic() - t:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
