"""One listwise call: candidates labelled A, B, C ... and the label distribution at the first output token.

Shared by `first-token` and `adaptive`; the labels are single Qwen3 tokens (checked in tests).
"""

from __future__ import annotations

from citator.rerank.strategies.budget_fit import clip_all, largest_fitting, log_softmax
from citator.rerank.strategy import BudgetRefused, Candidate, Client, QueryInfo

LABELS = [chr(ord("A") + i) for i in range(26)]
INSTRUCTION = "Which passage answers the query best? Reply with its label only."


def messages(query: str, texts: list) -> list:
    """The prompt: query, labelled passages, the query again (so it is close to the answer), the question."""
    body = "\n".join(f"[{LABELS[i]}] {t}" for i, t in enumerate(texts))
    return [{"role": "user", "content": f"Query: {query}\n\nPassages:\n{body}\n\nQuery: {query}\n{INSTRUCTION}"}]


def fit(query: str, texts: list[str], client: Client, min_cap: int = 0) -> tuple[int, int]:
    """(n, cap): the most leading passages that fit with each clipped to >= min_cap chars, then the largest cap.

    Both searches bisect on exact counts from the runner, so the prompt uses the budget as fully as the
    character granularity allows (input + output_weight x 1 <= budget left).
    """
    limit = client.budget_left - client.output_weight
    texts = texts[: len(LABELS)]
    # x is "passages beyond the first": x = -1 means not even one passage fits.
    x, _ = largest_fitting(lambda k: messages(query, clip_all(texts[: k + 1], min_cap)), client, limit, len(texts) - 1)
    n = x + 1
    if n == 0:
        return 0, 0
    shown = texts[:n]
    cap, _ = largest_fitting(lambda x: messages(query, clip_all(shown, x)), client, limit, max(map(len, shown)))
    return (n, cap) if cap >= 0 else (0, 0)


def label_logprobs(query: str, candidates: list[Candidate], cap: int, client: Client) -> list[float]:
    """Normalised log P(label) of each shown candidate from one max_new_tokens=1 call; [] if refused."""
    labels = LABELS[: len(candidates)]
    msgs = messages(query, clip_all([c.text for c in candidates], cap))
    try:
        reply = client.generate(msgs, 1, labels, [c.id for c in candidates])
    except BudgetRefused:  # cannot happen after fit(); fall back to BM25 order rather than fail
        return []
    return log_softmax([reply.logprobs[label] for label in labels])
