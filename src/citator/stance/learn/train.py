"""`citator train`: a stance model (stance/retrieve/model.py) learned from labeled propositions, in four steps.

1. `base_passages`: the base encoder's passages of the corpus, the frozen document side (cached in `work/`).
2. `_Fitting.fit`: the fine-tuned query encoder, the proposition memory and the learned document vectors.
3. `dev_scoring` and `choose_fusion`: an index built with the model so far scores dev, which picks the fusion
   (tuned interpolation, a linear ranker or LambdaMART on out-of-fold features).
4. `add_dev_memory`, then the model is recorded as complete.

Training data never ships: only what is learned from it (the encoder, memory vectors with the propositions' text
and document ids, the ranker and the fusion weights) goes into the model directory.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property, partial
from itertools import product
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from citator.data import Document, Qrels, Query, read_corpus, read_ground_truth, read_queries, write_json_atomic
from citator.errors import CitatorError, OutputError
from citator.evaluate import evaluate
from citator.evaluate.stance_discrimination import paired_queries, stance_discrimination
from citator.stance.learn.doc_embedding import fit_document_deltas
from citator.stance.learn.finetune import (
    FinetuneConfig, QueryExample, finetune_query_encoder, resolve_precision, training_device,
)
from citator.stance.learn.lanes import run_in_lanes
from citator.stance.learn.pairs import QUERY_PREFIXES, query_examples
from citator.stance.learn.passage_cache import BasePassages, base_passages, work_dir
from citator.stance.learn.ranker_fit import fit_lambdamart, fit_linear_ranker
from citator.data.hashing import sha256_file, sha256_text
from citator.data.jsonl import loads
from citator.stance.retrieve import contrast
from citator.stance.retrieve.config import RetrievalConfig
from citator.stance.retrieve.doc_embedding import base_document_vectors, save_deltas
from citator.engines.fusion import interpolate, top_k
from citator.stance.retrieve.index_dir import build_index
from citator.stance.retrieve.learned import LearnedParts
from citator.stance.retrieve.memory import MemoryEntry, PropositionMemory
from citator.stance.retrieve.model import ENCODER, MANIFEST, MEMORY, RANKER, Fusion, RankerKind, StanceModel

if TYPE_CHECKING:
    from citator.models.encoder import TokenStates
    from citator.stance.retrieve.ranker import Ranker
    from citator.stance.retrieve.searcher import EncodedQueries, StanceSearcher

LabeledSet = tuple[list[Query], Qrels]


def check_splits(path: Path) -> None:
    """A training queries file gives every query a string `split` or none at all: a query without one is used as
    both train and dev, so one that lost its field (a typo, a mangled key) beside others that have it would leak
    dev into training unseen. The error names the file, line and field."""
    from citator.data.jsonl import iter_jsonl
    from citator.errors import QueryError

    missing, present = None, 0
    for line, obj in iter_jsonl(path, QueryError):
        if "split" not in obj:
            missing = missing or line
            continue
        if not isinstance(obj["split"], str):
            raise QueryError(path, line, f"expected a string, got {type(obj['split']).__name__}", field="split")
        present += 1
    if missing is not None and present:
        raise QueryError(path, missing, f"missing field, while {present} other queries of this file have one (a "
                         "query without a split would be both train and dev)", field="split")


def load_labeled(pairs: Sequence[tuple[Path, Path]], split: str | None,
                 corpus_ids: set[str] | None = None) -> LabeledSet:
    """Queries (of one split, if the files carry splits) with their ground truth; `test` is never accepted.

    A queries file none of whose queries (of the split) has ground truth is refused (a mispaired
    --ground-truth); queries without any, and with `corpus_ids`, relevant documents the corpus lacks, are
    reported on stderr: training can learn nothing from them.
    """
    queries: list[Query] = []
    grades: dict[str, dict[str, int]] = {}
    for q_path, g_path in pairs:
        check_splits(q_path)
        qrels = read_ground_truth(g_path)
        unlabeled: list[str] = []
        labeled_here = 0
        missing: dict[str, list[str]] = {}
        for q in read_queries(q_path):
            if q.split == "test":
                continue  # never learn from, or select on, a test split
            if split is not None and q.split is not None and q.split != split:
                continue
            if q.query_id in grades:
                raise CitatorError(f'{q_path}: query_id "{q.query_id}" appears in two training files')
            if q.query_id not in qrels:
                unlabeled.append(q.query_id)
                continue
            queries.append(q)
            labeled_here += 1
            grades[q.query_id] = dict(qrels.of(q.query_id))
            if corpus_ids is not None:
                gone = sorted(qrels.relevant(q.query_id) - corpus_ids)
                if gone:
                    missing[q.query_id] = gone
        if unlabeled and not labeled_here:
            raise CitatorError(f'{q_path}: none of its {len(unlabeled)} {split or ""} queries has ground truth in '
                               f'{g_path} (e.g. query_id "{unlabeled[0]}"): is --ground-truth paired with the '
                               "right --queries?")
        if unlabeled:
            print(f'warning: {q_path}: {len(unlabeled)} {split or ""} queries have no ground truth in {g_path} '
                  f'(e.g. query_id "{unlabeled[0]}"); training skips them', file=sys.stderr)
        if missing:
            first = next(iter(missing))
            print(f'warning: {g_path}: {sum(map(len, missing.values()))} relevant_doc_ids of {len(missing)} queries '
                  f'are not in the corpus (e.g. query_id "{first}": "{missing[first][0]}"); training cannot learn '
                  "them", file=sys.stderr)
    if not queries:
        raise CitatorError(f"no labeled queries for split {split!r} in {[str(p) for p, _ in pairs]}")
    return queries, Qrels.from_dict(grades)


def _stage(progress: bool, what: str) -> None:
    """One line on stderr as a long stage without a progress bar of its own starts (with the wall clock)."""
    if progress:
        print(f"{time.strftime('%H:%M:%S')} {what}", file=sys.stderr, flush=True)


def _proposition(q: Query) -> str:
    prop = q.extra.get("proposition_id")
    return prop if isinstance(prop, str) and prop.strip() else q.query_id


def memory_entries(queries: Sequence[Query], qrels: Qrels, titles: dict[str, str]) -> list[MemoryEntry]:
    """One entry per (proposition, stance); `all` only where a proposition has no stance-specific query."""
    stanced = {_proposition(q) for q in queries if q.stance != "all"}
    out = []
    for q in queries:
        if q.stance == "all" and _proposition(q) in stanced:
            continue
        docs = sorted(qrels.relevant(q.query_id))
        out.append(MemoryEntry(_proposition(q), q.stance, q.text, tuple(docs), tuple(titles.get(d, "") for d in docs)))
    return out


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
class TrainingData:
    """The corpus and the labeled queries training learns from (train) and selects on (dev)."""

    corpus: Path
    docs: list[Document]
    train: LabeledSet
    dev: LabeledSet

    @cached_property
    def doc_ids(self) -> list[str]:
        return [d.doc_id for d in self.docs]

    @cached_property
    def titles(self) -> dict[str, str]:
        return {d.doc_id: d.title for d in self.docs}


def read_training_data(corpus: Path, train_sets: Sequence[tuple[Path, Path]],
                       dev_sets: Sequence[tuple[Path, Path]]) -> TrainingData:
    """The corpus, train's queries and dev's (of `dev_sets`, or the split dev of `train_sets`), checked."""
    docs = read_corpus(corpus)
    ids = {d.doc_id for d in docs}
    data = TrainingData(corpus, docs, load_labeled(train_sets, "train", ids), load_labeled(dev_sets or train_sets,
                                                                                          "dev", ids))
    shared = {_proposition(q) for q in data.train[0]} & {_proposition(q) for q in data.dev[0]}
    if shared:
        # The memory would hold dev's own answers and selection would reward it: refuse rather than mislead.
        raise CitatorError(f"{len(shared)} propositions are in both train and dev (e.g. {sorted(shared)[0]!r}); "
                           "give the files a `split` field or separate --dev-queries")
    return data


@dataclass(frozen=True)
class DevScoring:
    """Dev's queries searched through an index built with the model as fitted so far: the searcher, the batch's
    encoding and every signal's scores, which fusion and rankers are chosen on."""

    queries: list[Query]
    qrels: Qrels
    searcher: StanceSearcher
    encoded: EncodedQueries
    signals: dict[str, np.ndarray]

    def ndcg(self, scores: np.ndarray) -> float:
        return _ndcg(self.qrels, self.queries, self.searcher.doc_ids, scores)


def dev_scoring(data: TrainingData, model: StanceModel, passages: BasePassages, index: Path,
                progress: bool) -> DevScoring:
    from citator.stance.retrieve.searcher import EncodedQueries, StanceSearcher

    dev_q, dev_qrels = data.dev
    build_index(data.corpus, index, Path(model.base_encoder.path), progress=progress, artifacts=model,
                passage_vectors=passages.vectors, passage_tokens=passages.tokens)
    searcher = StanceSearcher(index)
    encoded = EncodedQueries(*searcher.ft_encoder.encode_queries_with_tokens([q.text for q in dev_q],
                                                                             [q.stance for q in dev_q]))
    return DevScoring(dev_q, dev_qrels, searcher, encoded,
                      searcher.signal_matrices(dev_q, searcher.available_signals(), encoded))


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


def choose_fusion(fitting: _Fitting, data: TrainingData, dev: DevScoring, folds: int, work: Path,
                  timings: dict[str, float]) -> FusionChoice:
    """Tune the interpolation on dev, fit a linear ranker on dev (scored by 2-fold cross-validation) and LambdaMART
    on train's out-of-fold features (scored on all of dev), and keep the best on dev."""
    train_q, train_qrels = data.train
    t = time.monotonic()
    signals = dict(dev.signals)
    by_signal = {name: dev.ndcg(m) for name, m in signals.items()}
    fusions = {"untrained_hybrid": dev.ndcg(interpolate(signals, {"bm25": 0.3, "bm25_maxp": 0.2, "dense": 0.7}))}
    # The fine-tuned encoder supersedes the base one on the query side: fusion without `dense` measured the same on
    # CaseFacts dev (learned fusion 0.4548 vs 0.4566) and saves every search a second encoder pass.
    signals.pop("dense")
    weights, fusions["interpolation"] = tune_weights(signals, dev.qrels, dev.queries, dev.searcher.doc_ids)
    timings["fusion_seconds"] = time.monotonic() - t
    options = [FusionOption("none", fusions["interpolation"])]
    skipped: dict[str, str] = {}
    # (a) A linear ranker fitted on dev itself (scored by 2-fold cross-validation on dev).
    _stage(fitting.progress, "linear ranker (2-fold cross-validation on dev)")
    linear, cv = fit_ranker_cv(signals, dev.queries, dev.qrels, dev.searcher, weights, dev.encoded.tokens)
    if cv is None:
        skipped["linear"] = "dev's propositions all fall in one of the two folds"
    else:
        fusions["linear_cv"] = cv
        options.append(FusionOption("linear", cv, linear))
    # (b) LambdaMART fitted on train, on features that parts fitted without each query's fold give it (as they
    # will be for unseen queries); scored on all of dev, which it never saw.
    reused = 0
    if not spans_folds(train_q, folds):
        skipped["lambdamart"] = "train's propositions all fall in one fold"
    else:
        t = time.monotonic()
        _stage(fitting.progress, f"out-of-fold ranker features for {len(train_q)} train queries, {folds} folds")
        names, x, y, _, reused = out_of_fold_features(fitting, dev.searcher, train_q, train_qrels, list(signals),
                                                      weights, work / "folds", folds=folds)
        timings["out_of_fold_seconds"] = time.monotonic() - t
        t = time.monotonic()
        if not y.any():
            skipped["lambdamart"] = "no training query has a relevant document among its candidates"
        else:
            # Fitted on the top 200 candidates, applied to the top 100: the same on CaseFacts dev (0.5155 vs 0.5147)
            # and half the trees' work at search time (about 0.25 s of 0.5 s for 311 queries on 2 cores).
            _stage(fitting.progress, f"LambdaMART on {x.shape[0]} queries x {x.shape[1]} candidates")
            lambdamart = fit_lambdamart(names, x, y, candidates=100)
            timings["lambdamart_seconds"] = time.monotonic() - t
            fusions["lambdamart_out_of_fold"] = _ranker_ndcg(lambdamart, signals, dev.queries, dev.qrels, dev.searcher,
                                                            weights, dev.encoded.tokens)
            options.append(FusionOption("lambdamart", fusions["lambdamart_out_of_fold"], lambdamart))
    chosen = max(options, key=lambda o: o.dev_ndcg)  # max keeps the first of equals: the simpler fusion on a tie
    return FusionChoice(tuple(signals), weights, chosen, chosen.fitted or linear, {"signals": by_signal, "fusions": fusions},
                        skipped, reused)


def contrast_on_dev(dev: DevScoring, choice: FusionChoice) -> dict[str, Any]:
    """What the stance contrast would score on dev, on the chosen fusion: reported, never shipped. It raised
    CaseFacts dev's both-stance scores but lowered both answers of the fresh hand-written two-sided propositions
    (benchmarks/stance_fresh.py), so, like the refuter slots, only a --config file turns it on (docs/stance.md).
    A linear ranker fitted on dev itself would flatter any weight chosen on its dev scores: then there is none."""
    fused = None
    if choice.chosen.ranker != "linear":
        chosen = RetrievalConfig(fusion=choice.chosen.fusion, weights=choice.weights)
        signals = {name: dev.signals[name] for name in choice.signals}
        fused = dev.searcher.fuse(signals, dev.queries, chosen, dev.encoded, ranker=choice.chosen.fitted)
    best, table = choose_contrast(dev.queries, dev.qrels, dev.searcher.doc_ids, fused)
    return {"best_on_dev": best, "dev": table}


def add_dev_memory(model_root: Path, parts: Parts, data: TrainingData) -> int:
    """Once selection is over, dev's labeled propositions join the shipped memory (and with it the citation priors
    and the lexical expansion, which a build derives from the memory): more cases covered, more wordings of each.
    Encoder, document vectors and ranker stay fitted on train. Nothing is scored on dev after this. Returns how
    many entries were added."""
    dev_entries = memory_entries(*data.dev, data.titles)
    vectors = parts.encoder.encode_queries([e.text for e in dev_entries], ["all"] * len(dev_entries))
    memory = PropositionMemory(parts.memory.entries + dev_entries, np.concatenate([parts.memory.vectors, vectors]))
    memory.save(model_root / MEMORY)
    return len(dev_entries)


def fit_on_train(fitting: _Fitting, data: TrainingData, out: Path, folds: int, side_by_side: bool | None,
                 timings: dict[str, float]) -> Parts:
    """The model's parts fitted on all of train, saved into `out` (encoder/, memory/). The fold encoders that
    choose_fusion will want are fine-tuned beside the full one first, where that pays (_side_by_side)."""
    train_q, train_qrels = data.train
    t = time.monotonic()
    # The fold encoders out_of_fold_features will want (a fold holding no query's has none).
    fold_jobs = [(q, d) for q, d in fold_training_sets(train_q, work_dir(out) / "folds", folds)
                 if len(q) < len(train_q)]
    jobs = [(list(train_q), out / ENCODER)] + (fold_jobs if spans_folds(train_q, folds) else [])
    timings["finetuned_side_by_side"] = _side_by_side(fitting, jobs, train_qrels, side_by_side)
    side_seconds = time.monotonic() - t
    parts = fitting.fit(train_q, train_qrels, out / ENCODER)
    parts.memory.save(out / MEMORY)
    save_deltas(out / MEMORY, data.doc_ids, [d.title for d in data.docs], parts.deltas)
    timings.update({f"{k}_seconds": v for k, v in parts.seconds.items()})
    # Side by side, the fold encoders' fine-tuning is counted here too, and out_of_fold_seconds leaves it out.
    timings["finetune_seconds"] += side_seconds
    # Timings of a resumed run leave out the encoders an earlier run trained: say how many were reused.
    timings["reused_encoders"] = int(parts.reused_encoder)
    return parts


def train(
    corpus: Path, train_sets: Sequence[tuple[Path, Path]], dev_sets: Sequence[tuple[Path, Path]], out: Path,
    base_encoder: Path | None = None, finetune: FinetuneConfig = FinetuneConfig(), progress: bool = True,
    base_index: Path | None = None, memory_with_dev: bool = True, folds: int = 2, side_by_side: bool | None = None,
) -> StanceModel:
    """Learn a stance model from `train_sets` (split train), select its fusion on `dev_sets` (or their split dev).

    `memory_with_dev`: once selection is over, the shipped memory also holds dev's propositions (add_dev_memory).
    `folds`: how many parts (by proposition) train is cut into for the ranker's out-of-fold features.
    `side_by_side`: fine-tune the full and the fold encoders in two single-thread processes at once (None: when
    side_by_side_by_default says so: on a CPU with two cores or more, for SIDE_BY_SIDE_MIN_STEPS steps or more).
    """
    from citator.models.load import default_encoder_path

    if folds < 2:
        raise CitatorError(f"folds must be at least 2, got {folds}")
    started = time.monotonic()
    data = read_training_data(corpus, train_sets, dev_sets)
    train_q = data.train[0]
    out.mkdir(parents=True, exist_ok=True)
    work = work_dir(out)
    work.mkdir(exist_ok=True)
    timings: dict[str, float] = {}

    # 1. The base encoder's passages of the corpus (the frozen document side), one pass.
    t = time.monotonic()
    passages = base_passages(data.corpus, data.docs, Path(base_encoder) if base_encoder else default_encoder_path(),
                             work, base_index, progress)
    timings["passage_vectors_seconds"] = time.monotonic() - t
    fitting = _Fitting(data.corpus, data.docs, Path(passages.encoder.path), passages.encoder.model_id,
                       passages.vectors, passages.starts, finetune, progress, passages.encoder.sha256,
                       passages.corpus_sha256)

    # 2. The fine-tuned query encoder, the proposition memory and the learned document vectors, from all of train.
    _mark_incomplete(out / MANIFEST)  # the first write to a shipped part follows
    parts = fit_on_train(fitting, data, out, folds, side_by_side, timings)
    report: dict[str, Any] = {
        "finetune": asdict(fitting.finetune), "finetune_stats": parts.finetune_stats, "document_vectors": parts.doc_stats,
        "folds": folds,
        "training": {"corpus_sha256": passages.corpus_sha256, "train_queries": len(train_q),
                     "examples": len(parts.examples), "memory_entries": len(parts.memory.entries),
                     "dev_queries": len(data.dev[0]),
                     "inputs": [[str(q), sha256_file(q), str(g), sha256_file(g)]
                                for q, g in list(train_sets) + list(dev_sets)]},
    }
    model = StanceModel(out.absolute(), passages.encoder, "interpolate", {"ft_dense": 1.0, "memory_max": 0.5},
                        "none", complete=False, report=report).save()

    # 3. Fusion chosen on dev, with a dev index built from the model as it stands; then the stance contrast's report.
    _stage(progress, f"dev index and fusion weights on {len(data.dev[0])} dev queries")
    dev = dev_scoring(data, model, passages, work / "dev-index", progress)
    choice = choose_fusion(fitting, data, dev, folds, work, timings)
    timings["reused_encoders"] += choice.reused_encoders
    choice.shipped.save(out / RANKER)
    report.update({"dev_ndcg@10": choice.dev_ndcg, "skipped": choice.skipped,
                   "stance_contrast": contrast_on_dev(dev, choice)})

    # 4. The shipped memory, then the model recorded as complete.
    if memory_with_dev:
        report["training"]["memory_entries_from_dev"] = add_dev_memory(out, parts, data)
    timings["total_seconds"] = time.monotonic() - started
    report["timings"] = timings
    model = replace(model, fusion=choice.chosen.fusion, weights=choice.weights, ranker=choice.chosen.ranker,
                    complete=True, report=report).save()
    shutil.rmtree(work / "dev-index", ignore_errors=True)
    return model


def clear_encoder_dir(encoder_dir: Path) -> None:
    """Empty `encoder_dir` for a new fine-tune, where it is citator's: absent, empty, or an encoder an earlier run
    finished and stamped. Anything else there is the user's, and is refused rather than removed."""
    if not encoder_dir.exists():
        return
    if not encoder_dir.is_dir() or encoder_dir.is_symlink() or (
            any(encoder_dir.iterdir()) and not (encoder_dir / FINETUNE_STAMP).is_file()):
        raise OutputError(f"{encoder_dir}: holds files that no citator fine-tune finished; move them out of the "
                          "output directory (or give another --out)")
    shutil.rmtree(encoder_dir)


@dataclass
class Parts:
    """What training learns from one set of labeled queries (all of train, or all but one fold)."""

    encoder_dir: Path
    encoder: Any  # the fine-tuned encoder, loaded from encoder_dir
    finetune_stats: dict[str, float]
    memory: PropositionMemory
    examples: list[QueryExample]
    deltas: np.ndarray
    doc_stats: dict[str, float]
    seconds: dict[str, float]
    reused_encoder: bool = False


@dataclass
class _Fitting:
    """The fixed inputs of fitting parts: corpus, base encoder, its passage vectors, the fine-tuning settings."""

    corpus: Path
    docs: list[Document]
    base_encoder: Path
    base_id: str
    passage_vectors: np.ndarray
    starts: np.ndarray
    finetune: FinetuneConfig
    progress: bool
    base_sha256: str  # models.encoder.model_fingerprint of base_encoder
    corpus_sha256: str
    trained_here: set[Path] = field(default_factory=set)  # encoder dirs fine-tuned side by side by this run

    def __post_init__(self) -> None:
        # "auto" is settled once, here: every encoder of the run (the fold ones in their lanes too) trains alike,
        # and the stamps and the manifest say which precision that was.
        self.finetune = replace(self.finetune, precision=resolve_precision(self.finetune.precision, training_device()))

    @cached_property
    def base_document_vectors(self) -> np.ndarray:
        """Each document's normalised mean base passage vector (what learned document vectors start from)."""
        return base_document_vectors(self.passage_vectors, self.starts)

    def examples(self, queries: Sequence[Query], qrels: Qrels) -> list[QueryExample]:
        """The fine-tuning examples of `queries` (those with relevant documents in the corpus)."""
        return query_examples(queries, qrels, [d.doc_id for d in self.docs])

    def stamp(self, examples: Sequence[QueryExample]) -> dict[str, Any]:
        """What an encoder fine-tuned on `examples` records it was trained from (its inputs and settings)."""
        return {"base_encoder_id": self.base_id, "base_encoder_sha256": self.base_sha256,
                "finetune": asdict(self.finetune), "query_prefixes": QUERY_PREFIXES,
                "corpus_sha256": self.corpus_sha256, "examples_sha256": _examples_hash(examples)}

    def finished_encoder(self, examples: Sequence[QueryExample], encoder_dir: Path) -> dict[str, float] | None:
        """The stats of an encoder that an earlier run finished in encoder_dir from the very same inputs and
        settings, else None."""
        return _finished_encoder(encoder_dir, self.stamp(examples))

    def train_encoder(self, examples: Sequence[QueryExample], encoder_dir: Path) -> dict[str, float]:
        """Fine-tune the query encoder on `examples` into encoder_dir (replacing what is there) and stamp it."""
        clear_encoder_dir(encoder_dir)
        stats = finetune_query_encoder(self.base_encoder, examples, self.passage_vectors, self.starts, encoder_dir,
                                       self.finetune, self.progress, query_prefixes=QUERY_PREFIXES)
        write_json_atomic(encoder_dir / FINETUNE_STAMP, {**self.stamp(examples), "stats": stats})
        return stats

    def fit(self, queries: Sequence[Query], qrels: Qrels, encoder_dir: Path) -> Parts:
        from citator.models.load import load_encoder

        seconds: dict[str, float] = {}
        t = time.monotonic()
        examples = self.examples(queries, qrels)
        # An encoder that an earlier run finished from the very same inputs and settings is reused (resume), as is
        # one this run fine-tuned side by side with others just before.
        stats = self.finished_encoder(examples, encoder_dir)
        reused = stats is not None and encoder_dir not in self.trained_here
        if stats is None:
            stats = self.train_encoder(examples, encoder_dir)
        elif reused and self.progress:
            print(f"reusing the fine-tuned encoder in {encoder_dir} (same inputs and settings)", file=sys.stderr)
        seconds["finetune"] = time.monotonic() - t

        # The proposition memory under the fine-tuned encoder (stance-neutral form).
        t = time.monotonic()
        ft = load_encoder(encoder_dir)
        entries = memory_entries(queries, qrels, {d.doc_id: d.title for d in self.docs})
        memory = PropositionMemory(entries, ft.encode_queries([e.text for e in entries], ["all"] * len(entries)))
        seconds["memory"] = time.monotonic() - t

        # Learned document vectors: the base vectors moved towards the training queries that cite them.
        t = time.monotonic()
        query_vectors = ft.encode_queries([e.text for e in examples], [e.stance for e in examples])
        deltas, doc_stats = fit_document_deltas(query_vectors, [e.positives for e in examples],
                                                self.base_document_vectors, progress=self.progress)
        seconds["document_vectors"] = time.monotonic() - t
        return Parts(encoder_dir, ft, stats, memory, examples, deltas, doc_stats, seconds, reused)


def out_of_fold_features(
    fitting: _Fitting, searcher: StanceSearcher, queries: Sequence[Query], qrels: Qrels, signal_names: Sequence[str],
    weights: dict[str, float], work: Path, folds: int = 2, candidates: int = 200,
) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, int]:
    """Ranker features for every training query from parts fitted on the other folds (split by proposition).

    Parts fitted on a query itself would flatter every learned signal (its own proposition in the memory, its
    own documents pulled towards it); out of fold, the features look as they will for an unseen query.
    Returns (names, x (n_queries, candidates, n_features), y (n_queries, candidates), the candidates' doc indices
    (n_queries, candidates), how many fold encoders an earlier run had finished and were reused). Rows are fold 0's
    queries, then fold 1's, and so on, each fold in `queries`' order: `fold_order` lists them.
    """
    from citator.stance.retrieve.doc_embedding import learned_document_vectors
    from citator.stance.retrieve.expansion import SIGNAL as EXPANDED, build_expanded_index
    from citator.stance.retrieve.searcher import EncodedQueries

    doc_ids, titles = searcher.doc_ids, [d.title for d in fitting.docs]
    fold_of = proposition_folds(queries, folds)
    names: list[str] = []
    xs, ys, cands = [], [], []
    reused = 0
    training_sets = fold_training_sets(queries, work, folds)
    for f in range(folds):
        held = [q for q, k in zip(queries, fold_of) if k == f]
        if not held:
            continue
        _stage(fitting.progress, f"  fold {f + 1} of {folds}: parts fitted without its {len(held)} queries, "
               "then their features")
        training, encoder_dir = training_sets[f]
        parts = fitting.fit(training, qrels, encoder_dir)
        reused += parts.reused_encoder
        links = parts.memory.link(doc_ids, titles)
        expanded = (build_expanded_index(titles, [d.text for d in fitting.docs], parts.memory, links)
                    if EXPANDED in signal_names else None)
        doc_vectors = learned_document_vectors(fitting.base_document_vectors, parts.deltas, np.arange(len(doc_ids)))
        fold_parts = LearnedParts.of(parts.memory, links, doc_vectors, expanded, len(doc_ids))
        encoded = EncodedQueries(*parts.encoder.encode_queries_with_tokens([q.text for q in held],
                                                                           [q.stance for q in held]))
        signals = searcher.signal_matrices(held, signal_names, encoded, learned=fold_parts)
        _, cand, names, x = searcher.candidates(signals, held, weights, candidates, tokens=encoded.tokens,
                                                learned=fold_parts)
        xs.append(x)
        ys.append(_labels(held, qrels, doc_ids, cand))
        cands.append(cand)
    return names, np.concatenate(xs), np.concatenate(ys), np.concatenate(cands), reused


def fold_training_sets(queries: Sequence[Query], work: Path, folds: int) -> list[tuple[list[Query], Path]]:
    """Per fold: the queries its parts are fitted on (all the other folds') and its encoder's folder in `work`."""
    fold_of = proposition_folds(queries, folds)
    return [([q for q, k in zip(queries, fold_of) if k != f], work / f"fold-{f}" / "encoder") for f in range(folds)]


# Below this many fine-tuning steps in all, starting two processes (torch's import, the model, about 4 s each) would
# cost more than the overlap saves; CaseFacts' three encoders take 1,128.
SIDE_BY_SIDE_MIN_STEPS = 100


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity where the platform tells it)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity else os.cpu_count() or 1


def side_by_side_by_default(steps: int, cpus: int, cuda: bool) -> bool:
    """Whether `citator train` fine-tunes side by side unless told: on a CPU (a GPU trains one encoder at a time),
    with two cores or more, for SIDE_BY_SIDE_MIN_STEPS fine-tuning steps or more."""
    return not cuda and cpus >= 2 and steps >= SIDE_BY_SIDE_MIN_STEPS


def _side_by_side(fitting: _Fitting, jobs: Sequence[tuple[Sequence[Query], Path]], qrels: Qrels,
                  wanted: bool | None) -> int:
    """Fine-tune the jobs' encoders that no earlier run finished in two single-thread processes at once (see
    stance/learn/lanes.py), when `wanted` (None: side_by_side_by_default); fit() then finds them finished. Only the
    costliest shows progress. Returns how many were fine-tuned so."""
    import torch

    if wanted is False:
        return 0
    todo = []
    for queries, encoder_dir in jobs:
        examples = fitting.examples(queries, qrels)
        if examples and fitting.finished_encoder(examples, encoder_dir) is None:
            todo.append((examples, encoder_dir))
    steps = [fitting.finetune.epochs * -(-len(e) // fitting.finetune.batch_size) for e, _ in todo]
    if wanted is None:
        wanted = side_by_side_by_default(sum(steps), usable_cpus(), torch.cuda.is_available())
    if not wanted or len(todo) < 2:
        return 0
    costliest = max(range(len(todo)), key=steps.__getitem__)
    quiet = replace(fitting, progress=False, trained_here=set())
    lanes = [partial((replace(quiet, progress=fitting.progress) if i == costliest else quiet).train_encoder, e, d)
             for i, (e, d) in enumerate(todo)]
    if fitting.progress:
        print(f"fine-tuning {len(todo)} encoders in two single-thread processes side by side", file=sys.stderr)
    run_in_lanes(lanes, steps)
    fitting.trained_here.update(d for _, d in todo)
    return len(todo)


def fold_order(queries: Sequence[Query], folds: int = 2) -> list[Query]:
    """`queries` in the row order of out_of_fold_features: fold by fold."""
    fold_of = proposition_folds(queries, folds)
    return [q for f in range(folds) for q, k in zip(queries, fold_of) if k == f]


def _labels(queries: Sequence[Query], qrels: Qrels, doc_ids: Sequence[str], cand: np.ndarray) -> np.ndarray:
    return np.array([[1.0 if doc_ids[c] in qrels.relevant(q.query_id) else 0.0 for c in row]
                     for q, row in zip(queries, cand)])


def _reranked_top10(queries: Sequence[Query], cand: np.ndarray, logits: np.ndarray, doc_ids: Sequence[str]
                    ) -> dict[str, list[str]]:
    """query id -> its ten candidates with the highest ranker logits (ties in candidate order)."""
    order = np.argsort(-logits, axis=1, kind="stable")[:, :10]
    return {q.query_id: [doc_ids[cand[i, j]] for j in row] for i, (q, row) in enumerate(zip(queries, order))}


def _ranker_ndcg(ranker: Ranker, signals: dict[str, np.ndarray], queries: Sequence[Query], qrels: Qrels,
                 searcher: StanceSearcher, weights: dict[str, float], tokens: TokenStates | None) -> float:
    """NDCG@10 on `queries` of `ranker` reordering the interpolation's top candidates."""
    _, cand, names, x = searcher.candidates(signals, queries, weights, ranker.candidates, tokens=tokens)
    run = _reranked_top10(queries, cand, ranker.score(names, x), searcher.doc_ids)
    return evaluate(qrels, run, ["ndcg@10"], [q.query_id for q in queries])["ndcg@10"]


FINETUNE_STAMP = "citator_finetune.json"


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


def _mark_incomplete(path: Path) -> None:
    """Before a rerun replaces any part of an artifacts folder, its old manifest stops saying `complete`: a run
    that dies half-way then leaves a model that StanceModel.load refuses, not old and new parts passing as one."""
    if not path.is_file():
        return
    try:
        old = loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        old = None
    write_json_atomic(path, {**old, "complete": False} if isinstance(old, dict) else {"complete": False})


def _examples_hash(examples: Sequence[QueryExample]) -> str:
    return sha256_text(json.dumps([asdict(e) for e in examples], sort_keys=True))


def _finished_encoder(encoder_dir: Path, stamp: dict[str, Any]) -> dict[str, float] | None:
    """The stats of a fine-tuned encoder finished from these exact inputs and settings, else None."""
    path = encoder_dir / FINETUNE_STAMP
    try:
        saved = loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(saved, dict) or {k: saved.get(k) for k in stamp} != json.loads(json.dumps(stamp)):
        return None
    return saved.get("stats")


def fit_ranker_cv(signals: dict[str, np.ndarray], queries: Sequence[Query], qrels: Qrels, searcher: StanceSearcher,
                  weights: dict[str, float], tokens: TokenStates | None = None) -> tuple[Ranker, float | None]:
    """Fit on one half of dev, score the other, and back; the final ranker is fitted on all of dev.

    The score is None when dev's propositions all fall in one fold (there is nothing to cross-validate on; folds go
    by a hash of the proposition, so this happens to a dev of one proposition and may to one of a few).
    """
    _, cand, names, x = searcher.candidates(signals, queries, weights, 200, tokens=tokens)
    y = _labels(queries, qrels, searcher.doc_ids, cand)
    fold = proposition_folds(queries, 2)
    if len(set(fold.tolist())) < 2:
        return fit_linear_ranker(names, x, y), None
    runs: dict[str, list[str]] = {}
    for f in (0, 1):
        fit = fold != f
        ranker = fit_linear_ranker(names, x[fit], y[fit])
        held = [queries[i] for i in np.flatnonzero(~fit)]
        runs.update(_reranked_top10(held, cand[~fit], ranker.score(names, x[~fit]), searcher.doc_ids))
    cv = evaluate(qrels, runs, ["ndcg@10"], [q.query_id for q in queries])["ndcg@10"]
    return fit_linear_ranker(names, x, y), cv


def spans_folds(queries: Sequence[Query], folds: int) -> bool:
    """Whether the queries' propositions fall in two folds or more: only then are out-of-fold features made."""
    return len(set(proposition_folds(queries, folds).tolist())) >= 2


def proposition_folds(queries: Sequence[Query], folds: int) -> np.ndarray:
    """A fold per query, by proposition: a proposition's stances never sit on both sides of a split."""
    return np.array([_stable_hash(_proposition(q)) % folds for q in queries], dtype=np.int64)


def _stable_hash(text: str) -> int:
    """Unlike hash(), the same in every process (Python salts str hashes)."""
    import hashlib

    return int(hashlib.sha1(text.encode()).hexdigest()[:8], 16)


