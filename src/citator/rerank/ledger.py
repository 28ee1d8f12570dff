"""TokenLedger: reserve the worst case before a generation, charge the actual cost after, never exceed."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class LedgerEntry:
    """One generate request as the ledger saw it (refused requests are kept, at zero cost)."""

    input_tokens: int
    max_new_tokens: int
    reserved: int
    output_tokens: int
    weighted: int
    refused: bool
    left_after: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class Refused(Exception):
    """A reservation does not fit in what is left; a protocol reply, never a query failure."""

    def __init__(self, needed: int, left: int) -> None:
        self.needed = needed
        self.left = left
        super().__init__(f"call needs {needed} weighted tokens reserved, {left} left")


class TokenLedger:
    """Weighted tokens of one query: input + weight x output, with max_new_tokens reserved up front."""

    def __init__(self, budget: int = 2048, output_weight: int = 4) -> None:
        self.budget = budget
        self.output_weight = output_weight
        self.spent = 0
        self.entries: list[LedgerEntry] = []
        self._open: tuple[int, int, int] | None = None

    @property
    def left(self) -> int:
        """Budget not yet spent nor reserved."""
        return self.budget - self.spent - (self._open[2] if self._open else 0)

    def cost(self, input_tokens: int, output_tokens: int) -> int:
        return input_tokens + self.output_weight * output_tokens

    def reserve(self, input_tokens: int, max_new_tokens: int) -> int:
        """Hold input + weight x max_new_tokens; raise Refused (recording it) if that exceeds what is left."""
        if input_tokens < 0 or max_new_tokens < 1:
            raise ValueError("input_tokens must be >= 0 and max_new_tokens >= 1")
        if self._open is not None:
            raise RuntimeError("a reservation is already open; settle it first")
        needed = self.cost(input_tokens, max_new_tokens)
        left = self.left
        if needed > left:
            self.entries.append(LedgerEntry(input_tokens, max_new_tokens, needed, 0, 0, True, left))
            raise Refused(needed, left)
        self._open = (input_tokens, max_new_tokens, needed)
        return needed

    def settle(self, output_tokens: int) -> LedgerEntry:
        """Charge the open reservation's input plus the output actually produced (at most max_new_tokens)."""
        if self._open is None:
            raise RuntimeError("no open reservation")
        input_tokens, max_new, reserved = self._open
        if not 0 <= output_tokens <= max_new:
            # A backend that overshoots is a runner bug; charge the reservation, never more.
            output_tokens = min(max(output_tokens, 0), max_new)
        weighted = self.cost(input_tokens, output_tokens)
        self._open = None
        self.spent += weighted
        entry = LedgerEntry(input_tokens, max_new, reserved, output_tokens, weighted, False, self.left)
        self.entries.append(entry)
        return entry

    def release(self) -> None:
        """Drop an open reservation whose call failed before producing anything (nothing is charged)."""
        self._open = None

    def to_json(self) -> dict[str, Any]:
        return {
            "budget": self.budget,
            "output_weight": self.output_weight,
            "spent": self.spent,
            "calls": [e.to_json() for e in self.entries],
        }
