"""TokenLedger: the reservation rule, refusals, and (hypothesis) that no call sequence exceeds the budget."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citator.rerank.ledger import Refused, TokenLedger


def test_weighted_cost_is_input_plus_four_times_output() -> None:
    ledger = TokenLedger(2048, 4)
    ledger.reserve(100, 10)
    entry = ledger.settle(3)
    assert entry.weighted == 100 + 4 * 3
    assert ledger.spent == 112 and ledger.left == 2048 - 112


def test_full_max_new_tokens_is_reserved_before_the_call() -> None:
    ledger = TokenLedger(2048, 4)
    assert ledger.reserve(2000, 12) == 2048  # exactly fits
    assert ledger.left == 0  # held while the call runs
    ledger.settle(1)
    assert ledger.spent == 2004 and ledger.left == 44


def test_call_that_would_exceed_what_is_left_is_refused_and_costs_nothing() -> None:
    ledger = TokenLedger(2048, 4)
    ledger.reserve(1000, 1)
    ledger.settle(1)  # 1004 spent, 1044 left
    with pytest.raises(Refused) as info:
        ledger.reserve(1000, 12)  # 1048 > 1044 even though 1000 + 4 x 1 would fit
    assert info.value.needed == 1048 and info.value.left == 1044
    assert ledger.spent == 1004 and ledger.entries[-1].refused
    ledger.reserve(1000, 11)  # 1044: exactly what is left
    ledger.settle(11)
    assert ledger.spent == 2048 and ledger.left == 0


def test_output_beyond_the_reservation_is_never_charged_past_it() -> None:
    ledger = TokenLedger(100, 4)
    ledger.reserve(50, 5)
    assert ledger.settle(99).weighted == 70


def test_open_reservation_must_be_settled_first() -> None:
    ledger = TokenLedger()
    ledger.reserve(10, 1)
    with pytest.raises(RuntimeError):
        ledger.reserve(10, 1)


calls = st.lists(
    st.tuples(st.integers(0, 3000), st.integers(1, 800), st.integers(-5, 1000), st.booleans()), max_size=40
)


@settings(max_examples=300, deadline=None)
@given(budget=st.integers(1, 4096), weight=st.integers(1, 8), sequence=calls)
def test_no_sequence_of_calls_exceeds_the_budget(budget: int, weight: int, sequence: list) -> None:
    ledger = TokenLedger(budget, weight)
    for input_tokens, max_new, produced, fail in sequence:
        before = ledger.spent
        try:
            ledger.reserve(input_tokens, max_new)
        except Refused:
            assert input_tokens + weight * max_new > budget - before
            assert ledger.spent == before
            continue
        if fail:
            ledger.release()
        else:
            entry = ledger.settle(produced)
            assert entry.weighted <= entry.reserved
        assert 0 <= ledger.spent <= budget
        assert ledger.left >= 0
    assert ledger.spent == sum(e.weighted for e in ledger.entries)
