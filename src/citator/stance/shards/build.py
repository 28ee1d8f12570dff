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
from pathlib import Path
from typing import Any

import numpy as np

import citator
from citator.data.hashing import sha256_file
from citator.data.records import Document
from citator.errors import ConfigError, IndexDirError
from citator.stance.retrieve.config import RetrievalConfig
from citator.stance.retrieve.index_dir import (
    ShardPart,
    build_lock,
    build_locked,
    check_enough,
    corpus_links,
    fresh_build,
    lexical_texts,
    passage_rules,
    prepare_build,
    switch_to,
)
from citator.stance.retrieve.index_files import file_entry
from citator.engines.lexical import CorpusStats, LexicalIndex, Tokenized
from citator.stance.retrieve.manifest import MANIFEST, Manifest, ShardRef, read_manifest
from citator.stance.retrieve.model import StanceModel
from citator.stance.shards.read import documents, read_corpus_blocks
from citator.stance.shards.search import check_shardable
from citator.stance.shards.workers import LocalPool, RayPool, connect


class ShardBuilder:
    """Builds shards with one loaded encoder; keeps each shard's tokens between the two rounds."""

    def __init__(self, encoder_path: str, encoder: Any = None) -> None:
        from citator.models.load import load_encoder

        self.encoder = encoder if encoder is not None else load_encoder(Path(encoder_path))
        self._tokens: dict[int, dict[str, Tokenized]] = {}
        self._docs: dict[int, list[Document]] = {}

    def count(self, shard: int, part: Any, config: RetrievalConfig, artifacts: StanceModel | None,
              start: int, corpus_ids: Sequence[str], corpus_titles: Sequence[str]) -> dict[str, CorpusStats]:
        """Round 1: the shard's documents (a list, or a dataset of the blocks Ray Data read) and texts tokenized
        (both kept) and their statistics per lexical index."""
        docs = self._docs[shard] = documents(part)
        memory = links = None
        if artifacts is not None:
            from citator.stance.retrieve.memory import PropositionMemory

            memory = PropositionMemory.load(artifacts.memory_dir)
            links = corpus_links(memory, corpus_ids, corpus_titles, start, len(docs))
        texts = lexical_texts(docs, config, memory, links)
        self._tokens[shard] = {name: LexicalIndex.tokenize(t) for name, t in texts.items()}
        return {name: tokens.stats() for name, tokens in self._tokens[shard].items()}

    def build(self, shard: int, shard_dir: str, corpus: str, encoder_path: str,
              encoder_sha256: str, config: RetrievalConfig, artifacts: StanceModel | None, start: int,
              corpus_ids: Sequence[str], corpus_titles: Sequence[str], stats: Mapping[str, CorpusStats],
              progress: bool) -> int:
        """Round 2: the shard's index directory, scored with the corpus's `stats`; its number of passages."""
        part = ShardPart(start, corpus_ids, corpus_titles, stats, self._tokens.pop(shard))
        Path(shard_dir).mkdir(parents=True)
        manifest = build_locked(self._docs.pop(shard), Path(corpus), Path(shard_dir), Path(encoder_path),
                                self.encoder, config, progress, artifacts, None, None, encoder_sha256, part)
        return manifest.n_passages


def shard_starts(n_docs: int, shards: int) -> list[int]:
    """Where each of `shards` contiguous, near-equal parts of n_docs documents starts."""
    return [int(part[0]) for part in np.array_split(np.arange(n_docs), shards)]


def build_sharded(corpus_path: Path, index_dir: Path, shards: int, encoder_path: Path | None = None,
                  config: RetrievalConfig | None = None, artifacts: StanceModel | None = None,
                  artifacts_optional: bool = False, progress: bool = True, ray: str | None = None,
                  workers: int | None = None) -> Manifest:
    """A sharded index of the corpus in `index_dir`: `shards` parts, built by `workers` workers (default: one per
    shard, at most the cluster's CPUs) on the Ray cluster `ray`, or in this process when `ray` is None."""
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ConfigError(f"--workers must be a positive number of shard builders, got {workers!r}")
    if workers is not None and ray is None:
        raise ConfigError("--workers sets how many Ray actors build the shards: give --ray too")
    # On Ray the corpus is read in blocks by Ray Data tasks (stance/shards/read.py), not by this process.
    inputs = prepare_build(corpus_path, index_dir, encoder_path, config, artifacts, artifacts_optional,
                           read_docs=ray is None)
    check_shardable(inputs.config)
    began = time.monotonic()
    # Absolute paths: builders may run in other processes, on other machines (which must see the same files).
    corpus = Path(corpus_path).absolute()
    if ray is None:
        ids, titles = [d.doc_id for d in inputs.docs], [d.title for d in inputs.docs]
    else:
        connect(ray)
        read = read_corpus_blocks(corpus)
        ids, titles = read.ids, read.titles
        check_enough(corpus_path, len(ids))
        _say(progress, f"{len(ids)} documents read in blocks by Ray Data", began)
    if isinstance(shards, bool) or not isinstance(shards, int) or not 1 <= shards <= len(ids):
        raise ConfigError(f"--shards must be between 1 and the corpus's {len(ids)} documents, got {shards!r}")
    starts = shard_starts(len(ids), shards)
    ends = [*starts[1:], len(ids)]
    # The model as the coordinator loaded and checked it: builders take it whole rather than hash it again.
    art = inputs.artifacts
    parts = [inputs.docs[a:b] for a, b in zip(starts, ends)] if ray is None else read.parts(starts)
    with build_lock(index_dir) as where, fresh_build(where) as tmp:
        pool = _builders(inputs, shards, ray, workers)
        try:  # closed before fresh_build cleans up: no builder writes into a folder being removed
            n_workers = len(pool.workers)
            shared_ids, shared_titles = ids, titles
            if isinstance(pool, RayPool):
                import ray as ray_module

                # Put once in the object store: every call reads the same copies.
                shared_ids, shared_titles = ray_module.put(ids), ray_module.put(titles)  # type: ignore[assignment]
            counts = pool.run([(s % n_workers, "count", (s, parts[s], inputs.config, art, starts[s], shared_ids,
                                                         shared_titles)) for s in range(shards)])
            stats = {name: CorpusStats.total(c[name] for c in counts) for name in counts[0]}
            _say(progress, f"{shards} shards tokenized by {n_workers} builder{'s' * (n_workers > 1)}; corpus "
                           "statistics gathered", began)
            names = [f"stance/shards/{s:03d}" for s in range(shards)]
            passages = pool.run([(s % n_workers, "build", (
                s, str(tmp / names[s]), str(corpus), str(inputs.encoder_path.absolute()), inputs.encoder_sha256,
                inputs.config, art, starts[s], shared_ids, shared_titles, stats, progress and n_workers == 1))
                for s in range(shards)])
        finally:
            pool.close()
        _say(progress, f"{shards} shards built ({sum(passages)} passages)", began)
        refs = tuple(ShardRef(name, start, end - start, n) for name, start, end, n
                     in zip(names, starts, ends, passages))
        for ref in refs:  # every shard is there, whole, before the index switches to them
            shard = read_manifest(tmp / ref.name)
            if (shard.n_docs, shard.n_passages) != (ref.n_docs, ref.n_passages):
                raise IndexDirError(f"{tmp / ref.name}: the shard's builder wrote {shard.n_docs} documents, "
                                    f"not {ref.n_docs}; the build is abandoned")
        (tmp / "doc_ids.json").write_text(json.dumps(ids), encoding="utf-8")
        # The manifest records the files of its own: the corpus's ids and each shard's manifest, which records (and
        # has checked when its shard is loaded) every file of its shard.
        own = {name: file_entry(tmp / name) for name in ["doc_ids.json", *(f"{ref.name}/{MANIFEST}" for ref in refs)]}
        manifest = Manifest(
            corpus_sha256=sha256_file(corpus), n_docs=len(ids), n_passages=sum(passages),
            encoder_path=str(inputs.encoder_path.absolute()), encoder_id=inputs.encoder.model_id,
            config=inputs.config, citator_version=citator.__version__, built_at=time.time(), data_dir=tmp.name,
            artifacts_path=None if art is None else str(art.root),
            artifacts_sha256=None if art is None else sha256_file(art.manifest_path),
            encoder_sha256=inputs.encoder_sha256, passage_rules=passage_rules(), files=own, shards=refs)
        switch_to(where, tmp, manifest)
    return manifest


def _builders(inputs: Any, shards: int, ray: str | None, workers: int | None) -> LocalPool | RayPool:
    if ray is None:
        return LocalPool([ShardBuilder(str(inputs.encoder_path), inputs.encoder)])
    import ray as ray_module

    nodes = [(int(node["Resources"].get("CPU", 0)), int(node["Resources"].get("GPU", 0)))
             for node in ray_module.nodes() if node.get("Alive")]
    # No more builders than can run at once: a builder holds its CPUs until the build ends.
    n = max(1, min(shards, workers or sum(c for c, _ in nodes), max(1, sum(c for c, _ in nodes))))
    cores, gpus = builder_resources(nodes, n)
    # A builder is not restarted: its tokens from the first round died with it (the build fails in one line).
    return RayPool(ShardBuilder, [(str(inputs.encoder_path.absolute()),)] * n, [f"builder {i}" for i in range(n)],
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
