"""Folds by proposition, and the ranker's out-of-fold features: for each training query, the features that parts
fitted without its fold give it, as they will look for an unseen query.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from citator.data import Qrels, Query
from citator.stance.learn.fitting import Fitting, stage
from citator.stance.learn.labeled import proposition_of
from citator.stance.retrieve.expansion import SIGNAL as EXPANDED
from citator.stance.retrieve.searcher import EncodedQueries, StanceSearcher


@dataclass(frozen=True)
class Interpolation:
    """The signals a fusion reads and their interpolation weights (which pick a ranker's candidates)."""

    signals: tuple[str, ...]
    weights: dict[str, float]


@dataclass(frozen=True)
class OutOfFold:
    """The ranker's training set from out-of-fold features: feature names, x (n_queries, candidates, n_features),
    labels y (n_queries, candidates), the candidates' doc indices, and how many fold encoders an earlier run had
    finished and were reused. Rows are fold 0's queries, then fold 1's, and so on, each fold in the queries' order
    (`fold_order`)."""

    names: list[str]
    x: np.ndarray
    y: np.ndarray
    candidates: np.ndarray
    reused: int


def out_of_fold_features(fitting: Fitting, searcher: StanceSearcher, train: tuple[Sequence[Query], Qrels],
                         fusion: Interpolation, work: Path, folds: int = 2, candidates: int = 200) -> OutOfFold:
    """Ranker features for every training query from parts fitted on the other folds (split by proposition).

    Parts fitted on a query itself would flatter every learned signal (its own proposition in the memory, its
    own documents pulled towards it); out of fold, the features look as they will for an unseen query. The parts
    are fitted to the corpus as an index fits its model's (Fitting.learned_parts), and the searcher scores the
    fold's queries with them (StanceSearcher.features).
    """
    queries, qrels = train
    fold_of = proposition_folds(queries, folds)
    names: list[str] = []
    xs, ys, cands = [], [], []
    reused = 0
    training_sets = fold_training_sets(queries, work, folds)
    for f in range(folds):
        held = [q for q, k in zip(queries, fold_of) if k == f]
        if not held:
            continue
        stage(fitting.progress, f"  fold {f + 1} of {folds}: parts fitted without its {len(held)} queries, "
              "then their features")
        training, encoder_dir = training_sets[f]
        parts = fitting.fit(training, qrels, encoder_dir)
        reused += parts.reused_encoder
        fold_parts = fitting.learned_parts(parts, EXPANDED in fusion.signals)
        encoded = EncodedQueries(*parts.encoder.encode_queries_with_tokens([q.text for q in held],
                                                                           [q.stance for q in held]))
        found = searcher.features(held, fusion.signals, encoded, learned=fold_parts).candidates(fusion.weights,
                                                                                               candidates)
        names = found.names
        xs.append(found.x)
        ys.append(labels(held, qrels, fitting.doc_ids, found.idx))
        cands.append(found.idx)
    return OutOfFold(names, np.concatenate(xs), np.concatenate(ys), np.concatenate(cands), reused)


def fold_training_sets(queries: Sequence[Query], work: Path, folds: int) -> list[tuple[list[Query], Path]]:
    """Per fold: the queries its parts are fitted on (all the other folds') and its encoder's folder in `work`."""
    fold_of = proposition_folds(queries, folds)
    return [([q for q, k in zip(queries, fold_of) if k != f], work / f"fold-{f}" / "encoder") for f in range(folds)]


def fold_order(queries: Sequence[Query], folds: int = 2) -> list[Query]:
    """`queries` in the row order of out_of_fold_features: fold by fold."""
    fold_of = proposition_folds(queries, folds)
    return [q for f in range(folds) for q, k in zip(queries, fold_of) if k == f]


def labels(queries: Sequence[Query], qrels: Qrels, doc_ids: Sequence[str], cand: np.ndarray) -> np.ndarray:
    return np.array([[1.0 if doc_ids[c] in qrels.relevant(q.query_id) else 0.0 for c in row]
                     for q, row in zip(queries, cand)])


def spans_folds(queries: Sequence[Query], folds: int) -> bool:
    """Whether the queries' propositions fall in two folds or more: only then are out-of-fold features made."""
    return len(set(proposition_folds(queries, folds).tolist())) >= 2


def proposition_folds(queries: Sequence[Query], folds: int) -> np.ndarray:
    """A fold per query, by proposition: a proposition's stances never sit on both sides of a split."""
    return np.array([_stable_hash(proposition_of(q)) % folds for q in queries], dtype=np.int64)


def _stable_hash(text: str) -> int:
    """Unlike hash(), the same in every process (Python salts str hashes)."""
    return int(hashlib.sha1(text.encode()).hexdigest()[:8], 16)


