"""The append-only journal of provider attempts (RUN_DIR/attempts.jsonl): what a run's budget is counted from.

Each attempt is journaled (fsynced) before its request is sent, and its outcome after. Receipts hold what came
back; they cannot lower the spend, since the journal counts every attempt whatever a receipt says.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citator.data.jsonl import loads
from citator.errors import ReceiptError

HASH = re.compile(r"[0-9a-f]{64}")
ATTEMPT, OUTCOME = "attempt", "outcome"


@dataclass(frozen=True)
class Attempt:
    """One journaled attempt; `prompt_tokens`/`completion_tokens` are the reported usage once an outcome has it."""

    request_hash: str
    number: int
    preflight_tokens: int
    at: str
    line: int
    outcome: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


def _optional_count(value: Any, name: str, where: str) -> int | None:
    return None if value is None else _count(value, name, where)


def _count(value: Any, name: str, where: str, *, low: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ReceiptError(f'{where} field "{name}": must be an integer >= {low}, got {value!r}')
    return value


class Journal:
    """Reads and appends RUN_DIR/attempts.jsonl; every line is validated before it counts."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def attempts(self) -> dict[str, list[Attempt]]:
        """Attempts per request hash, in order, with their outcomes; a malformed line is a ReceiptError."""
        found: dict[str, list[Attempt]] = {}
        if not self.path.is_file():
            return found
        raw = self.path.read_bytes()
        # A final line without its newline was being written when the process died: its request was not sent
        # yet (attempts are journaled before sending) and an outcome it held is charged at the bound instead.
        lines = raw.split(b"\n")[:-1]
        for number, line in enumerate(lines, 1):
            where = f"{self.path.name} line {number}"
            try:
                entry = loads(line.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                raise ReceiptError(f"{where}: not a JSON object; the journal was altered: use a fresh --out") from None
            if not isinstance(entry, dict) or entry.get("event") not in (ATTEMPT, OUTCOME):
                raise ReceiptError(f'{where} field "event": must be "attempt" or "outcome"')
            digest = entry.get("request_hash")
            if not isinstance(digest, str) or not HASH.fullmatch(digest):
                raise ReceiptError(f'{where} field "request_hash": must be 64 lowercase hex digits')
            n = _count(entry.get("attempt"), "attempt", where, low=1)
            earlier = found.setdefault(digest, [])
            if entry["event"] == ATTEMPT:
                if n != len(earlier) + 1:
                    raise ReceiptError(f'{where} field "attempt": {n} follows {len(earlier)} attempts of that request')
                bound = _count(entry.get("preflight_tokens"), "preflight_tokens", where)
                at = entry.get("at")
                if not isinstance(at, str):
                    raise ReceiptError(f'{where} field "at": must be a timestamp string')
                earlier.append(Attempt(digest, n, bound, at, number))
                continue
            if not earlier or n != earlier[-1].number or earlier[-1].outcome is not None:
                raise ReceiptError(f"{where}: an outcome of attempt {n} that has no open attempt of that request")
            status = entry.get("status")
            if status not in ("completed", "failed"):
                raise ReceiptError(f'{where} field "status": must be "completed" or "failed"')
            prompt = _optional_count(entry.get("prompt_tokens"), "prompt_tokens", where)
            completion = _optional_count(entry.get("completion_tokens"), "completion_tokens", where)
            last = earlier[-1]
            earlier[-1] = Attempt(digest, n, last.preflight_tokens, last.at, last.line, status, prompt, completion)
        return found

    def append(self, entry: Mapping[str, Any]) -> None:
        """Append one line durably; a torn final line left by a killed process is cut off first."""
        data = (json.dumps(dict(entry), sort_keys=True, separators=(",", ":")) + "\n").encode("utf-8")
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o644)
        try:
            size = os.fstat(fd).st_size
            if size:
                tail = os.pread(fd, min(size, 1 << 16), max(0, size - (1 << 16)))
                if not tail.endswith(b"\n"):
                    cut = tail.rfind(b"\n")
                    os.ftruncate(fd, size - len(tail) + cut + 1 if cut >= 0 else max(0, size - len(tail)))
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
