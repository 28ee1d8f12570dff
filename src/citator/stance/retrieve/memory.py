"""PropositionMemory: labeled training propositions that vote for the documents they were judged against."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from citator.data.atomic import save_npy_atomic, write_jsonl_atomic
from citator.data.jsonl import iter_jsonl, require_str
from citator.data.records import STANCES
from citator.errors import ArtifactError
from citator.engines.dense import exact_inner, normalise_rows
from citator.engines.fusion import top_k


# A saved memory's files: its entries (JSONL) and their vectors.
ENTRIES, VECTORS = "memory.jsonl", "memory_vectors.npy"


@dataclass(frozen=True)
class MemoryEntry:
    proposition_id: str
    stance: str
    text: str
    doc_ids: tuple[str, ...]
    doc_titles: tuple[str, ...]


def _norm_title(title: str) -> str:
    return " ".join("".join(c.lower() if c.isalnum() else " " for c in title).split())


class PropositionMemory:
    """Entry vectors (unit length) and, per entry, the corpus documents it points to."""

    def __init__(self, entries: Sequence[MemoryEntry], vectors: np.ndarray) -> None:
        self.entries = list(entries)
        self.vectors = np.asarray(vectors, dtype=np.float32)

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        write_jsonl_atomic(directory / ENTRIES, (e.__dict__ for e in self.entries))
        save_npy_atomic(directory / VECTORS, self.vectors.astype(np.float16))

    @classmethod
    def load(cls, directory: Path) -> PropositionMemory:
        """Read and check a saved memory (typed errors name file, line and field)."""
        path = directory / ENTRIES
        entries = []
        for line, obj in iter_jsonl(path, ArtifactError):
            fields = [require_str(obj, key, path, line, ArtifactError, nonempty=key != "text")
                      for key in ("proposition_id", "stance", "text")]
            if fields[1] not in STANCES:
                raise ArtifactError(path, line, f"unknown stance {fields[1]!r}", field="stance")
            lists = []
            for key in ("doc_ids", "doc_titles"):
                value = obj.get(key)
                if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                    raise ArtifactError(path, line, "expected a list of strings", field=key)
                lists.append(tuple(value))
            if len(lists[0]) != len(lists[1]):
                raise ArtifactError(path, line, "one title per doc id expected", field="doc_titles")
            proposition_id, stance, text = fields
            entries.append(MemoryEntry(proposition_id, stance, text, lists[0], lists[1]))
        vectors_path = directory / VECTORS
        try:
            vectors = np.load(vectors_path).astype(np.float32)
        except (OSError, ValueError, EOFError) as exc:
            raise ArtifactError(vectors_path, None, f"unreadable ({exc})") from None
        if vectors.ndim != 2 or len(vectors) != len(entries):
            raise ArtifactError(vectors_path, None, f"{vectors.shape} vectors for the {len(entries)} entries of "
                                f"{path.name}: the memory is inconsistent, retrain with citator train")
        return cls(entries, vectors)

    def link(self, doc_ids: Sequence[str], titles: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(entry index, doc index) pairs against a corpus: by doc_id, else by unique case title."""
        pairs = [(e, doc_id, title) for e, entry in enumerate(self.entries)
                 for doc_id, title in zip(entry.doc_ids, entry.doc_titles)]
        found = match_documents([(d, t) for _, d, t in pairs], doc_ids, titles)
        rows = [e for (e, _, _), i in zip(pairs, found) if i >= 0]
        cols = [i for i in found if i >= 0]
        return np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)


def match_documents(wanted: Sequence[tuple[str, str]], doc_ids: Sequence[str], titles: Sequence[str]) -> list[int]:
    """Corpus index of each (doc_id, title) of the training corpus: by doc_id, else by unique non-empty title (case,
    punctuation and spacing aside); -1 if none.

    The evaluator's corpus may name documents differently from the training corpus; titles bridge that.
    """
    by_id = {d: i for i, d in enumerate(doc_ids)}
    by_title: dict[str, list[int]] = {}
    for i, t in enumerate(titles):
        if norm := _norm_title(t):  # an empty title names no document
            by_title.setdefault(norm, []).append(i)
    out = []
    for doc_id, title in wanted:
        if doc_id in by_id:
            out.append(by_id[doc_id])
        else:
            match = by_title.get(_norm_title(title), [])  # an empty title is no key of by_title
            out.append(match[0] if len(match) == 1 else -1)
    return out


def citation_counts(memory: PropositionMemory, links: tuple[np.ndarray, np.ndarray], n_docs: int) -> dict[str, np.ndarray]:
    """Per document: how many training propositions cite it (a prior for the ranker).

    Keys: "all"; "supported" / "refuted" (by the citing entry's stance); "paired_supported" / "paired_refuted"
    (only propositions asked with both stances, where the documents of one stance contradict the other's: on
    CaseFacts the same few refuting cases recur across such propositions).
    """
    rows, cols = links
    stance = np.array([memory.entries[r].stance for r in rows], dtype=object)
    stances_of: dict[str, set[str]] = {}
    for e in memory.entries:
        stances_of.setdefault(e.proposition_id, set()).add(e.stance)
    paired = np.array([{"supported", "refuted"} <= stances_of[memory.entries[r].proposition_id] for r in rows],
                      dtype=bool)
    out = {"all": np.bincount(cols, minlength=n_docs).astype(np.float32)}
    for name in ("supported", "refuted"):
        out[name] = np.bincount(cols[stance == name], minlength=n_docs).astype(np.float32)
        out[f"paired_{name}"] = np.bincount(cols[(stance == name) & paired], minlength=n_docs).astype(np.float32)
    return out


def memory_signals(
    query_vectors: np.ndarray,
    query_stances: Sequence[str],
    memory: PropositionMemory,
    links: tuple[np.ndarray, np.ndarray],
    n_docs: int,
    exclude: Sequence[str | None] | None = None,
    neighbours: int = 20,
    temperature: float = 0.05,
) -> dict[str, np.ndarray]:
    """Per document: best similarity of a linked proposition (any stance / same stance), a softmax vote of the
    nearest `neighbours` propositions, and the similarity to the centroid of the propositions that cite the
    document (document-side expansion). `exclude[i]` hides query i's own proposition."""
    rows, cols = links
    sims = exact_inner(query_vectors, memory.vectors)  # (nq, n_entries)
    if exclude is not None:
        prop_ids = np.array([e.proposition_id for e in memory.entries])
        for i, prop in enumerate(exclude):
            if prop is not None:
                sims[i, prop_ids == prop] = -1.0
    entry_stance = np.array([e.stance for e in memory.entries])
    nq = sims.shape[0]
    best = np.full((nq, n_docs), -1.0, dtype=np.float32)
    same = np.full((nq, n_docs), -1.0, dtype=np.float32)
    vote = np.zeros((nq, n_docs), dtype=np.float32)
    k = min(neighbours, sims.shape[1])
    link_sims = sims[:, rows]  # (nq, n_links)
    # The voters: each query's k nearest entries, ties at the k-th broken by entry order (argpartition's own choice
    # among equal similarities, e.g. of entries with the same text and stance, depends on the CPU's kernel).
    tops, _ = top_k(sims, k)
    for i in range(nq):
        np.maximum.at(best[i], cols, link_sims[i])
        stance = query_stances[i]
        mask = (entry_stance[rows] == stance) | (stance == "all") | (entry_stance[rows] == "all")
        if mask.any():
            np.maximum.at(same[i], cols[mask], link_sims[i, mask])
        top = tops[i]
        weights = np.exp((sims[i, top] - sims[i, top].max()) / temperature)
        weights /= weights.sum()
        w_by_entry = np.zeros(sims.shape[1], dtype=np.float32)
        w_by_entry[top] = weights
        np.add.at(vote[i], cols, w_by_entry[rows])
    return {"memory_max": best, "memory_same": same, "memory_vote": vote,
            "memory_centroid": exact_inner(query_vectors, document_centroids(memory, links, n_docs))}


def document_centroids(memory: PropositionMemory, links: tuple[np.ndarray, np.ndarray], n_docs: int) -> np.ndarray:
    """Each document as the normalised mean of the propositions linked to it (zero where none is)."""
    from scipy.sparse import csr_matrix

    rows, cols = links
    # A sparse (documents x entries) link-count matrix times the entry vectors: the sums np.add.at would make, at a
    # small fraction of its cost (it ran on every search: a third of a warm brief's time).
    counts = csr_matrix((np.ones(len(rows), dtype=np.float64), (cols, rows)), shape=(n_docs, len(memory.vectors)))
    return normalise_rows(np.asarray(counts @ np.asarray(memory.vectors, dtype=np.float64), dtype=np.float32))
