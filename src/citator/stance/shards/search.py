"""Search over a sharded index: the query is encoded once, every shard scores its own documents, and the
coordinator fuses and ranks exactly as one index over the whole corpus would.

Two rounds per batch. (1) Each shard returns, per signal, its `norm_depth` best scores: the best `norm_depth` of
those are the whole index's, which fix each signal's normalisation bounds. (2) Under those bounds each shard
interpolates its documents and returns its best candidates with what the learned ranker reads of them; the
coordinator merges them (ties by corpus position, as one index breaks them), scores the first `candidates` with
the ranker and keeps the top k. Every number is computed as one index computes it, so the answers are the same.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from citator.data.filters import Filter, check_keys
from citator.data.queries import cut_for_search
from citator.data.records import Document, Query, ResultLine, ScoredDoc
from citator.engines.fusion import best_n, interpolate, top_k, topn_bounds
from citator.engines.lexical import term_key
from citator.errors import ConfigError, IndexDirError
from citator.models.encoder import Encoder
from citator.stance.retrieve.config import RetrievalConfig
from citator.stance.retrieve.explain import Explained, Explanation, QueryView, count_above, explain
from citator.stance.retrieve.index_files import REBUILD, AsVerified, load_doc_ids, verify_digests
from citator.stance.retrieve.late_interaction import DEPTH as LATE_DEPTH
from citator.stance.retrieve.layout import (
    DOC_IDS, FINETUNED_ENCODER, RANKER, IndexFolder, Manifest, open_folder, shard_manifest,
)
from citator.stance.retrieve.learned import reads_encoder
from citator.stance.retrieve.treatments import load_treatments
from citator.stance.retrieve.opened import Searcher
from citator.stance.retrieve.ranker import (
    CandidateValues,
    Ranker,
    features_of,
    gather_candidates,
    late_scores,
    load_ranker,
    ranked_places,
)
from citator.stance.retrieve.searcher import MAX_BATCH_CELLS, EncodedQueries, StanceSearcher, query_encoder
from citator.stance.shards.workers import LocalPool, RayPool, connect, ray_address, share_of_cpus


def check_shardable(config: RetrievalConfig) -> None:
    """A sharded index fuses by interpolation (or the learned ranker over it): rank fusion and the stance contrast
    read whole rankings, which no shard holds."""
    if config.fusion == "rrf" or config.stance_contrast or config.refuter_slots:
        raise ConfigError("a sharded index fuses by interpolation or the learned ranker, without a stance contrast "
                          "or refuter slots; build it with one shard for this config")


@dataclass(frozen=True)
class ShardCandidates:
    """A shard's best documents of a batch under the whole index's bounds: local indices and interpolated scores
    (n_queries, depth), best first, and, for the learned ranker, what its features read of them."""

    idx: np.ndarray
    scores: np.ndarray
    values: CandidateValues | None


class ShardWorker:
    """One shard, loaded from its index directory: its signals for a batch, its best candidates, and what it can
    say of the documents it holds (a brief's evidence)."""

    def __init__(self, shard_dir: str, manifest_sha256: str) -> None:
        """`manifest_sha256`: the digest the sharded index's file table records of this shard's manifest."""
        self.searcher = StanceSearcher(open_folder(shard_dir, manifest_sha256), encoders=False)
        self._pending: dict[str, dict[str, np.ndarray]] = {}

    def describe(self) -> dict[str, Any]:
        """What the coordinator checks and reads of this shard: its signals, ranker and late interaction, the
        documents it holds, and its manifest (what it was built from; the first shard's locates the encoders)."""
        s = self.searcher
        return {"names": s.needed_signals(), "learned": s.uses_ranker, "late": s.uses_late_interaction,
                "n_docs": len(s.doc_ids), "n_passages": s.manifest.n_passages, "first": s.doc_ids[0],
                "last": s.doc_ids[-1], "pid": os.getpid(), "manifest": s.manifest, "keys": s.metadata_keys}

    def use_numba(self) -> None:
        self.searcher.use_numba()

    def _masked(self, signals: Mapping[str, np.ndarray], filters: Sequence[Filter]
                ) -> tuple[Mapping[str, np.ndarray], np.ndarray | None]:
        """The signals over the documents of this shard that meet `filters` (the others -inf, as one index masks
        them: FeatureTable.masked), and which those are (None: no filter)."""
        if not filters:
            return signals, None
        allowed = self.searcher.metadata.allowed(filters, check=False)  # the coordinator checked the keys
        return {name: np.where(allowed, m, -np.inf).astype(m.dtype) for name, m in signals.items()}, allowed

    def best(self, key: str, queries: Sequence[Query], encoded: EncodedQueries, names: Sequence[str], n: int,
             filters: Sequence[Filter] = ()) -> dict[str, np.ndarray]:
        """Round 1: per signal, this shard's n best scores of each query among the documents that meet `filters`
        (the signals kept for round 2 of batch `key`)."""
        signals = self.searcher.signal_matrices(queries, names, encoded)
        self._pending = {key: signals}  # one batch in flight: a coordinator waits for round 2 before the next
        return {name: best_n(matrix, n) for name, matrix in self._masked(signals, filters)[0].items()}

    def candidates(self, key: str, queries: Sequence[Query], encoded: EncodedQueries, names: Sequence[str],
                   bounds: Mapping[str, tuple[np.ndarray, np.ndarray]], depth: int, learned: bool,
                   filters: Sequence[Filter] = ()) -> ShardCandidates:
        """Round 2: this shard's `depth` best documents under the whole index's `bounds`, those a filter leaves out
        scored -inf. A worker restarted between the rounds has lost round 1's signals and computes them again."""
        s = self.searcher
        pending = self._pending.pop(key, None)
        signals, allowed = self._masked(pending or s.signal_matrices(queries, names, encoded), filters)
        base = np.nan_to_num(interpolate(signals, s.config.weights, bounds=bounds), nan=0.0, posinf=0.0, neginf=0.0)
        idx, scores = top_k(base if allowed is None else np.where(allowed, base, -np.inf), depth)
        if not learned:
            s.check_unchanged()
            return ShardCandidates(idx, scores, None)
        late = None
        if s.uses_late_interaction and encoded.tokens is not None and s.late_store is not None:
            late = late_scores(encoded.tokens, idx, s.late_store)
        citations = s.learned.citations if s.learned is not None else None
        values = gather_candidates(signals, s.years, idx, citations=citations, late=late, bounds=bounds)
        s.check_unchanged()
        return ShardCandidates(idx, scores, values)

    def document(self, position: int) -> Document:
        return self.searcher.document(position)

    def explain(self, key: str, queries: Sequence[Query], encoded: EncodedQueries, names: Sequence[str],
                hits: Sequence[Sequence[int]]) -> list[list[tuple[Document, Explanation]]]:
        """Round 1 of an explanation: per query, the documents at `hits` (this shard's positions) explained, with
        this batch's signals kept for round 2 of batch `key`."""
        signals = self.searcher.signal_matrices(queries, names, encoded)
        self._pending = {key: signals}
        out = []
        for i, (query, positions) in enumerate(zip(queries, hits)):
            view = QueryView(query.text, {n: m[i] for n, m in signals.items()},
                             None if encoded.vectors is None else encoded.vectors[i],
                             None if encoded.base is None else encoded.base[i])
            out.append([(self.searcher.shown_document(p), e)
                        for p, e in zip(positions, explain(self.searcher, view, positions))])
        self.searcher.check_unchanged()
        return out

    def count_above(self, key: str, queries: Sequence[Query], encoded: EncodedQueries, names: Sequence[str],
                    values: Sequence[Mapping[str, Sequence[float]]]) -> list[dict[str, list[int]]]:
        """Round 2: per query and signal, how many of this shard's documents score above each of `values`."""
        signals = self._pending.pop(key, None) or self.searcher.signal_matrices(queries, names, encoded)
        self.searcher.check_unchanged()
        return [count_above({n: m[i] for n, m in signals.items()}, v) for i, v in enumerate(values)]


def _take(values: CandidateValues, order: np.ndarray) -> CandidateValues:
    """The candidates' values in `order` (per query, positions along the candidate axis)."""
    take = lambda a: np.take_along_axis(a, order, axis=1)
    return CandidateValues({n: (take(raw), take(norm)) for n, (raw, norm) in values.signals.items()},
                           take(values.years),
                           None if values.citations is None else {k: take(v) for k, v in values.citations.items()},
                           None if values.late is None else take(values.late))


def _joined(parts: Sequence[CandidateValues]) -> CandidateValues:
    cat = lambda arrays: np.concatenate(arrays, axis=1)
    first = parts[0]
    return CandidateValues(
        {n: (cat([p.signals[n][0] for p in parts]), cat([p.signals[n][1] for p in parts])) for n in first.signals},
        cat([p.years for p in parts]),
        None if first.citations is None else {k: cat([(p.citations or {})[k] for p in parts]) for k in first.citations},
        None if first.late is None else cat([p.late for p in parts]))


def _ranker_values(parts: Sequence[ShardCandidates]) -> list[CandidateValues]:
    """What every shard gathered of its candidates for the learned ranker (each does when the index ranks so)."""
    found = [p.values for p in parts if p.values is not None]
    if len(found) != len(parts):
        raise IndexDirError("a shard gave no ranker features though the index ranks with its learned ranker; "
                            f"{REBUILD}")
    return found


def _ordered(idx: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Per query, positions best first, equal scores by corpus position (fusion.top_k's order)."""
    return np.lexsort((idx, -scores), axis=1)


class ShardedSearcher:
    """Answers batches over a sharded index with its shards' workers (in this process, or Ray actors)."""

    def __init__(self, index: IndexFolder | str | Path, cold: bool = False, ray: str | None = None) -> None:
        self.folder = index if isinstance(index, IndexFolder) else open_folder(index)
        self.index_dir, self.manifest = self.folder.root, self.folder.manifest
        if not self.manifest.shards:
            raise IndexDirError(f"{self.index_dir}: not a sharded index")
        self.config = self.manifest.config
        check_shardable(self.config)
        # The corpus's ids and each shard's manifest, as built and as they stay: a shard's worker checks its
        # manifest's digest on the bytes it parses, then its shard's files as one index does.
        self.as_verified = AsVerified.take(self.folder.data, self.manifest.files)
        verify_digests(self.folder.data, {DOC_IDS: self.manifest.files[DOC_IDS]})
        self.doc_ids: list[str] = load_doc_ids(self.folder.path(DOC_IDS), self.manifest.n_docs)
        self.starts = [ref.start for ref in self.manifest.shards]
        shards = [(str(self.folder.path(ref.name)), self.manifest.files[shard_manifest(ref.name)]["sha256"])
                  for ref in self.manifest.shards]
        self.pool = _shard_pool(shards, [f"shard {ref.name}" for ref in self.manifest.shards], ray)
        described = self.pool.run([(w, "describe", ()) for w in range(len(self.manifest.shards))])
        self._check_shards(described)
        info = described[0]
        self.names: list[str] = info["names"]
        self.metadata_keys: frozenset[str] = frozenset().union(*(d["keys"] for d in described))
        self.learned: bool = info["learned"]
        self.late: bool = info["late"]
        # The first shard holds the query encoders and the ranker (every shard holds the same), opened from the
        # manifest its worker read.
        self._first, self._cold = IndexFolder(self.folder.path(self.manifest.shards[0].name), info["manifest"]), cold
        self.ft_encoder: Encoder | None = None
        if self.manifest.trained and (self.late or reads_encoder(self.names)):
            self.ft_encoder = query_encoder(self._first, self._first.path(FINETUNED_ENCODER), "finetuned", cold)
        self.ranker = load_ranker(self._first.path(RANKER)) if self.learned else None
        # The corpus's treatment table, beside the shards (each row's passage read from the shard holding it).
        self.treatments = load_treatments(self.folder, self.positions, self.document)
        self.check_unchanged()

    def _check_shards(self, described: Sequence[dict[str, Any]]) -> None:
        """Each shard holds the documents the manifest says it holds, in the corpus's order, and was built from the
        same corpus, encoder, settings and model as the index."""
        for ref, info in zip(self.manifest.shards, described):
            if info["manifest"].source != self.manifest.source:
                raise IndexDirError(f"{self.index_dir}: shard {ref.name} was built with another corpus, encoder, "
                                    f"settings or artifacts than the index; {REBUILD}")
            ids = self.doc_ids[ref.start:ref.start + ref.n_docs]
            if (info["n_docs"], info["n_passages"], info["first"], info["last"]) != (ref.n_docs, ref.n_passages,
                                                                                   ids[0], ids[-1]):
                raise IndexDirError(f"{self.index_dir}: shard {ref.name} does not hold documents {ref.start}.."
                                    f"{ref.start + ref.n_docs - 1} of the corpus; {REBUILD}")

    def check_unchanged(self) -> None:
        """Refuse, in one line, an index whose own files changed since they were verified (each shard's worker
        checks its shard's after every call)."""
        self.as_verified.check()

    def term_key(self) -> Callable[[str], str | None]:
        """A word's key as every shard's passages match it (the one tokenizer every index is built with)."""
        return term_key()

    @cached_property
    def encoder(self) -> Encoder:
        """The base query encoder, loaded on first use (a trained index may need only the fine-tuned one)."""
        return query_encoder(self._first, self.manifest.source.encoder_path, "base", self._cold)

    def needed_signals(self) -> list[str]:
        return list(self.names)

    def use_numba(self) -> None:
        self.pool.run([(w, "use_numba", ()) for w in range(len(self.manifest.shards))])

    def close(self) -> None:
        self.pool.close()

    def encode(self, queries: Sequence[Query]) -> EncodedQueries:
        """Each query encoded once, for every shard: base vectors for `dense`, the fine-tuned encoder's for the
        learned signals (with token states where the ranker reads late interaction)."""
        texts, stances = [q.text for q in queries], [q.stance for q in queries]
        base = self.encoder.encode_queries(texts, stances) if "dense" in self.names else None
        vectors = tokens = None
        if self.ft_encoder is not None:
            if self.late:
                vectors, tokens = self.ft_encoder.encode_queries_with_tokens(texts, stances)
            else:
                vectors = self.ft_encoder.encode_queries(texts, stances)
        return EncodedQueries(vectors, tokens, base)

    def search(self, queries: Sequence[Query], k: int = 10, batch_size: int = 256, on_batch: None = None,
               filters: Sequence[Filter] = ()) -> list[ResultLine]:
        """Top-k distinct documents per query (of those that meet `filters`), as one index over the whole corpus
        answers."""
        if on_batch is not None:
            raise ConfigError("a sharded index does not show a search's signals: its explain() says what ranked each hit")
        queries = cut_for_search(queries)
        check_keys(filters, self.metadata_keys)
        # Batches as one index cuts them (MAX_BATCH_CELLS bounds a batch's signal matrices); the cut does not move
        # a score (width_batches pads each query alone, exact_inner sums in float64).
        batch_size = max(1, min(batch_size, MAX_BATCH_CELLS // max(self.manifest.n_passages, 1)))
        out: list[ResultLine] = []
        for start in range(0, len(queries), batch_size):
            out.extend(self._batch(queries[start:start + batch_size], k, tuple(filters)))
        self.check_unchanged()
        return out

    def _batch(self, queries: Sequence[Query], k: int, filters: tuple[Filter, ...]) -> list[ResultLine]:
        shards = range(len(self.manifest.shards))
        key, n = uuid.uuid4().hex, self.config.norm_depth
        encoded = self.encode(queries)
        tops = self.pool.run([(w, "best", (key, queries, encoded, self.names, n, filters)) for w in shards])
        bounds = {name: topn_bounds(best_n(np.concatenate([t[name] for t in tops], axis=1), n)) for name in self.names}
        candidates = self.ranker.candidates if self.ranker is not None else 0
        depth = max(k, candidates)
        parts: list[ShardCandidates] = self.pool.run(
            [(w, "candidates", (key, queries, encoded, self.names, bounds, depth, self.learned, filters))
             for w in shards])
        idx = np.concatenate([p.idx + start for p, start in zip(parts, self.starts)], axis=1)
        base = np.concatenate([p.scores for p in parts], axis=1)
        order = _ordered(idx, base)[:, :depth]
        idx, base = np.take_along_axis(idx, order, axis=1), np.take_along_axis(base, order, axis=1)
        scores, kept = base, np.isfinite(base)  # -inf: a document a filter leaves out
        if self.ranker is not None:
            values = _take(_joined(_ranker_values(parts)), order)
            scores = self._ranked(self.ranker, queries, base, values, min(candidates, idx.shape[1]))
            order = _ordered(idx, scores)
            idx, scores, kept = (np.take_along_axis(a, order, axis=1) for a in (idx, scores, kept))
        return [ResultLine(q.query_id, tuple(ScoredDoc(self.doc_ids[i], s) for i, s, ok in zip(*row) if ok)[:k])
                for q, row in zip(queries, zip(idx.tolist(), np.asarray(scores, dtype=np.float64).tolist(),
                                               kept.tolist()))]

    def explained(self, queries: Sequence[Query], k: int = 10, filters: Sequence[Filter] = ()
                  ) -> list[list[Explained]]:
        """A search of `queries` (with `filters`), each hit explained by the shard that holds it and ranked under
        each signal over the whole corpus."""
        results = self.search(queries, k, filters=filters)
        return [[Explained(scored, doc, e, ranks) for scored, (doc, e, ranks) in zip(line.results, row)]
                for line, row in zip(results, self.explain(queries, results))]

    def document(self, position: int) -> Document:
        """The document at `position` of the corpus, read from the shard that holds it."""
        shard = self._shard_of(position)
        return self.pool.run([(shard, "document", (position - self.starts[shard],))])[0]

    def _shard_of(self, position: int) -> int:
        return int(np.searchsorted(self.starts, position, side="right")) - 1

    def explain(self, queries: Sequence[Query], results: Sequence[ResultLine]
                ) -> list[list[tuple[Document, Explanation, dict[str, int]]]]:
        """Per query, each of its `results` (a search of these `queries`) with its document, its explanation from
        the shard that holds it, and its rank under each signal over the whole corpus."""
        queries = cut_for_search(queries)
        shards = range(len(self.manifest.shards))
        key = uuid.uuid4().hex
        encoded = self.encode(queries)
        if self.manifest.trained and encoded.vectors is None:
            # The ranking read no fine-tuned signal; the training propositions that cite a hit are still shown.
            vectors = self._finetuned.encode_queries([q.text for q in queries], [q.stance for q in queries])
            encoded = EncodedQueries(vectors, None, encoded.base)
        places = [[self.positions[d.doc_id] for d in line.results] for line in results]
        owner = [[self._shard_of(p) for p in row] for row in places]
        hits = [[[p - self.starts[w] for p, o in zip(row, owned) if o == w] for row, owned in zip(places, owner)]
                for w in shards]
        told = self.pool.run([(w, "explain", (key, queries, encoded, self.names, hits[w])) for w in shards])
        # Each query's hits in its ranking's order, from the shards that explained them.
        found = []
        for q, owned in enumerate(owner):
            taken = [iter(told[w][q]) for w in shards]
            found.append([next(taken[o]) for o in owned])
        values = [{n: [e.signals[n] for _, e in row] for n in self.names} for row in found]
        counts = self.pool.run([(w, "count_above", (key, queries, encoded, self.names, values)) for w in shards])
        return [[(doc, e, {n: 1 + sum(counts[w][q][n][i] for w in shards) for n in e.signals})
                 for i, (doc, e) in enumerate(row)] for q, row in enumerate(found)]

    @cached_property
    def positions(self) -> dict[str, int]:
        """Each document's position in the corpus, by doc id."""
        return {doc_id: i for i, doc_id in enumerate(self.doc_ids)}

    @cached_property
    def _finetuned(self) -> Encoder:
        """The fine-tuned query encoder, for an explanation's memory reasons where the ranking does not use it."""
        if self.ft_encoder is not None:
            return self.ft_encoder
        return query_encoder(self._first, self._first.path(FINETUNED_ENCODER), "finetuned", self._cold)

    def _ranked(self, ranker: Ranker, queries: Sequence[Query], base: np.ndarray, values: CandidateValues,
                n: int) -> np.ndarray:
        """The learned ranker's scores of the first `n` merged candidates (in (1, 2)), the interpolation's below
        them (at most -1), as StanceSearcher.fuse places them."""
        head = _take(values, np.tile(np.arange(n), (len(queries), 1)))
        if head.late is not None and n > LATE_DEPTH:  # one index scores late interaction for its first candidates
            late = head.late.copy()
            late[:, LATE_DEPTH:] = np.nan
            head = CandidateValues(head.signals, head.years, head.citations, late)
        names, x = features_of(head, [q.stance for q in queries])
        logits = ranker.score(names, x)
        with np.errstate(invalid="ignore"):  # a query no document is allowed for: -inf - -inf, placed by no one
            out = base - base[:, :1] - 1.0
        out[:, :n] = ranked_places(logits)
        return np.nan_to_num(out, nan=0.0, posinf=0.0, neginf=0.0)


def _shard_pool(shards: Sequence[tuple[str, str]], names: Sequence[str], ray: str | None) -> LocalPool | RayPool:
    """A worker per shard (its folder, its manifest's digest): Ray actors on the cluster `ray` (or $CITATOR_RAY),
    else in this process."""
    address = ray_address(ray)
    if not address:
        return LocalPool([ShardWorker(*shard) for shard in shards])
    connect(address)
    import ray as ray_module

    # Every shard's actor can be placed at once, with a share of a CPU where there are more shards than CPUs.
    nodes = [node["Resources"].get("CPU", 0) for node in ray_module.nodes() if node.get("Alive")]
    return RayPool(ShardWorker, list(shards), names, share_of_cpus(nodes, len(shards)))


def open_searcher(index: IndexFolder | str | Path, cold: bool = False, ray: str | None = None) -> Searcher:
    """The searcher of an index directory, one index or sharded (its shards' workers on the Ray cluster `ray` or
    $CITATOR_RAY, else in this process), opened from its manifest, read once."""
    folder = index if isinstance(index, IndexFolder) else open_folder(index)
    if folder.manifest.shards:
        return ShardedSearcher(folder, cold, ray)
    return StanceSearcher(folder, cold=cold)
