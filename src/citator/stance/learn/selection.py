"""Choosing the fusion on dev: dev's queries scored through an index built with the model fitted so far, the
interpolation's weights tuned on them, a linear ranker fitted on dev (cross-validated) and LambdaMART fitted on
train's out-of-fold features, the best kept; and what a stance contrast would score on the chosen fusion.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product
from pathlib import Path
from typing import Any

import numpy as np

from citator.data import Qrels, Query
from citator.errors import CitatorError
from citator.evaluate import evaluate
from citator.evaluate.stance_discrimination import paired_queries, stance_discrimination
from citator.engines.fusion import interpolate, top_k
from citator.stance.learn.base_passages import BasePassages
from citator.stance.learn.fitting import Fitting, stage
from citator.stance.learn.folds import Interpolation, labels, out_of_fold_features, proposition_folds, spans_folds
from citator.stance.learn.labeled import TrainingData
from citator.stance.learn.ranker_fit import LambdaMartSettings, fit_lambdamart, fit_linear_ranker
from citator.stance.retrieve import contrast
from citator.stance.retrieve.config import RetrievalConfig
from citator.stance.retrieve.features import FeatureTable
from citator.stance.retrieve.index_dir import BuildOptions, build_index
from citator.stance.retrieve.model import Fusion, RankerKind, StanceModel
from citator.stance.retrieve.ranker import Ranker
from citator.stance.retrieve.searcher import EncodedQueries, StanceSearcher


def _ndcg(qrels: Qrels, queries: Sequence[Query], doc_ids: Sequence[str], scores: np.ndarray) -> float:
    idx, _ = top_k(scores, 10)
    run = {q.query_id: [doc_ids[i] for i in row] for q, row in zip(queries, idx)}
    return evaluate(qrels, run, ["ndcg@10"], [q.query_id for q in queries])["ndcg@10"]


def tune_weights(signals: dict[str, np.ndarray], qrels: Qrels, queries: Sequence[Query], doc_ids: Sequence[str]
                 ) -> tuple[dict[str, float], float]:
    """Coarse grid over interpolation weights, on dev."""
    grid = {"bm25": [0.0, 0.2], "bm25_maxp": [0.0, 0.2], "dense": [0.0, 0.3], "ft_dense": [0.5, 1.0],
            "memory_max": [0.0, 0.5, 1.0], "memory_vote": [0.0, 0.5], "memory_centroid": [0.0, 0.5],
            "doc_embedding": [0.0, 0.5], "bm25_expanded": [0.0, 0.3]}
    names = [n for n in grid if n in signals]
    best: tuple[float, dict[str, float]] = (-1.0, {})
    for values in product(*(grid[n] for n in names)):
        weights = dict(zip(names, values))
        if not any(weights.values()):
            continue
        score = _ndcg(qrels, queries, doc_ids, interpolate(signals, weights))
        if score > best[0]:
            best = (score, weights)
    return best[1], best[0]


@dataclass(frozen=True)
class DevScoring:
    """Dev's queries searched through an index built with the model as fitted so far: its searcher and the table
    of every signal's scores for them (with the fine-tuned encoder's token states), which fusion and rankers are
    chosen on."""

    queries: list[Query]
    qrels: Qrels
    searcher: StanceSearcher
    table: FeatureTable

    @property
    def doc_ids(self) -> list[str]:
        return self.searcher.doc_ids

    def ndcg(self, scores: np.ndarray) -> float:
        return _ndcg(self.qrels, self.queries, self.doc_ids, scores)


def dev_scoring(data: TrainingData, model: StanceModel, passages: BasePassages, index: Path,
                progress: bool) -> DevScoring:
    """Dev scored through an index of the corpus built with `model` (its document tokens kept: every ranker is
    scored with late interaction while the fusion is chosen)."""
    dev_q, dev_qrels = data.dev
    options = BuildOptions(Path(model.base_encoder.path), artifacts=model, passages=passages.passages,
                           keep_tokens=True, progress=progress)
    build_index(data.corpus, index, options)
    searcher = StanceSearcher(index)
    if searcher.ft_encoder is None:
        raise CitatorError(f"{index}: the dev index holds no fine-tuned encoder")
    encoded = EncodedQueries(*searcher.ft_encoder.encode_queries_with_tokens([q.text for q in dev_q],
                                                                             [q.stance for q in dev_q]))
    return DevScoring(dev_q, dev_qrels, searcher, searcher.features(dev_q, searcher.available_signals(), encoded))


@dataclass(frozen=True)
class FusionOption:
    """One way the model may fuse its signals, with its NDCG@10 on dev: interpolation of tuned weights
    (`ranker` "none") or a fitted ranker reordering the interpolation's top candidates."""

    ranker: RankerKind
    dev_ndcg: float
    fitted: Ranker | None = None

    @property
    def fusion(self) -> Fusion:
        return "interpolate" if self.ranker == "none" else "learned"


@dataclass(frozen=True)
class FusionChoice:
    """Training's choice of fusion on dev: the signals it fuses, the interpolation weights, the best option (the
    earlier one on a tie), the ranker file to ship (the chosen one, else the linear one: benchmarks score it) and
    what was measured."""

    signals: tuple[str, ...]
    weights: dict[str, float]
    chosen: FusionOption
    shipped: Ranker
    dev_ndcg: dict[str, Any]
    skipped: dict[str, str]
    reused_encoders: int


def choose_fusion(fitting: Fitting, data: TrainingData, dev: DevScoring, folds: int, work: Path,
                  timings: dict[str, float]) -> FusionChoice:
    """Tune the interpolation on dev, fit a linear ranker on dev (scored by 2-fold cross-validation) and LambdaMART
    on train's out-of-fold features (scored on all of dev), and keep the best on dev."""
    t = time.monotonic()
    by_signal = {name: dev.ndcg(m) for name, m in dev.table.signals.items()}
    fusions = {"untrained_hybrid": dev.ndcg(interpolate(dev.table.signals,
                                                        {"bm25": 0.3, "bm25_maxp": 0.2, "dense": 0.7}))}
    # The fine-tuned encoder supersedes the base one on the query side: fusion without `dense` measured the same on
    # CaseFacts dev (learned fusion 0.4548 vs 0.4566) and saves every search a second encoder pass.
    table = dev.table.only([name for name in dev.table.signals if name != "dense"])
    weights, fusions["interpolation"] = tune_weights(dict(table.signals), dev.qrels, dev.queries, dev.doc_ids)
    fusion = Interpolation(tuple(table.signals), weights)
    timings["fusion_seconds"] = time.monotonic() - t
    options = [FusionOption("none", fusions["interpolation"])]
    skipped: dict[str, str] = {}
    # (a) A linear ranker fitted on dev itself (scored by 2-fold cross-validation on dev).
    stage(fitting.progress, "linear ranker (2-fold cross-validation on dev)")
    linear, cv = fit_ranker_cv(table, dev, weights)
    if cv is None:
        skipped["linear"] = "dev's propositions all fall in one of the two folds"
    else:
        fusions["linear_cv"] = cv
        options.append(FusionOption("linear", cv, linear))
    # (b) LambdaMART fitted on train, on features that parts fitted without each query's fold give it (as they
    # will be for unseen queries); scored on all of dev, which it never saw.
    lambdamart, reused, why = _lambdamart(fitting, data, dev, fusion, (work, folds), timings)
    if lambdamart is None:
        skipped["lambdamart"] = why
    else:
        fusions["lambdamart_out_of_fold"] = ranker_ndcg(lambdamart, table, dev, weights)
        options.append(FusionOption("lambdamart", fusions["lambdamart_out_of_fold"], lambdamart))
    chosen = max(options, key=lambda o: o.dev_ndcg)  # max keeps the first of equals: the simpler fusion on a tie
    return FusionChoice(fusion.signals, weights, chosen, chosen.fitted or linear,
                        {"signals": by_signal, "fusions": fusions}, skipped, reused)


def _lambdamart(fitting: Fitting, data: TrainingData, dev: DevScoring, fusion: Interpolation,
                folds: tuple[Path, int], timings: dict[str, float]) -> tuple[Ranker | None, int, str]:
    """LambdaMART fitted on train's out-of-fold features (`folds`: the work folder and how many folds), how many
    fold encoders were reused, and why there is none where there is none."""
    work, n_folds = folds
    train_q, _ = data.train
    if not spans_folds(train_q, n_folds):
        return None, 0, "train's propositions all fall in one fold"
    t = time.monotonic()
    stage(fitting.progress, f"out-of-fold ranker features for {len(train_q)} train queries, {n_folds} folds")
    found = out_of_fold_features(fitting, dev.searcher, data.train, fusion, work / "folds", folds=n_folds)
    timings["out_of_fold_seconds"] = time.monotonic() - t
    if not found.y.any():
        return None, found.reused, "no training query has a relevant document among its candidates"
    t = time.monotonic()
    # Fitted on the top 200 candidates, applied to the top 100: the same on CaseFacts dev (0.5155 vs 0.5147)
    # and half the trees' work at search time (about 0.25 s of 0.5 s for 311 queries on 2 cores).
    stage(fitting.progress, f"LambdaMART on {found.x.shape[0]} queries x {found.x.shape[1]} candidates")
    ranker = fit_lambdamart(found.names, found.x, found.y, LambdaMartSettings(candidates=100))
    timings["lambdamart_seconds"] = time.monotonic() - t
    return ranker, found.reused, ""


def contrast_on_dev(dev: DevScoring, choice: FusionChoice) -> dict[str, Any]:
    """What the stance contrast would score on dev, on the chosen fusion: reported, never shipped. It raised
    CaseFacts dev's both-stance scores but lowered both answers of the fresh hand-written two-sided propositions
    (benchmarks/stance_fresh.py), so, like the refuter slots, only a --config file turns it on (docs/stance.md).
    A linear ranker fitted on dev itself would flatter any weight chosen on its dev scores: then there is none."""
    fused = None
    if choice.chosen.ranker != "linear":
        chosen = RetrievalConfig(fusion=choice.chosen.fusion, weights=choice.weights)
        fused = dev.table.only(choice.signals).fused(chosen, choice.chosen.fitted)
    best, table = choose_contrast(dev.queries, dev.qrels, dev.doc_ids, fused)
    return {"best_on_dev": best, "dev": table}


def choose_contrast(queries: Sequence[Query], qrels: Qrels, doc_ids: Sequence[str],
                    fused: np.ndarray | None) -> tuple[float, dict[str, Any]]:
    """The stance-contrast weight (of contrast.GRID) with the best mean strict NDCG@10 on the propositions `queries`
    ask with both stances, the smaller weight on a tie; and what each weight scored (keys "weight"). 0 when there
    are none.

    `fused`: the chosen fusion's dev scores, or None when that fusion was fitted on dev (nothing is chosen then).
    """
    if fused is None:
        return 0.0, {"skipped": "the chosen ranker was fitted on dev, so dev cannot also choose the contrast"}
    if not paired_queries(queries):
        return 0.0, {"skipped": "no proposition is asked with both stances (with a proposition_id) in dev"}
    idx, scores = top_k(fused, contrast.DEPTH)
    table: dict[str, Any] = {}
    for weight in contrast.GRID:
        moved, _ = contrast.contrast_top(idx, scores, queries, weight)
        run = {q.query_id: [doc_ids[j] for j in row[:10]] for q, row in zip(queries, moved.tolist())}
        found = stance_discrimination(queries, qrels, run)
        table[f"{weight:g}"] = {"weight": weight, "queries": found.queries,
                                "strict_ndcg@10": float(np.mean(list(found.strict_ndcg.values()))),
                                "outranks": found.outranks_rate}
    # Dicts keep insertion order, and max keeps the first of equals: the smaller weight wins ties.
    best = max(table.values(), key=lambda v: v["strict_ndcg@10"])
    return best["weight"], table


def fit_ranker_cv(table: FeatureTable, dev: DevScoring, weights: dict[str, float]) -> tuple[Ranker, float | None]:
    """Fit on one half of dev, score the other, and back; the final ranker is fitted on all of dev.

    The score is None when dev's propositions all fall in one fold (there is nothing to cross-validate on; folds go
    by a hash of the proposition, so this happens to a dev of one proposition and may to one of a few).
    """
    queries = dev.queries
    found = table.candidates(weights, 200)
    cand, names, x = found.idx, found.names, found.x
    y = labels(queries, dev.qrels, dev.doc_ids, cand)
    fold = proposition_folds(queries, 2)
    if len(set(fold.tolist())) < 2:
        return fit_linear_ranker(names, x, y), None
    runs: dict[str, list[str]] = {}
    for f in (0, 1):
        fit = fold != f
        ranker = fit_linear_ranker(names, x[fit], y[fit])
        held = [queries[i] for i in np.flatnonzero(~fit)]
        runs.update(_reranked_top10(held, cand[~fit], ranker.score(names, x[~fit]), dev.doc_ids))
    cv = evaluate(dev.qrels, runs, ["ndcg@10"], [q.query_id for q in queries])["ndcg@10"]
    return fit_linear_ranker(names, x, y), cv


def ranker_ndcg(ranker: Ranker, table: FeatureTable, dev: DevScoring, weights: dict[str, float]) -> float:
    """NDCG@10 on dev of `ranker` reordering the interpolation's top candidates."""
    found = table.candidates(weights, ranker.candidates)
    run = _reranked_top10(dev.queries, found.idx, ranker.score(found.names, found.x), dev.doc_ids)
    return evaluate(dev.qrels, run, ["ndcg@10"], [q.query_id for q in dev.queries])["ndcg@10"]


def _reranked_top10(queries: Sequence[Query], cand: np.ndarray, logits: np.ndarray, doc_ids: Sequence[str]
                    ) -> dict[str, list[str]]:
    """query id -> its ten candidates with the highest ranker logits (ties in candidate order)."""
    order = np.argsort(-logits, axis=1, kind="stable")[:, :10]
    return {q.query_id: [doc_ids[cand[i, j]] for j in row] for i, (q, row) in enumerate(zip(queries, order))}
