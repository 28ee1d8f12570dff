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
"""

from __future__ import annotations

from collections.abc import Sequence

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
