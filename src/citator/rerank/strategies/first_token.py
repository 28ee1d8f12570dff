"""`first-token`: one listwise call over the BM25 top N, ranked by the first output token's label log-probs
(the FIRST idea), blended with a BM25 rank prior; passages clipped to a common length that fills the budget."""

from __future__ import annotations

import math

from citator.rerank.strategies import listwise
from citator.rerank.strategy import Client, QueryInfo

# Up to 26 single-token labels; as many candidates as fit with at least MIN_CHARS of text each.
N = 26
MIN_CHARS = 240
# Weight of -ln(rank): a flat (uninformative) label distribution leaves BM25 order intact.
PRIOR = 1.0
MAX_QUERY_CHARS = 400


def rank(query: QueryInfo, client: Client) -> list[str]:
    cands = sorted(query.candidates, key=lambda c: c.rank)
    q = query.query[:MAX_QUERY_CHARS]
    n, cap = listwise.fit(q, [c.text for c in cands[:N]], client, MIN_CHARS)
    if n == 0:
        return [c.id for c in cands[:10]]
    shown = cands[:n]
    lp = listwise.label_logprobs(q, shown, cap, client)
    if not lp:
        return [c.id for c in cands[:10]]
    scored = sorted(zip(shown, lp), key=lambda p: -(p[1] - PRIOR * math.log(p[0].rank)))
    return [c.id for c, _ in scored] + [c.id for c in cands[n:]]
