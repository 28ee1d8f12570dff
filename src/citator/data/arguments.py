"""What the Python API takes from its caller, checked before it is used: a path, a whole number, a flag.

A wrong type is the caller's mistake, so it gets the API's typed one-line error naming the argument and what it
takes, never Python's TypeError from somewhere inside (`Path(None)`, `0 <= "1"`).
"""

from __future__ import annotations

import os
from pathlib import Path

from citator.errors import CitatorError


def path_argument(value: object, name: str, error: type[CitatorError] = CitatorError) -> Path:
    """`value` as a Path: a str or an os.PathLike of str (bytes paths are refused: citator's paths are text)."""
    if isinstance(value, str) or (isinstance(value, os.PathLike) and isinstance(os.fspath(value), str)):
        if not os.fspath(value):
            raise error(f"{name} is empty: give a path")
        return Path(value)
    raise error(f"{name} must be a path (str or pathlib.Path), got {type(value).__name__}")


def whole_number(value: object, name: str, lo: int, hi: int | None = None,
                 error: type[CitatorError] = CitatorError) -> int:
    """`value` when it is an int (not a bool, not a float such as 1.5 or 2.0) from `lo` to `hi`."""
    if isinstance(value, bool) or not isinstance(value, int) or value < lo or (hi is not None and value > hi):
        bound = f"from {lo} to {hi}" if hi is not None else f"of at least {lo}"
        raise error(f"{name} must be a whole number {bound}, got {value!r}")
    return value


def flag(value: object, name: str, error: type[CitatorError] = CitatorError) -> bool:
    """`value` when it is True or False (a string such as "no" would read as true)."""
    if not isinstance(value, bool):
        raise error(f"{name} must be True or False, got {value!r}")
    return value


def optional_text(value: object, name: str, error: type[CitatorError] = CitatorError) -> str | None:
    """`value` when it is None or a str."""
    if value is not None and not isinstance(value, str):
        raise error(f"{name} must be text (str) or None, got {type(value).__name__}")
    return value
