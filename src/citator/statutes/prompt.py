"""The grading prompt: one question and a batch of labelled passages in, a JSON object of grades 0-3 out."""

from __future__ import annotations

from collections.abc import Sequence

from citator.statutes.pool import PoolItem

PROMPT_VERSION = "statutes-grade-v1"
# Four candidates a request: 30 candidates take 8 requests, and the per-run cap of 272 requests
# is then exactly 34 queries (30 ranking + 4 outside-corpus of a 40-query suite).
BATCH_SIZE = 4
MAX_TOKENS_PER_CANDIDATE = 8

SYSTEM = (
    "You grade how relevant statute passages are to a legal research question.\n"
    "Grades: 0 = unrelated; 1 = on the topic but not useful for answering; "
    "2 = useful (support, a definition, an exception or a procedure); 3 = directly addresses the question.\n"
    "Judge only the text shown. Answer with one JSON object that maps every candidate label to its grade, "
    'for example {"C1": 3, "C2": 0}, and nothing else.'
)


def labels(n: int) -> list[str]:
    """Candidate labels of a batch: C1, C2, ..."""
    return [f"C{i + 1}" for i in range(n)]


def batches(items: Sequence[PoolItem], size: int = BATCH_SIZE) -> list[tuple[PoolItem, ...]]:
    """Consecutive batches in keyword order (deterministic request order)."""
    return [tuple(items[i:i + size]) for i in range(0, len(items), size)]


def messages(query: str, batch: Sequence[PoolItem]) -> list[dict[str, str]]:
    """The chat messages for one batch: only the suite question and public statute passages leave the machine."""
    parts = [f"Question: {query}", "", "Candidates:"]
    for label, item in zip(labels(len(batch)), batch):
        parts += ["", f"[{label}] {item.caption}", item.passage]
    parts += ["", f"Grades for {', '.join(labels(len(batch)))} as one JSON object:"]
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n".join(parts)}]


def max_tokens(batch_size: int) -> int:
    return MAX_TOKENS_PER_CANDIDATE * batch_size + 8
