"""Metadata filters: `--filter "KEY OP VALUE"`, repeatable and ANDed (docs/metadata.md).

OP is one of = != < <= > >=. A value is compared as an ISO date where both sides are dates (the key `date` takes
only dates), as a number where the stored value is a number and the filter's value reads as one, else as text.
A document without the key matches no filter on it, `!=` included: an unknown court is not "another court".
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from citator.data.metadata import Scalar, iso_date
from citator.data.numbers import finite_number
from citator.errors import FilterError

OPS: dict[str, Callable[[Any, Any], bool]] = {
    "<=": operator.le, ">=": operator.ge, "!=": operator.ne, "=": operator.eq, "<": operator.lt, ">": operator.gt}
_FORM = re.compile(r"^\s*([^\s<>=!]+)\s*(<=|>=|!=|=|<|>)\s*(.*?)\s*$", re.S)
MAX_FILTERS = 20
MAX_FILTER_CHARS = 300


# What a stored value is, for a comparison (0: absent).
DATE, TEXT, NUMBER = 1, 2, 3


def typed(stored: Scalar) -> tuple[int, Any, str]:
    """A stored value as a filter compares it: its kind, the value compared with a filter value of that kind (a date
    as a date, a number as stored), and the text compared with any other."""
    if isinstance(stored, str):
        day = iso_date(stored)
        return (TEXT, stored, stored) if day is None else (DATE, day, stored)
    return NUMBER, stored, str(stored)


@dataclass(frozen=True)
class Filter:
    """One condition on a metadata key."""

    key: str
    op: str
    value: str

    def __str__(self) -> str:
        return f"{self.key}{self.op}{self.value}"

    def operand(self, kind: int) -> Any:
        """This filter's value as compared with a stored value of `kind`; None where it does not read as that kind
        (then the two are compared as text)."""
        return iso_date(self.value) if kind == DATE else _number(self.value) if kind == NUMBER else None

    def matches(self, stored: Scalar | None) -> bool:
        if stored is None:
            return False
        kind, value, text = typed(stored)
        mine = self.operand(kind)
        return OPS[self.op](value, mine) if mine is not None else OPS[self.op](text, self.value)


# A number as written in ASCII: "1_0", "٧" and "inf" are text. A whole number stays an int, compared exactly.
_NUMBER = re.compile(r"[+-]?(?:(\d+)|\d+\.\d*|\.\d+|\d+(?:\.\d*)?[eE][+-]?\d+|\.\d+[eE][+-]?\d+)", re.ASCII)


def _number(text: str) -> int | float | None:
    found = _NUMBER.fullmatch(text)
    if found is None:
        return None
    if found.group(1) is not None:
        return int(text)
    value = float(text)
    return value if finite_number(value) else None


def parse_filter(text: object) -> Filter:
    """`"KEY OP VALUE"` as a Filter, or FilterError saying what is wrong with it."""
    if not isinstance(text, str):
        raise FilterError(f"a filter is text \"KEY OP VALUE\", got {type(text).__name__}")
    shown = text[:80]
    if len(text) > MAX_FILTER_CHARS:
        raise FilterError(f"filter {shown!r}...: longer than {MAX_FILTER_CHARS} characters")
    found = _FORM.match(text)
    if found is None or not found.group(3):
        raise FilterError(f"filter {shown!r} is not \"KEY OP VALUE\" with OP one of {' '.join(sorted(OPS))} "
                          "(e.g. \"date>=1980-01-01\", \"court=Supreme Court of the United States\")")
    key, op, value = found.groups()
    if value[0] in "<>=!":
        raise FilterError(f"filter {shown!r}: the value starts with {value[0]!r}; write OP once, as one of "
                          f"{' '.join(sorted(OPS))}")
    if _NUMBER.fullmatch(value) and _number(value) is None:
        raise FilterError(f"filter {shown!r}: {value[:40]!r} is a number too large to compare")
    if key == "date" and iso_date(value) is None:
        raise FilterError(f"filter {shown!r}: date compares ISO dates; write the value as YYYY-MM-DD")
    return Filter(key, op, value)


def parse_filters(texts: Sequence[object] | None) -> tuple[Filter, ...]:
    """Several filters (ANDed), each parsed; Filter objects are kept as they are."""
    if texts is None:
        return ()
    if isinstance(texts, (str, bytes)) or not isinstance(texts, Sequence):
        raise FilterError("filters are a list of \"KEY OP VALUE\" texts")
    if len(texts) > MAX_FILTERS:
        raise FilterError(f"{len(texts)} filters; at most {MAX_FILTERS} are taken")
    return tuple(t if isinstance(t, Filter) else parse_filter(t) for t in texts)


def check_keys(filters: Sequence[Filter], keys: Sequence[str] | frozenset[str]) -> None:
    """Every filter names a key some document of the index has."""
    for f in filters:
        if f.key not in keys:
            have = ", ".join(sorted(keys)[:12]) or "no metadata at all"
            raise FilterError(f"filter {str(f)[:80]!r}: no document of this index has metadata {f.key[:40]!r} "
                              f"(it has: {have})")


def matches_all(filters: Sequence[Filter], metadata: Mapping[str, Scalar]) -> bool:
    return all(f.matches(metadata.get(f.key)) for f in filters)
