"""Probe step 1 (not shipped): ranker features of the propositions asked with both stances, train out of fold and
dev with the train-only memory, cached for benchmarks/experiments/pair_model.py.

Train: the 2-fold out-of-fold features `citator train` fits LambdaMART on (its fold encoders in artifacts/work/folds
are reused); dev: the features the searcher computes in the train-only-memory index of contrast_probes.py.
Reads train and dev only.

    .venv/bin/python benchmarks/experiments/pair_features.py
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from contrast_probes import ARTIFACTS, DATA, WORK, train_memory_searcher  # noqa: E402

from citator.data import Qrels, Query, read_corpus  # noqa: E402
from citator.data.hashing import sha256_file  # noqa: E402
from citator.evaluate.stance_discrimination import paired_queries  # noqa: E402
from citator.learn import train as T  # noqa: E402
from citator.learn.finetune import FinetuneConfig  # noqa: E402
from citator.models.encoder import encoder_fingerprint, load_encoder  # noqa: E402
from citator.retrieve.index_dir import base_passage_cache  # noqa: E402
from citator.retrieve.passages import PassageSpec, passage_layout  # noqa: E402
from citator.retrieve.searcher import StanceSearcher  # noqa: E402

OUT = WORK / "pair-features.npz"
CANDIDATES = 200
SETS = [(DATA / "queries.jsonl", DATA / "ground_truth.jsonl"),
        (DATA / "queries_overruled.jsonl", DATA / "ground_truth_overruled.jsonl")]


def paired_ids(queries) -> set[str]:  # type: ignore[no-untyped-def]
    return {q.query_id for p in paired_queries(queries) for q in p}


@dataclass
class OutOfFold:
    """Train's out-of-fold ranker features as `citator train` computes them, and what scoring dev needs."""

    searcher: StanceSearcher  # over the train-only-memory index
    weights: dict[str, float]
    signal_names: list[str]
    train_q: list[Query]
    train_qrels: Qrels
    dev_q: list[Query]
    dev_qrels: Qrels
    names: list[str]
    x: np.ndarray  # rows in T.fold_order(train_q)
    y: np.ndarray
    cand: np.ndarray


def out_of_fold(progress: bool = True) -> OutOfFold:
    """Out-of-fold features for all of train (the fold encoders' stamps depend on all of it), reusing the shipped
    artifacts' fold encoders and base passage vectors."""
    searcher = train_memory_searcher()
    manifest = json.loads((ARTIFACTS / "manifest.json").read_text())
    train_q, train_qrels = T.load_labeled(SETS, "train")
    dev_q, dev_qrels = T.load_labeled(SETS, "dev")
    weights = manifest["weights"]
    wanted = [n for n in searcher.available_signals() if n != "dense"]
    docs = read_corpus(DATA / "corpus.jsonl")
    base_path = Path(manifest["base_encoder"])
    _, starts = passage_layout([d.title for d in docs], [d.text for d in docs], PassageSpec())
    corpus_sha256, base_sha256 = sha256_file(DATA / "corpus.jsonl"), encoder_fingerprint(base_path)
    vectors, _ = base_passage_cache(ARTIFACTS / "work", corpus_sha256, base_sha256)
    fitting = T._Fitting(DATA / "corpus.jsonl", docs, base_path, load_encoder(base_path).model_id, np.load(vectors),
                         starts, FinetuneConfig(**manifest["finetune"]), progress, base_sha256, corpus_sha256)
    names, x, y, cand, reused = T.out_of_fold_features(fitting, searcher, train_q, train_qrels, wanted, weights,
                                                       ARTIFACTS / "work" / "folds", candidates=CANDIDATES)
    print(f"out-of-fold features {x.shape}, fold encoders reused: {reused}")
    return OutOfFold(searcher, weights, wanted, train_q, train_qrels, dev_q, dev_qrels, names, x, y, cand)


def main() -> None:
    oof = out_of_fold()
    searcher, weights, wanted, names, x, cand = oof.searcher, oof.weights, oof.signal_names, oof.names, oof.x, oof.cand
    train_q, dev_q = oof.train_q, oof.dev_q
    order = T.fold_order(train_q)
    keep = paired_ids(train_q)
    rows = [i for i, q in enumerate(order) if q.query_id in keep]

    enc = searcher.encode(dev_q)
    signals = searcher.signal_matrices(dev_q, wanted, enc)
    dev_cand, dev_names, dev_x = T._candidate_features(signals, dev_q, searcher.years, weights, CANDIDATES,
                                                       searcher.citations, enc.tokens, searcher.late_store)
    assert dev_names == names, (dev_names, names)
    keep_dev = paired_ids(dev_q)
    drows = [i for i, q in enumerate(dev_q) if q.query_id in keep_dev]
    np.savez(OUT, names=np.array(names), train_x=x[rows], train_cand=cand[rows],
             train_ids=np.array([order[i].query_id for i in rows]),
             dev_x=dev_x[drows], dev_cand=dev_cand[drows], dev_ids=np.array([dev_q[i].query_id for i in drows]))
    print(f"wrote {OUT}: {len(rows)} train and {len(drows)} dev queries")


if __name__ == "__main__":
    main()
