"""One test of a number read back: a real number a float can hold."""

from __future__ import annotations

import sys
from fractions import Fraction

import numpy as np
import pytest

from citator.data.numbers import finite_number


@pytest.mark.parametrize("value", [0, -3, 1.5, 2**1023, -1e308, np.float32(2.5), np.int64(7), Fraction(1, 3),
                                   int(sys.float_info.max), -int(sys.float_info.max)])
def test_numbers_a_float_can_hold_pass(value: object) -> None:
    assert finite_number(value)


# int(max) + 1 still converts to a float (it rounds down to the largest one): the bound is exact all the same.
@pytest.mark.parametrize("value", [True, False, float("nan"), float("inf"), -float("inf"), 10**400, -(10**309),
                                   int(sys.float_info.max) + 1,
                                   "1", None, [1], b"1", np.float64("nan")])
def test_anything_else_does_not(value: object) -> None:
    assert not finite_number(value)
