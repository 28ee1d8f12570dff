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


def add_server_arguments(parser: argparse.ArgumentParser, host_help: str) -> None:
    """--host and --allow-host, as every web server of citator takes them (server/guard.py)."""
    parser.add_argument("--host", default="127.0.0.1", help=host_help)
    parser.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                        help="also answer requests sent to this host name (repeatable; by default only the names "
                             "of --host: a page elsewhere cannot reach this server through DNS rebinding)")
