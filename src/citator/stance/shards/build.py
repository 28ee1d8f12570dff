"""Building a sharded index: workers (in this process or Ray actors, one encoder each) build one index directory
per shard, after the whole corpus's BM25 statistics are gathered from them.

On Ray the corpus is read in blocks by Ray Data tasks (stance/shards/read.py) and each builder takes its shards'
documents from Ray's object store; in this process the corpus is read as one index reads it.
Round 1: each worker tokenizes its shards' texts and counts their statistics; the coordinator adds them up. Round 2:
each worker scores its shards' BM25 with the corpus's statistics, encodes their passages and writes each shard.
The coordinator then writes the corpus's doc ids and the manifest that names the shards, last and atomically.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from citator.data.records import Document
from citator.engines.lexical import CorpusStats, LexicalIndex, Tokenized
from citator.errors import ConfigError, IndexDirError
from citator.models.encoder import Encoder
from citator.stance.retrieve import layout
from citator.stance.retrieve.index_dir import (
    BuildOptions,
    BuildRequest,
    ModelParts,
    ShardPart,
    build_into,
    build_lock,
    check_enough,
    fresh_build,
    lexical_texts,
    prepare_build,
    switch_to,
)
from citator.stance.retrieve.index_files import file_entry
from citator.stance.retrieve.layout import (
    DOC_IDS, TREATMENTS, Generation, Manifest, ShardRef, read_manifest, shard_manifest, shard_name,
)
from citator.stance.retrieve.passage_store import Passages
from citator.stance.retrieve.treatments import user_rows, write_treatments
from citator.stance.retrieve.learned import CorpusSlice, corpus_links
from citator.stance.shards.read import documents, read_corpus_blocks
from citator.stance.shards.search import check_shardable
from citator.stance.shards.workers import LocalPool, RayPool, connect


@dataclass(frozen=True)
class Sharding:
    """How a sharded index is built: `shards` parts, built by `workers` workers (default: one per shard, at most the
    cluster's CPUs) on the Ray cluster `ray` ("local", "auto" or an address), or in this process when it is None."""

    shards: int
    ray: str | None = None
    workers: int | None = None


class ShardBuilder:
    """Builds shards with one encoder, loaded when a shard has passages to encode (an update's may have none);
    keeps each shard's documents and tokens between the two rounds."""

    def __init__(self, encoder_path: str, encoder: Encoder | None = None) -> None:
        self._encoder_path = encoder_path
        self._encoder = encoder
        self._tokens: dict[int, dict[str, Tokenized]] = {}
        self._docs: dict[int, list[Document]] = {}

    def encoder(self) -> Encoder:
        if self._encoder is None:
            from citator.models.load import load_encoder

            self._encoder = load_encoder(Path(self._encoder_path))
        return self._encoder

    def count(self, shard: int, part: Any, request: BuildRequest, start: int, corpus_ids: Sequence[str],
              corpus_titles: Sequence[str]) -> dict[str, CorpusStats]:
        """Round 1: the shard's documents (a list, or a dataset of the blocks Ray Data read) and texts tokenized
        (both kept) and their statistics per lexical index."""
        docs = self._docs[shard] = documents(part)
        memory = links = None
        model = ModelParts.of(request)
        if model is not None:
            from citator.stance.retrieve.memory import PropositionMemory

            memory = PropositionMemory.load(model.memory_dir)
            links = corpus_links(memory, CorpusSlice(corpus_ids, corpus_titles, start, len(docs)))
        texts = lexical_texts(docs, request.config, memory, links)
        self._tokens[shard] = {name: LexicalIndex.tokenize(t) for name, t in texts.items()}
        return {name: tokens.stats() for name, tokens in self._tokens[shard].items()}

    def build(self, shard: int, shard_dir: str, request: BuildRequest, start: int, corpus_ids: Sequence[str],
              corpus_titles: Sequence[str], stats: Mapping[str, CorpusStats]) -> int:
        """Round 2: the shard's index directory, scored with the corpus's `stats`; its number of passages."""
        part = ShardPart(start, corpus_ids, corpus_titles, stats, self._tokens.pop(shard))
        Path(shard_dir).mkdir(parents=True)
        encoder = self._encoder if request.passages is not None else self.encoder()
        manifest = build_into(Path(shard_dir), replace(request, docs=self._docs.pop(shard), part=part), encoder)
        return manifest.n_passages


def shard_starts(n_docs: int, shards: int) -> list[int]:
    """Where each of `shards` contiguous, near-equal parts of n_docs documents starts."""
    return [int(part[0]) for part in np.array_split(np.arange(n_docs), shards)]


def build_sharded(corpus_path: Path, index_dir: Path, sharding: Sharding,
                  options: BuildOptions = BuildOptions()) -> Manifest:
    """A sharded index of the corpus in `index_dir`, cut and built as `sharding` says."""
    workers, ray = sharding.workers, sharding.ray
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ConfigError(f"--workers must be a positive number of shard builders, got {workers!r}")
    if workers is not None and ray is None:
        raise ConfigError("--workers sets how many Ray actors build the shards: give --ray too")
    # On Ray the corpus is read in blocks by Ray Data tasks (stance/shards/read.py), not by this process.
    request, encoder = prepare_build(corpus_path, index_dir, replace(options, passages=None), read_docs=ray is None)
    check_shardable(request.config)
    began = time.monotonic()
    if ray is None:
        ids, titles, parts = [d.doc_id for d in request.docs], [d.title for d in request.docs], None
    else:
        connect(ray)
        # Absolute: builders may run in other processes, on other machines (which must see the same files).
        read = read_corpus_blocks(Path(corpus_path).absolute())
        ids, titles, parts = read.ids, read.titles, read
        check_enough(corpus_path, len(ids))
        request = replace(request, treatments=user_rows(options.treatments, ids))
        _say(request.progress, f"{len(ids)} documents read in blocks by Ray Data", began)
    if request.metadata is not None:
        request.metadata.check_known(ids)
    shards = sharding.shards
    if isinstance(shards, bool) or not isinstance(shards, int) or not 1 <= shards <= len(ids):
        raise ConfigError(f"--shards must be between 1 and the corpus's {len(ids)} documents, got {shards!r}")
    starts = shard_starts(len(ids), shards)
    cut = Cut(ids, titles, starts, parts)
    with build_lock(index_dir) as where:
        return write_sharded(where, request, encoder, sharding, cut)


@dataclass(frozen=True)
class Cut:
    """A corpus cut into shards: its ids and titles, where each shard starts, and the documents themselves where
    Ray Data read them (else the request's). `passages`: each shard's base passages, where they are given (an
    update's), else None."""

    ids: Sequence[str]
    titles: Sequence[str]
    starts: Sequence[int]
    blocks: Any = None
    passages: Sequence[Passages] | None = None


def write_sharded(where: Path, request: BuildRequest, encoder: Encoder | None, sharding: Sharding, cut: Cut,
                  generation: Generation = Generation()) -> Manifest:
    """The shards and the manifest that names them, in a fresh folder of the locked index directory `where` (as
    `generation`: an update's keeps the folder of the generation before)."""
    began, shards, ids, starts = time.monotonic(), len(cut.starts), cut.ids, cut.starts
    ends = [*starts[1:], len(ids)]
    parts = [request.docs[a:b] for a, b in zip(starts, ends)] if cut.blocks is None else cut.blocks.parts(starts)
    with fresh_build(where, keep=generation.previous) as tmp:
        pool = _builders(request, encoder, shards, sharding)
        try:  # closed before fresh_build cleans up: no builder writes into a folder being removed
            passages = _build_shards(pool, tmp, request, parts, cut)
        finally:
            pool.close()
        _say(request.progress, f"{shards} shards built ({sum(passages)} passages)", began)
        refs = tuple(ShardRef(shard_name(s), start, end - start, n)
                     for s, (start, end, n) in enumerate(zip(starts, ends, passages)))
        for ref in refs:  # every shard is there, whole, before the index switches to them
            shard = read_manifest(tmp / ref.name)
            if (shard.n_docs, shard.n_passages) != (ref.n_docs, ref.n_passages):
                raise IndexDirError(f"{tmp / ref.name}: the shard's builder wrote {shard.n_docs} documents, "
                                    f"not {ref.n_docs}; the build is abandoned")
        (tmp / DOC_IDS).write_text(json.dumps(ids), encoding="utf-8")
        # The corpus's table, of every document (shards have none): on Ray, of the documents Ray Data read.
        every = request.docs if cut.blocks is None else [d for part in parts for d in documents(part)]
        every = every if request.metadata is None else request.metadata.apply(every)  # dates resolve names
        write_treatments(tmp, every, request.treatments, request.progress, request.treatments_before)
        # The manifest records the files of its own: the corpus's ids, its treatment table and each shard's
        # manifest, which records (and has checked when its shard is loaded) every file of its shard.
        own = {name: file_entry(tmp / name)
               for name in [DOC_IDS, TREATMENTS, *(shard_manifest(ref.name) for ref in refs)]}
        manifest = layout.manifest(request.provenance(), tmp.name, (len(ids), sum(passages)), own, refs,
                                   generation=generation)
        switch_to(where, tmp, manifest)
    return manifest


def _build_shards(pool: LocalPool | RayPool, tmp: Path, request: BuildRequest, parts: Sequence[Any],
                  cut: Cut) -> list[int]:
    """The two rounds: each shard's texts tokenized and counted, the counts added up, then each shard built with
    the corpus's statistics; each shard's number of passages."""
    starts = cut.starts
    began, shards, n_workers = time.monotonic(), len(starts), len(pool.workers)
    # On Ray, put once in the object store: every call reads the same copies.
    ids, titles = _shared((cut.ids, cut.titles)) if isinstance(pool, RayPool) else (cut.ids, cut.titles)
    # The builders take the request whole, without the coordinator's documents: each has its shard's.
    sent = replace(request, docs=[], passages=None, treatments=(), treatments_before=None)
    counts = pool.run([(s % n_workers, "count", (s, parts[s], sent, starts[s], ids, titles)) for s in range(shards)])
    stats = {name: CorpusStats.total(c[name] for c in counts) for name in counts[0]}
    _say(request.progress, f"{shards} shards tokenized by {n_workers} builder{'s' * (n_workers > 1)}; corpus "
                           "statistics gathered", began)
    quiet = replace(sent, progress=request.progress and n_workers == 1)
    each = [quiet if cut.passages is None else replace(quiet, passages=cut.passages[s]) for s in range(shards)]
    return pool.run([(s % n_workers, "build", (s, str(tmp / shard_name(s)), each[s], starts[s], ids, titles, stats))
                     for s in range(shards)])


def _shared(corpus: tuple[Sequence[str], Sequence[str]]) -> tuple[Any, Any]:
    """The corpus's ids and titles put in Ray's object store: what builders are handed in their place."""
    import ray as ray_module

    return ray_module.put(corpus[0]), ray_module.put(corpus[1])


def _builders(request: BuildRequest, encoder: Encoder | None, shards: int, sharding: Sharding) -> LocalPool | RayPool:
    ray, workers = sharding.ray, sharding.workers
    if ray is None:
        return LocalPool([ShardBuilder(request.encoder.path, encoder)])
    import ray as ray_module

    nodes = [(int(node["Resources"].get("CPU", 0)), int(node["Resources"].get("GPU", 0)))
             for node in ray_module.nodes() if node.get("Alive")]
    # No more builders than can run at once: a builder holds its CPUs until the build ends.
    n = max(1, min(shards, workers or sum(c for c, _ in nodes), max(1, sum(c for c, _ in nodes))))
    cores, gpus = builder_resources(nodes, n)
    # A builder is not restarted: its tokens from the first round died with it (the build fails in one line).
    return RayPool(ShardBuilder, [(request.encoder.path,)] * n, [f"builder {i}" for i in range(n)],
                   num_cpus=cores, num_gpus=gpus, restarts=0)


def builder_resources(nodes: Sequence[tuple[int, int]], workers: int) -> tuple[int, int]:
    """(cores, GPUs) for each of `workers` builders on nodes of (CPUs, GPUs), all placeable at once: a whole GPU each
    where the GPU nodes can host every builder, else none; then as many cores each as still places them all."""
    if sum(g for _, g in nodes) >= workers:
        for cores in range(max(1, sum(c for c, g in nodes if g) // workers), 0, -1):
            if sum(min(g, c // cores) for c, g in nodes if g) >= workers:
                return cores, 1
    return cores_each([c for c, _ in nodes], workers), 0


def cores_each(node_cpus: Sequence[int], workers: int) -> int:
    """The most cores each of `workers` equal workers can have with all of them placed at once on nodes of
    `node_cpus` cores (1 where there are no more cores than workers)."""
    for cores in range(max(1, sum(node_cpus) // max(workers, 1)), 1, -1):
        if sum(c // cores for c in node_cpus) >= workers:
            return cores
    return 1


def _say(progress: bool, message: str, began: float) -> None:
    if progress:
        print(f"[{time.monotonic() - began:7.1f}s] {message}", file=sys.stderr, flush=True)
