"""Training examples for the query encoder: each labeled query with its documents and opposite-stance documents."""

from __future__ import annotations

from collections.abc import Sequence

from citator.data.records import Qrels, Query
from citator.evaluate.stance_discrimination import paired_queries
from citator.stance.learn.finetune import QueryExample

# MiniLM takes no instruction, so the fine-tuned encoder learns one: a short per-stance prefix.
QUERY_PREFIXES = {
    "supported": "find court decisions that support: ",
    "refuted": "find court decisions that refute: ",
    "all": "find court decisions that support or refute: ",
}


def opposite_stance_docs(queries: Sequence[Query], qrels: Qrels) -> dict[str, frozenset[str]]:
    """For a proposition asked with both stances: each stance's query -> the other stance's relevant documents."""
    out: dict[str, frozenset[str]] = {}
    for supported, refuted in paired_queries(queries):
        s, r = supported.query_id, refuted.query_id
        out[s] = qrels.relevant(r) - qrels.relevant(s)
        out[r] = qrels.relevant(s) - qrels.relevant(r)
    return out


def query_examples(queries: Sequence[Query], qrels: Qrels, doc_ids: Sequence[str]) -> list[QueryExample]:
    """Every labeled query with its stance prefix; documents missing from the corpus are skipped.

    An `all` query that repeats a stance-specific query of the same proposition with the same documents adds
    nothing but cost, so it is left out.
    """
    index = {d: i for i, d in enumerate(doc_ids)}
    opposite = opposite_stance_docs(queries, qrels)
    stanced = {(q.extra.get("proposition_id"), q.text, qrels.relevant(q.query_id)) for q in queries if q.stance != "all"}
    out = []
    for q in queries:
        if q.stance == "all" and (q.extra.get("proposition_id"), q.text, qrels.relevant(q.query_id)) in stanced:
            continue
        positives = tuple(sorted(index[d] for d in qrels.relevant(q.query_id) if d in index))
        if not positives:
            continue
        against = tuple(sorted(index[d] for d in opposite.get(q.query_id, ()) if d in index))
        out.append(QueryExample(q.text, q.stance, positives, against))
    return out
