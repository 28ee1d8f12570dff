"""Fitting a model's parts from labeled queries: the fine-tuned query encoder (resumed when an earlier run finished
it from the same inputs, or fine-tuned side by side with others), the proposition memory and the learned document
vectors, and the same parts fitted to the corpus as an index fits them (`Fitting.learned_parts`).
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
from pathlib import Path
from typing import Any

import numpy as np

from citator.data import Document, Qrels, Query, write_json_atomic
from citator.data.hashing import sha256_text
from citator.data.jsonl import loads
from citator.errors import OutputError
from citator.models.encoder import Encoder
from citator.stance.learn.base_passages import BasePassages
from citator.stance.learn.doc_embedding import fit_document_deltas
from citator.stance.learn.finetune import (
    FinetuneConfig, QueryExample, finetune_query_encoder, resolve_precision, training_device,
)
from citator.stance.learn.labeled import TrainingData, memory_entries
from citator.stance.learn.lanes import run_in_lanes
from citator.stance.learn.pairs import QUERY_PREFIXES, query_examples
from citator.stance.retrieve.doc_embedding import DocumentOffsets, base_document_vectors, save_deltas
from citator.stance.retrieve.expansion import build_expanded_index
from citator.stance.retrieve.learned import CorpusSlice, LearnedParts
from citator.stance.retrieve.memory import PropositionMemory
from citator.stance.retrieve.model import MEMORY, BaseEncoder

FINETUNE_STAMP = "citator_finetune.json"


def stage(progress: bool, what: str) -> None:
    """One line on stderr as a long stage without a progress bar of its own starts (with the wall clock)."""
    if progress:
        print(f"{time.strftime('%H:%M:%S')} {what}", file=sys.stderr, flush=True)


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
    encoder: Encoder  # the fine-tuned encoder, loaded from encoder_dir
    finetune_stats: dict[str, float]
    memory: PropositionMemory
    examples: list[QueryExample]
    deltas: np.ndarray
    doc_stats: dict[str, float]
    seconds: dict[str, float]
    reused_encoder: bool = False


@dataclass
class Fitting:
    """The fixed inputs of fitting parts: the corpus's documents, the base encoder and its passage vectors
    (`starts`: each document's first passage), the fine-tuning settings. It goes whole to the processes that
    fine-tune side by side (pickled), so it holds nothing else: no labeled data, no document tokens."""

    docs: list[Document]
    base: BaseEncoder
    passage_vectors: np.ndarray
    starts: np.ndarray
    corpus_sha256: str
    finetune: FinetuneConfig
    progress: bool
    trained_here: set[Path] = field(default_factory=set)  # encoder dirs fine-tuned side by side by this run

    def __post_init__(self) -> None:
        # "auto" is settled once, here: every encoder of the run (the fold ones in their lanes too) trains alike,
        # and the stamps and the manifest say which precision that was.
        self.finetune = replace(self.finetune, precision=resolve_precision(self.finetune.precision, training_device()))

    @classmethod
    def of(cls, data: TrainingData, passages: BasePassages, finetune: FinetuneConfig, progress: bool) -> Fitting:
        return cls(data.docs, passages.encoder, passages.vectors, passages.starts, passages.corpus_sha256, finetune,
                   progress)

    @cached_property
    def doc_ids(self) -> list[str]:
        return [d.doc_id for d in self.docs]

    @cached_property
    def base_document_vectors(self) -> np.ndarray:
        """Each document's normalised mean base passage vector (what learned document vectors start from)."""
        return base_document_vectors(self.passage_vectors, self.starts)

    def examples(self, queries: Sequence[Query], qrels: Qrels) -> list[QueryExample]:
        """The fine-tuning examples of `queries` (those with relevant documents in the corpus)."""
        return query_examples(queries, qrels, [d.doc_id for d in self.docs])

    def stamp(self, examples: Sequence[QueryExample]) -> dict[str, Any]:
        """What an encoder fine-tuned on `examples` records it was trained from (its inputs and settings)."""
        return {"base_encoder_id": self.base.model_id, "base_encoder_sha256": self.base.sha256,
                "finetune": asdict(self.finetune), "query_prefixes": QUERY_PREFIXES,
                "corpus_sha256": self.corpus_sha256, "examples_sha256": examples_hash(examples)}

    def finished_encoder(self, examples: Sequence[QueryExample], encoder_dir: Path) -> dict[str, float] | None:
        """The stats of an encoder that an earlier run finished in encoder_dir from the very same inputs and
        settings, else None."""
        return _finished_encoder(encoder_dir, self.stamp(examples))

    def train_encoder(self, examples: Sequence[QueryExample], encoder_dir: Path) -> dict[str, float]:
        """Fine-tune the query encoder on `examples` into encoder_dir (replacing what is there) and stamp it."""
        clear_encoder_dir(encoder_dir)
        stats = finetune_query_encoder(Path(self.base.path), examples, self.passage_vectors, self.starts, encoder_dir,
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

    def learned_parts(self, parts: Parts, expanded: bool) -> LearnedParts:
        """`parts` fitted to the corpus as an index fits its model's (LearnedParts.fit_to): the memory's links, the
        learned document vectors and, where `expanded`, the BM25 index of the expanded documents."""
        ids, titles = self.doc_ids, [d.title for d in self.docs]
        offsets = DocumentOffsets(list(zip(ids, titles)), parts.deltas)
        expand = partial(build_expanded_index, titles, [d.text for d in self.docs], parts.memory) if expanded else None
        return LearnedParts.fit_to(parts.memory, offsets, CorpusSlice(ids, titles, 0, len(ids)),
                                   self.base_document_vectors, expand)

    def save(self, parts: Parts, out: Path) -> None:
        """The memory and the learned document offsets of `parts` into the model folder `out` (the encoder is
        there already)."""
        parts.memory.save(out / MEMORY)
        save_deltas(out / MEMORY, self.doc_ids, [d.title for d in self.docs], parts.deltas)


def examples_hash(examples: Sequence[QueryExample]) -> str:
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


def fine_tune_side_by_side(fitting: Fitting, jobs: Sequence[tuple[Sequence[Query], Path]], qrels: Qrels,
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
