"""`pointwise`: yes/no relevance log-odds of each candidate, one max_new_tokens=1 call per candidate.

Log-probabilities exist only at the first generated position, so one call yields one judgment; the number of
candidates is the most that fit at a useful passage length, and each call gets an equal share of what is left.
"""

from __future__ import annotations

import math

from citator.rerank.strategies.budget_fit import clip, logsumexp
from citator.rerank.strategy import BudgetRefused, Client, QueryInfo

YES, NO = ("yes", "Yes"), ("no", "No")
MIN_PASSAGE_TOKENS = 48
PRIOR = 1.0
MAX_QUERY_CHARS = 400


def messages(query: str, passage: str) -> list:
    return [{"role": "user", "content": f"Query: {query}\nPassage: {passage}\nDoes the passage answer the query? Answer yes or no."}]


def _fit_one(q: str, text: str, limit: int, client: Client) -> tuple[list[dict[str, str]], int]:
    """Prompt for `text` clipped by ratio until its exact count fits `limit` (a few counts)."""
    msgs = messages(q, text)
    tokens = client.count(msgs)
    cap = len(text)
    while tokens > limit and cap > 0:
        cap = int(cap * min(0.97, limit / tokens))
        msgs = messages(q, clip(text, cap))
        tokens = client.count(msgs)
    return msgs, tokens


def rank(query: QueryInfo, client: Client) -> list[str]:
    cands = sorted(query.candidates, key=lambda c: c.rank)
    q = query.query[:MAX_QUERY_CHARS]
    w = client.output_weight
    overhead = client.count(messages(q, ""))
    k = min(len(cands), max(1, client.budget_left // (overhead + MIN_PASSAGE_TOKENS + w)))
    scores = {}
    for i, c in enumerate(cands[:k]):
        limit = client.budget_left // (k - i) - w
        if overhead > limit:
            break
        msgs, tokens = _fit_one(q, c.text, limit, client)
        if tokens > limit:
            break
        try:
            reply = client.generate(msgs, 1, YES + NO, [c.id])
        except BudgetRefused:  # cannot happen with exact counts; keep what was judged
            break
        lp = reply.logprobs
        scores[c.id] = logsumexp([lp[t] for t in YES]) - logsumexp([lp[t] for t in NO]) - PRIOR * math.log(c.rank)
    seen = sorted(scores, key=lambda i: -scores[i])
    return seen + [c.id for c in cands if c.id not in scores]
