"""The one test of a number read from a file, a request or a caller: a real number a float can hold."""

from __future__ import annotations

import math
import numbers
import sys

# The largest float, as the integer it is: an integer above it is past a float's range, exactly.
_LARGEST = int(sys.float_info.max)


def finite_number(value: object) -> bool:
    """Whether `value` is a real number that is finite as a float: not a bool (True would pass for 1), not NaN or
    infinite, and not an integer past a float's range (math.isfinite raises on one; every use divides as a float)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    if isinstance(value, numbers.Integral):
        return abs(int(value)) <= _LARGEST
    return math.isfinite(value)
