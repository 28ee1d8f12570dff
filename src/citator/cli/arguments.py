"""Argument types shared by the commands: a bad value is argparse's own error (usage, one line, exit 2)."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def whole(low: int, high: int | None = None) -> Callable[[str], int]:
    """A whole number from `low` to `high` (inclusive; no upper bound when None)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low or (high is not None and value > high):
            bound = f"from {low} to {high}" if high is not None else f"of at least {low}"
            raise argparse.ArgumentTypeError(f"must be a whole number {bound}, got {value}")
        return value

    return parse


# A TCP port a server may listen on (0: any free port the system picks).
PORT = whole(0, 65535)
