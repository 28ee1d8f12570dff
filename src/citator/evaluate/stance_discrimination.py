"""Stance discrimination where it matters: propositions asked with both stances.

For such a proposition, a document relevant to the *other* stance only is a wrong answer. Two measures:
strict NDCG@k (other-stance documents count as non-relevant) and the rate at which the best-ranked document
of the requested stance outranks the best-ranked document of the opposite stance.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass

from citator.data.records import Qrels, Query
from citator.evaluate.ndcg import ndcg


@dataclass(frozen=True)
class StanceDiscrimination:
    queries: int
    strict_ndcg: dict[str, float]  # stance -> mean strict NDCG@k
    outranks_rate: float  # share of queries whose requested stance comes first
    outranks_by_stance: dict[str, float]


def paired_queries(queries: Sequence[Query]) -> list[tuple[Query, Query]]:
    """(supported, refuted) query pairs of the same proposition."""
    by_prop: dict[str, dict[str, Query]] = {}
    for q in queries:
        prop = q.extra.get("proposition_id")
        if isinstance(prop, str) and q.stance in ("supported", "refuted"):
            by_prop.setdefault(prop, {})[q.stance] = q
    return [(p["supported"], p["refuted"]) for p in by_prop.values() if len(p) == 2]


def first_rank(ranking: Sequence[str], docs: Set[str]) -> float:
    """The position of the first of `docs` in `ranking` (0 = first), inf when none is in it."""
    return next((i for i, d in enumerate(ranking) if d in docs), float("inf"))


def stance_discrimination(
    queries: Sequence[Query], qrels: Qrels, run: Mapping[str, Sequence[str]], k: int = 10
) -> StanceDiscrimination:
    strict: dict[str, list[float]] = {"supported": [], "refuted": []}
    wins: dict[str, list[float]] = {"supported": [], "refuted": []}
    for pair in paired_queries(queries):
        for own, other in (pair, pair[::-1]):
            mine = qrels.relevant(own.query_id) - qrels.relevant(other.query_id)
            theirs = qrels.relevant(other.query_id) - qrels.relevant(own.query_id)
            ranking = run.get(own.query_id, ())
            strict[own.stance].append(ndcg(ranking, {d: 1 for d in mine}, k))
            # A tie (both absent from the ranking) is no win: the requested stance was not found.
            wins[own.stance].append(float(first_rank(ranking, mine) < first_rank(ranking, theirs)))
    n = len(wins["supported"]) + len(wins["refuted"])
    mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")  # noqa: E731
    return StanceDiscrimination(
        queries=n,
        strict_ndcg={s: mean(v) for s, v in strict.items()},
        outranks_rate=mean(wins["supported"] + wins["refuted"]),
        outranks_by_stance={s: mean(v) for s, v in wins.items()},
    )
