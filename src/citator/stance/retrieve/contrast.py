"""Stance contrast: a proposition asked with both stances in one batch gets two answers read side by side.

A document rarely both supports and refutes the same proposition, so when one batch asks the same text as
`supported` and as `refuted`, each document's *lean* — how much higher the supported query scores it than the
refuted one — says which answer it belongs in. Each of the two rankings moves by `weight` times the lean:

    supported: s(d) + weight * (s(d) - r(d))        refuted: r(d) - weight * (s(d) - r(d))

over the union of both queries' top candidates; a document missing from one query's candidates takes that
query's lowest candidate score there (an upper bound of its score there, so its lean towards the query that did
retrieve it is not overstated). Texts are compared with whitespace collapsed, case kept (a cased encoder may
score two casings apart). `all` queries, and texts asked with one stance only, are left as they are. The weight
is chosen on dev by `citator train` (0 turns it off).

**Refuter slots (opt-in, a CaseFacts-specific prior).** With trained artifacts, the memory knows *refuters*:
documents that its propositions asked with both stances cite as refuting more often than as supporting (on
CaseFacts, the overruling decisions: a small set that recurs). With `slots` = m > 0, the first m places of such a
text's `refuted` answer go to its best-scored refuters (by the fused order over all documents, not only the top
candidates), and the first m places of its `supported` answer are kept free of them. That is a fit to how one
dataset was built, not a reading of the proposition: on fresh two-sided propositions it puts famous overruling
decisions first in every refuted answer. `citator train` never chooses it and build.sh never takes it from
artifacts; only an explicit `refuter_slots` in a --config file turns it on (default 0).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from citator.data.records import Query

# Candidates each query of a both-stance pair brings to the contrast (the learned ranker's depth).
DEPTH = 100
# Weights `citator train` tries on dev's both-stance propositions.
GRID = (0.0, 0.5, 1.0, 2.0, 3.0, 5.0)


def text_key(text: str) -> str:
    return " ".join(text.split())


def both_stance_groups(queries: Sequence[Query]) -> list[tuple[list[int], list[int]]]:
    """(rows asking `supported`, rows asking `refuted`) for each text the batch asks with both stances."""
    by_text: dict[str, dict[str, list[int]]] = {}
    for i, q in enumerate(queries):
        if q.stance in ("supported", "refuted"):
            by_text.setdefault(text_key(q.text), {}).setdefault(q.stance, []).append(i)
    return [(g["supported"], g["refuted"]) for g in by_text.values() if len(g) == 2]


def known_refuters(citations: Mapping[str, np.ndarray]) -> np.ndarray:
    """Per document: does the memory cite it as refuting a both-stance proposition more often than as supporting one
    (memory.citation_counts' paired counts)?"""
    return citations["paired_refuted"] > citations["paired_supported"]


def best_refuters(fused: np.ndarray, refuters: np.ndarray, slots: int) -> np.ndarray:
    """(n_rows, min(slots, n_refuters)): each row's best-scored refuters, best first (ties by document index)."""
    cand = np.flatnonzero(refuters)
    if slots <= 0 or not len(cand):
        return np.zeros((fused.shape[0], 0), dtype=np.int64)
    order = np.argsort(-fused[:, cand], axis=1, kind="stable")[:, :slots]
    return cand[order]


def refuted_rows(queries: Sequence[Query]) -> list[int]:
    """Rows asking `refuted` for a text the batch also asks as `supported` (the rows refuter slots fill)."""
    return sorted(r for _, refs in both_stance_groups(queries) for r in refs)


def refuter_slots(idx: np.ndarray, scores: np.ndarray, queries: Sequence[Query], slots: int, refuters: np.ndarray,
                  best: Mapping[int, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The first `slots` places of each both-stance text's refuted rows go to `best[row]` (its best refuters, see
    best_refuters), those of its supported rows to its best non-refuters; everything else keeps its order.

    `idx`/`scores`: (n, depth), best first. Scores of a moved row are position values: its old score sequence
    (a supported row's refuter that moves down takes the score of the place it moves to), with the slots above it
    (refuted rows), so they stay finite and non-increasing. Other rows are unchanged.
    """
    if slots <= 0:
        return idx, scores
    idx, scores = idx.copy(), scores.astype(np.float64, copy=True)
    depth = idx.shape[1]
    for sup_rows, ref_rows in both_stance_groups(queries):
        for row in sup_rows:
            docs = idx[row].tolist()
            keep = [d for d in docs if not refuters[d]][:slots]
            kept = set(keep)
            idx[row] = keep + [d for d in docs if d not in kept]
        for row in ref_rows:
            first = [int(d) for d in best[row][: min(slots, depth)]]
            chosen = set(first)
            idx[row] = (first + [d for d in idx[row].tolist() if d not in chosen])[:depth]
            top = scores[row, 0]
            scores[row] = np.concatenate([top + np.arange(len(first), 0, -1), scores[row, : depth - len(first)]])
    return idx, scores.astype(np.float32)


def contrast_top(idx: np.ndarray, scores: np.ndarray, queries: Sequence[Query], weight: float
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Re-rank each both-stance pair's top candidates (`idx`/`scores`: (n, depth), best first) by their lean.

    Returns arrays of the same shape, best first; rows outside a pair are unchanged. The first query of each
    stance of a text gives the scores the lean is read from; every query of that text and stance is re-ranked.
    """
    if weight == 0:
        return idx, scores
    idx, scores = idx.copy(), scores.astype(np.float64, copy=True)
    depth = idx.shape[1]
    for sup_rows, ref_rows in both_stance_groups(queries):
        s_map = dict(zip(idx[sup_rows[0]].tolist(), scores[sup_rows[0]].tolist()))
        r_map = dict(zip(idx[ref_rows[0]].tolist(), scores[ref_rows[0]].tolist()))
        s_floor, r_floor = min(s_map.values()), min(r_map.values())
        docs = np.array(sorted(set(s_map) | set(r_map)), dtype=idx.dtype)
        s = np.array([s_map.get(d, s_floor) for d in docs.tolist()])
        r = np.array([r_map.get(d, r_floor) for d in docs.tolist()])
        lean = s - r
        for rows, moved in ((sup_rows, s + weight * lean), (ref_rows, r - weight * lean)):
            order = np.argsort(-moved, kind="stable")[:depth]
            for row in rows:
                idx[row], scores[row] = docs[order], moved[order]
    return idx, scores.astype(np.float32)


def splice(top_idx: np.ndarray, top_scores: np.ndarray, idx: np.ndarray, scores: np.ndarray, k: int
           ) -> tuple[np.ndarray, np.ndarray]:
    """The first k places per row: the moved top places (`top_idx`/`top_scores`, (n, head)), then the row's own
    ranking (`idx`/`scores`, best first; it should be at least k + head long) without the documents the head holds
    (so a document the move pushed out of the head comes first), their scores shifted down where needed so that
    each row stays non-increasing. With k <= head it is the head cut to k."""
    head = top_idx.shape[1]
    if k <= head or idx.shape[1] <= head:
        return top_idx[:, :k], top_scores[:, :k]
    width = min(k, idx.shape[1])
    out_idx = np.empty((idx.shape[0], width), dtype=idx.dtype)
    out_scores = np.empty((idx.shape[0], width), dtype=np.float64)
    for row in range(idx.shape[0]):
        held = set(top_idx[row].tolist())
        rest = [(d, s) for d, s in zip(idx[row].tolist(), scores[row].tolist()) if d not in held]
        rest = rest[: width - head]
        tail = np.array([s for _, s in rest], dtype=np.float64)
        if len(tail):
            tail -= max(0.0, tail[0] - float(top_scores[row, -1]))
        out_idx[row] = top_idx[row].tolist() + [d for d, _ in rest]
        out_scores[row] = np.concatenate([top_scores[row].astype(np.float64), tail])
    return out_idx, out_scores.astype(np.float32)
