"""Grading a run's pools: metered chat requests under budget with receipts, or local similarity scores."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from citator.statutes import prompt
from citator.statutes.pool import Pool
from citator.statutes.journal import ATTEMPT, OUTCOME, Attempt
from citator.statutes.receipts import (
    ATTEMPTED,
    COMPLETED,
    FAILED,
    Budget,
    Ledger,
    ReceiptStore,
    cost,
    ledger_of,
    now,
    preflight_tokens,
    refusal,
    reported_usage,
    request_hash,
)
from citator.data.atomic import write_jsonl_atomic
from citator.data.jsonl import iter_jsonl
from citator.statutes.providers.base import ChatProvider, Exchange, SimilarityProvider, chat_payload
from citator.statutes.providers.grades import GradeDistribution, InvalidResponse, parse_chat_grades, usage_of

Key = tuple[str, str]  # (query_id, doc_id)


@dataclass(frozen=True)
class GradingFailure:
    """One thing that did not work, listed in failures.jsonl and the report."""

    query_id: str
    stage: str
    reason: str
    doc_ids: tuple[str, ...] = ()
    request_hash: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"query_id": self.query_id, "stage": self.stage, "reason": self.reason,
                "doc_ids": list(self.doc_ids), "request_hash": self.request_hash}


@dataclass
class Grading:
    """A run's graded candidates: distributions (chat) or scores (similarity), failures and spend."""

    distributions: dict[Key, GradeDistribution] = field(default_factory=dict)
    scores: dict[Key, float] = field(default_factory=dict)
    failures: list[GradingFailure] = field(default_factory=list)
    request_hashes: list[str] = field(default_factory=list)
    sent_now: int = 0
    ledger: Ledger = field(default_factory=lambda: Ledger(0, 0, 0, 0))
    preflight_exceeded: int = 0
    # Ranking-query requests of this run directory with an outcome read (new or from receipts): all, and those
    # that came back as a completion. None completed means the provider never answered the benchmark.
    ranking_requests: int = 0
    ranking_completed: int = 0


def _send(provider: ChatProvider, store: ReceiptStore, payload: dict[str, Any], digest: str,
          earlier: Sequence[Attempt], meta: dict[str, Any]) -> tuple[dict[str, Any], Attempt]:
    """Send once: receipt (attempted), journal line, request, receipt (outcome), journal line, in that order."""
    n, bound = len(earlier) + 1, preflight_tokens(payload)
    record = {**meta, "request_hash": digest, "request": payload, "preflight_tokens": bound, "attempts": n,
              "attempted_at": now(), "earlier_attempts": [a.at for a in earlier], "status": ATTEMPTED}
    # The receipt first: a journaled attempt always has one. The journal line before sending: once it is on disk
    # the request may have gone out and is paid for, whatever happens to the receipt.
    store.put(record)
    store.journal.append({"event": ATTEMPT, "request_hash": digest, "attempt": n, "preflight_tokens": bound,
                          "at": record["attempted_at"]})
    try:
        exchange = provider.send(payload)
    # A backend crash is this request's outcome (recorded, never retried); interrupts (BaseException) are not.
    except Exception as exc:  # noqa: BLE001
        exchange = Exchange(0, None, f"{type(exc).__name__}: {exc}")
    # What came back is redacted here too, whatever path the key took into it (a body, an error text).
    body, error = provider.redact(exchange.body), provider.redact(exchange.error)
    usage = body.get("usage") if isinstance(body, dict) else None
    done = {**record, "finished_at": now(), "http_status": exchange.status, "response": body, "usage": usage,
            "error": error, "status": COMPLETED if exchange.status == 200 and exchange.error is None else FAILED}
    store.put(done)
    prompt, completion = reported_usage(done)
    store.journal.append({"event": OUTCOME, "request_hash": digest, "attempt": n, "status": done["status"],
                          "prompt_tokens": prompt, "completion_tokens": completion})
    return done, Attempt(digest, n, bound, record["attempted_at"], 0, done["status"], prompt, completion)


def grade_chat(
    pools: Sequence[Pool], provider: ChatProvider, store: ReceiptStore, budget: Budget, *,
    resend_attempted: bool = False, on_sent: Callable[[int], None] | None = None,
) -> Grading:
    """Grade every pool batch by batch in suite order; reuse receipts; never retry on its own."""
    journaled = store.verify()
    out = Grading(ledger=ledger_of(journaled))
    checked = False
    for pool in pools:
        qid = pool.query.query_id
        for number, batch in enumerate(prompt.batches(pool.items)):
            labels = prompt.labels(len(batch))
            doc_ids = tuple(i.doc_id for i in batch)
            payload = chat_payload(provider.request_model, prompt.messages(pool.query.text, batch), prompt.max_tokens(len(batch)))
            digest = request_hash(payload)
            out.request_hashes.append(digest)
            receipt = store.get(digest)
            earlier = journaled.get(digest, [])
            meta = {"query_id": qid, "batch": number, "doc_ids": list(doc_ids), "labels": labels,
                    "prompt_version": prompt.PROMPT_VERSION, "provider": provider.describe(),
                    "retrieval_version": pool.retrieval_version}
            # An attempted receipt one attempt ahead of the journal was never sent: it is sent like a new one.
            in_flight = receipt is not None and receipt["status"] == ATTEMPTED and receipt["attempts"] == len(earlier)
            if in_flight and not resend_attempted:
                out.ranking_requests += pool.query.kind == "ranking"
                out.failures.append(GradingFailure(
                    qid, "attempted_unfinished", "sent before an interruption with no outcome recorded; not re-sent "
                    "(use --resend-attempted)", doc_ids, digest))
                continue
            if receipt is None or receipt["status"] == ATTEMPTED:
                bound = preflight_tokens(payload)
                why = refusal(out.ledger, budget, bound)
                if why is not None:
                    out.failures.append(GradingFailure(qid, "budget", f"not sent: {why}", doc_ids, digest))
                    continue
                if not checked:
                    # Before the first receipt of this invocation: an absent provider must not spend budget.
                    provider.check()
                    checked = True
                receipt, attempt = _send(provider, store, payload, digest, earlier, meta)
                journaled[digest] = [*earlier, attempt]
                out.ledger = out.ledger + cost(attempt)
                out.sent_now += 1
                if on_sent is not None:
                    on_sent(out.sent_now)
            if pool.query.kind == "ranking":
                out.ranking_requests += 1
                out.ranking_completed += receipt["status"] == COMPLETED
            _read_outcome(receipt, qid, labels, doc_ids, digest, out)
    return out


def _read_outcome(receipt: dict[str, Any], qid: str, labels: list[str], doc_ids: tuple[str, ...], digest: str,
                  out: Grading) -> None:
    if receipt["status"] != COMPLETED:
        error = receipt.get("error") or f"HTTP {receipt.get('http_status')}"
        out.failures.append(GradingFailure(qid, "request", error, doc_ids, digest))
        return
    body = receipt.get("response")
    try:
        usage = usage_of(body)
        grades = parse_chat_grades(body, labels)
    except InvalidResponse as exc:
        out.failures.append(GradingFailure(qid, "invalid_response", str(exc), doc_ids, digest))
        return
    if usage.prompt_tokens > int(receipt["preflight_tokens"]):
        out.preflight_exceeded += 1
    for label, doc_id in zip(labels, doc_ids):
        out.distributions[(qid, doc_id)] = grades[label]


def score_similarity(pools: Sequence[Pool], provider: SimilarityProvider, cache: Path) -> Grading:
    """Similarity of each query to its candidates' caption + passage; cached by hashes so reruns reuse it."""
    cached: dict[tuple[str, str, str], float] = {}
    if cache.is_file():
        for _, row in iter_jsonl(cache):
            cached[(row["query_id"], row["doc_id"], row["passage_sha256"])] = float(row["score"])
    out = Grading()
    rows = []
    for pool in pools:
        qid = pool.query.query_id
        keys = [(qid, i.doc_id, i.passage_sha256) for i in pool.items]
        if not all(k in cached for k in keys):
            values = provider.similarity(pool.query.text, [f"{i.caption}\n{i.passage}" for i in pool.items])
            cached.update(zip(keys, values))
        for key in keys:
            out.scores[(key[0], key[1])] = cached[key]
            rows.append({"query_id": key[0], "doc_id": key[1], "passage_sha256": key[2], "score": cached[key]})
    write_jsonl_atomic(cache, rows)
    return out


def grades_rows(pools: Sequence[Pool], grading: Grading) -> list[dict[str, Any]]:
    """grades.jsonl: one validated grade distribution per graded candidate, in pool order."""
    rows = []
    for pool in pools:
        for item in pool.items:
            dist = grading.distributions.get((item.query_id, item.doc_id))
            if dist is not None:
                rows.append({"query_id": item.query_id, "doc_id": item.doc_id, "probs": list(dist.probs),
                             "source": dist.source, "p_useful": dist.p_useful, "confidence": dist.confidence,
                             "grade": dist.grade})
    return rows
