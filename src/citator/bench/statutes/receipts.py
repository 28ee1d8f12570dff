"""Request receipts and the run budget: every provider request is preflighted, receipted and never retried."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from citator.data.atomic import write_json_atomic
from citator.data.jsonl import read_json
from citator.errors import ReceiptError
from citator.providers.grades import InvalidResponse, usage_of

MAX_REQUESTS = 272
MAX_INPUT_TOKENS = 2_000_000
ATTEMPTED, COMPLETED, FAILED = "attempted", "completed", "failed"


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

    def __sub__(self, other: Ledger) -> Ledger:
        return Ledger(self.attempts - other.attempts, self.input_tokens - other.input_tokens,
                      self.reported_input_tokens - other.reported_input_tokens,
                      self.reported_output_tokens - other.reported_output_tokens)


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


class ReceiptStore:
    """One JSON file per request under RUN_DIR/receipts, named by the request hash, written atomically."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)

    def path(self, digest: str) -> Path:
        return self.directory / f"{digest}.json"

    def get(self, digest: str) -> dict[str, Any] | None:
        path = self.path(digest)
        if not path.is_file():
            return None
        receipt = read_json(path)
        if not isinstance(receipt, dict) or receipt.get("request_hash") != digest:
            raise ReceiptError(f"{path}: not a receipt of request {digest}; move the run directory aside and rerun")
        return receipt

    def put(self, receipt: Mapping[str, Any]) -> None:
        write_json_atomic(self.path(receipt["request_hash"]), dict(receipt))

    def all(self) -> list[dict[str, Any]]:
        return [r for r in (self.get(p.stem) for p in sorted(self.directory.glob("*.json"))) if r is not None]

    def ledger(self) -> Ledger:
        """Spend so far over every receipt in the directory."""
        total = Ledger(0, 0, 0, 0)
        for r in self.all():
            total = total + charge(r)
        return total


def charge(receipt: Mapping[str, Any]) -> Ledger:
    """What one receipt costs; an attempt with no reported usage is charged its preflight bound."""
    n = int(receipt.get("attempts", 1))
    bound = int(receipt["preflight_tokens"])
    usage = None
    if receipt.get("status") == COMPLETED:
        try:
            usage = usage_of(receipt.get("response"))
        except InvalidResponse:
            usage = None
    if usage is None:
        return Ledger(n, n * bound, 0, 0)
    return Ledger(n, (n - 1) * bound + usage.prompt_tokens, usage.prompt_tokens, usage.completion_tokens)
