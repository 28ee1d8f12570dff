"""Argument types shared by the commands. A bad value is a usage error (cli/parser.py words it as one line:
`citator brief: --k must be a whole number from 1 to 100, got 0`), so each message here reads after the option."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def whole(low: int, high: int | None = None) -> Callable[[str], int]:
    """A whole number from `low` to `high` (inclusive; no upper bound when None)."""
    bound = f"from {low} to {high}" if high is not None else f"of at least {low}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number {bound}, got {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be a whole number {bound}, got {value}")
        return value

    return parse


def number(*, above: float | None = None, below: float | None = None) -> Callable[[str], float]:
    """A finite number strictly between `above` and `below` (either side open when None): never NaN or infinity,
    which would pass every comparison a command makes later, or none."""
    bound = " and ".join(part for part in (f"above {above:g}" if above is not None else "",
                                           f"below {below:g}" if below is not None else "") if part)
    wanted = f"a finite number {bound}".rstrip()

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {wanted}, got {text!r}") from None
        if not math.isfinite(value) or (above is not None and value <= above) or (below is not None and value >= below):
            raise argparse.ArgumentTypeError(f"must be {wanted}, got {text!r}")
        return value

    return parse


# A TCP port a server may listen on (0: any free port the system picks).
PORT = whole(0, 65535)


def add_server_arguments(parser: argparse.ArgumentParser, host_help: str) -> None:
    """--host and --allow-host, as every web server of citator takes them (server/guard.py)."""
    parser.add_argument("--host", default="127.0.0.1", help=host_help)
    parser.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                        help="also answer requests sent to this host name (repeatable; by default only the names "
                             "of --host: a page elsewhere cannot reach this server through DNS rebinding)")
# A count of things or of steps: one or more.
COUNT = whole(1)
# A duration in seconds: more than nothing, and finite.
SECONDS = number(above=0)
# Authorities per stance in a brief or on the research page (StanceIndex's MAX_K; a test keeps them equal).
BRIEF_K = whole(1, 100)
