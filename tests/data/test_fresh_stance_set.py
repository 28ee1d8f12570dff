"""The fresh stance set (benchmarks/data/fresh-stance/) is well formed and as its PROVENANCE.md describes it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from citator.data import read_ground_truth, read_queries

FRESH = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "fresh-stance"


def test_fresh_set_reads_and_pairs_swap_their_two_decisions() -> None:
    queries = read_queries(FRESH / "queries.jsonl")
    qrels = read_ground_truth(FRESH / "ground_truth.jsonl")
    assert {q.query_id for q in queries} == set(qrels.grades) and {q.split for q in queries} == {"dev"}
    props = {q.extra["proposition_id"] for q in queries}
    kinds = Counter(p.split("-")[1] for p in props)
    assert kinds == {"newer": 20, "older": 20, "single": 10, "plain": 10} and len(queries) == 160
    relevant = {q.query_id: set(qrels.grades[q.query_id]) for q in queries}
    for n in range(1, 21):
        newer, older = f"fresh-newer-{n:02d}", f"fresh-older-{n:02d}"
        # The same two decisions, roles swapped: what supports the current rule refutes the old one.
        assert relevant[f"{newer}:supported"] == relevant[f"{older}:refuted"]
        assert relevant[f"{newer}:refuted"] == relevant[f"{older}:supported"]
        assert relevant[f"{newer}:supported"].isdisjoint(relevant[f"{newer}:refuted"])
        assert relevant[f"{newer}:all"] == relevant[f"{newer}:supported"] | relevant[f"{newer}:refuted"]
    two_sided = {p for p in props if p.split("-")[1] in ("newer", "older")}
    for p in props - two_sided:
        stances = sorted(q.stance for q in queries if q.extra["proposition_id"] == p)
        assert stances in (["all", "supported"], ["all", "refuted"])
    # One text per proposition, and no text is reused across propositions.
    texts = {q.extra["proposition_id"]: q.text for q in queries}
    assert all(q.text == texts[q.extra["proposition_id"]] for q in queries) and len(set(texts.values())) == 60
