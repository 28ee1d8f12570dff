"""`citator train`: a stance model (stance/retrieve/model.py) learned from labeled propositions, in four steps.

1. `base_passages`: the base encoder's passages of the corpus, the frozen document side (kept in `work/`).
2. `fit_on_train`: the fine-tuned query encoder, the proposition memory and the learned document vectors
   (stance/learn/fitting.py).
3. `dev_scoring`, `choose_fusion` and `contrast_on_dev`: an index built with the model so far scores dev, which picks
   the fusion: tuned interpolation, a linear ranker or LambdaMART on out-of-fold features (stance/learn/selection.py,
   stance/learn/folds.py).
4. `add_dev_memory`, then the model is recorded as complete.

Training data never ships: only what is learned from it (the encoder, memory vectors with the propositions' text
and document ids, the ranker and the fusion weights) goes into the model directory.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from citator.data import write_json_atomic
from citator.data.hashing import sha256_file
from citator.data.jsonl import loads
from citator.errors import CitatorError
from citator.stance.learn.base_passages import base_passages
from citator.stance.learn.finetune import FinetuneConfig
from citator.stance.learn.fitting import Fitting, Parts, fine_tune_side_by_side, stage
from citator.stance.learn.folds import fold_training_sets, spans_folds
from citator.stance.learn.labeled import TrainingData, memory_entries, read_training_data
from citator.stance.learn.selection import choose_fusion, contrast_on_dev, dev_scoring
from citator.stance.retrieve.memory import PropositionMemory
from citator.stance.retrieve.model import ENCODER, MANIFEST, MEMORY, RANKER, StanceModel, work_dir

Pairs = Sequence[tuple[Path, Path]]


@dataclass(frozen=True)
class TrainingOptions:
    """How `train` learns, besides its data and output folder.

    `base_encoder`: the encoder the model is trained against (default: the bundled MiniLM). `finetune`: the query
    encoder's fine-tuning settings. `base_index`: an index of the same corpus and encoder whose base passages are
    reused. `memory_with_dev`: once selection is over, the shipped memory also holds dev's propositions
    (add_dev_memory). `folds`: how many parts (by proposition) train is cut into for the ranker's out-of-fold
    features. `side_by_side`: fine-tune the full and the fold encoders in two single-thread processes at once (None:
    when fitting.side_by_side_by_default says so).
    """

    base_encoder: Path | None = None
    finetune: FinetuneConfig = field(default_factory=FinetuneConfig)
    progress: bool = True
    base_index: Path | None = None
    memory_with_dev: bool = True
    folds: int = 2
    side_by_side: bool | None = None


def train(corpus: Path, train_sets: Pairs, dev_sets: Pairs, out: Path,
          options: TrainingOptions = TrainingOptions()) -> StanceModel:
    """Learn a stance model from `train_sets` (split train), select its fusion on `dev_sets` (or their split dev)."""
    from citator.models.load import default_encoder_path

    if options.folds < 2:
        raise CitatorError(f"folds must be at least 2, got {options.folds}")
    started = time.monotonic()
    data = read_training_data(corpus, train_sets, dev_sets)
    out.mkdir(parents=True, exist_ok=True)
    work = work_dir(out)
    work.mkdir(exist_ok=True)
    timings: dict[str, float] = {}

    # 1. The base encoder's passages of the corpus (the frozen document side), one pass.
    t = time.monotonic()
    passages = base_passages(data.corpus, data.docs, Path(options.base_encoder or default_encoder_path()), work,
                             options.base_index, options.progress)
    timings["passage_vectors_seconds"] = time.monotonic() - t
    fitting = Fitting.of(data, passages, options.finetune, options.progress)

    # 2. The fine-tuned query encoder, the proposition memory and the learned document vectors, from all of train.
    _mark_incomplete(out / MANIFEST)  # the first write to a shipped part follows
    parts = fit_on_train(fitting, data, out, options, timings)
    report = _report(data, fitting, parts, (train_sets, dev_sets), options.folds)
    model = StanceModel(out.absolute(), passages.encoder, "interpolate", {"ft_dense": 1.0, "memory_max": 0.5},
                        "none", complete=False, report=report).save()

    # 3. Fusion chosen on dev, with a dev index built from the model as it stands; then the stance contrast's report.
    stage(options.progress, f"dev index and fusion weights on {len(data.dev[0])} dev queries")
    dev = dev_scoring(data, model, passages, work / "dev-index", options.progress)
    choice = choose_fusion(fitting, data, dev, options.folds, work, timings)
    timings["reused_encoders"] += choice.reused_encoders
    choice.shipped.save(out / RANKER)
    report.update({"dev_ndcg@10": choice.dev_ndcg, "skipped": choice.skipped,
                   "stance_contrast": contrast_on_dev(dev, choice)})

    # 4. The shipped memory, then the model recorded as complete.
    if options.memory_with_dev:
        report["training"]["memory_entries_from_dev"] = add_dev_memory(out, parts, data)
    timings["total_seconds"] = time.monotonic() - started
    report["timings"] = timings
    model = replace(model, fusion=choice.chosen.fusion, weights=choice.weights, ranker=choice.chosen.ranker,
                    complete=True, report=report).save()
    shutil.rmtree(work / "dev-index", ignore_errors=True)
    return model


def fit_on_train(fitting: Fitting, data: TrainingData, out: Path, options: TrainingOptions,
                 timings: dict[str, float]) -> Parts:
    """The model's parts fitted on all of train, saved into `out` (encoder/, memory/). The fold encoders that
    choose_fusion will want are fine-tuned beside the full one first, where that pays (fine_tune_side_by_side)."""
    train_q, train_qrels = data.train
    t = time.monotonic()
    # The fold encoders out_of_fold_features will want (a fold holding no query's has none).
    fold_jobs = [(q, d) for q, d in fold_training_sets(train_q, work_dir(out) / "folds", options.folds)
                 if len(q) < len(train_q)]
    jobs = [(list(train_q), out / ENCODER)] + (fold_jobs if spans_folds(train_q, options.folds) else [])
    timings["finetuned_side_by_side"] = fine_tune_side_by_side(fitting, jobs, train_qrels, options.side_by_side)
    side_seconds = time.monotonic() - t
    parts = fitting.fit(train_q, train_qrels, out / ENCODER)
    fitting.save(parts, out)
    timings.update({f"{k}_seconds": v for k, v in parts.seconds.items()})
    # Side by side, the fold encoders' fine-tuning is counted here too, and out_of_fold_seconds leaves it out.
    timings["finetune_seconds"] += side_seconds
    # Timings of a resumed run leave out the encoders an earlier run trained: say how many were reused.
    timings["reused_encoders"] = int(parts.reused_encoder)
    return parts


def _report(data: TrainingData, fitting: Fitting, parts: Parts, inputs: tuple[Pairs, Pairs], folds: int
            ) -> dict[str, Any]:
    """What the model's report says of its training: the settings, the fitting's statistics and the inputs (each
    labeled file with its sha256)."""
    return {
        "finetune": asdict(fitting.finetune), "finetune_stats": parts.finetune_stats, "document_vectors": parts.doc_stats,
        "folds": folds,
        "training": {"corpus_sha256": fitting.corpus_sha256, "train_queries": len(data.train[0]),
                     "examples": len(parts.examples), "memory_entries": len(parts.memory.entries),
                     "dev_queries": len(data.dev[0]),
                     "inputs": [[str(q), sha256_file(q), str(g), sha256_file(g)]
                                for q, g in list(inputs[0]) + list(inputs[1])]},
    }


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
