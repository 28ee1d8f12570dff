"""The progress bar of long work (encoding a corpus): drawn on a terminal only, and erased when the work is done."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

T = TypeVar("T")


def bar(iterable: Iterable[T] | None = None, *, desc: str, total: int | None = None, show: bool = True) -> Any:
    """A tqdm bar over `iterable` (or updated by hand up to `total`). `disable=None` is tqdm's "on a terminal only":
    a log or a pipe gets no carriage-return frames. `leave=False` erases the finished bar, so what the command
    prints next (a sharded build's next step, the `built ...` line) follows on the same line, not after a spent
    bar or, on a terminal too narrow to draw one, a blank line."""
    from tqdm import tqdm

    return tqdm(iterable, desc=desc, total=total, disable=None if show else True, leave=False)
