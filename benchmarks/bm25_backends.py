"""BM25 scoring of 311 CaseFacts queries over the passage index: numpy kernel vs numba kernel (first call = JIT).

    .venv/bin/python benchmarks/bm25_backends.py [--index benchmarks/work/casefacts/index]

Needs the index that benchmarks/stance.py builds. Writes benchmarks/results/bm25_backends.json.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from citator.data import read_queries, write_json_atomic
from citator.stance.retrieve.layout import read_manifest
from citator.engines.lexical import LexicalIndex

ROOT = Path(__file__).resolve().parents[1]


def timed(index: LexicalIndex, texts: list[str]) -> tuple[float, np.ndarray]:
    start = time.perf_counter()
    scores = index.score_all(texts)
    return time.perf_counter() - start, scores


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--index", type=Path, default=ROOT / "benchmarks" / "work" / "casefacts" / "index")
    args = ap.parse_args()
    manifest = read_manifest(args.index)
    folder = manifest.path(args.index, "lexical_passage")
    texts = [q.text for q in read_queries(args.index.parent / "queries311.jsonl")]
    numpy_index = LexicalIndex.load(folder)
    t_numpy, a = timed(numpy_index, texts)
    t_numpy2, _ = timed(numpy_index, texts)
    numba_index = LexicalIndex.load(folder)
    if not numba_index.use_numba():
        raise SystemExit("numba is not installed: pip install 'citator[fast]'")
    t_first, b = timed(numba_index, texts)
    t_second, _ = timed(numba_index, texts)
    assert np.allclose(a, b)
    rows = {"numpy (1st call)": t_numpy, "numpy (2nd call)": t_numpy2, "numba (1st call, JIT)": t_first,
            "numba (2nd call)": t_second}
    print(f"{len(texts)} queries x {manifest.n_passages} passages")
    for name, seconds in rows.items():
        print(f"{name:<24}{seconds:>8.3f} s")
    write_json_atomic(ROOT / "benchmarks" / "results" / "bm25_backends.json",
                      {"command": "benchmarks/bm25_backends.py", "queries": len(texts),
                       "passages": manifest.n_passages, "seconds": rows})


if __name__ == "__main__":
    main()
