"""Request receipts and the run budget: every provider request is preflighted, receipted and never retried."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from citator.data.atomic import write_json_atomic
from citator.data.jsonl import read_json
from citator.statutes.journal import Attempt, Journal
from citator.errors import DataError, ReceiptError
from citator.statutes.providers.grades import InvalidResponse, usage_of

MAX_REQUESTS = 272
MAX_INPUT_TOKENS = 2_000_000
ATTEMPTED, COMPLETED, FAILED = "attempted", "completed", "failed"
JOURNAL_NAME = "attempts.jsonl"


@dataclass(frozen=True)
class Budget:
    """Per-run caps on attempted requests and input tokens."""

    max_requests: int = MAX_REQUESTS
    max_input_tokens: int = MAX_INPUT_TOKENS


@dataclass(frozen=True)
class Ledger:
    """What a run has spent so far, from its receipts: attempts and input tokens (reported, else the bound)."""

    attempts: int
    input_tokens: int
    reported_input_tokens: int
    reported_output_tokens: int

    def __add__(self, other: Ledger) -> Ledger:
        return Ledger(self.attempts + other.attempts, self.input_tokens + other.input_tokens,
                      self.reported_input_tokens + other.reported_input_tokens,
                      self.reported_output_tokens + other.reported_output_tokens)


def canonical_bytes(payload: Mapping[str, Any]) -> bytes:
    """The request body as sent: compact JSON with sorted keys, UTF-8."""
    return json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def request_hash(payload: Mapping[str, Any]) -> str:
    import hashlib

    return hashlib.sha256(canonical_bytes(payload)).hexdigest()


def preflight_tokens(payload: Mapping[str, Any]) -> int:
    """A bound on input tokens: byte-level BPE never makes more tokens than bytes, and the payload's JSON
    (keys, quotes, escapes) is longer than the chat template's rendering of the same messages."""
    return len(canonical_bytes(payload))


def refusal(ledger: Ledger, budget: Budget, preflight: int) -> str | None:
    """Why one more request of `preflight` bytes may not be sent, or None when it fits."""
    if ledger.attempts + 1 > budget.max_requests:
        return f"request budget spent: {ledger.attempts} of {budget.max_requests} requests attempted"
    if ledger.input_tokens + preflight > budget.max_input_tokens:
        return (f"input-token budget: {ledger.input_tokens} used + preflight bound {preflight} "
                f"> {budget.max_input_tokens}")
    return None


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def validate_receipt(receipt: Any, digest: str, where: str) -> dict[str, Any]:
    """A receipt read back, checked field by field: shape, ranges, and that it is the receipt of `digest`."""
    def bad(field: str, why: str) -> ReceiptError:
        return ReceiptError(f'{where} field "{field}": {why}; the run directory was altered: restore it or use a '
                            "fresh --out")

    if not isinstance(receipt, dict):
        raise ReceiptError(f"{where}: not a JSON object")
    if receipt.get("request_hash") != digest:
        raise bad("request_hash", f"is not {digest} (the file's name)")
    request = receipt.get("request")
    if not isinstance(request, dict) or request_hash(request) != digest:
        raise bad("request", "is not the request whose hash names the file")
    bound = receipt.get("preflight_tokens")
    if isinstance(bound, bool) or bound != preflight_tokens(request):
        raise bad("preflight_tokens", f"must be the request's bound {preflight_tokens(request)}, got {bound!r}")
    attempts = receipt.get("attempts")
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
        raise bad("attempts", f"must be an integer >= 1, got {attempts!r}")
    status = receipt.get("status")
    if status not in (ATTEMPTED, COMPLETED, FAILED):
        raise bad("status", f"must be {ATTEMPTED}, {COMPLETED} or {FAILED}, got {status!r}")
    if not isinstance(receipt.get("attempted_at"), str):
        raise bad("attempted_at", "must be a timestamp string")
    earlier = receipt.get("earlier_attempts", [])
    if not isinstance(earlier, list):
        raise bad("earlier_attempts", "must be a list")
    if status != ATTEMPTED:
        http = receipt.get("http_status")
        if isinstance(http, bool) or not isinstance(http, int) or not 0 <= http <= 599:
            raise bad("http_status", f"must be an integer in 0..599, got {http!r}")
        if not isinstance(receipt.get("error"), (str, type(None))):
            raise bad("error", "must be a string or null")
        if status == COMPLETED and (http != 200 or receipt.get("error") is not None):
            raise bad("status", "completed needs http_status 200 and no error")
    return receipt


class ReceiptStore:
    """One JSON file per request under RUN_DIR/receipts, named by the request hash, written atomically; spend is
    counted from the append-only journal RUN_DIR/attempts.jsonl, which every receipt must agree with."""

    def __init__(self, directory: str | Path, journal: str | Path | None = None) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.journal = Journal(journal or self.directory.parent / JOURNAL_NAME)

    def path(self, digest: str) -> Path:
        return self.directory / f"{digest}.json"

    def get(self, digest: str) -> dict[str, Any] | None:
        path = self.path(digest)
        if not path.is_file():
            return None
        where = f"{self.directory.name}/{path.name}"
        try:
            receipt = read_json(path)
        except DataError as exc:
            raise ReceiptError(f"{where}: {exc.reason}") from None
        return validate_receipt(receipt, digest, where)

    def put(self, receipt: Mapping[str, Any]) -> None:
        write_json_atomic(self.path(receipt["request_hash"]), dict(receipt))

    def all(self) -> list[dict[str, Any]]:
        return [r for r in (self.get(p.stem) for p in sorted(self.directory.glob("*.json"))) if r is not None]

    def verify(self) -> dict[str, list[Attempt]]:
        """The journal's attempts, after checking that receipts and journal tell one story: every journaled
        request has its receipt with as many attempts; a receipt may be one attempt ahead only while that
        attempt is unsent (recorded, then the process died before journaling and sending it)."""
        journaled = self.journal.attempts()
        receipts = {r["request_hash"]: r for r in self.all()}
        for digest, attempts in journaled.items():
            receipt = receipts.get(digest)
            where = f"{self.journal.path.name} line {attempts[-1].line}"
            if receipt is None:
                raise ReceiptError(f"{where}: request {digest[:12]}… was attempted but its receipt "
                                   f"{self.directory.name}/{digest}.json is missing; it is not sent again: restore "
                                   "the receipt or use a fresh --out")
            if attempts[-1].preflight_tokens != receipt["preflight_tokens"]:
                raise ReceiptError(f'{where} field "preflight_tokens": differs from its receipt\'s')
        for digest, receipt in receipts.items():
            n = len(journaled.get(digest, []))
            unsent = receipt["status"] == ATTEMPTED and receipt["attempts"] == n + 1
            if receipt["attempts"] != n and not unsent:
                raise ReceiptError(f'{self.directory.name}/{digest}.json field "attempts": {receipt["attempts"]}, '
                                   f"but {self.journal.path.name} records {n}; restore it or use a fresh --out")
        return journaled

    def ledger(self) -> Ledger:
        """Spend so far, from the journal (receipts are checked against it first)."""
        return ledger_of(self.verify())


def ledger_of(journaled: Mapping[str, Sequence[Attempt]]) -> Ledger:
    """Every journaled attempt costs one request and its bound in input tokens, or the reported prompt tokens
    when its outcome reported usage."""
    total = Ledger(0, 0, 0, 0)
    for attempts in journaled.values():
        for a in attempts:
            total = total + cost(a)
    return total


def cost(a: Attempt) -> Ledger:
    """What one journaled attempt spends."""
    if a.prompt_tokens is None:
        return Ledger(1, a.preflight_tokens, 0, 0)
    return Ledger(1, a.prompt_tokens, a.prompt_tokens, a.completion_tokens or 0)


def reported_usage(receipt: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """(prompt, completion) tokens a completed receipt's response reports, or (None, None)."""
    if receipt.get("status") != COMPLETED:
        return None, None
    try:
        usage = usage_of(receipt.get("response"))
    except InvalidResponse:
        return None, None
    return usage.prompt_tokens, usage.completion_tokens
