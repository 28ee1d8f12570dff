"""Probe (not shipped): LambdaMART's settings on CaseFacts dev, with the out-of-fold train features `citator train`
fits it on (fold encoders in artifacts/work/folds reused) and dev scored as train scores it (train-only memory).
Reads train and dev only.

    .venv/bin/python benchmarks/experiments/lambdamart_grid.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pair_features import out_of_fold  # noqa: E402

from citator.learn import train as T  # noqa: E402
from citator.learn.ranker_fit import fit_lambdamart  # noqa: E402

# (trees, leaves, learning rate, min leaf); the first is what citator train uses.
GRID = [(300, 15, 0.05, 50), (600, 15, 0.05, 50), (300, 31, 0.05, 50), (1000, 15, 0.02, 50), (300, 7, 0.1, 50),
        (300, 15, 0.05, 20), (300, 15, 0.05, 100)]


def main() -> None:
    oof = out_of_fold(progress=False)
    searcher, dev_q = oof.searcher, oof.dev_q
    enc = searcher.encode(dev_q)
    signals = searcher.signal_matrices(dev_q, oof.signal_names, enc)
    for trees, leaves, rate, min_leaf in GRID:
        t = time.monotonic()
        ranker = fit_lambdamart(oof.names, oof.x, oof.y, candidates=100, trees=trees, leaves=leaves,
                                learning_rate=rate, min_leaf=min_leaf)
        score = T._ranker_ndcg(ranker, signals, dev_q, oof.dev_qrels, searcher, oof.weights, enc.tokens)
        print(f"trees {trees:5d} leaves {leaves:3d} rate {rate:.2f} min leaf {min_leaf:4d}: dev NDCG@10 {score:.4f} "
              f"(fit {time.monotonic() - t:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
